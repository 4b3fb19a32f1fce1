"""Invalid UTF-8 becomes U+FFFD before a byte-level pre-tokenizer sees the text.

Both normalizers return `TEXT_UNCHANGED` (1) without copying when the text is
well-formed UTF-8, which is every str input and almost every bytes input.

- `LlamaCppUtf8Repair`: llama.cpp's rules (unicode_cpts_from_utf8 + unicode_cpt_to_utf8,
  what every llama.cpp BPE session tokenizes): a sequence is read by its lead/trail bit
  patterns only, so an overlong form comes back in its shortest form and an encoded
  surrogate is kept; a byte that starts no complete sequence becomes one U+FFFD.
- `PythonUtf8Repair`: ``bytes.decode("utf-8", "replace")`` (CPython's maximal-subpart
  rule): what a str-only reference such as tiktoken sees when bytes are decoded first.

>>> LlamaCppUtf8Repair().normalize_text(b"a\\xffb\\xc0\\x80")    # doctest: +SKIP
b'a\\xef\\xbf\\xbdb\\x00'
"""
from libc.stdint cimport uint64_t
from libc.string cimport memchr, memcpy

from toksmith._core.buffers cimport ByteBuf, bytebuf_append, bytebuf_free, bytebuf_reserve
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.normalizer cimport TEXT_UNCHANGED
from toksmith._core.pretok_common cimport llama_clean_utf8_into
from toksmith._core.utf8 cimport REPLACEMENT_CHAR, SPACE_SYMBOL, valid_char_len


