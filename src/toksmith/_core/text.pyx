"""Reading the characters of a str without copying it and without the GIL.

ASCII strings are used in place (their PEP 393 storage is valid UTF-8); other
strings are encoded to UTF-8 into the calling thread's scratch buffer. Unlike
PyUnicode_AsUTF8, nothing is cached inside the user's str objects.
"""
from libc.stdint cimport uint8_t, uint16_t, uint32_t

from toksmith._core.buffers cimport ByteBuf, bytebuf_reserve
from toksmith._core.errors cimport ERR_SURROGATE

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)
    int PyUnicode_KIND(object o)
    void* PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)


cdef int text_ref(object text, TextRef* ref) except -1:
    """Point `ref` at the text of a str or bytes (which must outlive the use of `ref`)."""
    if isinstance(text, str):
        ref.data = PyUnicode_DATA(text)
        ref.length = PyUnicode_GET_LENGTH(text)
        ref.kind = 0 if PyUnicode_IS_ASCII(text) else PyUnicode_KIND(text)
        ref.from_str = True
        return 0
    if isinstance(text, bytes):
        ref.data = <const char*>(<bytes>text)
        ref.length = len(<bytes>text)
        ref.kind = 0
        ref.from_str = False
        return 0
    raise TypeError(f"text must be str or bytes, not {type(text).__name__}")


cdef inline Py_ssize_t _put(unsigned char* p, uint32_t c) noexcept nogil:
    if c < 0x80:
        p[0] = <unsigned char>c
        return 1
    if c < 0x800:
        p[0] = <unsigned char>(0xC0 | (c >> 6))
        p[1] = <unsigned char>(0x80 | (c & 0x3F))
        return 2
    if c < 0x10000:
        p[0] = <unsigned char>(0xE0 | (c >> 12))
        p[1] = <unsigned char>(0x80 | ((c >> 6) & 0x3F))
        p[2] = <unsigned char>(0x80 | (c & 0x3F))
        return 3
    p[0] = <unsigned char>(0xF0 | (c >> 18))
    p[1] = <unsigned char>(0x80 | ((c >> 12) & 0x3F))
    p[2] = <unsigned char>(0x80 | ((c >> 6) & 0x3F))
    p[3] = <unsigned char>(0x80 | (c & 0x3F))
    return 4


cdef inline uint32_t _joined(uint32_t c, uint32_t next_unit) noexcept nogil:
    """The character of surrogate `c` and the unit after it: their pair's code point
    (above 0xFFFF: both are used), or U+FFFD for `c` alone."""
    if c <= 0xDBFF and 0xDC00 <= next_unit <= 0xDFFF:
        return 0x10000 + ((c - 0xD800) << 10) + (next_unit - 0xDC00)
    return 0xFFFD


cdef int utf8_of(const TextRef* ref, ByteBuf* scratch, const unsigned char** out,
                 Py_ssize_t* out_len, bint join_surrogates=False) noexcept nogil:
    """UTF-8 bytes of `ref`: in place for bytes/ASCII, else encoded into `scratch`.

    A str's surrogates make it ERR_SURROGATE, unless `join_surrogates`: then a high
    surrogate followed by a low one is their character and any other surrogate U+FFFD,
    as ``text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")`` gives.

    Returns 0, -1 when out of memory, or ERR_SURROGATE.
    """
    cdef Py_ssize_t i, n = ref.length, size = 0
    cdef unsigned char* p
    cdef uint32_t c
    cdef const uint16_t* units2
    cdef const uint32_t* units4
    if ref.kind == 0:
        out[0] = <const unsigned char*>ref.data
        out_len[0] = n
        return 0
    scratch.size = 0
    # UTF-8 needs at most 2 bytes per Latin-1 unit, 3 per UCS-2 unit, 4 per UCS-4 unit
    # (a joined surrogate pair: 4 bytes for 2 units; U+FFFD: 3 bytes for 1).
    if bytebuf_reserve(scratch, n * (ref.kind + 1 if ref.kind < 4 else 4) + 1) < 0:
        return -1
    p = <unsigned char*>scratch.data
    if ref.kind == 1:
        for i in range(n):
            size += _put(p + size, (<const uint8_t*>ref.data)[i])
    elif ref.kind == 2:
        units2 = <const uint16_t*>ref.data
        i = 0
        while i < n:
            c = units2[i]
            i += 1
            if 0xD800 <= c <= 0xDFFF:
                if not join_surrogates:
                    return ERR_SURROGATE
                c = _joined(c, units2[i] if i < n else 0)
                i += c > 0xFFFF
            size += _put(p + size, c)
    else:
        units4 = <const uint32_t*>ref.data
        i = 0
        while i < n:
            c = units4[i]
            i += 1
            if 0xD800 <= c <= 0xDFFF:
                if not join_surrogates:
                    return ERR_SURROGATE
                c = _joined(c, units4[i] if i < n else 0)
                i += c > 0xFFFF
            size += _put(p + size, c)
    scratch.size = size
    out[0] = p
    out_len[0] = size
    return 0

