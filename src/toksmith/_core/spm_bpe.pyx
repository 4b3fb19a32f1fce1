"""SentencePiece BPE: merge adjacent symbols by the score of the piece they form.

Both references (sentencepiece's bpe::Model::SampleEncode and llama.cpp's
llm_tokenizer_spm_session) split the text into characters, then repeatedly
merge the adjacent pair whose concatenation is a piece with the highest
score, the leftmost pair on ties. This module does the same with integer
symbols: every (left symbol, right symbol) pair that forms a piece is found
once at load time, so encoding never hashes strings.

Two speed-ups keep the result identical to the references:

* When no mergeable piece contains a character followed by U+2581, no merge
  can ever cross the boundary before a U+2581 that follows another
  character, so the text is merged word by word ("chunks").
* Short chunks are merged by a linear scan, long ones with a binary heap,
  so a megabyte without spaces stays O(n log n).

    >>> bpe = ScoreBpe.build(pieces, scores, mergeable, unused, output_ids, None, False,
    ...                      unk_id=0, missing_id=0, byte_fallback=True,
    ...                      merge_unknown_runs=True, byte_ids=byte_ids)   # doctest: +SKIP
"""
cimport cython
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memset

from toksmith._core.buffers cimport (ByteBuf, IdBuf, bytebuf_append, bytebuf_free, idbuf_free,
                                     idbuf_push, idbuf_reserve)
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.model cimport Model, WorkHeader
from toksmith._core.tables cimport (HeapItem, heap_free, heap_pop, heap_push, heap_reserve,
                                    score_priority, u64map_free, u64map_get, u64map_init,
                                    u64map_put)
from toksmith._core.trie cimport DoubleArrayTrie
from toksmith._core.unknown cimport UnknownRules, emit_path, fill_unknown_rules
from toksmith._core.utf8 cimport one_char_len

# Chunks of at most this many symbols are merged by a linear scan.
cdef Py_ssize_t LINEAR_MAX_SYMBOLS = 24
# Chunks of at most this many symbols go through the per-thread cache.
cdef Py_ssize_t CACHED_MAX_SYMBOLS = 64
# Per-thread cache of chunk results: slots (a power of two), and the number
# of entries or stored bytes after which it starts over.
cdef Py_ssize_t CACHE_SLOTS = 1 << 16
cdef Py_ssize_t CACHE_MAX_ENTRIES = 1 << 15
cdef Py_ssize_t CACHE_MAX_TEXT_BYTES = 1 << 20
# Every ScoreBpe uses ScoreBpeWork: this static's address is their work_kind.
cdef char SCORE_BPE_WORK_KIND = 0
cdef unsigned char SPACE0 = 0xE2, SPACE1 = 0x96, SPACE2 = 0x81   # U+2581 in UTF-8


cdef void bpe_work_free(BpeWork* w) noexcept nogil:
    idbuf_free(&w.symbols)
    idbuf_free(&w.starts)
    idbuf_free(&w.lengths)
    idbuf_free(&w.prev)
    idbuf_free(&w.next)
    idbuf_free(&w.candidates)
    idbuf_free(&w.rev_merges)
    heap_free(&w.heap)
    free(w.cache)
    w.cache = NULL
    w.cache_used = 0
    w.cache_model = 0
    bytebuf_free(&w.cache_text)
    idbuf_free(&w.cache_ids)


cdef void _free_score_bpe_work(void* p) noexcept nogil:
    cdef ScoreBpeWork* w = <ScoreBpeWork*>p
    if w == NULL:
        return
    bpe_work_free(&w.bpe)
    idbuf_free(&w.path_ids)
    idbuf_free(&w.path_starts)
    free(w)


cdef inline uint64_t _char_key(const unsigned char* s, int length) noexcept nogil:
    """The character's bytes and its length packed into one non-zero integer."""
    cdef uint64_t key = <uint64_t>length << 32
    cdef int i
    for i in range(length):
        key |= (<uint64_t>s[i]) << (8 * i)
    return key


