# Eight bytes at a time in a 64-bit word ("SIMD within a register"), header only: the
# byte scans of the tokenizer.json stages (hf_precompiled, hf_replace, pretok_metaspace).
#
#     zero_bytes(w ^ spread_byte(32))  -> the spaces of w (each one's high bit)
#     first_marked_byte(mask)          -> the offset in memory of the first of them
#     non_ascii_letter_bytes(w)        -> the bytes of w that are not A-Z or a-z
from libc.stdint cimport uint64_t

cdef extern from *:
    """
    static inline int toksmith_first_marked_byte(unsigned long long m) {
    #if defined(__GNUC__) || defined(__clang__)
    #  if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        return __builtin_clzll(m) >> 3;
    #  else
        return __builtin_ctzll(m) >> 3;
    #  endif
    #else
        int k = 0;   /* little-endian targets (MSVC) */
        while (!(m & 0x80ULL)) { m >>= 8; k++; }
        return k;
    #endif
    }
    """
    # the memory offset (0-7) of the first byte whose high bit is set in `mask` (not 0)
    int first_marked_byte "toksmith_first_marked_byte"(unsigned long long mask) noexcept nogil


cdef inline uint64_t spread_byte(unsigned char b) noexcept nogil:
    """b in each of the eight bytes."""
    return <uint64_t>b * <uint64_t>0x0101010101010101


cdef inline uint64_t zero_bytes(uint64_t x) noexcept nogil:
    """The high bit of each byte of x that is 0, exactly (no borrow between bytes)."""
    cdef uint64_t low7 = 0x7F7F7F7F7F7F7F7F
    return ~(((x & low7) + low7) | x | low7)


cdef inline uint64_t non_ascii_letter_bytes(uint64_t x) noexcept nogil:
    """The high bit of each byte of x that is not an ASCII letter (A-Z, a-z), exactly: a
    byte folded to lower case lies in 0x20-0x7F, so adding 0x1F (0x05) sets its high bit
    from 'a' ('{') on, with no carry into the next byte."""
    cdef uint64_t low7 = 0x7F7F7F7F7F7F7F7F
    cdef uint64_t folded = (x & low7) | <uint64_t>0x2020202020202020
    cdef uint64_t letter = (folded + <uint64_t>0x1F1F1F1F1F1F1F1F) & ~(folded + <uint64_t>0x0505050505050505)
    return (~letter | x) & <uint64_t>0x8080808080808080
