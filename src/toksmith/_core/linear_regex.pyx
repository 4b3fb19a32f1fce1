"""A regex matcher with a backtracking engine's results in time linear in the text.

The match a backtracking engine (Oniguruma, for tokenizer.json's Split and Replace) finds
from a start position is the first successful path in priority order, and from a given
program state and position that path does not depend on how the state was reached. So the
match from every start position can be computed at once, right to left: one column of
state values per position (a value is the end position of the first successful path from
that state there, or -1), each column from the one to its right. A program
(toksmith.pretokenizers.backtrack_program) may have several passes: look-arounds longer
than one character fill position tables first (a look-behind body runs reversed, left to
right), then the main pass gives the match end for every start. `lr_find_all` walks those
like onig's find_iter under tokenizers' find_matches (an empty match right after the
previous match is skipped).

Cost: (states x code points) per pass, memory a few int32 per code point; no recursion.

    >>> from toksmith.hf.onig_regex import compile_onig
    >>> LinearRegex(compile_onig(r"\\s+(?!\\S)|\\s+")).find_matches(b"a   b")
    [(1, 3), (3, 4)]
"""
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from toksmith._core.buffers cimport (ByteBuf, IdBuf, bytebuf_append, bytebuf_free, bytebuf_reserve, idbuf_free,
                                     idbuf_push, idbuf_reserve)
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.errors import raise_for_status

from toksmith.pretokenizers import backtrack_program as bp

cdef enum:
    OP_CLASS = 0
    OP_ALT = 1
    OP_MATCH = 2
    OP_ASSERT = 3
    OP_LOOK_CLASS = 4
    OP_BEHIND_CLASS = 5
    OP_LOOK = 6
    OP_ATOMIC = 7

cdef enum:
    ASSERT_BOL = 0
    ASSERT_EOL = 1
    ASSERT_BOT = 2
    ASSERT_EOT = 3
    ASSERT_EOT_NL = 4
    ASSERT_WORD = 5
    ASSERT_NOT_WORD = 6

# Grapheme break codes (0: Other), in backtrack_program.GRAPHEME_VALUES order; Extended_Pictographic a flag.
cdef enum:
    G_CR = 1
    G_LF = 2
    G_CONTROL = 3
    G_EXTEND = 4
    G_ZWJ = 5
    G_SPACING_MARK = 6
    G_PREPEND = 7
    G_REGIONAL_INDICATOR = 8
    G_L = 9
    G_V = 10
    G_T = 11
    G_LV = 12
    G_LVT = 13
    G_VALUE_MASK = 15
    G_PICT = 16

assert bp.GRAPHEME_VALUES == ("CR", "LF", "Control", "Extend", "ZWJ", "SpacingMark", "Prepend",
                              "Regional_Indicator", "L", "V", "T", "LV", "LVT", "Extended_Pictographic")
assert (bp.OP_CLASS, bp.OP_ALT, bp.OP_MATCH, bp.OP_ASSERT, bp.OP_LOOK_CLASS, bp.OP_BEHIND_CLASS, bp.OP_LOOK,
        bp.OP_ATOMIC) == tuple(range(8))
assert (bp.ASSERT_BOL, bp.ASSERT_EOL, bp.ASSERT_BOT, bp.ASSERT_EOT, bp.ASSERT_EOT_NL, bp.ASSERT_WORD,
        bp.ASSERT_NOT_WORD) == tuple(range(7))


cdef void lr_scratch_init(LrScratch* sc) noexcept nogil:
    memset(sc, 0, sizeof(LrScratch))


cdef void lr_scratch_free(LrScratch* sc) noexcept nogil:
    idbuf_free(&sc.eq)
    idbuf_free(&sc.match_end)
    idbuf_free(&sc.cols)
    idbuf_free(&sc.conts)
    bytebuf_free(&sc.tables)


cdef inline bint _in(LinearRegex r, int32_t part, int32_t k) noexcept nogil:
    return (r.masks[part * r.words + (k >> 6)] >> (k & 63)) & 1


cdef inline bint _at(LinearRegex r, const int32_t* eq, Py_ssize_t n, Py_ssize_t i, int32_t k) noexcept nogil:
    """The character at position i (0 <= i < n) is in class k."""
    return 0 <= i < n and _in(r, eq[i], k)


