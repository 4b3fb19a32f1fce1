# The per-character flag bits of HF tokenizers' normalizers and BERT-style pre-tokenizers
# (generated tables: tools/gen_hf_unicode_tables.py -> unicode_hf_flags.pxi, read with
# `hf_flags(cp)`), and the UTF-8 steps their hot loops share.
from libc.stdint cimport uint32_t

cdef enum:
    HF_DROP = 1 << 0          # BertNormalizer clean_text removes it (NUL, U+FFFD, is_control)
    HF_BERT_SPACE = 1 << 1    # BertNormalizer clean_text makes it ' ' (is_whitespace)
    HF_CHINESE = 1 << 2       # BertNormalizer handle_chinese_chars puts spaces around it
    HF_MN = 1 << 3            # category Mn (BertNormalizer strip_accents drops it after NFD)
    HF_MARK = 1 << 4          # StripAccents drops it (is_combining_mark)
    HF_LOWER = 1 << 5         # char::to_lowercase changes it
    HF_NFD_INERT = 1 << 6     # NFD keeps it and it never reorders
    HF_NFKD_INERT = 1 << 7
    HF_NFC_INERT = 1 << 8     # NFC keeps it; it neither reorders nor composes with what precedes
    HF_NFKC_INERT = 1 << 9
    HF_WHITESPACE = 1 << 10   # char::is_whitespace (= Rust regex \s)
    HF_PUNCT = 1 << 11        # BERT punctuation (is_ascii_punctuation || is_punctuation)
    HF_WORD = 1 << 12         # Rust regex \w


cdef inline int utf8_decode(const unsigned char* s, Py_ssize_t n, uint32_t* cp) noexcept nogil:
    """Decode the well-formed UTF-8 character at s (n > 0 bytes left) into *cp; returns its
    length, or 0 when the bytes there are not well-formed UTF-8 (*cp is then s[0])."""
    cdef unsigned char b = s[0]
    if b < 0x80:
        cp[0] = b
        return 1
    cp[0] = b
    if b < 0xC2:
        return 0
    if b < 0xE0:
        if n >= 2 and (s[1] & 0xC0) == 0x80:
            cp[0] = ((b & 0x1F) << 6) | (s[1] & 0x3F)
            return 2
        return 0
    if b < 0xF0:
        if n >= 3 and (s[1] & 0xC0) == 0x80 and (s[2] & 0xC0) == 0x80:
            cp[0] = ((b & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
            if cp[0] >= 0x800 and not (0xD800 <= cp[0] <= 0xDFFF):
                return 3
        cp[0] = b
        return 0
    if b < 0xF5 and n >= 4 and (s[1] & 0xC0) == 0x80 and (s[2] & 0xC0) == 0x80 and (s[3] & 0xC0) == 0x80:
        cp[0] = ((b & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F)
        if 0x10000 <= cp[0] <= 0x10FFFF:
            return 4
    cp[0] = b
    return 0


cdef inline int utf8_put(char* d, uint32_t c) noexcept nogil:
    """Write code point c as UTF-8 at d (room for 4 bytes); returns its length."""
    if c < 0x80:
        d[0] = <char>c
        return 1
    if c < 0x800:
        d[0] = <char>(0xC0 | (c >> 6))
        d[1] = <char>(0x80 | (c & 0x3F))
        return 2
    if c < 0x10000:
        d[0] = <char>(0xE0 | (c >> 12))
        d[1] = <char>(0x80 | ((c >> 6) & 0x3F))
        d[2] = <char>(0x80 | (c & 0x3F))
        return 3
    d[0] = <char>(0xF0 | (c >> 18))
    d[1] = <char>(0x80 | ((c >> 12) & 0x3F))
    d[2] = <char>(0x80 | ((c >> 6) & 0x3F))
    d[3] = <char>(0x80 | (c & 0x3F))
    return 4
