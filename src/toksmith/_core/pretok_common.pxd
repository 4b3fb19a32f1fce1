# Shared pieces of the native pre-tokenizers (pretok_llama.pyx, pretok_tiktoken.pyx):
# the per-codepoint flag bits of the generated tables (tools/gen_unicode_tables.py),
# the two-level table lookup and one UTF-8 decoding pass.
from libc.stdint cimport int32_t, uint32_t
from toksmith._core.buffers cimport IdBuf, idbuf_reserve

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
