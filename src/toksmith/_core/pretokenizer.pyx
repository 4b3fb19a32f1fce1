"""The `PreTokenizer` base class: see pretokenizer.pxd for the contract."""
from toksmith._core.buffers cimport idbuf_free, idbuf_push

from toksmith._core.errors import raise_for_status


cdef void pretok_work_free(PreTokenizerWork* w) noexcept nogil:
    idbuf_free(&w.a)
    idbuf_free(&w.b)
    idbuf_free(&w.c)


cdef class PreTokenizer:
    """Base of every pre-tokenizer. This base keeps the whole text as one pre-token."""

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        if n > 0 and idbuf_push(ends, <int>n) < 0:
            return -1
        return 0

    def split_text(self, bytes text, SplitScratch scratch=None):
        """The pre-tokens of UTF-8 `text`, as bytes (for tests, benchmarks and debugging;
        the engine calls split). `scratch` keeps the work buffers between calls, as the
        engine's per-thread scratch does.

            >>> PreTokenizer().split_text(b"ab cd")
            [b'ab cd']
        """
        cdef Py_ssize_t i, prev = 0
        own = scratch is None
        if own:
            scratch = SplitScratch()
        try:
            _split_into(self, text, scratch)
            out = []
            for i in range(scratch.ends.size):
                out.append(text[prev:scratch.ends.data[i]])
                prev = scratch.ends.data[i]
            return out
        finally:
            if own:
                scratch.release()

    def count_pieces(self, bytes text, SplitScratch scratch=None):
        """How many pre-tokens `text` has: split without building Python objects (benchmarks)."""
        own = scratch is None
        if own:
            scratch = SplitScratch()
        try:
            _split_into(self, text, scratch)
            return scratch.ends.size
        finally:
            if own:
                scratch.release()


cdef class SplitScratch:
    """Work buffers of PreTokenizer.split_text kept between calls (one thread at a time)."""
    cdef PreTokenizerWork work
    cdef IdBuf ends

    def __cinit__(self):
        self.work.a.data = NULL; self.work.a.size = 0; self.work.a.cap = 0
        self.work.b.data = NULL; self.work.b.size = 0; self.work.b.cap = 0
        self.work.c.data = NULL; self.work.c.size = 0; self.work.c.cap = 0
        self.ends.data = NULL; self.ends.size = 0; self.ends.cap = 0

    def release(self):
        pretok_work_free(&self.work)
        idbuf_free(&self.ends)

    def __dealloc__(self):
        pretok_work_free(&self.work)
        idbuf_free(&self.ends)


cdef _split_into(PreTokenizer pretokenizer, bytes text, SplitScratch scratch):
    """Split `text` into scratch.ends with `pretokenizer` (the GIL released)."""
    cdef int rc
    cdef const unsigned char* s = text
    cdef Py_ssize_t n = len(text)
    scratch.ends.size = 0
    with nogil:
        rc = pretokenizer.split(s, n, &scratch.work, &scratch.ends)
    raise_for_status(rc)
