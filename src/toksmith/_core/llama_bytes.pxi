# Included by pretok_llama.pyx: the GPT-2 and Llama 3 / Qwen 2 splitters of
# llama_splitters.pxi (split_gpt2, split_llama3 without marks or JAIS2's cascade) over the
# UTF-8 bytes themselves, for a LlamaSplitter of that one regex: each character is decoded
# (as pretok_common.decode_utf8 decodes it) and its flags looked up as it is read, and byte
# ends are written directly (no codepoint buffer, no packing, no cut_to_bytes). A character
# is one integer, ch = code point << 16 | byte length << 8 | flags (bt_char). Each line
# mirrors its codepoint twin; tests/unit/test_pretokenizers.py checks the two agree.


cdef struct ByteText:
    const unsigned char* s
    Py_ssize_t n
    Py_ssize_t prev_end
    const uint64_t* ascii             # bt_char of each ASCII byte (the splitter's table)
    const unsigned short* index       # the two-level flag table
    const unsigned char* blocks
    bint long_s                       # Oniguruma's (?i): U+017F folds to 's'
    int32_t* out                      # room for one end per byte (reserved by the caller)
    Py_ssize_t n_out


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


# Past the end: OUT_OF_RANGE, length 0, flags 0 (span_cpt / span_fl's rule).
cdef uint64_t BT_END = (<uint64_t>OUT_OF_RANGE) << 16


cdef inline uint32_t ch_cpt(uint64_t ch) noexcept nogil:
    return <uint32_t>(ch >> 16)


cdef inline int ch_len(uint64_t ch) noexcept nogil:
    return <int>((ch >> 8) & 0xFF)


cdef inline unsigned char ch_fl(uint64_t ch) noexcept nogil:
    return <unsigned char>ch


cdef uint64_t bt_char_slow(ByteText* t, Py_ssize_t i) noexcept nogil:
    # bt_char past the end or at a non-ASCII byte.
    cdef uint32_t cp
    cdef int length
    cdef unsigned char f
    if i >= t.n:
        return BT_END
    length = bt_decode(t.s, t.n, i, &cp)
    if cp >= 0x110000:
        f = LF_DEFINED
    else:
        f = t.blocks[(<Py_ssize_t>t.index[cp >> 8] << 8) | (cp & 255)]
    return (<uint64_t>cp << 16) | (<uint64_t>length << 8) | f


cdef inline uint64_t bt_char(ByteText* t, Py_ssize_t i) noexcept nogil:
    """The character at byte i as code point << 16 | byte length << 8 | flags."""
    cdef unsigned char b
    if i < t.n:
        b = t.s[i]
        if b < 0x80:
            return t.ascii[b]
    return bt_char_slow(t, i)


cdef inline Py_ssize_t bt_run(ByteText* t, Py_ssize_t pos, unsigned char mask) noexcept nogil:
    """The end of the run of characters from pos whose flags have a bit of `mask`."""
    cdef uint64_t ch
    cdef unsigned char b
    while pos < t.n:
        b = t.s[pos]
        if b < 0x80:
            if not (t.ascii[b] & mask):
                return pos
            pos += 1
        else:
            ch = bt_char_slow(t, pos)
            if not (ch & mask):
                return pos
            pos += ch_len(ch)
    return pos


cdef inline Py_ssize_t bt_letters(ByteText* t, Py_ssize_t pos) noexcept nogil:
    """bt_run(t, pos, F_LETTER), eight ASCII bytes at a time while they are ASCII letters
    (the splitter's ASCII letters are A-Z a-z: LlamaSplitter.__init__ checks it)."""
    cdef uint64_t x, stop
    while pos + 8 <= t.n:
        memcpy(&x, t.s + pos, 8)
        stop = non_ascii_letter_bytes(x)
        if stop:
            pos += first_marked_byte(stop)
            if t.s[pos] < 0x80:
                return pos
            break           # a non-ASCII character: bt_run decides
        pos += 8
    return bt_run(t, pos, F_LETTER)


