# llama.cpp's unicode_tolower, shared by the modules that lower-case as llama.cpp does
# (whitespace_session.pyx, llama_wpm.pyx).
from libc.stdint cimport uint32_t

include "unicode_llama_lower.pxi"


cdef inline uint32_t llama_tolower(uint32_t c) noexcept nogil:
    """Parity: llama.cpp unicode_tolower (binary search of unicode_map_lowercase)."""
    cdef int lo = 0, hi = LLAMA_LOWER_COUNT, mid
    if c < 0x80:
        return c + 32 if 0x41 <= c <= 0x5A else c
    while lo < hi:
        mid = (lo + hi) >> 1
        if LLAMA_LOWER[2 * mid] < c:
            lo = mid + 1
        else:
            hi = mid
    if lo < LLAMA_LOWER_COUNT and LLAMA_LOWER[2 * lo] == c:
        return LLAMA_LOWER[2 * lo + 1]
    return c
