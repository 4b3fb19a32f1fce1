"""Whole characters as first symbols of byte-level BPE, where that provably changes no id.

A CJK run is one pre-token of 20-100 bytes. From bytes, BPE spends two merges per
3-byte character before it looks at a pair of characters; starting such a character
as the one symbol its bytes merge into skips that work. This module finds, at load
time, the characters for which that is exact, and the texts beside which it is not.

The rule. BPE (both orders of byte_bpe.pyx) merges again and again the adjacent pair
that comes first: the lowest rank, then the leftmost. Take a character c of 2 or 3
bytes. Alone, its bytes go through their own merges (c's "own run") and, for the
characters kept here, end as one symbol C; let R be the highest rank of that run. A
merge *crossing* c's edge joins a symbol inside c (a part of c or all of it) with one
outside it: a pair (left, right), or for TOKEN_RANK the token left + right, where left
is a suffix of c and right the start of the text after c, or left the end of the text
before c and right a prefix of c. The crossing merges of rank <= R are c's *guards*.
An occurrence of c in a pre-token starts as C when no guard's outer text stands
beside it (char_start); otherwise it starts as bytes, as before.

Proof that the ids do not change. Let X be the run from bytes and Y the run from the
mixed start. (1) At an occurrence started whole, X makes no crossing merge before c's
own run is over: until the first crossing merge, c's symbols change only by pairs
inside c, which are the pairs of its own run in the same state, so the first of them
is the own run's next merge, of rank <= R; every crossing merge that can form there
ranks above R (no guard matched), so none comes first while the own run is unfinished.
(2) Drop from X the own merges of occurrences started whole; what is left is Y. By
induction: map a state of X to Y's by replacing each unfinished occurrence with C.
Away from unfinished occurrences the two states have the same pairs; at one, Y has
no pair inside C and only crossing pairs, of rank > R. If X's next merge m is an own
merge, the mapped state does not change. Otherwise, where an occurrence is unfinished
its next own merge ranks <= R and m came first, so rank(m) <= R < every pair Y has
there; every other pair of Y is one of X that m came before (ties: leftmost), so m is
Y's next merge too. When X stops no own run is unfinished, and the states are equal.
The rule asks only that the guards' texts are absent, so it holds for any bytes
(malformed UTF-8 included) and for MERGE_LIST symbols that are no token (they fall
back to bytes at output either way).

Guards are found from the merges (MERGE_LIST: those with a side of at most 3 bytes
that is no ASCII, picked as byte_bpe reads the merges list) or the tokens (TOKEN_RANK:
each split where a side may be part of a character) whose inner side is all of a kept
character, or a part of characters (a last byte or last two, a first byte or first
two): a part's merges become guards of each character with that part whose R is not
below their rank. A character with more than GUARD_LIMIT guards on a side, or whose
bytes do not end as one symbol, always starts as bytes. The guards' texts are at most
a token long, so the check stays linear in the pre-token.
"""
from libc.stdint cimport int32_t, uint16_t, uint32_t
from libc.stdlib cimport calloc, free, malloc, realloc

from toksmith._core.buffers cimport bytebuf_append, bytebuf_free

# Most guards a side of a character may have (each is one memcmp per occurrence).
cdef Py_ssize_t GUARD_LIMIT = 16

# Character parts that guards attach to: the last byte (64), the last two bytes of a
# 3-byte character (4096), the first byte (a lead, 64), the first two of a 3-byte one (1024).
cdef enum:
    PART_END1 = 0
    PART_END2 = 64
    PART_START1 = 64 + 4096
    PART_START2 = 64 + 4096 + 64
    N_PARTS = 64 + 4096 + 64 + 1024


cdef inline bint _is_trail(unsigned char c) noexcept nogil:
    return (c & 0xC0) == 0x80