cdef inline Py_ssize_t bt_ascii_word(ByteText* t, Py_ssize_t pos) noexcept nogil:
    """The end of the word at pos when it starts with an ASCII letter or a space and an
    ASCII letter (most pieces of Latin text), else -1. Both splitters take such a word
    as the letters from there on (llama3: [^\\r\\n\\p{L}\\p{N}]?\\p{L}+, gpt2: ?\\p{L}+)."""
    cdef unsigned char b = t.s[pos]
    if b < 0x80 and (t.ascii[b] & F_LETTER):
        return bt_letters(t, pos + 1)
    if b == 0x20 and pos + 1 < t.n:
        b = t.s[pos + 1]
        if b < 0x80 and (t.ascii[b] & F_LETTER):
            return bt_letters(t, pos + 2)
    return -1


cdef inline Py_ssize_t bt_run_other(ByteText* t, Py_ssize_t pos, unsigned char mask) noexcept nogil:
    """The end of the run of characters from pos whose flags have no bit of `mask` (and
    are not 0: the loops `while not (f2 & mask) and f2`)."""
    cdef uint64_t ch
    while pos < t.n:
        ch = bt_char(t, pos)
        if (ch & mask) or not ch_fl(ch):
            return pos
        pos += ch_len(ch)
    return pos


cdef inline void bt_add(ByteText* t, Py_ssize_t end) noexcept nogil:
    # Parity: llama.cpp _add_token (empty pieces are not emitted), as add_token
    if end > t.prev_end:
        t.out[t.n_out] = <int32_t>end
        t.n_out += 1
    t.prev_end = end


cdef inline uint32_t bt_lower(uint64_t ch, bint long_s) noexcept nogil:
    cdef uint32_t c = ascii_lower(ch_cpt(ch))
    if c == 0x17F and long_s:
        return 0x73   # Parity: Oniguruma's case fold class {S, s, U+017F}
    return c


cdef inline int bt_contraction(ByteText* t, Py_ssize_t pos, bint fold) noexcept nogil:
    """Byte length of 's 't 'm 'd 're 've 'll at pos (an apostrophe), 0 when none
    (contraction_at; `fold`: case-insensitive)."""
    cdef uint64_t ca = bt_char(t, pos + 1), cb
    cdef uint32_t a, b
    cdef int la = ch_len(ca)
    if la == 0:
        return 0
    a = bt_lower(ca, t.long_s) if fold else ch_cpt(ca)
    if a == 0x73 or a == 0x74 or a == 0x6D or a == 0x64:
        return 1 + la
    cb = bt_char(t, pos + 1 + la)
    if ch_len(cb) == 0:
        return 0
    b = ascii_lower(ch_cpt(cb)) if fold else ch_cpt(cb)
    if (a == 0x72 and b == 0x65) or (a == 0x76 and b == 0x65) or (a == 0x6C and b == 0x6C):
        return 1 + la + ch_len(cb)
    return 0


cdef inline Py_ssize_t bt_spaces_end(ByteText* t, Py_ssize_t pos) noexcept nogil:
    """The end of the run of U+0020 bytes from pos, eight bytes at a time."""
    cdef uint64_t x, other
    while pos + 8 <= t.n:
        memcpy(&x, t.s + pos, 8)
        other = ~zero_bytes(x ^ spread_byte(0x20)) & <uint64_t>0x8080808080808080
        if other:
            return pos + first_marked_byte(other)
        pos += 8
    while pos < t.n and t.s[pos] == 0x20:
        pos += 1
    return pos


cdef inline Py_ssize_t bt_whitespace(ByteText* t, Py_ssize_t pos, int first_len, bint newlines) noexcept nogil:
    """split_whitespace_tail (`newlines`: with \\s*[\\r\\n]+ first) / split_gpt2's end:
    \\s+(?!\\S)|\\s+, else one character. Returns the end of the piece."""
    cdef Py_ssize_t p = pos, last_start = pos, last_nl = -1, nws = 0, q
    cdef uint64_t ch = bt_char(t, p)
    cdef uint32_t c
    while ch & F_SPACE:
        c = ch_cpt(ch)
        if c == 0x20:
            # a run of spaces (a quarter of the bytes of man pages and code) at once
            q = bt_spaces_end(t, p + 1)
            last_start = q - 1
            nws += q - p
            p = q
            ch = bt_char(t, p)
            continue
        if newlines and (c == 0x0D or c == 0x0A):
            last_nl = p + ch_len(ch)
        last_start = p
        p += ch_len(ch)
        nws += 1
        ch = bt_char(t, p)
    if last_nl >= 0:
        return last_nl
    if nws > 1 and p < t.n:
        return last_start
    if nws > 0:
        return p
    return pos + first_len


