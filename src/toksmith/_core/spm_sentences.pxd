# The training sentences of sentencepiece's trainers (see spm_sentences.pyx): UTF-8 back
# to back, sentence i at blob[offsets[i]:offsets[i+1]], each with its frequency.
from libc.stdint cimport int64_t


cdef class SpmSentences:
    cdef char* blob
    cdef Py_ssize_t size
    cdef Py_ssize_t cap
    cdef int64_t* offsets      # n + 1 entries
    cdef int64_t* freqs        # n entries
    cdef Py_ssize_t n
    cdef Py_ssize_t n_cap

    cdef int _append(self, const char* s, Py_ssize_t length, int64_t freq) except -1
