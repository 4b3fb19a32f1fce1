# Whole characters as first symbols of byte-level BPE, where proven to change no id
# (the proof and the build are in char_starts.pyx; the lookup is inline for byte_bpe.pyx).
from libc.stdint cimport int32_t, uint16_t, uint32_t
from libc.string cimport memcmp

from toksmith._core.buffers cimport ByteBuf


# A character that may start whole: its symbol and its guards.
cdef struct CharStart:
    int32_t symbol          # the one symbol BPE makes of the character's bytes alone
    uint32_t first          # guards[first : first + n_before] precede it, the n_after next follow it
    uint16_t n_before
    uint16_t n_after


# A text beside which the character must start as bytes: a merge crossing its edge ranks
# before its own last merge.
cdef struct Guard:
    uint32_t at             # in CharStarts.texts
    uint32_t length
    unsigned char edge      # its byte next to the character (most guards fail on it)


# Load time: a guard's text before its owner is known (a record, or a character part).
cdef struct GuardSource:
    int32_t owner
    int32_t rank
    uint32_t at
    uint32_t length
    bint after


cdef struct CharStarts:
    uint16_t* index         # by code point below U+10000: record + 1; 0: starts as bytes
    CharStart* records
    Guard* guards
    unsigned char* texts
    # load time only (freed by chars_finish)
    Py_ssize_t n_records
    Py_ssize_t cap_records
    int32_t* last_rank      # per record: the highest rank of its own merges
    int32_t max_rank        # of all records
    uint32_t* code_point    # per record
    GuardSource* sources    # owner: a record (whole-character sides) or a part (PART_*)
    Py_ssize_t n_sources
    Py_ssize_t cap_sources
    int32_t last_source_rank
    bint sources_sorted     # sources came in rank order (so each owner's are, too)
    ByteBuf text_buf


cdef int chars_init(CharStarts* cs) except -1
cdef void chars_free(CharStarts* cs) noexcept nogil
cdef int chars_add(CharStarts* cs, const unsigned char* c, Py_ssize_t n, int32_t symbol,
                   int32_t last_rank) except -1
cdef int chars_note_merge(CharStarts* cs, const unsigned char* left, Py_ssize_t left_length,
                          const unsigned char* right, Py_ssize_t right_length, int32_t rank) except -1
cdef int chars_note_token(CharStarts* cs, const unsigned char* t, Py_ssize_t n, int32_t rank) except -1
cdef int chars_finish(CharStarts* cs) except -1


cdef inline int32_t char_code_point(const unsigned char* s, Py_ssize_t n, Py_ssize_t* length) noexcept nogil:
    """The code point of the well-formed 2- or 3-byte character at s[0] (n bytes left),
    or -1 (ASCII, 4 bytes, malformed, overlong: each such byte starts as itself)."""
    cdef unsigned char b = s[0]
    cdef int32_t cp
    if b < 0xC2 or b >= 0xF0 or n < 2 or (s[1] & 0xC0) != 0x80:
        return -1
    if b < 0xE0:
        length[0] = 2
        return ((b & 0x1F) << 6) | (s[1] & 0x3F)
    if n < 3 or (s[2] & 0xC0) != 0x80:
        return -1
    cp = ((b & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
    if cp < 0x800:
        return -1
    length[0] = 3
    return cp


cdef inline int32_t char_start(const CharStarts* cs, const unsigned char* s, Py_ssize_t i,
                               Py_ssize_t n, Py_ssize_t* length) noexcept nogil:
    """The symbol the character at s[i] starts as in pre-token s[:n] (its length in
    `length`), or -1 when it starts as its bytes."""
    cdef int32_t cp = char_code_point(s + i, n - i, length)
    cdef const CharStart* r
    cdef const Guard* g
    cdef Py_ssize_t k, end
    if cp < 0 or cs.index[cp] == 0:
        return -1
    r = &cs.records[cs.index[cp] - 1]
    g = &cs.guards[r.first]
    for k in range(r.n_before):
        if g[k].length <= i and s[i - 1] == g[k].edge \
                and memcmp(s + i - g[k].length, cs.texts + g[k].at, g[k].length) == 0:
            return -1
    g += r.n_before
    end = i + length[0]
    for k in range(r.n_after):
        if g[k].length <= n - end and s[end] == g[k].edge \
                and memcmp(s + end, cs.texts + g[k].at, g[k].length) == 0:
            return -1
    return r.symbol