cdef inline Py_ssize_t _valid_prefix(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Length of the longest well-formed UTF-8 prefix of s[:n]. The common characters are
    checked inline (ASCII eight bytes at a time; 2-byte ones; 3-byte ones but for leads E0
    and ED, whose second byte is restricted), the others by valid_char_len."""
    cdef Py_ssize_t i = 0
    cdef int m
    cdef unsigned char b
    cdef uint64_t v
    while i < n:
        b = s[i]
        if b < 0x80:
            i += 1
            while i + 8 <= n:
                memcpy(&v, s + i, 8)
                if v & <uint64_t>0x8080808080808080:
                    break
                i += 8
            continue
        if 0xE1 <= b <= 0xEF and b != 0xED and i + 2 < n and (s[i + 1] & 0xC0) == 0x80 \
                and (s[i + 2] & 0xC0) == 0x80:
            i += 3
            continue
        if 0xC2 <= b <= 0xDF and i + 1 < n and (s[i + 1] & 0xC0) == 0x80:
            i += 2
            continue
        m = valid_char_len(s + i, n - i)
        if m == 0:
            return i
        i += m
    return n


cdef int _escape_spaces_in_place(ByteBuf* out) noexcept nogil:
    """Every ' ' in `out` becomes U+2581, filling from the end (no second buffer)."""
    cdef Py_ssize_t spaces = 0, i, j
    for i in range(out.size):
        spaces += out.data[i] == b' '
    if spaces == 0:
        return 0
    if bytebuf_reserve(out, 2 * spaces) < 0:
        return ERR_NO_MEMORY
    j = out.size + 2 * spaces
    i = out.size
    out.size = j
    while i > 0:
        i -= 1
        if out.data[i] == b' ':
            j -= 3
            out.data[j] = SPACE_SYMBOL[0]
            out.data[j + 1] = SPACE_SYMBOL[1]
            out.data[j + 2] = SPACE_SYMBOL[2]
        else:
            j -= 1
            out.data[j] = out.data[i]
    return 0


cdef class LlamaCppUtf8Repair(Normalizer):
    """Parity: llama.cpp unicode_cpts_from_utf8 (U+FFFD per byte that starts no sequence)
    followed by unicode_cpt_to_utf8. A code point past U+10FFFF (leads F4-F7) makes
    llama.cpp's unicode_cpt_to_utf8 throw; here its lead byte becomes U+FFFD.

    `escape_spaces`: every ' ' becomes U+2581 too (llama_escape_whitespace, which
    llama.cpp runs first for gemma4-style vocabularies; U+2581 starts with a lead byte and
    ends a sequence, so it never changes how the bytes around it decode).
    """

    def __init__(self, *, bint escape_spaces=False):
        self.escape_spaces = escape_spaces
        self.repairs_utf8_only = not escape_spaces

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef int rc = llama_clean_utf8_into(s, n, out)
        if rc < 0:
            return ERR_NO_MEMORY
        if not self.escape_spaces:
            return TEXT_UNCHANGED if rc == 1 else 0
        if rc == 1:
            if memchr(s, 32, n) == NULL:
                return TEXT_UNCHANGED
            out.size = 0
            if bytebuf_append(out, <const char*>s, n) < 0:
                return ERR_NO_MEMORY
        return _escape_spaces_in_place(out)

    def normalize_text(self, bytes text):
        """The repaired bytes of `text` (tests)."""
        return normalized_bytes(self, text)


cdef inline int _maximal_subpart(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Bytes of the invalid sequence at `s` that CPython replaces by one U+FFFD.

    Parity: CPython's UTF-8 decoder with errors="replace": the maximal prefix of a
    well-formed sequence (Unicode's "maximal subpart"), at least one byte.
    """
    cdef unsigned char b0 = s[0]
    cdef unsigned char lo = 0x80, hi = 0xBF
    cdef int need, k
    if 0xC2 <= b0 <= 0xDF:
        need = 1
    elif 0xE0 <= b0 <= 0xEF:
        need = 2
        if b0 == 0xE0:
            lo = 0xA0
        elif b0 == 0xED:
            hi = 0x9F
    elif 0xF0 <= b0 <= 0xF4:
        need = 3
        if b0 == 0xF0:
            lo = 0x90
        elif b0 == 0xF4:
            hi = 0x8F
    else:
        return 1
    for k in range(1, need + 1):
        if k >= n:
            return k
        if k == 1:
            if not (lo <= s[1] <= hi):
                return 1
        elif (s[k] & 0xC0) != 0x80:
            return k
    return need + 1   # not reached for an invalid sequence


cdef class PythonUtf8Repair(Normalizer):
    """``bytes.decode("utf-8", "replace").encode()`` without leaving the core."""

    def __cinit__(self, *args, **kwargs):
        self.repairs_utf8_only = True

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef Py_ssize_t i = _valid_prefix(s, n), good
        if i == n:
            return TEXT_UNCHANGED
        out.size = 0
        if bytebuf_reserve(out, n + n // 2 + 8) < 0 or bytebuf_append(out, <const char*>s, i) < 0:
            return ERR_NO_MEMORY
        while i < n:
            if bytebuf_append(out, REPLACEMENT_CHAR, 3) < 0:
                return ERR_NO_MEMORY
            i += _maximal_subpart(s + i, n - i)
            good = _valid_prefix(s + i, n - i)
            if bytebuf_append(out, <const char*>s + i, good) < 0:
                return ERR_NO_MEMORY
            i += good
        return 0

    def normalize_text(self, bytes text):
        """The repaired bytes of `text` (tests)."""
        return normalized_bytes(self, text)


cdef bytes normalized_bytes(Normalizer normalizer, bytes text):
    """What `normalizer` makes of `text`: the text itself when it reports TEXT_UNCHANGED."""
    cdef ByteBuf out
    out.data = NULL
    out.size = 0
    out.cap = 0
    try:
        rc = normalizer.normalize(<const unsigned char*>text, len(text), &out)
        if rc == TEXT_UNCHANGED:
            return text
        if rc < 0:
            raise MemoryError()
        return out.data[:out.size]
    finally:
        bytebuf_free(&out)


def valid_utf8_prefix(const unsigned char[::1] data):
    """How many leading bytes of `data` are well-formed UTF-8 (all of them when it is):
    what ``bytes.decode("utf-8")`` accepts, without making the str.

    >>> valid_utf8_prefix(b"ab\\xffc")    # doctest: +SKIP
    2"""
    cdef Py_ssize_t n = data.shape[0], valid
    if n == 0:
        return 0
    with nogil:
        valid = _valid_prefix(&data[0], n)
    return valid