cdef bint _assert(LinearRegex r, int32_t kind, const int32_t* eq, Py_ssize_t n, Py_ssize_t j) noexcept nogil:
    # Parity: Oniguruma regexec.c OP_BEGIN_LINE / END_LINE / BEGIN_BUF / END_BUF /
    # SEMI_END_BUF / WORD_BOUNDARY (ONIGENC_IS_MBC_NEWLINE: '\n' only)
    if kind == ASSERT_BOL:
        return j == 0 or (j < n and _at(r, eq, n, j - 1, r.newline_class))
    if kind == ASSERT_EOL:
        return j == n or _at(r, eq, n, j, r.newline_class)
    if kind == ASSERT_BOT:
        return j == 0
    if kind == ASSERT_EOT:
        return j == n
    if kind == ASSERT_EOT_NL:
        return j == n or (j == n - 1 and _at(r, eq, n, j, r.newline_class))
    if kind == ASSERT_WORD:
        return _at(r, eq, n, j - 1, r.word_class) != _at(r, eq, n, j, r.word_class)
    return _at(r, eq, n, j - 1, r.word_class) == _at(r, eq, n, j, r.word_class)


cdef inline bint _grapheme_break(unsigned char before, unsigned char after, bint pict_before,
                                 Py_ssize_t ri_before) noexcept nogil:
    """Whether a grapheme cluster boundary lies between two characters (codes as
    part_graphemes), inside the text. `pict_before`: the character before `before`, walking
    back over Extend, is Extended_Pictographic; `ri_before`: Regional_Indicator characters
    that end right before `before`.
    Parity: Oniguruma unicode.c unicode_egcb_is_break_2code and onigenc_egcb_is_break_position."""
    cdef unsigned char f = before & G_VALUE_MASK, t = after & G_VALUE_MASK
    if f == 0 and t == 0:
        return True
    if f == G_CR and t == G_LF:
        return False                                                        # GB3
    if G_CR <= f <= G_CONTROL or G_CR <= t <= G_CONTROL:
        return True                                                         # GB4, GB5
    if f >= G_L and t >= G_L:
        if f == G_L and t != G_T:
            return False                                                    # GB6
        if (f == G_LV or f == G_V) and (t == G_V or t == G_T):
            return False                                                    # GB7
        if t == G_T and (f == G_LVT or f == G_T):
            return False                                                    # GB8
        return True
    if t == G_EXTEND or t == G_ZWJ or t == G_SPACING_MARK or f == G_PREPEND:
        return False                                                        # GB9, GB9a, GB9b
    if f == G_ZWJ:
        return not ((after & G_PICT) and pict_before)                       # GB11
    if f == G_REGIONAL_INDICATOR and t == G_REGIONAL_INDICATOR:
        return ri_before % 2 != 0                                           # GB12, GB13
    return True


cdef void _fill_grapheme_breaks(LinearRegex r, const int32_t* eq, Py_ssize_t n, unsigned char* out) noexcept nogil:
    """out[j] (0 <= j <= n): a grapheme cluster boundary lies at position j of the text, its
    start and end included (GB1, GB2), the rules looking back as far as the start."""
    cdef const unsigned char* g = r.part_graphemes
    cdef unsigned char before, after
    cdef bint pict = False
    cdef Py_ssize_t ri = 0, j
    out[0] = 1
    out[n] = 1
    for j in range(1, n):
        before = g[eq[j - 1]]
        after = g[eq[j]]
        out[j] = _grapheme_break(before, after, pict, ri)
        pict = (before & G_PICT) != 0 or ((before & G_VALUE_MASK) == G_EXTEND and pict)
        ri = ri + 1 if (before & G_VALUE_MASK) == G_REGIONAL_INDICATOR else 0


