"""The `PreTokenizer` base class: see pretokenizer.pxd for the contract."""
from toksmith._core.buffers cimport idbuf_free, idbuf_push


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

    def split_text(self, bytes text):
        """The pre-tokens of UTF-8 `text`, as bytes (for tests and debugging; the engine calls split).

            >>> PreTokenizer().split_text(b"ab cd")
            [b'ab cd']
        """
        cdef PreTokenizerWork work
        cdef IdBuf ends
        cdef Py_ssize_t i, prev = 0
        cdef int rc
        cdef const unsigned char* s = text
        cdef Py_ssize_t n = len(text)
        work.a.data = NULL; work.a.size = 0; work.a.cap = 0
        work.b.data = NULL; work.b.size = 0; work.b.cap = 0
        work.c.data = NULL; work.c.size = 0; work.c.cap = 0
        ends.data = NULL; ends.size = 0; ends.cap = 0
        try:
            with nogil:
                rc = self.split(s, n, &work, &ends)
            if rc < 0:
                raise MemoryError()
            out = []
            for i in range(ends.size):
                out.append(text[prev:ends.data[i]])
                prev = ends.data[i]
            return out
        finally:
            pretok_work_free(&work)
            idbuf_free(&ends)
