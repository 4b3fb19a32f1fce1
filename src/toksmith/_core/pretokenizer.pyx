"""The `PreTokenizer` base class: see pretokenizer.pxd for the contract."""
from libc.stdlib cimport calloc, free
from libc.string cimport memset

from toksmith._core.buffers cimport bytebuf_free, idbuf_free, idbuf_push

from toksmith._core.errors import raise_for_status


cdef void pretok_work_free(PreTokenizerWork* w) noexcept nogil:
    """Free the buffers of `w` and its inner works (`w` itself stays usable, empty)."""
    idbuf_free(&w.a)
    idbuf_free(&w.b)
    idbuf_free(&w.c)
    bytebuf_free(&w.text)
    bytebuf_free(&w.text2)
    if w.inner != NULL:
        pretok_work_free(w.inner)
        free(w.inner)
        w.inner = NULL


cdef PreTokenizerWork* pretok_inner_work(PreTokenizerWork* w) noexcept nogil:
    if w.inner == NULL:
        w.inner = <PreTokenizerWork*>calloc(1, sizeof(PreTokenizerWork))
    return w.inner


cdef Py_ssize_t pretok_work_bytes(const PreTokenizerWork* w) noexcept nogil:
    cdef Py_ssize_t total = 0
    while w != NULL:
        total += (w.a.cap + w.b.cap + w.c.cap) * 4 + w.text.cap + w.text2.cap
        w = w.inner
    return total


cdef class PreTokenizer:
    """Base of every pre-tokenizer. This base keeps the whole text as one pre-token."""

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        if n > 0 and idbuf_push(ends, <int>n) < 0:
            return -1
        return 0

    def split_text(self, bytes text, SplitScratch scratch=None, *, bint at_input_start=True):
        """The pre-tokens of UTF-8 `text`, as bytes (for tests, benchmarks and debugging;
        the engine calls split). `scratch` keeps the work buffers between calls, as the
        engine's per-thread scratch does; `at_input_start`: `text` starts the input.

            >>> PreTokenizer().split_text(b"ab cd")
            [b'ab cd']
        """
        cdef Py_ssize_t i, prev = 0
        own = scratch is None
        if own:
            scratch = SplitScratch()
        try:
            if _split_into(self, text, scratch, at_input_start) == PRETOK_REWRITTEN:
                text = scratch.work.text.data[:scratch.work.text.size]
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
            _split_into(self, text, scratch, True)
            return scratch.ends.size
        finally:
            if own:
                scratch.release()


cdef class SplitScratch:
    """Work buffers of PreTokenizer.split_text kept between calls (one thread at a time)."""
    cdef PreTokenizerWork work
    cdef IdBuf ends

    def __cinit__(self):
        memset(&self.work, 0, sizeof(PreTokenizerWork))
        self.ends.data = NULL; self.ends.size = 0; self.ends.cap = 0

    def release(self):
        pretok_work_free(&self.work)
        idbuf_free(&self.ends)

    def __dealloc__(self):
        pretok_work_free(&self.work)
        idbuf_free(&self.ends)


cdef int _split_into(PreTokenizer pretokenizer, bytes text, SplitScratch scratch,
                     bint at_input_start) except -1:
    """Split `text` into scratch.ends with `pretokenizer` (the GIL released); returns 0 or
    PRETOK_REWRITTEN (the pre-tokens are then pieces of scratch.work.text)."""
    cdef int rc
    cdef const unsigned char* s = text
    cdef Py_ssize_t n = len(text)
    scratch.ends.size = 0
    scratch.work.at_input_start = at_input_start
    with nogil:
        rc = pretokenizer.split(s, n, &scratch.work, &scratch.ends)
    raise_for_status(rc)
    return rc
