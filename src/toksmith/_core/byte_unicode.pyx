"""GPT-2's byte<->unicode map (every byte shown as a printable character, as GPT-2,
tokenizer.json and llama.cpp's byte-level GGUF store token texts), and llama.cpp's
decoding of such texts.

    >>> byte_unicode_decode("Ġhello".encode()), byte_unicode_encode(b" hello")
    (b' hello', b'\\xc4\\xa0hello')
"""
from libc.string cimport memcmp
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE


cdef int _byte_of_cpt[324]      # byte behind each code point < 324 of the map, -1 if none


cdef void _init_byte_unicode() noexcept:
    """Parity: GPT-2 bytes_to_unicode (llama.cpp unicode.cpp unicode_byte_to_utf8_map)."""
    cdef int b
    for b in range(324):
        _byte_of_cpt[b] = -1
    for b in range(256):
        _byte_of_cpt[cpt_of_byte(b)] = b


_init_byte_unicode()


cdef Py_ssize_t unmap_byte_unicode(const unsigned char* p, Py_ssize_t n, unsigned char* out,
                                   bint take_overlong=False) noexcept nogil:
    """Raw bytes behind a byte<->unicode text, written to `out` (room for n bytes);
    their count, or -1 when the text has a character outside the map. An overlong
    2-byte form is outside the map (no byte-encoded pre-token holds those bytes) unless
    `take_overlong`: llama.cpp's unicode_cpt_from_utf8 reads it by its bits."""
    cdef Py_ssize_t i = 0, k = 0
    cdef int c
    while i < n:
        if p[i] < 0x80:
            c = p[i]
            i += 1
        elif (p[i] & 0xE0) == 0xC0 and i + 1 < n and (p[i + 1] & 0xC0) == 0x80:
            c = ((p[i] & 0x1F) << 6) | (p[i + 1] & 0x3F)
            i += 2
            if c < 0x80 and not take_overlong:
                return -1
        else:
            return -1
        if c >= 324 or _byte_of_cpt[c] < 0:
            return -1
        out[k] = <unsigned char>_byte_of_cpt[c]
        k += 1
    return k


def byte_unicode_decode(bytes text):
    """The raw bytes a GPT-2 byte<->unicode text stands for, or None if it is not one.

    >>> byte_unicode_decode("Ġhello".encode()), byte_unicode_decode(b"a b")
    (b' hello', None)
    """
    cdef Py_ssize_t n = len(text)
    cdef bytearray out = bytearray(n)
    cdef Py_ssize_t k = unmap_byte_unicode(<const unsigned char*>PyBytes_AS_STRING(text), n,
                                           <unsigned char*>(<char*>out))
    return None if k < 0 else bytes(out[:k])


def byte_unicode_decode_or_keep(list texts):
    """Each text's raw bytes through GPT-2's map, or the text itself when it has a character
    outside the map (HF tokenizers' ByteLevel decoder per token); one pass for a vocabulary.

    >>> byte_unicode_decode_or_keep(["Ġhi".encode(), b"<|eot|>", "é".encode()])
    [b' hi', b'<|eot|>', b'\xe9']
    """
    cdef list out = [None] * len(texts)
    cdef bytes text
    cdef Py_ssize_t n, k, i = 0
    cdef bytearray buf = bytearray(256)
    for item in texts:
        text = <bytes?>item
        n = len(text)
        if n > len(buf):
            buf = bytearray(n)
        k = unmap_byte_unicode(<const unsigned char*>PyBytes_AS_STRING(text), n,
                               <unsigned char*>(<char*>buf))
        # Speed: a text the map leaves as it is (ASCII letters: most of a vocabulary) is shared
        out[i] = text if k < 0 or (k == n and memcmp(<char*>buf, PyBytes_AS_STRING(text), n) == 0) \
            else PyBytes_FromStringAndSize(<char*>buf, k)
        i += 1
    return out


