# UTF-8 helpers with sentencepiece's exact rules (src/util.h in google/sentencepiece).
from libc.stdint cimport uint32_t


cdef inline int one_char_len(unsigned char lead) noexcept nogil:
    """Length of the character starting with `lead`, from its high nibble alone.

    Parity: sentencepiece's OneCharLen table (1 for ASCII and stray
    continuation bytes, 2 for C0-DF, 3 for E0-EF, 4 for F0-FF).
    """
    if lead < 0xC0:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


cdef inline bint _is_trail(unsigned char c) noexcept nogil:
    return (c & 0xC0) == 0x80


cdef inline bint _is_valid_codepoint(uint32_t c) noexcept nogil:
    return c < 0xD800 or (0xE000 <= c <= 0x10FFFF)


cdef inline int valid_char_len(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Byte length of the well-formed UTF-8 character at `s`, or 0 if malformed.

    Parity: sentencepiece's IsValidDecodeUTF8 (rejects overlongs, surrogates and
    code points past U+10FFFF; a real U+FFFD is valid).
    """
    cdef uint32_t cp
    if n <= 0:
        return 0
    if s[0] < 0x80:
        return 1
    if n >= 2 and (s[0] & 0xE0) == 0xC0:
        cp = ((s[0] & 0x1F) << 6) | (s[1] & 0x3F)
        if _is_trail(s[1]) and cp >= 0x80:
            return 2
    elif n >= 3 and (s[0] & 0xF0) == 0xE0:
        cp = ((s[0] & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
        if _is_trail(s[1]) and _is_trail(s[2]) and cp >= 0x800 and _is_valid_codepoint(cp):
            return 3
    elif n >= 4 and (s[0] & 0xF8) == 0xF0:
        cp = ((s[0] & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F)
        if (_is_trail(s[1]) and _is_trail(s[2]) and _is_trail(s[3])
                and cp >= 0x10000 and _is_valid_codepoint(cp)):
            return 4
    return 0


cdef inline int structural_char_len(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Byte length of the character at `s` checking only lead/trail bit patterns, 0 if malformed.

    Parity: llama.cpp's unicode_cpt_from_utf8 (no overlong or surrogate checks).
    """
    if n <= 0:
        return 0
    if (s[0] & 0x80) == 0:
        return 1
    if (s[0] & 0x40) == 0:
        return 0
    if (s[0] & 0x20) == 0:
        return 2 if n >= 2 and _is_trail(s[1]) else 0
    if (s[0] & 0x10) == 0:
        return 3 if n >= 3 and _is_trail(s[1]) and _is_trail(s[2]) else 0
    if (s[0] & 0x08) == 0:
        return 4 if n >= 4 and _is_trail(s[1]) and _is_trail(s[2]) and _is_trail(s[3]) else 0
    return 0


cdef extern from *:
    """
    static const char TOKSMITH_SPACE_SYMBOL[] = "\\xe2\\x96\\x81";      /* U+2581 */
    static const char TOKSMITH_REPLACEMENT_CHAR[] = "\\xef\\xbf\\xbd";  /* U+FFFD */
    """
    const char* SPACE_SYMBOL "TOKSMITH_SPACE_SYMBOL"
    const char* REPLACEMENT_CHAR "TOKSMITH_REPLACEMENT_CHAR"