cdef inline uint64_t _hash_text(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = <uint64_t>0xCBF29CE484222325   # FNV-1a
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ p[i]) * <uint64_t>0x100000001B3
    return h


cdef int _text_table_build(TextTable* t, const unsigned char* base, const Py_ssize_t* offsets,
                           const unsigned char* keep, Py_ssize_t n) noexcept nogil:
    """Open-addressing map from the text of each kept piece to its id (load time only)."""
    cdef Py_ssize_t cap = 64, i
    cdef uint64_t slot
    while cap < 2 * n:
        cap *= 2
    t.slots = <int32_t*>malloc(cap * sizeof(int32_t))
    if t.slots == NULL:
        return -1
    memset(t.slots, 0xFF, cap * sizeof(int32_t))
    t.mask = <uint64_t>(cap - 1)
    t.base = base
    t.offsets = offsets
    for i in range(n):
        if keep[i]:
            slot = _hash_text(base + offsets[i], offsets[i + 1] - offsets[i]) & t.mask
            while t.slots[slot] >= 0:
                slot = (slot + 1) & t.mask
            t.slots[slot] = <int32_t>i
    return 0


cdef int32_t _text_table_find(const TextTable* t, const unsigned char* p, Py_ssize_t n) noexcept nogil:
    cdef uint64_t slot = _hash_text(p, n) & t.mask
    cdef int32_t i
    while True:
        i = t.slots[slot]
        if i < 0:
            return -1
        if t.offsets[i + 1] - t.offsets[i] == n and memcmp(t.base + t.offsets[i], p, n) == 0:
            return i
        slot = (slot + 1) & t.mask


cdef inline bint _is_space_symbol(const unsigned char* s, Py_ssize_t length) noexcept nogil:
    return length == 3 and s[0] == SPACE0 and s[1] == SPACE1 and s[2] == SPACE2


