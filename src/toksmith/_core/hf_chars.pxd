# Character helpers of the tokenizer.json normalizers and pre-tokenizers (header only:
# every function inlines into their loops): one-character UTF-8 decoding and Rust's
# `char::is_whitespace`, the class tokenizers' Strip, WhitespaceSplit and friends test.
from libc.stdint cimport uint32_t


cdef inline Py_ssize_t decode_one(const unsigned char* s, Py_ssize_t n, uint32_t* cp) noexcept nogil:
    """The character at s (n > 0): its code point in cp, its length returned. The stages
    get valid UTF-8 (the pipeline repairs bytes first); a malformed byte still decodes, as
    U+FFFD of one byte, so nothing can read past the end."""
    cdef unsigned char b = s[0]
    if b < 0x80:
        cp[0] = b
        return 1
    if 0xC2 <= b < 0xE0 and n >= 2 and (s[1] & 0xC0) == 0x80:
        cp[0] = ((b & 0x1F) << 6) | (s[1] & 0x3F)
        return 2
    if (b & 0xF0) == 0xE0 and n >= 3 and (s[1] & 0xC0) == 0x80 and (s[2] & 0xC0) == 0x80:
        cp[0] = ((b & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
        return 3
    if (b & 0xF8) == 0xF0 and n >= 4 and (s[1] & 0xC0) == 0x80 and (s[2] & 0xC0) == 0x80 \
            and (s[3] & 0xC0) == 0x80:
        cp[0] = ((b & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F)
        return 4
    cp[0] = 0xFFFD
    return 1


cdef inline Py_ssize_t char_start_before(const unsigned char* s, Py_ssize_t end) noexcept nogil:
    """Where the character that ends at `end` (> 0) starts: back over up to three
    continuation bytes (a stray one stands alone, as decode_one reads it)."""
    cdef Py_ssize_t i = end - 1, k
    cdef uint32_t cp
    k = 0
    while k < 3 and i > 0 and (s[i] & 0xC0) == 0x80:
        i -= 1
        k += 1
    if decode_one(s + i, end - i, &cp) == end - i:
        return i
    return end - 1


cdef inline bint rust_is_whitespace(uint32_t cp) noexcept nogil:
    """Parity: Rust's char::is_whitespace (the White_Space property); tested against
    tokenizers on every code point."""
    if cp < 0x80:
        return cp == 32 or 9 <= cp <= 13
    if cp < 0x1680:
        return cp == 0x85 or cp == 0xA0
    return (cp == 0x1680 or 0x2000 <= cp <= 0x200A or cp == 0x2028 or cp == 0x2029 or cp == 0x202F
            or cp == 0x205F or cp == 0x3000)
