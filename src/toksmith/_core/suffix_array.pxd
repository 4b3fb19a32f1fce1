# Suffix array and LCP of a byte string (see suffix_array.pyx); nogil, -1 on no memory.
from libc.stdint cimport int32_t

cdef int suffix_array_bytes(const unsigned char* text, int32_t n, int32_t* sa) noexcept nogil
cdef int permuted_lcp(const unsigned char* text, int32_t n, const int32_t* sa, int32_t* plcp) noexcept nogil
cdef int permuted_lcp_parallel(const unsigned char* text, int32_t n, const int32_t* sa, int32_t* plcp,
                               int threads) noexcept nogil
