"""tokenizer.json's simple normalizers: Strip, Prepend, ByteLevel and Nmt (tokenizers 0.23.3
normalizers/*.rs), as native `Normalizer` stages. (Replace is in hf_replace.pyx and
hf_regex_stages.pyx.)

Each returns TEXT_UNCHANGED when it changes nothing, and NORMALIZED_LATE_START when the
first character it keeps comes from after the first character of its input (tokenizers'
alignments then start past 0: Metaspace's prepend_scheme "first" looks at that).

    >>> HfStrip(True, True).normalize_text(" a\\u3000")
    'a'
    >>> HfPrepend("\\u2581").normalize_text("a")
    '▁a'
    >>> HfNmt().normalize_text("a\\x01\\tb")
    'a b'
"""
from cpython.bytes cimport PyBytes_AS_STRING
from libc.stdint cimport uint32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memchr, memcpy

from toksmith._core.buffers cimport ByteBuf, bytebuf_append, bytebuf_free, bytebuf_reserve
from toksmith._core.byte_unicode cimport cpt_of_byte
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.hf_chars cimport char_start_before, decode_one, rust_is_whitespace
from toksmith._core.normalizer cimport NORMALIZED_LATE_START, TEXT_UNCHANGED, Normalizer

from toksmith._core.errors import raise_for_status


def starts_late(Normalizer normalizer, text):
    """Whether `normalizer` says the first character of its result comes from after the
    first character of `text` (NORMALIZED_LATE_START), for tests and debugging.

    >>> starts_late(HfStrip(True, True), " a"), starts_late(HfStrip(True, True), "a ")
    (True, False)
    """
    cdef bytes data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    cdef ByteBuf out
    cdef int rc
    out.data = NULL
    out.size = 0
    out.cap = 0
    try:
        rc = normalizer.normalize(<const unsigned char*>PyBytes_AS_STRING(data), len(data), &out)
        raise_for_status(rc)
        return rc == NORMALIZED_LATE_START
    finally:
        bytebuf_free(&out)


cdef class HfStrip(Normalizer):
    """Parity: normalizers/strip.rs Strip and NormalizedString::lrstrip: leading and/or
    trailing characters with Rust's char::is_whitespace are removed."""

    cdef readonly bint left
    cdef readonly bint right

    def __cinit__(self, bint left, bint right):
        self.left = left
        self.right = right

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef Py_ssize_t start = 0, end = n, k, before
        cdef uint32_t cp
        if self.left:
            while start < n:
                k = decode_one(s + start, n - start, &cp)
                if not rust_is_whitespace(cp):
                    break
                start += k
        if self.right:
            while end > start:
                before = char_start_before(s, end)
                decode_one(s + before, end - before, &cp)
                if not rust_is_whitespace(cp):
                    break
                end = before
        if start == 0 and end == n:
            return TEXT_UNCHANGED
        out.size = 0
        if bytebuf_append(out, <const char*>s + start, end - start) < 0:
            return ERR_NO_MEMORY
        return NORMALIZED_LATE_START if start > 0 else 0

    cdef Py_ssize_t carry_start(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t flagged,
                                const unsigned char* o, Py_ssize_t m) noexcept nogil:
        # Parity: lrstrip keeps the alignments of the characters it keeps
        cdef Py_ssize_t start = 0, k
        cdef uint32_t cp
        if self.left:
            while start < n:
                k = decode_one(s + start, n - start, &cp)
                if not rust_is_whitespace(cp):
                    break
                start += k
        return max(0, min(flagged - start, m))


