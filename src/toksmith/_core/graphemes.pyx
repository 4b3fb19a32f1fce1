"""Extended grapheme clusters as unicode-segmentation 1.13.3 finds them (see graphemes.pxd).

The per-character properties (unicode_graphemes.pxi, made by tools/gen_grapheme_props.py)
become a two-stage table at import: one byte per code point, blocks of 128 shared.

    >>> grapheme_clusters("e\\u0301\\r\\n🇫🇷🇩🇪")
    ['é', '\\r\\n', '🇫🇷', '🇩🇪']
"""
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from toksmith._core.utf8 cimport valid_char_len

include "unicode_graphemes.pxi"

cdef GraphemeTables _TABLES


cdef const GraphemeTables* grapheme_tables() noexcept nogil:
    return &_TABLES


cdef _build_tables():
    """Spread the ranges over 0x110000 code points, then share identical blocks."""
    cdef Py_ssize_t n_blocks = 0x110000 >> 7, i, k, cp
    cdef uint8_t* flat = <uint8_t*>malloc(0x110000)
    cdef uint16_t* blocks = <uint16_t*>malloc(n_blocks * sizeof(uint16_t))
    cdef uint8_t* props
    cdef dict seen = {}
    cdef list unique = []
    cdef bytes block
    if flat == NULL or blocks == NULL:
        raise MemoryError()
    memset(flat, 0, 0x110000)
    for i in range(GRAPHEME_RANGES_COUNT):
        for cp in range(GRAPHEME_RANGES[3 * i], GRAPHEME_RANGES[3 * i + 1] + 1):
            flat[cp] = <uint8_t>GRAPHEME_RANGES[3 * i + 2]
    for i in range(n_blocks):
        block = (<char*>flat)[i << 7:(i + 1) << 7]
        k = seen.get(block, -1)
        if k < 0:
            k = len(unique)
            seen[block] = k
            unique.append(block)
        blocks[i] = <uint16_t>k
    props = <uint8_t*>malloc(len(unique) << 7)
    if props == NULL:
        raise MemoryError()
    for k in range(len(unique)):
        memcpy(props + (k << 7), <char*>(<bytes>unique[k]), 128)
    _TABLES.blocks = blocks
    _TABLES.props = props
    free(flat)   # only a step of the build: its 1.1 MB are not kept


_build_tables()

# Category names by number (the low 4 bits of char_props), and the InCB flags.
CATEGORY_NAMES = ("Any", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator", "Prepend",
                  "SpacingMark", "L", "V", "T", "LV", "LVT", "Extended_Pictographic", "InCB_Consonant")
INCB_LINKER = GB_INCB_LINKER
INCB_EXTEND = GB_INCB_EXTEND


def char_props(str ch) -> int:
    """The props byte of one character: its category | GB_INCB_LINKER | GB_INCB_EXTEND.

        >>> char_props("\\u094d")    # Extend (4) | InCB Linker (16)
        20
    """
    if len(ch) != 1:
        raise ValueError("expected one character")
    return grapheme_props(&_TABLES, ord(ch))


def grapheme_clusters(text) -> list:
    """The extended grapheme clusters of `text` (str, or UTF-8 bytes: then bytes come back),
    as Rust's `text.graphemes(true)` gives them."""
    cdef bytes data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    cdef const unsigned char* s = data
    cdef Py_ssize_t n = len(data), pos = 0, start = 0, m
    cdef GraphemeCursor cursor
    cdef uint8_t props
    cdef list out = []
    grapheme_cursor_init(&cursor)
    while pos < n:
        m = valid_char_len(s + pos, n - pos)
        if m == 0:
            raise ValueError(f"invalid UTF-8 at byte {pos}")
        props = grapheme_props(&_TABLES, decode_char(s + pos, m))
        if grapheme_breaks(&cursor, props) and pos > 0:
            out.append(data[start:pos])
            start = pos
        grapheme_take(&cursor, props)
        pos += m
    if n:
        out.append(data[start:n])
    if isinstance(text, str):
        return [g.decode("utf-8", "surrogatepass") for g in out]
    return out