cdef int _run_pass(LinearRegex r, const LrPass* p, const int32_t* eq, Py_ssize_t n, LrScratch* sc) noexcept nogil:
    """One sweep of a pass over all positions 0..n (see the module docstring)."""
    cdef int32_t* cur = sc.cols.data
    cdef int32_t* prev = sc.cols.data + r.max_states
    cdef int32_t* tmp
    cdef const int32_t* st = p.states
    cdef const int32_t* order = p.order
    cdef unsigned char* tables = <unsigned char*>sc.tables.data
    cdef int32_t* conts = sc.conts.data
    cdef int32_t* ends = sc.match_end.data
    cdef Py_ssize_t stride = n + 1, j, t
    cdef int32_t q, op, v, part, k, s
    cdef const uint64_t* mask
    cdef bint ok
    j = 0 if p.reversed else n
    while 0 <= j <= n:
        # the character a CLASS state consumes at this position
        if p.reversed:
            part = eq[j - 1] if j > 0 else -1
        else:
            part = eq[j] if j < n else -1
        mask = r.masks + part * r.words if part >= 0 else NULL
        for t in range(p.n_states):
            q = order[t]
            op = st[4 * q]
            if op == OP_CLASS:
                k = st[4 * q + 1]
                if mask != NULL and (mask[k >> 6] >> (k & 63)) & 1:
                    cur[q] = prev[st[4 * q + 2]]
                else:
                    cur[q] = -1
            elif op == OP_ALT:
                v = cur[st[4 * q + 1]]
                cur[q] = v if v >= 0 else cur[st[4 * q + 2]]
            elif op == OP_MATCH:
                cur[q] = <int32_t>j
            elif op == OP_ATOMIC:
                v = cur[st[4 * q + 1]]
                if v < 0:
                    cur[q] = -1
                elif v == j:
                    cur[q] = cur[st[4 * q + 2]]
                else:
                    cur[q] = conts[st[4 * q + 3] * stride + v]
            else:
                if op == OP_ASSERT:
                    ok = _assert(r, st[4 * q + 1], eq, n, j)
                elif op == OP_LOOK_CLASS:
                    ok = _at(r, eq, n, j, st[4 * q + 1]) != (st[4 * q + 3] != 0)
                elif op == OP_BEHIND_CLASS:
                    ok = _at(r, eq, n, j - 1, st[4 * q + 1]) != (st[4 * q + 3] != 0)
                else:   # OP_LOOK
                    ok = (tables[st[4 * q + 1] * stride + j] != 0) != (st[4 * q + 3] != 0)
                cur[q] = cur[st[4 * q + 2]] if ok else -1
        for t in range(p.n_slots):
            s = p.slots[2 * t]
            conts[s * stride + j] = cur[p.slots[2 * t + 1]]
        if p.output >= 0:
            tables[p.output * stride + j] = cur[p.start] >= 0
        else:
            ends[j] = cur[p.start]
        tmp = cur
        cur = prev
        prev = tmp
        j = j + 1 if p.reversed else j - 1
    return 0