cdef class HfPrepend(Normalizer):
    """Parity: normalizers/prepend.rs: `prepend` goes before a non-empty text."""

    cdef readonly bytes prepend
    cdef const char* prepend_p
    cdef Py_ssize_t prepend_len

    def __cinit__(self, prepend):
        self.prepend = prepend.encode("utf-8") if isinstance(prepend, str) else bytes(prepend)
        self.prepend_p = PyBytes_AS_STRING(self.prepend)
        self.prepend_len = len(self.prepend)

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef Py_ssize_t plen = self.prepend_len
        if n == 0 or plen == 0:
            return TEXT_UNCHANGED
        out.size = 0
        if bytebuf_reserve(out, plen + n) < 0:
            return ERR_NO_MEMORY
        memcpy(out.data, self.prepend_p, plen)
        memcpy(out.data + plen, s, n)
        out.size = plen + n
        return 0

    cdef Py_ssize_t carry_start(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t flagged,
                                const unsigned char* o, Py_ssize_t m) noexcept nogil:
        # Parity: NormalizedString::prepend aligns the prepended text with the first character
        if flagged <= 0:
            return 0
        return min(self.prepend_len + flagged, m)


cdef class HfByteLevelNormalizer(Normalizer):
    """Parity: normalizers/byte_level.rs: every byte becomes its character in GPT-2's
    byte<->unicode map (printable ASCII but space stays as it is)."""

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef Py_ssize_t i, at = 0
        cdef int cp
        cdef unsigned char* o
        if n == 0:
            return TEXT_UNCHANGED
        out.size = 0
        if bytebuf_reserve(out, 2 * n) < 0:
            return ERR_NO_MEMORY
        o = <unsigned char*>out.data
        for i in range(n):
            cp = cpt_of_byte(s[i])
            if cp < 0x80:
                o[at] = <unsigned char>cp
                at += 1
            else:       # every mapped code point is below U+0800: two bytes
                o[at] = <unsigned char>(0xC0 | (cp >> 6))
                o[at + 1] = <unsigned char>(0x80 | (cp & 0x3F))
                at += 2
        out.size = at
        return 0


# Nmt's action on an ASCII byte: keep it, drop it, or make it a space.
cdef enum:
    NMT_KEEP = 0
    NMT_DROP = 1
    NMT_SPACE = 2

cdef unsigned char _NMT_ASCII[128]
for _b in range(128):
    _NMT_ASCII[_b] = NMT_DROP if (1 <= _b <= 8 or _b == 0x0B or 0x0E <= _b <= 0x1F or _b == 0x7F) \
        else NMT_SPACE if _b in (0x09, 0x0A, 0x0C, 0x0D) else NMT_KEEP


cdef inline int _nmt_action(uint32_t cp) noexcept nogil:
    """Parity: normalizers/unicode.rs do_nmt: its filter of control characters, then its
    map of other whitespace to ' '."""
    if cp < 0x80:
        return _NMT_ASCII[cp]
    if cp == 0x8F or cp == 0x9F:
        return NMT_DROP
    if (cp == 0x1680 or 0x200B <= cp <= 0x200F or cp == 0x2028 or cp == 0x2029 or cp == 0x2581
            or cp == 0xFEFF or cp == 0xFFFD):
        return NMT_SPACE
    return NMT_KEEP


cdef class HfNmt(Normalizer):
    """Parity: normalizers/unicode.rs Nmt."""

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef Py_ssize_t i = 0, k, copied = 0     # s[:copied] is in out (once changed)
        cdef uint32_t cp
        cdef int action
        cdef bint changed = False, kept_any = False, late = False
        while i < n:
            if s[i] < 0x80:
                action = _NMT_ASCII[s[i]]
                k = 1
            else:
                k = decode_one(s + i, n - i, &cp)
                action = _nmt_action(cp)
            if action != NMT_KEEP:
                if not changed:
                    out.size = 0
                    changed = True
                if bytebuf_append(out, <const char*>s + copied, i - copied) < 0:
                    return ERR_NO_MEMORY
                if action == NMT_SPACE:
                    if bytebuf_append(out, " ", 1) < 0:
                        return ERR_NO_MEMORY
                elif not kept_any:
                    late = True         # filter(): the first character kept comes later
                copied = i + k
            if action != NMT_DROP:
                kept_any = True
            i += k
        if not changed:
            return TEXT_UNCHANGED
        if bytebuf_append(out, <const char*>s + copied, n - copied) < 0:
            return ERR_NO_MEMORY
        return NORMALIZED_LATE_START if late else 0