def byte_unicode_encode(bytes raw not None):
    """The byte<->unicode text (UTF-8) of raw bytes.

    >>> byte_unicode_encode(b" hello\\n")
    b'\\xc4\\xa0hello\\xc4\\x8a'

    Written natively into the result (no object per byte: a byte-stream training's tokens
    can be megabytes long); every code point of the map is below U+0800: 1 or 2 bytes.
    """
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(raw)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(raw), size = n, i, k = 0
    cdef unsigned char* q
    cdef int c
    cdef bytes out
    for i in range(n):
        size += cpt_of_byte(p[i]) >= 0x80
    out = PyBytes_FromStringAndSize(NULL, size)
    q = <unsigned char*>PyBytes_AS_STRING(out)
    for i in range(n):
        c = cpt_of_byte(p[i])
        if c < 0x80:
            q[k] = <unsigned char>c
            k += 1
        else:
            q[k] = <unsigned char>(0xC0 | (c >> 6))
            q[k + 1] = <unsigned char>(0x80 | (c & 0x3F))
            k += 2
    return out


# ---------------------------------------------------------------------- decoding texts (llama.cpp)

def llama_decode_texts(list texts):
    """llama.cpp's llama_decode_text of each text (bytes): the raw bytes a NORMAL token of a
    byte-level vocabulary prints as.

    >>> llama_decode_texts(["Ġhi".encode(), "中".encode()])
    [b' hi', b'[UNK_BYTE_0xe4b8ad\\xe4\\xb8\\xad]']
    """
    cdef list out = []
    cdef bytes text
    cdef bytearray buf = bytearray(256)
    cdef Py_ssize_t k
    for text in texts:
        if len(text) > len(buf):
            buf = bytearray(2 * len(text))
        # Parity: llama.cpp llama_decode_text on the common path: every code point
        # (unicode_cpt_from_utf8, which takes overlong forms) is in the map.
        k = unmap_byte_unicode(<const unsigned char*>PyBytes_AS_STRING(text), len(text),
                               <unsigned char*>(<char*>buf), True)
        out.append(bytes(buf[:k]) if k >= 0 else _llama_decode_text_slow(text))
    return out


def _llama_decode_text_slow(bytes text):
    """Parity: llama.cpp llama_decode_text, code point by code point: an invalid sequence is
    U+FFFD (unicode_cpts_from_utf8), a code point outside the map is rendered as
    "[UNK_BYTE_0x<its UTF-8 in hex><the whole text>]"."""
    out = bytearray()
    i, n = 0, len(text)
    while i < n:
        c, size = _llama_cpt_from_utf8(text, i)
        i += size
        if c < 324 and _byte_of_cpt[c] >= 0:
            out.append(_byte_of_cpt[c])
        else:
            utf8 = _llama_cpt_to_utf8(c)
            out += b"[UNK_BYTE_0x" + utf8.hex().encode() + text + b"]"
    return bytes(out)


def _llama_cpt_from_utf8(bytes s, Py_ssize_t i):
    """Parity: llama.cpp unicode.cpp unicode_cpt_from_utf8 (no overlong or surrogate checks);
    (code point, length), or (0xFFFD, 1) where it throws."""
    cdef Py_ssize_t n = len(s)
    b0 = s[i]
    if not b0 & 0x80:
        return b0, 1
    if not b0 & 0x40:
        return 0xFFFD, 1
    if not b0 & 0x20:
        if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
            return 0xFFFD, 1
        return ((b0 & 0x1F) << 6) | (s[i + 1] & 0x3F), 2
    if not b0 & 0x10:
        if i + 2 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80:
            return 0xFFFD, 1
        return ((b0 & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F), 3
    if not b0 & 0x08:
        if i + 3 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80 or (s[i + 3] & 0xC0) != 0x80:
            return 0xFFFD, 1
        return (((b0 & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6)
                | (s[i + 3] & 0x3F)), 4
    return 0xFFFD, 1


def _llama_cpt_to_utf8(c):
    """Parity: llama.cpp unicode_cpt_to_utf8 (any value up to 0x10FFFF, surrogates included)."""
    if c <= 0x7F:
        return bytes([c])
    if c <= 0x7FF:
        return bytes([0xC0 | (c >> 6), 0x80 | (c & 0x3F)])
    if c <= 0xFFFF:
        return bytes([0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)])
    # (above 0x10FFFF llama.cpp throws an exception llama_decode_text does not catch)
    return bytes([0xF0 | ((c >> 18) & 0x07), 0x80 | ((c >> 12) & 0x3F), 0x80 | ((c >> 6) & 0x3F),
                  0x80 | (c & 0x3F)])