cdef inline Py_ssize_t _char_len(const unsigned char* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """Bytes of the character at s[i] as _decode_parts reads it (1 for a byte that does not
    start a well-formed sequence)."""
    cdef unsigned char b0 = s[i]
    if b0 < 0x80:
        return 1
    if b0 >= 0xC2 and b0 < 0xE0 and i + 1 < n and (s[i + 1] & 0xC0) == 0x80:
        return 2
    if (b0 & 0xF0) == 0xE0 and i + 2 < n and (s[i + 1] & 0xC0) == 0x80 and (s[i + 2] & 0xC0) == 0x80:
        return 3
    if ((b0 & 0xF8) == 0xF0 and i + 3 < n and (s[i + 1] & 0xC0) == 0x80
            and (s[i + 2] & 0xC0) == 0x80 and (s[i + 3] & 0xC0) == 0x80):
        return 4
    return 1


cdef Py_ssize_t _decode_parts(LinearRegex r, const unsigned char* s, Py_ssize_t n, IdBuf* parts) noexcept nogil:
    """Decode s[:n] once: the partition id of each code point into `parts` (room is left for
    two more entries). As pretok_common.decode_utf8: a byte that does not start a well-formed
    sequence reads as U+FFFD. Returns the number of code points or -1."""
    cdef Py_ssize_t i = 0, k = 0, step
    cdef unsigned char b0
    cdef int32_t cp
    cdef int32_t* pt
    if idbuf_reserve(parts, n + 2) < 0:
        return -1
    pt = parts.data
    while i < n:
        b0 = s[i]
        if b0 < 0x80:
            pt[k] = r.ascii_part[b0]
            i += 1
            k += 1
            continue
        step = _char_len(s, n, i)
        if step == 2:
            cp = ((b0 & 0x1F) << 6) | (s[i + 1] & 0x3F)
        elif step == 3:
            cp = ((b0 & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
        elif step == 4:
            cp = ((b0 & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F)
        else:
            cp = 0xFFFD
        i += step
        pt[k] = r.part_of(cp)
        k += 1
    parts.size = k
    return k


cdef struct _Cursor:
    # code point index -> byte offset, for positions visited in increasing order
    const unsigned char* s
    Py_ssize_t n
    Py_ssize_t cp
    Py_ssize_t byte


cdef inline Py_ssize_t _byte_at(_Cursor* c, Py_ssize_t cp) noexcept nogil:
    if c.s == NULL:         # a text of symbols: offsets are indices
        return cp
    while c.cp < cp:
        c.byte += _char_len(c.s, c.n, c.byte)
        c.cp += 1
    return c.byte


cdef int _iterate(const int32_t* ends, Py_ssize_t n, const unsigned char* s, Py_ssize_t n_bytes,
                  IdBuf* pairs) noexcept nogil:
    """The matches from each position's match end (-1: none), as onig's find_iter and
    tokenizers' find_matches take them, appended as byte offsets. Returns the count or -1.
    Parity: onig FindMatches::next (search from the last end; an empty match at the end of
    the previous match is skipped by one character)."""
    cdef Py_ssize_t pos, last_end = 0, last_match_end = -1, count = 0
    cdef int32_t e
    cdef _Cursor cur
    cur.s = s
    cur.n = n_bytes
    cur.cp = 0
    cur.byte = 0
    while last_end <= n:
        pos = last_end
        while pos <= n and ends[pos] < 0:
            pos += 1
        if pos > n:
            break
        e = ends[pos]
        if e == pos and e == last_match_end:
            last_end += 1
            continue
        last_end = e
        last_match_end = e
        if idbuf_reserve(pairs, 2) < 0:
            return -1
        pairs.data[pairs.size] = <int32_t>_byte_at(&cur, pos)
        pairs.data[pairs.size + 1] = <int32_t>_byte_at(&cur, e)
        pairs.size += 2
        count += 1
    return <int>count


cdef Py_ssize_t lr_find_all(LinearRegex r, const unsigned char* s, Py_ssize_t n, LrScratch* sc,
                            IdBuf* pairs) noexcept nogil:
    cdef Py_ssize_t n_cp
    if n == 0:
        # Parity: tokenizers Pattern for &SysRegex: an empty text has no match
        return 0
    n_cp = _decode_parts(r, s, n, &sc.eq)
    if n_cp < 0:
        return ERR_NO_MEMORY
    return _find_all_parts(r, n_cp, s, n, sc, pairs)


cdef Py_ssize_t lr_find_all_symbols(LinearRegex r, const int32_t* symbols, Py_ssize_t n, LrScratch* sc,
                                    IdBuf* pairs) noexcept nogil:
    cdef Py_ssize_t i
    if n == 0:
        return 0
    if idbuf_reserve(&sc.eq, n + 2) < 0:
        return ERR_NO_MEMORY
    for i in range(n):
        sc.eq.data[i] = r.part_of(symbols[i])
    sc.eq.size = n
    return _find_all_parts(r, n, NULL, 0, sc, pairs)


cdef Py_ssize_t _find_all_parts(LinearRegex r, Py_ssize_t n_cp, const unsigned char* s, Py_ssize_t n,
                                LrScratch* sc, IdBuf* pairs) noexcept nogil:
    """The matches in the text whose partition ids are in sc.eq (n_cp of them); `s`, `n`: its
    UTF-8, for byte offsets (NULL: the offsets are indices)."""
    cdef Py_ssize_t i
    cdef int32_t* eq = sc.eq.data
    if r.dfa_states > 0:
        return _find_all_dfa(r, eq, n_cp, s, n, pairs)
    sc.match_end.size = 0
    sc.cols.size = 0
    sc.conts.size = 0
    sc.tables.size = 0
    if (idbuf_reserve(&sc.match_end, n_cp + 1) < 0 or idbuf_reserve(&sc.cols, 2 * r.max_states) < 0
            or idbuf_reserve(&sc.conts, r.n_slots * (n_cp + 1) + 1) < 0
            or bytebuf_reserve(&sc.tables, r.n_tables * (n_cp + 1) + 1) < 0):
        return ERR_NO_MEMORY
    if r.grapheme_table >= 0:
        _fill_grapheme_breaks(r, eq, n_cp, <unsigned char*>sc.tables.data + r.grapheme_table * (n_cp + 1))
    for i in range(r.n_passes):
        _run_pass(r, &r.passes[i], eq, n_cp, sc)
    i = _iterate(sc.match_end.data, n_cp, s, n, pairs)
    return ERR_NO_MEMORY if i < 0 else i


cdef inline bint _live(LinearRegex r, int32_t d, int32_t q) noexcept nogil:
    return (r.dfa_live[d * r.dfa_words + (q >> 6)] >> (q & 63)) & 1


cdef Py_ssize_t _find_all_dfa(LinearRegex r, int32_t* eq, Py_ssize_t n, const unsigned char* s,
                              Py_ssize_t n_bytes, IdBuf* pairs) noexcept nogil:
    """lr_find_all with the main pass's DFA: one table step per position right to left (the
    set of live states of each column, written over the partition ids in `eq`, which has
    room for n + 2 entries), then each match's path followed from its start through live
    states (an alternative takes its first branch when that is live), as _iterate takes them."""
    cdef int32_t* live = eq
    cdef const int32_t* nxt = r.dfa_next
    cdef const int32_t* ops = r.main_ops
    cdef Py_ssize_t j, pos, last_end = 0, last_match_end = -1, count = 0, width = r.n_parts + 1
    cdef int32_t q, op, e, d
    cdef _Cursor cur
    live[n + 1] = 0                                 # nothing is live past the end
    live[n] = nxt[r.n_parts]                        # the end of the text
    j = n - 1
    while j >= 0:
        live[j] = nxt[live[j + 1] * width + live[j]]
        j -= 1
    cur.s = s
    cur.n = n_bytes
    cur.cp = 0
    cur.byte = 0
    while last_end <= n:
        pos = last_end
        while pos <= n and not _live(r, live[pos], r.main_start):
            pos += 1
        if pos > n:
            break
        q = r.main_start
        j = pos
        d = live[j]
        if r.dfa_resolve != NULL:
            while True:
                q = r.dfa_resolve[d * r.main_states + q]
                if ops[4 * q] == OP_MATCH:
                    break
                q = ops[4 * q + 2]
                j += 1
                d = live[j]
        else:
            while True:
                op = ops[4 * q]
                if op == OP_MATCH:
                    break
                if op == OP_CLASS:
                    q = ops[4 * q + 2]
                    j += 1
                    d = live[j]
                elif op == OP_ALT:
                    q = ops[4 * q + 1] if _live(r, d, ops[4 * q + 1]) else ops[4 * q + 2]
                else:                   # a look-ahead class or an anchor that holds here
                    q = ops[4 * q + 2]
        e = <int32_t>j
        if e == pos and e == last_match_end:
            last_end += 1
            continue
        last_end = e
        last_match_end = e
        if idbuf_reserve(pairs, 2) < 0:
            return ERR_NO_MEMORY
        pairs.data[pairs.size] = <int32_t>_byte_at(&cur, pos)
        pairs.data[pairs.size + 1] = <int32_t>_byte_at(&cur, e)
        pairs.size += 2
        count += 1
    return count


cdef Py_ssize_t lr_replace_all(LinearRegex r, const unsigned char* s, Py_ssize_t n,
                               const char* content, Py_ssize_t content_len, LrScratch* sc,
                               IdBuf* pairs, ByteBuf* out) noexcept nogil:
    cdef Py_ssize_t base = pairs.size, count, k, prev = 0
    count = lr_find_all(r, s, n, sc, pairs)
    if count <= 0:
        return count
    out.size = 0
    for k in range(base, pairs.size, 2):
        if (bytebuf_append(out, <const char*>s + prev, pairs.data[k] - prev) < 0
                or bytebuf_append(out, content, content_len) < 0):
            return ERR_NO_MEMORY
        prev = pairs.data[k + 1]
    if bytebuf_append(out, <const char*>s + prev, n - prev) < 0:
        return ERR_NO_MEMORY
    return count


def _partition(classes):
    """Split the code points into parts whose members are in the same classes:
    ([(first code point, part)] in order, [class bit mask of each part])."""
    events = {}
    for k, ranges in enumerate(classes):
        for lo, hi in ranges:
            events.setdefault(lo, []).append(k)
            events.setdefault(hi + 1, []).append(k)
    mask = 0
    parts = {0: 0}
    masks = [0]
    segments = []
    if 0 not in events:
        segments.append((0, 0))
    for pos in sorted(events):
        for k in events[pos]:
            mask ^= 1 << k
        if pos > 0x10FFFF:
            break
        if mask not in parts:
            parts[mask] = len(masks)
            masks.append(mask)
        if segments and segments[len(segments) - 1][1] == parts[mask]:
            continue
        segments.append((pos, parts[mask]))
    return segments, masks


cdef class LinearRegex:
    """A compiled program (backtrack_program.Program) in C arrays, shared by all threads."""

    def __cinit__(self):
        self.passes = NULL
        self.n_passes = 0
        self.masks = NULL
        self.bmp_part = NULL
        self.astral_starts = NULL
        self.astral_parts = NULL
        self.dfa_states = 0
        self.dfa_next = NULL
        self.dfa_live = NULL
        self.main_ops = NULL
        self.dfa_resolve = NULL
        self.part_graphemes = NULL
        self.grapheme_table = -1

    def __init__(self, program, str pattern="", *, bint use_dfa=True):
        """`use_dfa` False (tests): always run the passes, never the DFA."""
        cdef int32_t i, k, w, cp, lo, hi
        cdef LrPass* p
        self.pattern = pattern
        self._keep = program
        self.n_tables = program.n_tables
        self.n_slots = program.n_slots
        self.newline_class = program.newline_class
        self.word_class = program.word_class
        self.words = max(1, (len(program.classes) + 63) // 64)
        self.n_passes = len(program.passes)
        self.passes = <LrPass*>malloc(sizeof(LrPass) * self.n_passes)
        if self.passes == NULL:
            raise MemoryError()
        memset(self.passes, 0, sizeof(LrPass) * self.n_passes)
        self.max_states = 1
        for i, pp in enumerate(program.passes):
            p = &self.passes[i]
            p.n_states = len(pp.states)
            p.start = pp.start
            p.reversed = pp.reversed
            p.output = pp.output
            p.n_slots = len(pp.slots)
            p.states = <int32_t*>malloc(sizeof(int32_t) * (4 * p.n_states + 1))
            p.order = <int32_t*>malloc(sizeof(int32_t) * (p.n_states + 1))
            p.slots = <int32_t*>malloc(sizeof(int32_t) * (2 * p.n_slots + 1))
            if p.states == NULL or p.order == NULL or p.slots == NULL:
                raise MemoryError()
            for k, (op, a, b, c) in enumerate(pp.states):
                p.states[4 * k] = op
                p.states[4 * k + 1] = a
                p.states[4 * k + 2] = b
                p.states[4 * k + 3] = c
            for k, q in enumerate(pp.order):
                p.order[k] = q
            for k, (slot, after) in enumerate(pp.slots):
                p.slots[2 * k] = slot
                p.slots[2 * k + 1] = after
            self.max_states = max(self.max_states, p.n_states)
        segments, masks = _partition(program.classes)
        self.n_parts = len(masks)
        self.masks = <uint64_t*>malloc(sizeof(uint64_t) * self.words * self.n_parts)
        self.bmp_part = <int32_t*>malloc(sizeof(int32_t) * 0x10000)
        astral = [(start, part) for start, part in segments if start > 0xFFFF]
        # the part that covers U+10000
        first = 0
        for start, part in segments:
            if start <= 0x10000:
                first = part
        astral = [(0x10000, first)] + [x for x in astral if x[0] > 0x10000]
        self.n_astral = len(astral)
        self.astral_starts = <int32_t*>malloc(sizeof(int32_t) * self.n_astral)
        self.astral_parts = <int32_t*>malloc(sizeof(int32_t) * self.n_astral)
        if (self.masks == NULL or self.bmp_part == NULL or self.astral_starts == NULL
                or self.astral_parts == NULL):
            raise MemoryError()
        for i, m in enumerate(masks):
            for w in range(self.words):
                self.masks[i * self.words + w] = (m >> (64 * w)) & 0xFFFFFFFFFFFFFFFF
        for k in range(len(segments)):
            lo = segments[k][0]
            hi = segments[k + 1][0] - 1 if k + 1 < len(segments) else 0x10FFFF
            if lo > 0xFFFF:
                break
            if hi > 0xFFFF:
                hi = 0xFFFF
            w = segments[k][1]
            for cp in range(lo, hi + 1):
                self.bmp_part[cp] = w
        for cp in range(128):
            self.ascii_part[cp] = self.bmp_part[cp]
        for k, (start, part) in enumerate(astral):
            self.astral_starts[k] = start
            self.astral_parts[k] = part
        if program.grapheme_table >= 0:
            self._set_graphemes(program.grapheme_table, program.grapheme_classes)
        if use_dfa:
            self._build_dfa(100_000_000)

    cdef _set_graphemes(self, int32_t table, list classes):
        """part_graphemes from the classes of the break values (a part is in at most one)."""
        cdef int32_t part, k
        cdef unsigned char code
        self.part_graphemes = <unsigned char*>malloc(self.n_parts)
        if self.part_graphemes == NULL:
            raise MemoryError()
        for part in range(self.n_parts):
            code = 0
            for k in range(len(classes)):
                if _in(self, part, classes[k]):
                    code |= G_PICT if bp.GRAPHEME_VALUES[k] == "Extended_Pictographic" else <unsigned char>(k + 1)
            self.part_graphemes[part] = code
        self.grapheme_table = table

    cdef _build_dfa(self, Py_ssize_t max_work):
        """The main pass as a DFA (see the .pxd), when it has one pass and only looks at
        the character at each position (classes, look-ahead classes, $ and \\z); gives up
        past `max_work` state evaluations (the passes then run as they are)."""
        cdef LrPass* p = &self.passes[0]
        cdef int32_t m = p.n_states, width = self.n_parts + 1, d, part, t, q, op, k, v
        cdef int32_t words = (m + 63) // 64
        cdef int32_t* res
        cdef int32_t* rows
        cdef const uint64_t* prev_live
        cdef uint64_t* key
        cdef bint ok, end
        cdef IdBuf nexts
        if self.n_passes != 1 or p.n_slots != 0:
            return
        for q in range(m):
            op = p.states[4 * q]
            if op in (OP_BEHIND_CLASS, OP_LOOK, OP_ATOMIC):
                return
            if op == OP_ASSERT and p.states[4 * q + 1] not in (ASSERT_EOL, ASSERT_EOT):
                return
        memset(&nexts, 0, sizeof(IdBuf))
        ids = {bytes(8 * words): 0}
        sets = [bytes(8 * words)]
        res = <int32_t*>malloc(sizeof(int32_t) * (m + 1))
        key = <uint64_t*>malloc(sizeof(uint64_t) * words)
        try:
            if res == NULL or key == NULL:
                raise MemoryError()
            d = 0
            while d < len(sets):
                if (<Py_ssize_t>(d + 1)) * width * m > max_work:
                    return
                prev_live = <const uint64_t*><const char*>sets[d]
                for part in range(width):
                    end = part == self.n_parts
                    for t in range(m):
                        q = p.order[t]
                        op = p.states[4 * q]
                        if op == OP_CLASS:
                            k = p.states[4 * q + 1]
                            v = p.states[4 * q + 2]
                            res[q] = v if (not end and _in(self, part, k)
                                           and (prev_live[v >> 6] >> (v & 63)) & 1) else -1
                        elif op == OP_ALT:
                            v = res[p.states[4 * q + 1]]
                            res[q] = v if v != -1 else res[p.states[4 * q + 2]]
                        elif op == OP_MATCH:
                            res[q] = -2
                        else:
                            if op == OP_LOOK_CLASS:
                                ok = (not end and _in(self, part, p.states[4 * q + 1])) != (p.states[4 * q + 3] != 0)
                            elif p.states[4 * q + 1] == ASSERT_EOT:
                                ok = end
                            else:   # ASSERT_EOL
                                ok = end or _in(self, part, self.newline_class)
                            res[q] = res[p.states[4 * q + 2]] if ok else -1
                    memset(key, 0, sizeof(uint64_t) * words)
                    for q in range(m):
                        if res[q] != -1:
                            key[q >> 6] |= (<uint64_t>1) << (q & 63)
                    live = (<char*>key)[:8 * words]
                    index = ids.get(live)
                    if index is None:
                        index = len(sets)
                        ids[live] = index
                        sets.append(live)
                    if idbuf_push(&nexts, <int32_t>index) < 0:
                        raise MemoryError()
                d += 1
            d = len(sets)
            self.dfa_live = <uint64_t*>malloc(sizeof(uint64_t) * words * d)
            self.main_ops = <int32_t*>malloc(sizeof(int32_t) * 4 * m)
            if self.dfa_live == NULL or self.main_ops == NULL:
                raise MemoryError()
            for k in range(d):
                memcpy(&self.dfa_live[k * words], <const char*>sets[k], 8 * words)
            memcpy(self.main_ops, p.states, sizeof(int32_t) * 4 * m)
            self.dfa_next = nexts.data
            nexts.data = NULL
            if <Py_ssize_t>d * m <= 8_000_000:
                self.dfa_resolve = <int32_t*>malloc(sizeof(int32_t) * d * m)
                if self.dfa_resolve == NULL:
                    raise MemoryError()
                for k in range(d):
                    rows = self.dfa_resolve + k * m
                    prev_live = self.dfa_live + k * words
                    for t in range(m):
                        q = p.order[t]
                        op = p.states[4 * q]
                        if op == OP_CLASS or op == OP_MATCH:
                            rows[q] = q
                        elif op == OP_ALT:
                            v = p.states[4 * q + 1]
                            rows[q] = rows[v] if (prev_live[v >> 6] >> (v & 63)) & 1 else rows[p.states[4 * q + 2]]
                        else:
                            rows[q] = rows[p.states[4 * q + 2]]
        finally:
            free(res)
            free(key)
            idbuf_free(&nexts)
        self.dfa_words = words
        self.main_states = m
        self.main_start = p.start
        self.dfa_states = d

    def __dealloc__(self):
        cdef int32_t i
        free(self.dfa_next)
        free(self.dfa_live)
        free(self.main_ops)
        free(self.dfa_resolve)
        if self.passes != NULL:
            for i in range(self.n_passes):
                free(self.passes[i].states)
                free(self.passes[i].order)
                free(self.passes[i].slots)
        free(self.passes)
        free(self.masks)
        free(self.bmp_part)
        free(self.astral_starts)
        free(self.astral_parts)
        free(self.part_graphemes)

    cdef int32_t part_of(self, int32_t cp) noexcept nogil:
        cdef int32_t lo = 0, hi, mid
        if cp < 128:
            return self.ascii_part[cp] if cp >= 0 else 0
        if cp <= 0xFFFF:
            return self.bmp_part[cp]
        hi = self.n_astral - 1
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            if self.astral_starts[mid] <= cp:
                lo = mid
            else:
                hi = mid - 1
        return self.astral_parts[lo]

    def find_matches(self, bytes text):
        """[(start, end)] byte offsets of the matches in UTF-8 `text` (tests, tools)."""
        cdef LrScratch sc
        cdef IdBuf pairs
        cdef Py_ssize_t rc, k
        cdef const unsigned char* s = text
        cdef Py_ssize_t n = len(text)
        lr_scratch_init(&sc)
        memset(&pairs, 0, sizeof(IdBuf))
        try:
            with nogil:
                rc = lr_find_all(self, s, n, &sc, &pairs)
            raise_for_status(<int>min(rc, 0))
            return [(pairs.data[k], pairs.data[k + 1]) for k in range(0, pairs.size, 2)]
        finally:
            lr_scratch_free(&sc)
            idbuf_free(&pairs)

    def replace(self, bytes text, bytes content):
        """`text` with every match replaced by `content` (tokenizers' Replace), as bytes."""
        cdef LrScratch sc
        cdef IdBuf pairs
        cdef ByteBuf out
        cdef Py_ssize_t rc
        cdef const unsigned char* s = text
        cdef const char* c = content
        cdef Py_ssize_t n = len(text), cn = len(content)
        lr_scratch_init(&sc)
        memset(&pairs, 0, sizeof(IdBuf))
        memset(&out, 0, sizeof(ByteBuf))
        try:
            with nogil:
                rc = lr_replace_all(self, s, n, c, cn, &sc, &pairs, &out)
            raise_for_status(<int>min(rc, 0))
            return text if rc == 0 else out.data[:out.size]
        finally:
            lr_scratch_free(&sc)
            idbuf_free(&pairs)
            bytebuf_free(&out)

    @property
    def dfa_size(self):
        """States of the main pass's DFA (0: none; the passes run as they are)."""
        return self.dfa_states

    def __reduce__(self):
        return (_rebuild, (self._keep, self.pattern, self.dfa_states > 0))


def _rebuild(program, pattern, use_dfa):
    return LinearRegex(program, pattern, use_dfa=use_dfa)
