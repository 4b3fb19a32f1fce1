# Included by pretok_llama.pyx: the GPT-2 and Llama 3 / Qwen 2 splitters of
# llama_splitters.pxi (split_gpt2, split_llama3 without marks or JAIS2's cascade) over the
# UTF-8 bytes themselves, for a LlamaSplitter of that one regex: each character is decoded
# (as pretok_common.decode_utf8 decodes it) and its flags looked up as it is read, and byte
# ends are pushed directly (no codepoint buffer, no packing, no cut_to_bytes). Each line
# mirrors its codepoint twin; tests/unit/test_pretokenizers.py checks the two agree.


cdef struct ByteText:
    const unsigned char* s
    Py_ssize_t n
    Py_ssize_t prev_end
    const unsigned char* ascii        # flags of ASCII (the splitter's table)
    const unsigned short* index       # the two-level flag table
    const unsigned char* blocks
    bint long_s                       # Oniguruma's (?i): U+017F folds to 's'
    IdBuf* out


cdef inline int bt_decode(const unsigned char* s, Py_ssize_t n, Py_ssize_t i, uint32_t* cp) noexcept nogil:
    """Byte length of the character at s[i] (< n), its code point in cp: the rules of
    pretok_common.decode_utf8 (a byte that starts no sequence is U+FFFD of one byte)."""
    cdef unsigned char b0 = s[i]
    if b0 < 0x80:
        cp[0] = b0
        return 1
    if b0 >= 0xC2 and b0 < 0xE0 and i + 1 < n and (s[i + 1] & 0xC0) == 0x80:
        cp[0] = ((b0 & 0x1F) << 6) | (s[i + 1] & 0x3F)
        return 2
    if (b0 & 0xF0) == 0xE0 and i + 2 < n and (s[i + 1] & 0xC0) == 0x80 and (s[i + 2] & 0xC0) == 0x80:
        cp[0] = ((b0 & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
        return 3
    if ((b0 & 0xF8) == 0xF0 and i + 3 < n and (s[i + 1] & 0xC0) == 0x80
            and (s[i + 2] & 0xC0) == 0x80 and (s[i + 3] & 0xC0) == 0x80):
        cp[0] = ((b0 & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F)
        return 4
    cp[0] = 0xFFFD
    return 1


cdef inline unsigned char splitter_flags(const unsigned char* ascii, const unsigned short* index,
                                         const unsigned char* blocks, uint32_t cp) noexcept nogil:
    """A code point's flags in a splitter's table (llama.cpp's or Oniguruma's); past
    U+10FFFF only LF_DEFINED (llama.cpp's rule; valid UTF-8 never gets there)."""
    if cp < 128:
        return ascii[cp]
    if cp >= 0x110000:
        return LF_DEFINED
    return blocks[(<Py_ssize_t>index[cp >> 8] << 8) | (cp & 255)]


cdef unsigned char bt_at_slow(ByteText* t, Py_ssize_t i, uint32_t* cp, int* length) noexcept nogil:
    # bt_at past the end or on a non-ASCII byte.
    if i >= t.n:
        cp[0] = OUT_OF_RANGE
        length[0] = 0
        return 0
    length[0] = bt_decode(t.s, t.n, i, cp)
    return splitter_flags(t.ascii, t.index, t.blocks, cp[0])


cdef inline unsigned char bt_at(ByteText* t, Py_ssize_t i, uint32_t* cp, int* length) noexcept nogil:
    """Flags of the character at byte i, its code point and byte length; past the end:
    flags 0, OUT_OF_RANGE, length 0 (span_fl / span_cpt's rule)."""
    cdef unsigned char b
    if i < t.n:
        b = t.s[i]
        if b < 0x80:
            cp[0] = b
            length[0] = 1
            return t.ascii[b]
    return bt_at_slow(t, i, cp, length)


cdef inline Py_ssize_t bt_run(ByteText* t, Py_ssize_t pos, unsigned char mask) noexcept nogil:
    """The end of the run of characters from pos whose flags have a bit of `mask`
    (ASCII byte by byte without decoding)."""
    cdef uint32_t c
    cdef int length
    cdef unsigned char b
    while pos < t.n:
        b = t.s[pos]
        if b < 0x80:
            if not (t.ascii[b] & mask):
                return pos
            pos += 1
        elif bt_at(t, pos, &c, &length) & mask:
            pos += length
        else:
            return pos
    return pos


cdef inline Py_ssize_t bt_run_other(ByteText* t, Py_ssize_t pos, unsigned char mask) noexcept nogil:
    """The end of the run of characters from pos whose flags have no bit of `mask` (and
    are not 0: the loops `while not (f2 & mask) and f2`)."""
    cdef uint32_t c
    cdef int length
    cdef unsigned char b, f
    while pos < t.n:
        b = t.s[pos]
        if b < 0x80:
            f = t.ascii[b]
            length = 1
        else:
            f = bt_at(t, pos, &c, &length)
        if (f & mask) or not f:
            return pos
        pos += length
    return pos


cdef inline int bt_add(ByteText* t, Py_ssize_t end) noexcept nogil:
    # Parity: llama.cpp _add_token (empty pieces are not emitted), as add_token
    if end > t.prev_end:
        t.prev_end = end
        return idbuf_push(t.out, <int32_t>end)
    t.prev_end = end
    return 0


cdef inline int bt_contraction(ByteText* t, Py_ssize_t pos, bint fold) noexcept nogil:
    """Byte length of 's 't 'm 'd 're 've 'll at pos (an apostrophe), 0 when none
    (contraction_at; `fold`: case-insensitive)."""
    cdef uint32_t a, b
    cdef int la, lb
    bt_at(t, pos + 1, &a, &la)
    if la == 0:
        return 0
    if fold:
        a = ascii_lower(a)
        if a == 0x17F and t.long_s:
            a = 0x73   # Parity: Oniguruma's case fold class {S, s, U+017F}
    if a == 0x73 or a == 0x74 or a == 0x6D or a == 0x64:
        return 1 + la
    bt_at(t, pos + 1 + la, &b, &lb)
    if lb == 0:
        return 0
    if fold:
        b = ascii_lower(b)
    if (a == 0x72 and b == 0x65) or (a == 0x76 and b == 0x65) or (a == 0x6C and b == 0x6C):
        return 1 + la + lb
    return 0


cdef inline int bt_whitespace(ByteText* t, Py_ssize_t* ppos, int first_len, bint newlines) noexcept nogil:
    """split_whitespace_tail (`newlines`: with \\s*[\\r\\n]+ first) / split_gpt2's end:
    \\s+(?!\\S)|\\s+, else one character."""
    cdef Py_ssize_t pos = ppos[0], p = pos, last_start = pos, last_nl = -1, nws = 0
    cdef uint32_t c
    cdef int length
    while bt_at(t, p, &c, &length) & F_SPACE:
        if newlines and (c == 0x0D or c == 0x0A):
            last_nl = p + length
        last_start = p
        p += length
        nws += 1
    if last_nl >= 0:
        pos = last_nl
    elif nws > 1 and p < t.n:
        pos = last_start
    elif nws > 0:
        pos = p
    else:
        pos += first_len
    ppos[0] = pos
    return bt_add(t, pos)


cdef int bt_split_llama3(ByteText* t, int max_digits) noexcept nogil:
    # split_llama3 (marks False, jais2 False) over bytes.
    cdef Py_ssize_t pos = 0
    cdef uint32_t cpt, c2
    cdef int length, l2, k, count
    cdef unsigned char f, f2
    cdef unsigned char not_punct = F_SPACE | F_LETTER | F_NUMBER
    while pos < t.n:
        f = bt_at(t, pos, &cpt, &length)
        if cpt == 0x27:
            k = bt_contraction(t, pos, True)
            if k:
                pos += k
                if bt_add(t, pos) < 0:
                    return -1
                continue
        if not (cpt == 0x0D or cpt == 0x0A or (f & F_NUMBER)):
            if (f & F_LETTER) or (bt_at(t, pos + length, &c2, &l2) & F_LETTER):
                pos = bt_run(t, pos + length, F_LETTER)
                if bt_add(t, pos) < 0:
                    return -1
                continue
        if f & F_NUMBER:
            if max_digits == 1:
                pos += length
                if bt_add(t, pos) < 0:
                    return -1
                continue
            count = 0
            while bt_at(t, pos, &c2, &l2) & F_NUMBER:
                pos += l2
                count += 1
                if count >= max_digits:
                    if bt_add(t, pos) < 0:
                        return -1
                    count = 0
            if bt_add(t, pos) < 0:
                return -1
            continue
        f2 = bt_at(t, pos + length, &c2, &l2) if cpt == 0x20 else f
        if not (f2 & not_punct) and f:
            pos = bt_run_other(t, pos + (cpt == 0x20), not_punct)
            while pos < t.n and (t.s[pos] == 0x0D or t.s[pos] == 0x0A):
                pos += 1
            if bt_add(t, pos) < 0:
                return -1
            continue
        if bt_whitespace(t, &pos, length, True) < 0:
            return -1
    return 0


cdef int bt_split_gpt2(ByteText* t) noexcept nogil:
    # split_gpt2 over bytes.
    cdef Py_ssize_t pos = 0
    cdef uint32_t cpt, c2
    cdef int length, l2, k
    cdef unsigned char f, f2, cls
    while pos < t.n:
        f = bt_at(t, pos, &cpt, &length)
        if cpt == 0x27:
            k = bt_contraction(t, pos, False)
            if k:
                pos += k
                if bt_add(t, pos) < 0:
                    return -1
                continue
        f2 = bt_at(t, pos + length, &c2, &l2) if cpt == 0x20 else f
        cls = 0
        if f2 & F_LETTER:
            cls = F_LETTER
        elif f2 & F_NUMBER:
            cls = F_NUMBER
        if cls:
            pos = bt_run(t, pos + (cpt == 0x20), cls)
            if bt_add(t, pos) < 0:
                return -1
            continue
        if not (f2 & (F_SPACE | F_LETTER | F_NUMBER)) and f2:
            pos = bt_run_other(t, pos + (cpt == 0x20), F_SPACE | F_LETTER | F_NUMBER)
            if bt_add(t, pos) < 0:
                return -1
            continue
        if bt_whitespace(t, &pos, length, False) < 0:
            return -1
    return 0
