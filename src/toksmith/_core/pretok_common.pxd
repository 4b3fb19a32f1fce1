# Shared pieces of the native pre-tokenizers (pretok_llama.pyx, pretok_tiktoken.pyx):
# the per-codepoint flag bits of the generated tables (tools/gen_unicode_tables.py),
# the two-level table lookup and one UTF-8 decoding pass.
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libc.string cimport memcpy
from toksmith._core.buffers cimport ByteBuf, IdBuf, bytebuf_append, idbuf_reserve

# Flag bits, one byte per codepoint (low four bits have the same meaning in both tables).
cdef enum:
    F_LETTER = 1      # \p{L}
    F_NUMBER = 2      # \p{N}
    F_MARK = 4        # \p{M}
    F_SPACE = 8       # \s (llama.cpp: its whitespace set; tiktoken: White_Space)
    # llama.cpp table only
    LF_PUNCT = 16     # \p{P}
    LF_SYMBOL = 32    # \p{S}
    LF_DEFINED = 64   # set for every codepoint (llama.cpp's flags are never 0 in range)
    # tiktoken table only
    TF_UPPERISH = 16  # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
    TF_LOWERISH = 32  # [\p{Ll}\p{Lm}\p{Lo}\p{M}]

cdef inline unsigned char table_flags(const unsigned short* index, const unsigned char* blocks,
                                      uint32_t cp) noexcept nogil:
    if cp >= 0x110000:
        return 0
    return blocks[(<Py_ssize_t>index[cp >> 8] << 8) | (cp & 255)]


