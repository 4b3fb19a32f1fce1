# The contract of a pre-tokenizer (the stage between normalizer and model).
#
# A pre-tokenizer cuts normalized text into pre-tokens that the model segments one
# by one (a model never merges across them). It appends the end offset of every
# pre-token to `ends` (ascending, the last one is n; nothing for n == 0). Every byte
# of the text belongs to exactly one pre-token: pre-tokenizers cut, they never drop
# or rewrite bytes (rewriting is a normalizer's job).
#
# `work` is per-thread memory the pre-tokenizer may use (kept in the engine's
# scratch, freed with pretok_work_free); it holds nothing between calls.
from toksmith._core.buffers cimport IdBuf


cdef struct PreTokenizerWork:
    IdBuf a
    IdBuf b
    IdBuf c


cdef void pretok_work_free(PreTokenizerWork* w) noexcept nogil


cdef class PreTokenizer:
    # Returns 0, or a negative error code (ERR_NO_MEMORY, ...).
    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil
