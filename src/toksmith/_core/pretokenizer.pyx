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