cdef inline Py_ssize_t decode_utf8(const unsigned char* s, Py_ssize_t n, IdBuf* cpts,
                                   IdBuf* starts) noexcept nogil:
    """Decode `s` once: codepoints into `cpts`, byte offset of each into `starts` (plus n at the end).

    The pre-tokenizers assume valid UTF-8 (a normalizer replaced bad bytes before); a byte
    that does not start a well-formed sequence still decodes, as U+FFFD of one byte, so
    nothing can crash. Returns the number of codepoints, or -1 when memory runs out.
    """
    cdef Py_ssize_t i = 0, k = 0
    cdef uint32_t c
    cdef unsigned char b0
    if idbuf_reserve(cpts, n + 1) < 0 or idbuf_reserve(starts, n + 1) < 0:
        return -1
    cdef int32_t* cp = cpts.data
    cdef int32_t* st = starts.data
    while i < n:
        b0 = s[i]
        st[k] = <int32_t>i
        if b0 < 0x80:
            cp[k] = b0
            i += 1
        elif b0 >= 0xC2 and b0 < 0xE0 and i + 1 < n and (s[i + 1] & 0xC0) == 0x80:
            cp[k] = ((b0 & 0x1F) << 6) | (s[i + 1] & 0x3F)
            i += 2
        elif (b0 & 0xF0) == 0xE0 and i + 2 < n and (s[i + 1] & 0xC0) == 0x80 and (s[i + 2] & 0xC0) == 0x80:
            cp[k] = ((b0 & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
            i += 3
        elif ((b0 & 0xF8) == 0xF0 and i + 3 < n and (s[i + 1] & 0xC0) == 0x80
                and (s[i + 2] & 0xC0) == 0x80 and (s[i + 3] & 0xC0) == 0x80):
            cp[k] = ((b0 & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F)
            i += 4
        else:
            cp[k] = 0xFFFD
            i += 1
        k += 1
    st[k] = <int32_t>n
    cpts.size = k
    starts.size = k + 1
    return k


# After decoding, each codepoint slot also carries its flag byte in bits 24..30, so the
# splitters need no second per-codepoint buffer: packed = flags << 24 | codepoint.
cdef inline uint32_t packed_cpt(int32_t x) noexcept nogil:
    return <uint32_t>x & 0xFFFFFF


cdef inline unsigned char packed_flags(int32_t x) noexcept nogil:
    return <unsigned char>((<uint32_t>x >> 24) & 0x7F)


cdef inline int cut_to_bytes(IdBuf* ends, Py_ssize_t base, const int32_t* starts) noexcept nogil:
    """Turn the codepoint cut positions ends[base:] into byte offsets, in place."""
    cdef Py_ssize_t i
    for i in range(base, ends.size):
        ends.data[i] = starts[ends.data[i]]
    return 0


cdef inline int _llama_seq(const unsigned char* s, Py_ssize_t n, Py_ssize_t i, uint32_t* cp) noexcept nogil:
    """Length of the sequence at s[i] as llama.cpp's unicode_cpt_from_utf8 reads it (lead and
    trail bit patterns only; codepoints past U+10FFFF rejected since unicode_cpt_to_utf8
    throws on them), or 0 when the byte becomes U+FFFD."""
    cdef unsigned char b0 = s[i]
    cdef int need, k
    cdef uint32_t c
    if b0 < 0x80:
        cp[0] = b0
        return 1
    if b0 < 0xC0 or b0 >= 0xF8:
        return 0
    need = 1 if b0 < 0xE0 else (2 if b0 < 0xF0 else 3)
    if i + need >= n:
        return 0
    c = b0 & (0x1F if need == 1 else (0x0F if need == 2 else 0x07))
    for k in range(1, need + 1):
        if (s[i + k] & 0xC0) != 0x80:
            return 0
        c = (c << 6) | (s[i + k] & 0x3F)
    if c > 0x10FFFF:
        return 0
    cp[0] = c
    return need + 1


cdef inline int _utf8_len(uint32_t c) noexcept nogil:
    return 1 if c < 0x80 else (2 if c < 0x800 else (3 if c < 0x10000 else 4))


cdef inline int append_cpt_utf8(ByteBuf* out, uint32_t c) noexcept nogil:
    """Append code point c (<= U+10FFFF) as UTF-8 (llama.cpp unicode_cpt_to_utf8); -1: memory."""
    cdef char enc[4]
    cdef int k
    if c < 0x80:
        enc[0] = <char>c
        k = 1
    elif c < 0x800:
        enc[0] = <char>(0xC0 | (c >> 6))
        enc[1] = <char>(0x80 | (c & 0x3F))
        k = 2
    elif c < 0x10000:
        enc[0] = <char>(0xE0 | (c >> 12))
        enc[1] = <char>(0x80 | ((c >> 6) & 0x3F))
        enc[2] = <char>(0x80 | (c & 0x3F))
        k = 3
    else:
        enc[0] = <char>(0xF0 | (c >> 18))
        enc[1] = <char>(0x80 | ((c >> 12) & 0x3F))
        enc[2] = <char>(0x80 | ((c >> 6) & 0x3F))
        enc[3] = <char>(0x80 | (c & 0x3F))
        k = 4
    return bytebuf_append(out, enc, k)


cdef inline int llama_clean_utf8_into(const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
    """Rewrite `s` as llama.cpp's tokenizer sees it: each byte that does not start a sequence
    becomes U+FFFD, overlong forms their shortest form (Parity: llama.cpp
    unicode_cpts_from_utf8 + unicode_cpt_to_utf8). Returns 1 when `s` needs no change (out
    untouched: use s itself), 0 when `out` holds the rewritten text, -1 when memory runs out.
    """
    cdef Py_ssize_t i = 0
    cdef uint32_t c = 0
    cdef int k
    cdef unsigned char b
    cdef uint64_t v
    while i < n:
        b = s[i]
        if b < 0x80:
            i += 1
            while i + 8 <= n:   # ASCII eight bytes at a time
                memcpy(&v, s + i, 8)
                if v & <uint64_t>0x8080808080808080:
                    break
                i += 8
            continue
        # 2-byte and 3-byte sequences but for lead E0 (may be overlong): unchanged
        if 0xE1 <= b <= 0xEF and i + 2 < n and (s[i + 1] & 0xC0) == 0x80 and (s[i + 2] & 0xC0) == 0x80:
            i += 3
            continue
        if 0xC2 <= b <= 0xDF and i + 1 < n and (s[i + 1] & 0xC0) == 0x80:
            i += 2
            continue
        k = _llama_seq(s, n, i, &c)
        if k == 0 or k != _utf8_len(c):
            break
        i += k
    if i >= n:
        return 1
    out.size = 0
    if bytebuf_append(out, <const char*>s, i) < 0:
        return -1
    while i < n:
        k = _llama_seq(s, n, i, &c)
        if k == 0:
            if bytebuf_append(out, "\xef\xbf\xbd", 3) < 0:
                return -1
            i += 1
            continue
        if append_cpt_utf8(out, c) < 0:
            return -1
        i += k
    return 0
