# Included by pretok_llama.pyx: llama.cpp's codepoint flags and the view of one piece that
# its hand-written splitters index, with their out-of-range rules.


cdef unsigned char ASCII_LFLAGS[128]      # lflags of ASCII, one load instead of two
for _c in range(128):
    ASCII_LFLAGS[_c] = table_flags(LLAMA_FLAGS_INDEX, LLAMA_FLAGS_BLOCKS, _c)


cdef inline unsigned char lflags(uint32_t cp) noexcept nogil:
    if cp < 128:
        return ASCII_LFLAGS[cp]
    # llama.cpp returns flags with only UNDEFINED set past U+10FFFF: non-zero, nothing else.
    if cp >= 0x110000:
        return LF_DEFINED
    return table_flags(LLAMA_FLAGS_INDEX, LLAMA_FLAGS_BLOCKS, cp)


cdef inline bint is_han(uint32_t c) noexcept nogil:
    # Parity: llama.cpp unicode_cpt_is_han
    return ((0x4E00 <= c <= 0x9FFF) or (0x3400 <= c <= 0x4DBF) or (0x20000 <= c <= 0x2A6DF)
            or (0x2A700 <= c <= 0x2B73F) or (0x2B740 <= c <= 0x2B81F) or (0x2B820 <= c <= 0x2CEAF)
            or (0x2CEB0 <= c <= 0x2EBEF) or (0xF900 <= c <= 0xFAFF) or (0x2F800 <= c <= 0x2FA1F))


cdef inline uint32_t ascii_lower(uint32_t c) noexcept nogil:
    # Parity: llama.cpp unicode_tolower, for the letters the contractions test (only ASCII
    # letters lower-case to s t m d r v e l: checked by tools/gen_unicode_tables.py).
    if 0x41 <= c <= 0x5A:
        return c + 32
    return c


# A view of one range [ini, end) of the (packed) codepoints with llama.cpp's out-of-range rules.
cdef struct Span:
    const int32_t* cpts
    Py_ssize_t ini
    Py_ssize_t end
    Py_ssize_t prev_end
    IdBuf* out
    bint long_s         # Oniguruma's (?i): U+017F (long s) folds to 's' too


cdef inline uint32_t span_cpt(Span* v, Py_ssize_t pos) noexcept nogil:
    return packed_cpt(v.cpts[pos]) if v.ini <= pos < v.end else OUT_OF_RANGE


cdef inline unsigned char span_fl(Span* v, Py_ssize_t pos) noexcept nogil:
    return packed_flags(v.cpts[pos]) if v.ini <= pos < v.end else 0


cdef inline int add_token(Span* v, Py_ssize_t end) noexcept nogil:
    # Parity: llama.cpp _add_token (empty pieces are not emitted)
    if end > v.prev_end:
        v.prev_end = end
        return idbuf_push(v.out, <int32_t>end)
    v.prev_end = end
    return 0


cdef inline bint contraction_at(Span* v, Py_ssize_t pos, Py_ssize_t* length, bint fold) noexcept nogil:
    """'s 't 'm 'd (2) or 're 've 'll (3) at pos; `fold`: case-insensitive."""
    cdef uint32_t a, b
    if span_cpt(v, pos) != 0x27 or pos + 1 >= v.end:
        return False
    a = span_cpt(v, pos + 1)
    if fold:
        a = ascii_lower(a)
        if a == 0x17F and v.long_s:
            a = 0x73   # Parity: Oniguruma's case fold class {S, s, U+017F}
    if a == 0x73 or a == 0x74 or a == 0x6D or a == 0x64:
        length[0] = 2
        return True
    if pos + 2 < v.end:
        b = span_cpt(v, pos + 2)
        if fold:
            b = ascii_lower(b)
        if (a == 0x72 and b == 0x65) or (a == 0x76 and b == 0x65) or (a == 0x6C and b == 0x6C):
            length[0] = 3
            return True
    return False
