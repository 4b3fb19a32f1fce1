# Extended grapheme clusters (UAX #29) exactly as the Rust crate unicode-segmentation
# 1.13.3 finds them (`str::graphemes(true)`), which HF tokenizers' Precompiled normalizer
# walks. Per-character properties come from unicode_graphemes.pxi (Unicode 17.0.0).
#
# A GraphemeCursor reads the characters of a text in order: `grapheme_breaks` says
# whether a cluster boundary comes before the next character (reading nothing),
# `grapheme_take` moves past it. The cursor carries what the crate's rules look back
# for (GB9c, GB11, GB12/13) across boundaries, as the crate's cursor does.
from libc.stdint cimport uint8_t, uint16_t, uint32_t

# Grapheme categories (low 4 bits of a character's props). One per character: its
# Grapheme_Cluster_Break value, or Extended_Pictographic, or InCB=Consonant.
cdef enum:
    GB_ANY = 0
    GB_CR = 1
    GB_LF = 2
    GB_CONTROL = 3
    GB_EXTEND = 4
    GB_ZWJ = 5
    GB_REGIONAL_INDICATOR = 6
    GB_PREPEND = 7
    GB_SPACING_MARK = 8
    GB_L = 9
    GB_V = 10
    GB_T = 11
    GB_LV = 12
    GB_LVT = 13
    GB_EXT_PICT = 14
    GB_INCB_CONSONANT = 15
    GB_CATEGORY_MASK = 15
    GB_INCB_LINKER = 16      # flag: Indic_Conjunct_Break=Linker
    GB_INCB_EXTEND = 32      # flag: Indic_Conjunct_Break=Extend
    GB_START = 255           # cursor.prev before the first character


cdef struct GraphemeTables:
    const uint16_t* blocks   # code point >> 7 -> block number
    const uint8_t* props     # block * 128 + (code point & 127) -> props


cdef struct GraphemeCursor:
    uint8_t prev             # category of the last character taken (GB_START: none yet)
    bint ri_odd              # an odd number of Regional_Indicator characters end here (GB12/13)
    bint pict                # the last character other than Extend is Extended_Pictographic (GB11)
    bint pict_zwj            # the last character is a ZWJ that follows pict (GB11)
    bint consonant           # the last character neither InCB Linker nor Extend is an InCB Consonant (GB9c)
    bint linked              # ... and an InCB Linker came after it (GB9c)


# The tables (built when the module is first imported).
cdef const GraphemeTables* grapheme_tables() noexcept nogil


cdef inline uint8_t grapheme_props(const GraphemeTables* t, uint32_t cp) noexcept nogil:
    return t.props[(<Py_ssize_t>t.blocks[cp >> 7] << 7) | (cp & 127)]


cdef inline void grapheme_cursor_init(GraphemeCursor* c) noexcept nogil:
    c.prev = GB_START
    c.ri_odd = False
    c.pict = False
    c.pict_zwj = False
    c.consonant = False
    c.linked = False


cdef inline bint grapheme_breaks(const GraphemeCursor* c, uint8_t props) noexcept nogil:
    """A cluster boundary comes before a character with `props`.

    Parity: unicode-segmentation 1.13.3 grapheme.rs check_pair (extended mode) and its
    handle_incb_consonant / handle_emoji / handle_regional look-backs.
    """
    cdef uint8_t cat = props & GB_CATEGORY_MASK
    cdef uint8_t prev = c.prev
    if prev == GB_START:
        return True                                                  # GB1
    if prev == GB_CR and cat == GB_LF:
        return False                                                 # GB3
    if prev == GB_CONTROL or prev == GB_CR or prev == GB_LF:
        return True                                                  # GB4
    if cat == GB_CONTROL or cat == GB_CR or cat == GB_LF:
        return True                                                  # GB5
    if prev == GB_L and (cat == GB_L or cat == GB_V or cat == GB_LV or cat == GB_LVT):
        return False                                                 # GB6
    if (prev == GB_LV or prev == GB_V) and (cat == GB_V or cat == GB_T):
        return False                                                 # GB7
    if (prev == GB_LVT or prev == GB_T) and cat == GB_T:
        return False                                                 # GB8
    if cat == GB_EXTEND or cat == GB_ZWJ or cat == GB_SPACING_MARK:
        return False                                                 # GB9, GB9a
    if prev == GB_PREPEND:
        return False                                                 # GB9b
    if cat == GB_INCB_CONSONANT:
        return not (c.consonant and c.linked)                        # GB9c
    if prev == GB_ZWJ and cat == GB_EXT_PICT:
        return not c.pict_zwj                                        # GB11
    if prev == GB_REGIONAL_INDICATOR and cat == GB_REGIONAL_INDICATOR:
        return not c.ri_odd                                          # GB12, GB13
    return True                                                      # GB999


cdef inline void grapheme_take(GraphemeCursor* c, uint8_t props) noexcept nogil:
    """Move the cursor past a character with `props`."""
    cdef uint8_t cat = props & GB_CATEGORY_MASK
    c.ri_odd = (not c.ri_odd) if cat == GB_REGIONAL_INDICATOR else False
    c.pict_zwj = cat == GB_ZWJ and c.pict
    if cat == GB_EXT_PICT:
        c.pict = True
    elif cat != GB_EXTEND:
        c.pict = False
    if props & GB_INCB_LINKER:
        c.linked = True
    elif not (props & GB_INCB_EXTEND):
        c.consonant = cat == GB_INCB_CONSONANT
        c.linked = False
    c.prev = cat


cdef inline uint32_t decode_char(const unsigned char* s, Py_ssize_t m) noexcept nogil:
    """The code point of the well-formed m-byte UTF-8 character at s."""
    if m == 1:
        return s[0]
    if m == 2:
        return ((s[0] & 0x1F) << 6) | (s[1] & 0x3F)
    if m == 3:
        return ((s[0] & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
    return ((s[0] & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F)