@cython.final
cdef class ScoreBpe:
    """The merge tables of one SentencePiece-BPE vocabulary (see the module docstring)."""

    def __cinit__(self):
        self.pairs.slots = NULL
        self.chars.slots = NULL
        self.scores = NULL
        self.output_ids = NULL
        self.symbol_lengths = NULL
        self.is_unused = NULL

    def __dealloc__(self):
        u64map_free(&self.pairs)
        u64map_free(&self.chars)
        free(self.scores)
        free(self.output_ids)
        free(self.symbol_lengths)
        free(self.is_unused)

    @staticmethod
    def build(list pieces, scores, bytes mergeable, bytes unused, dict output_overrides,
              DoubleArrayTrie frozen, bint resegment_unused, *, int unk_id, int missing_id,
              bint byte_fallback, bint merge_unknown_runs, list byte_ids):
        """Tables for `pieces` (UTF-8 bytes, distinct among the mergeable ones).

        mergeable[i]: piece i can be formed by a merge (sentencepiece: NORMAL,
        USER_DEFINED and UNUSED pieces; llama.cpp: every token).
        unused[i]: piece i is re-split into the pair that formed it
        (sentencepiece's UNUSED pieces, when `resegment_unused`).
        output_overrides: {piece id: id emitted instead} (default: the piece id).
        frozen: user-defined pieces matched whole and never merged, or None.
        unk_id ... byte_ids: the unknown-piece rules (unknown.pxd UnknownRules).
        """
        cdef ScoreBpe self = ScoreBpe()
        cdef Py_ssize_t n = len(pieces), i, k, count_pairs = 0, cap
        cdef bytes data = b"".join(pieces)
        cdef const unsigned char* base = <const unsigned char*><char*>data
        cdef Py_ssize_t* offsets = NULL
        cdef const unsigned char* p
        cdef Py_ssize_t plen
        cdef int32_t left, right
        cdef TextTable by_text
        cdef const unsigned char* can_merge = mergeable
        if len(scores) != n or len(mergeable) != n or len(unused) != n:
            raise ValueError("pieces, scores and flags must have equal lengths")
        fill_unknown_rules(&self.unknown, unk_id, missing_id, byte_fallback, merge_unknown_runs,
                           byte_ids, n)
        self.work_kind = &SCORE_BPE_WORK_KIND
        self.n_pieces = n
        self.frozen = frozen
        self.has_frozen = frozen is not None and frozen.num_keys > 0
        self.resegment_unused = resegment_unused
        self.scores = <float*>malloc(max(n, 1) * sizeof(float))
        self.is_unused = <unsigned char*>calloc(max(n, 1), 1)
        offsets = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        by_text.slots = NULL
        try:
            if self.scores == NULL or self.is_unused == NULL or offsets == NULL:
                raise MemoryError()
            offsets[0] = 0
            for i in range(n):
                self.scores[i] = scores[i]
                self.is_unused[i] = (<const unsigned char*>unused)[i] != 0
                offsets[i + 1] = offsets[i] + len(<bytes>pieces[i])
            if _text_table_build(&by_text, base, offsets, can_merge, n) < 0:
                raise MemoryError()

            # Symbols: every piece id, then one extra id per character that occurs
            # inside a mergeable piece without being a piece itself.
            for i in range(256):
                self.byte_symbol[i] = -1
            if u64map_init(&self.chars, 2 * (n + 16)) < 0:
                raise MemoryError()
            # One-character pieces: mergeable ones first, so a text that is both a
            # mergeable and a reserved piece acts as the mergeable one.
            for k in range(2):
                for i in range(n):
                    if (can_merge[i] != 0) == (k == 0):
                        self._add_single_char_piece(base + offsets[i], offsets[i + 1] - offsets[i],
                                                    <int32_t>i)
            self.n_symbols = n

            for i in range(n):
                plen = offsets[i + 1] - offsets[i]
                if can_merge[i] and plen > 0 and one_char_len(base[offsets[i]]) < plen:
                    count_pairs += plen - 1
            if u64map_init(&self.pairs, count_pairs) < 0:
                raise MemoryError()

            self.split_at_spaces = True
            for i in range(n):
                if not can_merge[i]:
                    continue
                p = base + offsets[i]
                plen = offsets[i + 1] - offsets[i]
                k = one_char_len(p[0]) if plen else 0
                while 0 < k < plen:
                    if _is_space_symbol(p + k, min(3, plen - k)) and not (
                            k >= 3 and _is_space_symbol(p + k - 3, 3)):
                        # A merge could join a character to the U+2581 after it.
                        self.split_at_spaces = False
                    left = self._text_symbol(p, k, &by_text)
                    right = self._text_symbol(p + k, plen - k, &by_text)
                    if left >= 0 and right >= 0:
                        self._add_pair(left, right, <int32_t>i)
                    k += one_char_len(p[k])

            self.output_ids = <int32_t*>malloc(max(self.n_symbols, 1) * sizeof(int32_t))
            self.symbol_lengths = <int32_t*>malloc(max(self.n_symbols, 1) * sizeof(int32_t))
            if self.output_ids == NULL or self.symbol_lengths == NULL:
                raise MemoryError()
            for i in range(n):
                # Parity: sentencepiece bpe_model.cc Model::Encode resegment: a final
                # symbol that is a reserved piece (only a one-character piece can be)
                # is emitted as unk_id_. (With llama.cpp's rules every token is mergeable.)
                self.output_ids[i] = <int32_t>i if can_merge[i] else -1
                self.symbol_lengths[i] = <int32_t>(offsets[i + 1] - offsets[i])
            for piece_id, emitted in output_overrides.items():
                self.output_ids[<Py_ssize_t>piece_id] = <int32_t>emitted
            for i in range(n, self.n_symbols):
                self.output_ids[i] = -1
            for i in range(<Py_ssize_t>self.chars.mask + 1):
                if self.chars.slots[i].key != 0 and self.chars.slots[i].value >= n:
                    self.symbol_lengths[self.chars.slots[i].value] = \
                        <int32_t>(self.chars.slots[i].key >> 32)
        finally:
            free(offsets)
            free(by_text.slots)
        self.space_symbol = self._char_symbol(<const unsigned char*>b"\xe2\x96\x81", 3)
        # Parity: sentencepiece records UNUSED re-splits in the order pairs are
        # pushed over the whole text, so that case is merged in one piece.
        self.chunked = self.split_at_spaces and not resegment_unused
        return self

    # ------------------------------------------------------------------ Model

    cdef void* new_work(self) noexcept nogil:
        cdef ScoreBpeWork* w = <ScoreBpeWork*>calloc(1, sizeof(ScoreBpeWork))
        if w != NULL:
            w.header.free = _free_score_bpe_work
            w.header.kind = &SCORE_BPE_WORK_KIND
        return w

    cdef void trim_work(self, void* work, Py_ssize_t keep_bytes) noexcept nogil:
        cdef ScoreBpeWork* w = <ScoreBpeWork*>work
        if w.bpe.symbols.cap * 4 > keep_bytes:
            bpe_work_free(&w.bpe)
        if w.path_ids.cap * 4 > keep_bytes:
            idbuf_free(&w.path_ids)
            idbuf_free(&w.path_starts)

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        cdef ScoreBpeWork* w = <ScoreBpeWork*>work
        w.path_ids.size = 0
        w.path_starts.size = 0
        if self._segment(s, n, &w.bpe, &w.path_ids, &w.path_starts) < 0:
            return ERR_NO_MEMORY
        return emit_path(&self.unknown, s, n, &w.path_ids, &w.path_starts, ids, spans, base)

    # ------------------------------------------------------------------ load helpers

    cdef int _add_single_char_piece(self, const unsigned char* p, Py_ssize_t plen,
                                    int32_t piece_id) except -1:
        if plen == 0 or min(one_char_len(p[0]), plen) != plen:
            return 0
        if self._char_symbol(p, <int>plen) < 0:
            self._insert_char(p, <int>plen, piece_id)
        return 0

    cdef int32_t _text_symbol(self, const unsigned char* p, Py_ssize_t length,
                              const TextTable* by_text) except? -2:
        """Symbol id of a merge operand, or -1 when no symbol can have this text."""
        cdef int32_t symbol
        if min(one_char_len(p[0]), length) == length:
            symbol = self._char_symbol(p, <int>length)
            if symbol < 0:
                symbol = <int32_t>self.n_symbols
                self.n_symbols += 1
                self._insert_char(p, <int>length, symbol)
            return symbol
        return _text_table_find(by_text, p, length)

    cdef int _insert_char(self, const unsigned char* s, int length, int32_t symbol) except -1:
        if length == 1:
            self.byte_symbol[s[0]] = symbol
        if u64map_put(&self.chars, _char_key(s, length), symbol) < 0:
            raise MemoryError()
        return 0

    cdef int _add_pair(self, int32_t left, int32_t right, int32_t merged) except -1:
        # the first piece found for a pair stays
        if u64map_put(&self.pairs, ((<uint64_t>(left + 1)) << 32) | <uint64_t>(right + 1),
                      merged) < 0:
            raise MemoryError()
        return 0

    # ------------------------------------------------------------------ lookups

    cdef int32_t _char_symbol(self, const unsigned char* s, int length) noexcept nogil:
        if length == 1:
            return self.byte_symbol[s[0]]
        return u64map_get(&self.chars, _char_key(s, length))

    cdef int32_t _pair(self, int32_t left, int32_t right) noexcept nogil:
        """The piece `left` and `right` form, or -1."""
        if left < 0 or right < 0:
            return -1
        return u64map_get(&self.pairs, ((<uint64_t>(left + 1)) << 32) | <uint64_t>(right + 1))

    cdef int32_t _candidate(self, int32_t left, int32_t right, BpeWork* w) noexcept nogil:
        """`_pair`, remembering how UNUSED pieces were formed (sentencepiece rev_merge)."""
        cdef int32_t merged = self._pair(left, right)
        if merged >= 0 and self.resegment_unused and self.is_unused[merged]:
            if (idbuf_push(&w.rev_merges, merged) < 0 or idbuf_push(&w.rev_merges, left) < 0
                    or idbuf_push(&w.rev_merges, right) < 0):
                return -2
        return merged

    # ------------------------------------------------------------------ encode

    cdef int _segment(self, const unsigned char* s, Py_ssize_t n, BpeWork* w,
                      IdBuf* ids, IdBuf* starts) noexcept nogil:
        """Append the pieces of s[:n] to ids/starts; -1 in ids marks a character
        that is no piece. Returns 0, or -1 when memory runs out."""
        cdef Py_ssize_t i = 0, m = 0, a, b, clen
        cdef int32_t value
        cdef int32_t* sym
        cdef int32_t* start
        w.symbols.size = 0
        w.starts.size = 0
        w.rev_merges.size = 0
        if idbuf_reserve(&w.symbols, n + 1) < 0 or idbuf_reserve(&w.starts, n + 1) < 0:
            return -1
        sym = w.symbols.data
        start = w.starts.data
        # Frozen (user-defined) symbols are stored as -2 - id.
        while i < n:
            clen = 0
            if self.has_frozen:
                # Parity: sentencepiece's PrefixMatcher takes the longest user-defined piece.
                clen = self.frozen.longest_prefix(s + i, n - i, &value)
            if clen > 0:
                sym[m] = -2 - value
            elif s[i] < 0x80:
                clen = 1
                sym[m] = self.byte_symbol[s[i]]
            else:
                clen = one_char_len(s[i])
                if clen > n - i:
                    clen = n - i   # a truncated character at the end stays one symbol
                sym[m] = self._char_symbol(s + i, <int>clen)
            start[m] = <int32_t>i
            m += 1
            i += clen
        start[m] = <int32_t>n
        if idbuf_reserve(&w.candidates, m + 1) < 0:
            return -1
        a = 0
        while a < m:
            if sym[a] <= -2:
                if idbuf_push(ids, self.output_ids[-2 - sym[a]]) < 0 \
                        or idbuf_push(starts, start[a]) < 0:
                    return -1
                a += 1
                continue
            b = a + 1
            while b < m and sym[b] > -2:
                if self.chunked and self._starts_word(s, sym, start, b):
                    break
                b += 1
            if b - a == 1:
                if self._emit(sym[a], start[a], w, ids, starts) < 0:
                    return -1
            elif self.chunked and b - a <= CACHED_MAX_SYMBOLS:
                if self._cached_chunk(s, sym + a, start + a, b - a, start[b], w, ids, starts) < 0:
                    return -1
            elif b - a <= LINEAR_MAX_SYMBOLS:
                if self._merge_linear(sym + a, start + a, b - a, w, ids, starts) < 0:
                    return -1
            else:
                if self._merge_heap(sym + a, start + a, b - a, start[b], w, ids, starts) < 0:
                    return -1
            a = b
        return 0

    cdef inline bint _starts_word(self, const unsigned char* s, const int32_t* sym,
                                  const int32_t* start, Py_ssize_t b) noexcept nogil:
        """Symbol b is U+2581 and symbol b - 1 is not: no merge crosses this point."""
        if self.space_symbol >= 0:
            return sym[b] == self.space_symbol and sym[b - 1] != self.space_symbol
        return _is_space_symbol(s + start[b], start[b + 1] - start[b]) and \
            not _is_space_symbol(s + start[b - 1], start[b] - start[b - 1])

    cdef int _cached_chunk(self, const unsigned char* s, int32_t* sym, int32_t* start,
                           Py_ssize_t m, Py_ssize_t end, BpeWork* w,
                           IdBuf* ids, IdBuf* starts) noexcept nogil:
        """Merge a chunk through the thread's cache: a chunk's pieces depend on its text only."""
        cdef const unsigned char* text = s + start[0]
        cdef Py_ssize_t n = end - start[0], first = ids.size, k
        cdef int32_t base = start[0]
        cdef uint64_t h = _hash_text(text, n) | 1
        cdef uint64_t mask = <uint64_t>(CACHE_SLOTS - 1)
        cdef uint64_t slot = h & mask
        cdef CacheEntry* e
        if w.cache == NULL or w.cache_model != self.serial or w.cache_used >= CACHE_MAX_ENTRIES \
                or w.cache_text.size > CACHE_MAX_TEXT_BYTES:
            if w.cache == NULL:
                w.cache = <CacheEntry*>calloc(CACHE_SLOTS, sizeof(CacheEntry))
                if w.cache == NULL:
                    return -1
            else:
                memset(w.cache, 0, CACHE_SLOTS * sizeof(CacheEntry))
            w.cache_used = 0
            w.cache_model = self.serial
            w.cache_text.size = 0
            w.cache_ids.size = 0
        while w.cache[slot].hash != 0:
            e = &w.cache[slot]
            if e.hash == h and e.text_len == n and \
                    memcmp(w.cache_text.data + e.text_at, text, n) == 0:
                if idbuf_reserve(ids, e.n_ids) < 0 or idbuf_reserve(starts, e.n_ids) < 0:
                    return -1
                for k in range(e.n_ids):
                    ids.data[ids.size + k] = w.cache_ids.data[e.ids_at + 2 * k]
                    starts.data[starts.size + k] = base + w.cache_ids.data[e.ids_at + 2 * k + 1]
                ids.size += e.n_ids
                starts.size += e.n_ids
                return 0
            slot = (slot + 1) & mask
        if m <= LINEAR_MAX_SYMBOLS:
            if self._merge_linear(sym, start, m, w, ids, starts) < 0:
                return -1
        elif self._merge_heap(sym, start, m, end, w, ids, starts) < 0:
            return -1
        e = &w.cache[slot]
        e.hash = h
        e.text_at = <int32_t>w.cache_text.size
        e.text_len = <int32_t>n
        e.ids_at = <int32_t>w.cache_ids.size
        e.n_ids = <int32_t>(ids.size - first)
        if bytebuf_append(&w.cache_text, <const char*>text, n) < 0 \
                or idbuf_reserve(&w.cache_ids, 2 * e.n_ids) < 0:
            e.hash = 0
            return -1
        for k in range(e.n_ids):
            w.cache_ids.data[w.cache_ids.size] = ids.data[first + k]
            w.cache_ids.data[w.cache_ids.size + 1] = starts.data[first + k] - base
            w.cache_ids.size += 2
        w.cache_used += 1
        return 0

    cdef int _merge_linear(self, int32_t* sym, int32_t* start, Py_ssize_t m, BpeWork* w,
                           IdBuf* ids, IdBuf* starts) noexcept nogil:
        """Merge one chunk in place by scanning for the best pair (short chunks)."""
        cdef int32_t* cand = w.candidates.data
        cdef Py_ssize_t i, best
        cdef float best_score
        cdef int32_t c
        for i in range(m - 1):
            cand[i] = self._candidate(sym[i], sym[i + 1], w)
            if cand[i] == -2:
                return -1
        while True:
            best = -1
            best_score = 0
            for i in range(m - 1):
                c = cand[i]
                if c >= 0 and (best < 0 or self.scores[c] > best_score):
                    best = i
                    best_score = self.scores[c]
            if best < 0:
                break
            sym[best] = cand[best]
            for i in range(best + 1, m - 1):
                sym[i] = sym[i + 1]
                start[i] = start[i + 1]
            for i in range(best + 1, m - 2):
                cand[i] = cand[i + 1]
            m -= 1
            # Parity: the pair on the left is re-examined before the pair on the right.
            if best > 0:
                cand[best - 1] = self._candidate(sym[best - 1], sym[best], w)
                if cand[best - 1] == -2:
                    return -1
            if best < m - 1:
                cand[best] = self._candidate(sym[best], sym[best + 1], w)
                if cand[best] == -2:
                    return -1
        for i in range(m):
            if self._emit(sym[i], start[i], w, ids, starts) < 0:
                return -1
        return 0

    cdef int _merge_heap(self, int32_t* sym, int32_t* start, Py_ssize_t m, Py_ssize_t end,
                         BpeWork* w, IdBuf* ids, IdBuf* starts) noexcept nogil:
        """Merge one chunk with a priority queue (long chunks); same result as linear."""
        cdef int32_t* length
        cdef int32_t* prev
        cdef int32_t* nxt
        cdef Py_ssize_t i, need = 3 * m
        cdef HeapItem e, top
        cdef int32_t c, left, right
        w.lengths.size = 0
        w.prev.size = 0
        w.next.size = 0
        if idbuf_reserve(&w.lengths, m) < 0 or idbuf_reserve(&w.prev, m) < 0 \
                or idbuf_reserve(&w.next, m) < 0:
            return -1
        if heap_reserve(&w.heap, need) < 0:
            return -1
        w.heap.size = 0
        length = w.lengths.data
        prev = w.prev.data
        nxt = w.next.data
        for i in range(m):
            length[i] = (start[i + 1] if i + 1 < m else <int32_t>end) - start[i]
            prev[i] = <int32_t>(i - 1)
            nxt[i] = <int32_t>(i + 1) if i + 1 < m else -1
        for i in range(m - 1):
            c = self._candidate(sym[i], sym[i + 1], w)
            if c == -2:
                return -1
            if c >= 0:
                # Parity: both references pop the highest score first, the leftmost pair on ties.
                e.priority = score_priority(self.scores[c], <int32_t>i)
                e.left = <int32_t>i
                e.right = <int32_t>(i + 1)
                e.size = length[i] + length[i + 1]
                heap_push(&w.heap, e)
        while w.heap.size > 0:
            top = heap_pop(&w.heap)
            left = top.left
            right = top.right
            # Parity: an entry is stale once either side changed (both references).
            if length[left] == 0 or length[right] == 0 or length[left] + length[right] != top.size:
                continue
            sym[left] = self._pair(sym[left], sym[right])
            length[left] += length[right]
            length[right] = 0
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            if prev[left] >= 0:
                c = self._candidate(sym[prev[left]], sym[left], w)
                if c == -2:
                    return -1
                if c >= 0:
                    e.priority = score_priority(self.scores[c], prev[left])
                    e.left = prev[left]
                    e.right = left
                    e.size = length[prev[left]] + length[left]
                    heap_push(&w.heap, e)
            if nxt[left] >= 0:
                c = self._candidate(sym[left], sym[nxt[left]], w)
                if c == -2:
                    return -1
                if c >= 0:
                    e.priority = score_priority(self.scores[c], left)
                    e.left = left
                    e.right = nxt[left]
                    e.size = length[left] + length[nxt[left]]
                    heap_push(&w.heap, e)
        i = 0
        while i >= 0:
            if self._emit(sym[i], start[i], w, ids, starts) < 0:
                return -1
            i = nxt[i]
        return 0

    cdef int _emit(self, int32_t symbol, int32_t start, BpeWork* w,
                   IdBuf* ids, IdBuf* starts) noexcept nogil:
        cdef Py_ssize_t k
        cdef int32_t left, right
        if symbol >= 0 and self.resegment_unused and symbol < self.n_pieces \
                and self.is_unused[symbol]:
            # Parity: sentencepiece re-splits an UNUSED piece into the pair that
            # was last pushed for it (rev_merge), recursively.
            k = w.rev_merges.size - 3
            while k >= 0 and w.rev_merges.data[k] != symbol:
                k -= 3
            if k >= 0:
                left = w.rev_merges.data[k + 1]
                right = w.rev_merges.data[k + 2]
                if self._emit(left, start, w, ids, starts) < 0:
                    return -1
                return self._emit(right, start + self.symbol_lengths[left], w, ids, starts)
            # Parity: resegment emits unk_id_ for an UNUSED piece no merge formed
            # (a one-character piece): here -1, the unknown piece.
            symbol = -1
        if idbuf_push(ids, self.output_ids[symbol] if symbol >= 0 else -1) < 0:
            return -1
        return idbuf_push(starts, start)