cdef int _whole(const CharStarts* cs, const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """The record of the kept character whose bytes are exactly p[:n], or -1."""
    cdef Py_ssize_t length = 0
    cdef int32_t cp
    if n < 2 or n > 3:
        return -1
    cp = char_code_point(p, n, &length)
    if cp < 0 or length != n:
        return -1
    return <int>cs.index[cp] - 1


cdef int _end_part(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """The part id when p[:n] may end a character without being all of it, or -1."""
    if n == 1 and _is_trail(p[0]):
        return PART_END1 + (p[0] & 0x3F)
    if n == 2 and _is_trail(p[0]) and _is_trail(p[1]):
        return PART_END2 + ((p[0] & 0x3F) << 6 | (p[1] & 0x3F))
    return -1


cdef int _start_part(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """The part id when p[:n] may start a 2- or 3-byte character without being all of it, or -1."""
    if n == 1 and 0xC2 <= p[0] < 0xF0:
        return PART_START1 + (p[0] & 0x3F)
    if n == 2 and 0xE0 <= p[0] < 0xF0 and _is_trail(p[1]):
        return PART_START2 + ((p[0] & 0x0F) << 6 | (p[1] & 0x3F))
    return -1


cdef int chars_init(CharStarts* cs) except -1:
    cs.index = <uint16_t*>calloc(0x10000, sizeof(uint16_t))
    cs.records = NULL
    cs.guards = NULL
    cs.texts = NULL
    cs.n_records = 0
    cs.cap_records = 0
    cs.max_rank = -1
    cs.last_rank = NULL
    cs.code_point = NULL
    cs.sources = NULL
    cs.n_sources = 0
    cs.cap_sources = 0
    cs.last_source_rank = -1
    cs.sources_sorted = True
    cs.text_buf.data = NULL
    cs.text_buf.size = 0
    cs.text_buf.cap = 0
    if cs.index == NULL:
        raise MemoryError()
    return 0


cdef void _free_build(CharStarts* cs) noexcept nogil:
    free(cs.last_rank)
    free(cs.code_point)
    free(cs.sources)
    bytebuf_free(&cs.text_buf)
    cs.last_rank = NULL
    cs.code_point = NULL
    cs.sources = NULL


cdef void chars_free(CharStarts* cs) noexcept nogil:
    _free_build(cs)
    free(cs.index)
    free(cs.records)
    free(cs.guards)
    free(cs.texts)
    cs.index = NULL
    cs.records = NULL
    cs.guards = NULL
    cs.texts = NULL


cdef int chars_add(CharStarts* cs, const unsigned char* c, Py_ssize_t n, int32_t symbol,
                   int32_t last_rank) except -1:
    """Keep character c[:n] (2 or 3 bytes, well formed): alone its bytes merge into
    `symbol`, the last of its own merges at rank `last_rank`. Before any note."""
    cdef Py_ssize_t length = 0, cap
    cdef int32_t cp = char_code_point(c, n, &length)
    if cp < 0 or length != n or cs.index[cp] != 0:
        return 0
    if cs.n_records == cs.cap_records:
        cap = 2 * cs.cap_records + 256
        cs.records = <CharStart*>realloc(cs.records, cap * sizeof(CharStart))
        cs.last_rank = <int32_t*>realloc(cs.last_rank, cap * sizeof(int32_t))
        cs.code_point = <uint32_t*>realloc(cs.code_point, cap * sizeof(uint32_t))
        if cs.records == NULL or cs.last_rank == NULL or cs.code_point == NULL:
            raise MemoryError()
        cs.cap_records = cap
    cs.records[cs.n_records].symbol = symbol
    cs.last_rank[cs.n_records] = last_rank
    cs.code_point[cs.n_records] = <uint32_t>cp
    cs.n_records += 1
    cs.index[cp] = <uint16_t>cs.n_records
    if last_rank > cs.max_rank:
        cs.max_rank = last_rank
    return 0


cdef int _add_source(CharStarts* cs, int32_t owner, int32_t rank, const unsigned char* text,
                     Py_ssize_t length, bint after) except -1:
    cdef Py_ssize_t cap
    cdef GuardSource* e
    if cs.n_sources == cs.cap_sources:
        cap = 2 * cs.cap_sources + 256
        e = <GuardSource*>realloc(cs.sources, cap * sizeof(GuardSource))
        if e == NULL:
            raise MemoryError()
        cs.sources = e
        cs.cap_sources = cap
    if length > 0xFFFFFFF or cs.text_buf.size > 0xFFFFFFF:
        raise ValueError("guard texts too long")
    if rank < cs.last_source_rank:
        cs.sources_sorted = False
    cs.last_source_rank = rank
    e = &cs.sources[cs.n_sources]
    e.owner = owner
    e.rank = rank
    e.at = <uint32_t>cs.text_buf.size
    e.length = <uint32_t>length
    e.after = after
    if bytebuf_append(&cs.text_buf, <const char*>text, length) < 0:
        raise MemoryError()
    cs.n_sources += 1
    return 0


cdef int chars_note_merge(CharStarts* cs, const unsigned char* left, Py_ssize_t left_length,
                          const unsigned char* right, Py_ssize_t right_length, int32_t rank) except -1:
    """Left and right merge at `rank`: a guard of the kept characters that left ends
    (after them: right) or right starts (before them: left), if it ranks early enough."""
    cdef int r, part
    if left_length <= 0 or right_length <= 0:
        return 0
    r = _whole(cs, left, left_length)
    if r >= 0:
        if rank <= cs.last_rank[r]:
            _add_source(cs, r, rank, right, right_length, True)
    else:
        part = _end_part(left, left_length)
        if part >= 0 and rank <= cs.max_rank:
            _add_source(cs, -1 - part, rank, right, right_length, True)
    r = _whole(cs, right, right_length)
    if r >= 0:
        if rank <= cs.last_rank[r]:
            _add_source(cs, r, rank, left, left_length, False)
    else:
        part = _start_part(right, right_length)
        if part >= 0 and rank <= cs.max_rank:
            _add_source(cs, -1 - part, rank, left, left_length, False)
    return 0


cdef inline int _note_whole(CharStarts* cs, int32_t cp, int32_t rank, const unsigned char* text,
                            Py_ssize_t length, bint after) except -1:
    cdef int r = <int>cs.index[cp] - 1
    if r >= 0 and rank <= cs.last_rank[r]:
        _add_source(cs, r, rank, text, length, after)
    return 0


cdef int chars_note_token(CharStarts* cs, const unsigned char* t, Py_ssize_t n, int32_t rank) except -1:
    """TOKEN_RANK: token t[:n] forms at `rank` from any split; note each split where a
    side is all or part of a character (the same as chars_note_merge on each such split)."""
    cdef Py_ssize_t length = 0
    cdef int32_t cp
    cdef unsigned char b
    if n < 2:
        return 0
    b = t[0]
    if b >= 0x80:
        # left side: one or two trailing bytes of a character, or a whole character
        if b < 0xC0:
            if rank <= cs.max_rank:
                _add_source(cs, -1 - _end_part(t, 1), rank, t + 1, n - 1, True)
                if n > 2 and _is_trail(t[1]):
                    _add_source(cs, -1 - _end_part(t, 2), rank, t + 2, n - 2, True)
        else:
            cp = char_code_point(t, n, &length)
            if cp >= 0 and length < n:
                _note_whole(cs, cp, rank, t + length, n - length, True)
    b = t[n - 1]
    if b >= 0x80:
        # right side: a lead byte, the first two bytes of a 3-byte character, or a whole one
        if b >= 0xC2:
            if b < 0xF0 and rank <= cs.max_rank:
                _add_source(cs, -1 - _start_part(t + n - 1, 1), rank, t, n - 1, False)
        elif n >= 3:
            b = t[n - 2]
            if 0xE0 <= b < 0xF0:
                if rank <= cs.max_rank:
                    _add_source(cs, -1 - _start_part(t + n - 2, 2), rank, t, n - 2, False)
            elif 0xC2 <= b < 0xE0:
                _note_whole(cs, char_code_point(t + n - 2, 2, &length), rank, t, n - 2, False)
            elif n >= 4 and _is_trail(b) and 0xE0 <= t[n - 3] < 0xF0:
                cp = char_code_point(t + n - 3, 3, &length)
                if cp >= 0:
                    _note_whole(cs, cp, rank, t, n - 3, False)
    return 0


cdef int chars_finish(CharStarts* cs) except -1:
    """Give each kept character its guards (its own, and those of its parts that rank
    early enough), drop those with too many, and free the load-time lists."""
    cdef Py_ssize_t n = cs.n_records, i, j, k, at, side
    cdef Py_ssize_t* first = NULL       # per owner slot: records 0..n-1, then parts
    cdef int32_t* order = NULL
    cdef Py_ssize_t slots = n + N_PARTS + 1
    cdef int parts[4]
    cdef int n_parts, p, owner
    cdef Py_ssize_t counts[2]
    cdef unsigned char b[3]
    cdef uint32_t cp
    cdef const GuardSource* e
    cdef Guard* g
    try:
        first = <Py_ssize_t*>calloc(slots, sizeof(Py_ssize_t))
        order = <int32_t*>malloc(max(cs.n_sources, 1) * sizeof(int32_t))
        if first == NULL or order == NULL:
            raise MemoryError()
        # sources by owner (counting sort): records first, then parts
        for i in range(cs.n_sources):
            owner = cs.sources[i].owner
            first[(owner if owner >= 0 else n - 1 - owner) + 1] += 1
        for i in range(1, slots):
            first[i] += first[i - 1]
        for i in range(cs.n_sources):
            owner = cs.sources[i].owner
            k = owner if owner >= 0 else n - 1 - owner
            order[first[k]] = <int32_t>i
            first[k] += 1
        for i in range(slots - 1, 0, -1):
            first[i] = first[i - 1]
        first[0] = 0
        # two passes: count each record's guards, then write them
        for side in range(2):
            at = 0
            for i in range(n):
                cp = cs.code_point[i]
                if side == 1 and cs.index[cp] == 0:
                    continue        # dropped in the counting pass
                if cp < 0x800:
                    b[0] = <unsigned char>(0xC0 | (cp >> 6))
                    b[1] = <unsigned char>(0x80 | (cp & 0x3F))
                    parts[0] = _end_part(b + 1, 1)
                    parts[1] = _start_part(b, 1)
                    n_parts = 2
                else:
                    b[0] = <unsigned char>(0xE0 | (cp >> 12))
                    b[1] = <unsigned char>(0x80 | ((cp >> 6) & 0x3F))
                    b[2] = <unsigned char>(0x80 | (cp & 0x3F))
                    parts[0] = _end_part(b + 2, 1)
                    parts[1] = _end_part(b + 1, 2)
                    parts[2] = _start_part(b, 1)
                    parts[3] = _start_part(b, 2)
                    n_parts = 4
                counts[0] = 0
                counts[1] = 0
                if side == 1:
                    cs.records[i].first = <uint32_t>at
                # before-guards first, then after-guards
                for p in range(-1, n_parts):
                    k = i if p < 0 else n + parts[p]
                    for j in range(first[k], first[k + 1]):
                        e = &cs.sources[order[j]]
                        if e.rank > cs.last_rank[i]:
                            if cs.sources_sorted:
                                break       # the rest of this owner's rank later still
                            continue
                        if side == 1:
                            g = &cs.guards[at + (0 if not e.after else cs.records[i].n_before) +
                                           counts[e.after]]
                            g.at = e.at
                            g.length = e.length
                            g.edge = cs.text_buf.data[e.at if e.after else e.at + e.length - 1]
                        counts[e.after] += 1
                if side == 0:
                    if counts[0] > GUARD_LIMIT or counts[1] > GUARD_LIMIT:
                        cs.index[cp] = 0
                        cs.records[i].n_before = 0
                        cs.records[i].n_after = 0
                        continue
                    cs.records[i].n_before = <uint16_t>counts[0]
                    cs.records[i].n_after = <uint16_t>counts[1]
                at += counts[0] + counts[1]
            if side == 0:
                cs.guards = <Guard*>malloc(max(at, 1) * sizeof(Guard))
                if cs.guards == NULL:
                    raise MemoryError()
        cs.texts = <unsigned char*>cs.text_buf.data
        cs.text_buf.data = NULL
        if cs.texts == NULL:
            cs.texts = <unsigned char*>malloc(1)
            if cs.texts == NULL:
                raise MemoryError()
    finally:
        free(first)
        free(order)
        _free_build(cs)
    return 0