cdef void bt_split_llama3(ByteText* t, int max_digits) noexcept nogil:
    # split_llama3 (marks False, jais2 False) over bytes.
    cdef Py_ssize_t pos = 0
    cdef uint64_t ch
    cdef uint32_t cpt
    cdef int length, k, count
    cdef unsigned char f, f2
    cdef unsigned char not_punct = F_SPACE | F_LETTER | F_NUMBER
    cdef Py_ssize_t word_end
    while pos < t.n:
        word_end = bt_ascii_word(t, pos)
        if word_end >= 0:
            pos = word_end
            bt_add(t, pos)
            continue
        ch = bt_char(t, pos)
        cpt = ch_cpt(ch)
        length = ch_len(ch)
        f = ch_fl(ch)
        if cpt == 0x27:
            k = bt_contraction(t, pos, True)
            if k:
                pos += k
                bt_add(t, pos)
                continue
        if not (cpt == 0x0D or cpt == 0x0A or (f & F_NUMBER)):
            if (f & F_LETTER) or (bt_char(t, pos + length) & F_LETTER):
                pos = bt_letters(t, pos + length)
                bt_add(t, pos)
                continue
        if f & F_NUMBER:
            if max_digits == 1:
                pos += length
                bt_add(t, pos)
                continue
            count = 0
            ch = bt_char(t, pos)
            while ch & F_NUMBER:
                pos += ch_len(ch)
                count += 1
                if count >= max_digits:
                    bt_add(t, pos)
                    count = 0
                ch = bt_char(t, pos)
            bt_add(t, pos)
            continue
        f2 = ch_fl(bt_char(t, pos + length)) if cpt == 0x20 else f
        if not (f2 & not_punct) and f:
            pos = bt_run_other(t, pos + (cpt == 0x20), not_punct)
            while pos < t.n and (t.s[pos] == 0x0D or t.s[pos] == 0x0A):
                pos += 1
            bt_add(t, pos)
            continue
        pos = bt_whitespace(t, pos, length, True)
        bt_add(t, pos)


cdef void bt_split_gpt2(ByteText* t) noexcept nogil:
    # split_gpt2 over bytes.
    cdef Py_ssize_t pos = 0
    cdef uint64_t ch
    cdef uint32_t cpt
    cdef int length, k
    cdef unsigned char f2, cls
    cdef Py_ssize_t word_end
    while pos < t.n:
        word_end = bt_ascii_word(t, pos)
        if word_end >= 0:
            pos = word_end
            bt_add(t, pos)
            continue
        ch = bt_char(t, pos)
        cpt = ch_cpt(ch)
        length = ch_len(ch)
        if cpt == 0x27:
            k = bt_contraction(t, pos, False)
            if k:
                pos += k
                bt_add(t, pos)
                continue
        f2 = ch_fl(bt_char(t, pos + length)) if cpt == 0x20 else ch_fl(ch)
        cls = 0
        if f2 & F_LETTER:
            cls = F_LETTER
        elif f2 & F_NUMBER:
            cls = F_NUMBER
        if cls:
            pos = bt_letters(t, pos + (cpt == 0x20)) if cls == F_LETTER else bt_run(t, pos + (cpt == 0x20), cls)
            bt_add(t, pos)
            continue
        if not (f2 & (F_SPACE | F_LETTER | F_NUMBER)) and f2:
            pos = bt_run_other(t, pos + (cpt == 0x20), F_SPACE | F_LETTER | F_NUMBER)
            bt_add(t, pos)
            continue
        pos = bt_whitespace(t, pos, length, False)
        bt_add(t, pos)
