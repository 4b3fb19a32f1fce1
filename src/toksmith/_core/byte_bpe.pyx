"""Byte-level BPE: merge the raw bytes of one pre-token by rank (GPT-2, Llama 3, tiktoken).

A pre-token starts as one symbol per byte; the adjacent pair that merges first
is merged, again and again, until no pair merges. Two orders exist:

* ``MERGE_LIST`` (llama.cpp's ``llm_tokenizer_bpe_session``, HF BPE): the rank
  of the (left text, right text) pair in the merges list. A final symbol that is
  no token falls back to byte tokens (``fallback``).
* ``TOKEN_RANK`` (tiktoken's ``byte_pair_merge``): the rank of the token the
  pair's concatenation is.

Ties go to the leftmost pair in both. MERGE_LIST finds every (left symbol,
right symbol) pair that merges once at load time; TOKEN_RANK looks a pair's
bytes up in the token map, as tiktoken does (so a rank file loads with no pair
table). Pairs covering 2 to 4 bytes, most lookups, come from small tables that
stay in cache; Bloom filters answer most lookups of pairs that do not merge. A
character of 2 or 3 bytes starts as the one symbol its bytes merge into where
``char_starts`` proves that changes no id (a CJK run then starts from characters).
Pre-tokens of at most 32 first symbols are merged by a linear scan, longer ones
with a heap, and those of 4096 or more through buckets of ranks (``rank_queue``:
the heap's order, in time linear in practice on 16 MB of one letter). A pre-token
of 64 bytes or more is first cut between two bytes that no symbol's text holds
together (between two emoji, say): no merge crosses such a cut, so the pieces are
merged alone. A per-thread cache remembers the ids of recent short pre-tokens; a
per-thread memo remembers recent lookups of longer pairs.

Helpers live beside it: table keys, hashes and Bloom filters in ``byte_keys.pxd``,
the load-time text -> symbol map in ``symbol_texts``, whole-character starts in
``char_starts``, GPT-2's byte<->unicode map and llama.cpp's text decoding in
``byte_unicode``.

Token texts are raw bytes; GGUF and tokenizer.json store them through GPT-2's
byte<->unicode map, which ``build(..., byte_unicode=True)`` undoes at load::

    >>> bpe = ByteLevelBpe.build([b"a", b"b", b"ab"], [b"a b"], order=MergeOrder.MERGE_LIST)
    >>> bpe.encode_piece(b"abab")
    [2, 2]
"""
cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport INT32_MAX, int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy, memset

from toksmith._core.buffers cimport (IdBuf, bytebuf_free, bytebuf_reserve, idbuf_append_triples, idbuf_free,
                                     idbuf_reserve)
from toksmith._core.model cimport Model, WorkHeader
from toksmith._core.errors cimport ERR_NO_MEMORY, ERR_TOO_LONG
from toksmith._core.tables cimport HeapItem, heap_free, heap_pop, heap_push, heap_reserve
from toksmith._core.rank_queue cimport QueuedPair, rq_bytes, rq_clear, rq_free, rq_pop, rq_push
from toksmith._core.utf8 cimport one_char_len
from toksmith._core.byte_keys cimport (bloom_add, bloom_has, bloom_new, hash_bytes, load_upto8, memchr_not, mix64,
                                       pair_key, prefetch, same_bytes_upto24, short_key, text_hash, token_key)
from toksmith._core.byte_unicode cimport cpt_of_byte, unmap_byte_unicode
from toksmith._core.char_starts cimport (char_code_point, char_start, chars_add, chars_finish, chars_free,
                                         chars_init, chars_note_merge, chars_note_token)
from toksmith._core.symbol_texts cimport (SymbolTexts, texts_add, texts_equal, texts_find, texts_free,
                                          texts_init, texts_symbol)

cdef extern from "<stdlib.h>" nogil:
    int posix_memalign(void** memptr, size_t alignment, size_t size)   # memory free() releases

# Per-thread word cache: slots of one cache line each (1 MB), for pre-tokens of at most
# WORD_TEXT bytes that give at most WORD_IDS ids, two-way set associative: a word may sit in
# either slot of its set (2 * set, the one used last, or 2 * set + 1). Direct-mapped, the
# distinct words of one 0.5 MB file of code evicted each other often enough that a third
# of its merges were of words merged before.
cdef Py_ssize_t CACHE_SLOTS = 1 << 14
cdef Py_ssize_t CACHE_SETS = CACHE_SLOTS // 2
# The whole-token lookup (_encode_word) is tried for pre-tokens of at least this many bytes:
# shorter ones merge through the small byte-pair and short-pair tables, which stay in cache,
# faster than a lookup in the token map (megabytes: a cache miss or two).
cdef Py_ssize_t WHOLE_TOKEN_MIN_BYTES = 5
# ... and marked (_find_whole_tokens) only for tokens of at most this many bytes: marking
# merges the token's text once, about 40 bytes of scratch per byte, and a byte-stream
# training of one repetitive line learns tokens as long as the line (issue 30 item 10:
# 161 MB for a moment for a 4 MB token). A longer token is merged when met, as any
# unmarked token is: the same _merge_word gives the same ids, only slower.
cdef Py_ssize_t WHOLE_TOKEN_MAX_BYTES = 4096
# Slots of the per-thread memo of pair lookups covering 5 bytes or more (16 bytes each:
# 128 KB stays in a core's L2 cache, the token and pair maps do not).
cdef Py_ssize_t PAIR_MEMO_SLOTS = 1 << 13

cdef enum:
    LINEAR_MAX_SYMBOLS = 32   # pre-tokens of at most this many first symbols are merged by a linear scan
    QUEUE_MIN_SYMBOLS = 4096  # pre-tokens of at least this many, through a RankQueue (the others, a heap)
    SPLIT_MIN_BYTES = 64      # pre-tokens of at least this many bytes are cut where no symbol can span
    MERGED_AWAY = -2          # _merge_queue's prev of a symbol merged into its left neighbour
    MERGE_BATCH = 16    # merges (or tokens) read per batch at load time (see _add_merges)

cdef char _WORK_KIND = 0     # its address tells works of this model apart


cdef inline uint64_t _rank_priority(int32_t rank, int32_t left) noexcept nogil:
    """Parity: llama.cpp llm_bigram_bpe::comparator and tiktoken Merge::cmp: the lowest
    rank first, the leftmost pair on ties (both are >= 0)."""
    return (<uint64_t>rank << 32) | <uint32_t>left


# ---------------------------------------------------------------------- per-thread work

cdef void _free_work(void* work) noexcept nogil:
    cdef ByteBpeWork* w = <ByteBpeWork*>work
    if w == NULL:
        return
    idbuf_free(&w.symbols)
    idbuf_free(&w.starts)
    idbuf_free(&w.lengths)
    idbuf_free(&w.prev)
    idbuf_free(&w.next)
    idbuf_free(&w.out_ids)
    heap_free(&w.heap)
    rq_free(&w.queue)
    bytebuf_free(&w.kept)
    idbuf_free(&w.kept_at)
    free(w.cache)
    free(w.pair_memo)
    free(w.cache_valid)
    free(w.memo_valid)
    free(w)


cdef inline Py_ssize_t _idbuf_bytes(const IdBuf* b) noexcept nogil:
    return b.cap * <Py_ssize_t>sizeof(int32_t)


cdef inline bint _bit(const uint64_t* bits, uint64_t i) noexcept nogil:
    return (bits[i >> 6] >> (i & 63)) & 1


cdef inline void _set_bit(uint64_t* bits, uint64_t i) noexcept nogil:
    bits[i >> 6] |= (<uint64_t>1) << (i & 63)


cdef inline bint _word_is(const WordEntry* e, const uint64_t* valid, uint64_t slot, uint64_t h,
                          const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Whether word-cache slot `slot` (entry e) holds the word s[:n] of hash h."""
    return _bit(valid, slot) and e.hash == h and e.text_len == n and (
        n <= 8 or same_bytes_upto24(e.text, s, n))


# ---------------------------------------------------------------------- the model

@cython.final
cdef Py_ssize_t _merge_count(object merges) except -1:
    """The number of merges: a list's length, or the lines of one bytes object (none when empty)."""
    if merges is None:
        return 0
    if type(merges) is bytes:
        return (<bytes>merges).count(b"\n") + 1 if PyBytes_GET_SIZE(merges) else 0
    return len(<list?>merges)


cdef class ByteLevelBpe(Model):
    """The merge tables of one byte-level BPE vocabulary (see the module docstring)."""

    def __cinit__(self, *args, **kwargs):
        self.pairs = NULL
        self.texts = NULL
        self.text_offsets = NULL
        self.text_slots = NULL
        self.char_slots = NULL
        self.byte_pairs = NULL
        self.short_pairs = NULL
        self.short_bloom = NULL
        self.token_bloom = NULL
        self.pair_bloom = NULL
        self.joined_pairs = NULL
        self.whole_tokens = NULL
        self.chars.index = NULL
        self.chars.records = NULL
        self.chars.guards = NULL
        self.chars.texts = NULL
        self.chars.last_rank = NULL
        self.chars.code_point = NULL
        self.chars.sources = NULL
        self.chars.text_buf.data = NULL
        self.work_kind = &_WORK_KIND
        memset(self.single_byte_id, 0xFF, sizeof(self.single_byte_id))   # -1: none until build
        memset(self.run_id, 0xFF, sizeof(self.run_id))

    def __dealloc__(self):
        free(self.pairs)
        free(self.texts)
        free(self.text_offsets)
        free(self.text_slots)
        free(self.char_slots)
        free(self.byte_pairs)
        free(self.short_pairs)
        free(self.short_bloom)
        free(self.token_bloom)
        free(self.pair_bloom)
        free(self.joined_pairs)
        free(self.whole_tokens)
        chars_free(&self.chars)

    @staticmethod
    def build(list tokens, merges=None, *, MergeOrder order, bint ignore_merges=False,
              bint byte_unicode=False, bint llama_byte_fallback=False, bint utf8_symbols=False,
              bint hex_byte_fallback=False, bint whole_newline_runs=False, bint drop_unknown_bytes=False,
              bint char_starts=True):
        """Tables for a vocabulary; token id i has text tokens[i].

        tokens: raw bytes per id (byte<->unicode texts when `byte_unicode`), or None
            for an id that no pre-token can form (a gap, or a text outside the map).
        merges: MERGE_LIST only: "left right" texts in rank order (a list of bytes, or one
            bytes object of lines joined by b"\\n", read as its lines: no 280k objects), split at the first
            space after the first byte as llama.cpp does; a merge naming a text that is
            no token still counts (its result may fall back to bytes).
        ignore_merges: a pre-token that is a token is emitted whole (Llama 3; tiktoken).
        llama_byte_fallback: a final symbol that is no token becomes, for each of its raw
            bytes, the tokens whose stored text is one byte of that byte's byte<->unicode
            character (llama.cpp); otherwise it is dropped (tiktoken never has one).
        utf8_symbols: a pre-token starts as one symbol per UTF-8 character, not per byte
            (llama.cpp's BPE without the byte map: gemma4, sarvam-moe, whitespace pre types).
        hex_byte_fallback: a final symbol that is no token becomes the "<0xXX>" tokens of
            its bytes (llama.cpp without the byte map).
        whole_newline_runs: a pre-token of newlines only that is a token is emitted whole
            (llama.cpp's gemma4 pre type).
        drop_unknown_bytes: a byte whose one-byte text is no token is left out of the
            pre-token before merging, so the bytes around it may merge (tokenizers' BPE with
            no unk_token and no byte_fallback; MERGE_LIST with `byte_unicode` only).
        char_starts: start characters whole where proven to give the same ids
            (char_starts.pyx); False merges every pre-token from its bytes (tests).
        """
        cdef ByteLevelBpe self = ByteLevelBpe()
        cdef Py_ssize_t n = len(tokens), i, k, length, total = 0, m, split
        cdef SymbolTexts t
        cdef object token
        cdef const unsigned char* p
        cdef unsigned char* scratch = NULL
        cdef Py_ssize_t scratch_cap = 0
        cdef int32_t left, right, merged, symbol
        cdef uint64_t key, slot, h
        cdef Py_ssize_t pair_cap
        cdef int32_t one_byte_text[256]     # token whose stored text is that one byte
        cdef bytes name
        cdef IdBuf char_merges              # (left, right, rank) of merges with a side that is a character's part
        char_merges.data = NULL
        char_merges.size = 0
        char_merges.cap = 0
        cdef IdBuf short_merges             # (left, right, rank, merged) of the pairs forming at most 4 bytes
        short_merges.data = NULL
        short_merges.size = 0
        short_merges.cap = 0
        if order == MergeOrder.MERGE_LIST and merges is None:
            raise ValueError("MERGE_LIST needs the merges list")
        if n >= INT32_MAX // 2:
            raise ValueError(f"{n} tokens: too many")
        self.order = order
        self.ignore_merges = ignore_merges
        self.n_pieces = n
        m = _merge_count(merges)
        for i in range(n):
            token = tokens[i]
            if token is not None:
                total += PyBytes_GET_SIZE(token)
        for i in range(256):
            self.fallback[i][0] = -1
            self.fallback[i][1] = -1
        if utf8_symbols and order != MergeOrder.MERGE_LIST:
            raise ValueError("utf8_symbols needs MERGE_LIST")
        if drop_unknown_bytes and (order != MergeOrder.MERGE_LIST or not byte_unicode or utf8_symbols
                                   or llama_byte_fallback or hex_byte_fallback):
            raise ValueError("drop_unknown_bytes is tokenizers' rule: MERGE_LIST over bytes with byte_unicode, "
                             "no llama.cpp fallback")
        self.utf8_symbols = utf8_symbols
        self.whole_newline_runs = whole_newline_runs
        if order == MergeOrder.TOKEN_RANK and not byte_unicode and not llama_byte_fallback:
            self._build_token_rank(tokens, total)
            self._fill_byte_pairs()
            self._fill_short_tokens()
            if char_starts:
                self._keep_char_starts(NULL, NULL)
            self._new_joined_pairs()
            for i in range(n):
                self._mark_joined(self.texts + self.text_offsets[i], self.text_offsets[i + 1] - self.text_offsets[i])
            self._fill_single_byte_ids()
            if not ignore_merges:
                self._find_whole_tokens()
            return self
        if texts_init(&t, n + 512) < 0:
            texts_free(&t)
            raise MemoryError()
        try:
            if bytebuf_reserve(&t.blob, total + 16) < 0:
                raise MemoryError()
            scratch_cap = 256
            scratch = <unsigned char*>malloc(scratch_cap)
            if scratch == NULL:
                raise MemoryError()
            for i in range(256):
                one_byte_text[i] = -1
            # Symbols 0..n-1 are the token ids; a text given twice keeps its first id.
            for i in range(n):
                token = tokens[i]
                length = 0
                p = scratch
                if token is not None:
                    length = PyBytes_GET_SIZE(token)
                    p = <const unsigned char*>PyBytes_AS_STRING(token)
                    if length == 1:
                        one_byte_text[p[0]] = <int32_t>i
                    if byte_unicode:
                        if length > scratch_cap:
                            scratch_cap = 2 * length
                            free(scratch)
                            scratch = <unsigned char*>malloc(scratch_cap)
                            if scratch == NULL:
                                raise MemoryError()
                        length = unmap_byte_unicode(p, length, scratch)
                        p = scratch
                    if length < 0:
                        length = 0
                h = text_hash(p, length)
                if length > 0 and texts_find(&t, p, length, h) >= 0:
                    length = 0
                if texts_add(&t, p, length, h, True) < 0:
                    raise MemoryError()
            self._keep_token_texts(&t)

            for i in range(256):
                scratch[0] = <unsigned char>i
                self.byte_symbol[i] = texts_symbol(&t, scratch, 1)
                if self.byte_symbol[i] < 0:
                    raise MemoryError()

            pair_cap = 64
            while pair_cap < 2 * m:
                pair_cap *= 2
            self.pairs = <PairSlot*>calloc(pair_cap, sizeof(PairSlot))
            self.pair_bloom = bloom_new(m, &self.pair_bloom_mask)
            if self.pairs == NULL or self.pair_bloom == NULL:
                raise MemoryError()
            self.pair_mask = <uint64_t>(pair_cap - 1)

            if order == MergeOrder.MERGE_LIST:
                self._add_merges(&t, merges, byte_unicode, &char_merges, &short_merges)
            # TOKEN_RANK needs no pair table: a pair's rank is that of the token its bytes
            # form, looked up in the token texts (_rank).

            self.n_symbols = t.n
            if utf8_symbols:
                self._keep_char_symbols(&t)
            self._fill_byte_pairs()
            if order == MergeOrder.MERGE_LIST:
                self._fill_short_merges(&t, &short_merges)
            else:
                self._fill_short_tokens()
            if char_starts and not utf8_symbols:
                self._keep_char_starts(&t if order == MergeOrder.MERGE_LIST else NULL, &char_merges)
            if not utf8_symbols:
                # every text a symbol can have: the tokens and what the merges form
                self._new_joined_pairs()
                for i in range(t.n):
                    self._mark_joined(<const unsigned char*>t.blob.data + t.refs[i].start, t.refs[i].length)
            if hex_byte_fallback:
                for i in range(256):
                    # Parity: llama.cpp llm_tokenizer_bpe_session::tokenize (byte_encode false)
                    name = f"<0x{i:02X}>".encode()
                    symbol = texts_find(&t, name, len(name), text_hash(name, len(name)))
                    self.fallback[i][0] = symbol if 0 <= symbol < n else -1
            if llama_byte_fallback:
                for i in range(256):
                    # Parity: llama.cpp llm_tokenizer_bpe_session::tokenize looks up each byte
                    # of the byte-encoded text (one or two UTF-8 bytes per raw byte) alone.
                    if cpt_of_byte(i) < 0x80:
                        self.fallback[i][0] = one_byte_text[cpt_of_byte(i)]
                    else:
                        self.fallback[i][0] = one_byte_text[0xC0 | (cpt_of_byte(i) >> 6)]
                        self.fallback[i][1] = one_byte_text[0x80 | (cpt_of_byte(i) & 0x3F)]
            if drop_unknown_bytes:
                for i in range(256):
                    self.dropped[i] = self.byte_symbol[i] >= n
                    self.drops_bytes = self.drops_bytes or self.dropped[i]
            self._fill_single_byte_ids()
            if not ignore_merges:
                self._find_whole_tokens()
        finally:
            texts_free(&t)
            free(scratch)
            idbuf_free(&char_merges)
            idbuf_free(&short_merges)
        return self

    cdef int _new_joined_pairs(self) except -1:
        self.joined_pairs = <uint64_t*>calloc(65536 // 64, sizeof(uint64_t))
        if self.joined_pairs == NULL:
            raise MemoryError()
        return 0

    cdef void _mark_joined(self, const unsigned char* p, Py_ssize_t n) noexcept nogil:
        """Record the adjacent byte pairs of p[:n], the text of a symbol, as joined."""
        cdef Py_ssize_t i
        for i in range(1, n):
            _set_bit(self.joined_pairs, (<uint64_t>p[i - 1] << 8) | p[i])

    cdef inline Py_ssize_t _next_cut(self, const unsigned char* s, Py_ssize_t start, Py_ssize_t n) noexcept nogil:
        """The first i in [start, n) where no symbol can span s[i - 1] s[i] (the pair is in no
        symbol's text), or n. BPE merges only adjacent symbols into a symbol, so no merge
        ever crosses such a cut: the pieces on either side merge exactly as they would
        alone (the merges of one never change the other's pairs, nor their order), and a
        long pre-token is merged piece by piece."""
        cdef Py_ssize_t i
        for i in range(start, n):
            if not _bit(self.joined_pairs, (<uint64_t>s[i - 1] << 8) | s[i]):
                return i
        return n

    cdef int _fill_single_byte_ids(self) except -1:
        """single_byte_id: what _encode_word gives each one-byte pre-token, when that is
        exactly one id covering the byte (encode's shortcut then returns the same)."""
        cdef ByteBpeWork* w = <ByteBpeWork*>self.new_work()
        cdef unsigned char b[1]
        cdef int i
        if w == NULL:
            raise MemoryError()
        try:
            for i in range(256):
                b[0] = <unsigned char>i
                self.single_byte_id[i] = -1
                if self._encode_word(b, 1, w) < 0:
                    raise MemoryError()
                if w.out_ids.size == 3 and w.out_ids.data[1] == 0 and w.out_ids.data[2] == 1:
                    self.single_byte_id[i] = w.out_ids.data[0]
                # the conditions under which _merge_word keeps a run of this byte as single
                # bytes and no whole-pre-token rule of _encode_word comes first
                if (i < 0x80 and not self.utf8_symbols and not self.ignore_merges
                        and self.byte_pairs[i | (i << 8)].rank == INT32_MAX
                        and not (self.whole_newline_runs and i == 10)):
                    self.run_id[i] = self.single_byte_id[i]
        finally:
            _free_work(w)
        return 0

    cdef int _find_whole_tokens(self) except -1:
        """Mark each token (of WHOLE_TOKEN_MIN_BYTES to WHOLE_TOKEN_MAX_BYTES) whose own text
        merges into exactly that token (GPT-2: all but a few), so that a pre-token that is such
        a token's text needs one lookup, not a merge (_encode_word). The same _merge_word as
        encode decides, so the mark is exact; it is a property of the vocabulary, found once
        at load. An unmarked token is merged when met, to the same ids: the marks only save time."""
        cdef ByteBpeWork* w = <ByteBpeWork*>self.new_work()
        cdef Py_ssize_t i, length
        cdef int rc = 0
        if w == NULL:
            raise MemoryError()
        self.whole_tokens = <uint64_t*>calloc(self.n_pieces // 64 + 1, sizeof(uint64_t))
        if self.whole_tokens == NULL or self._ready_caches(w) < 0:
            _free_work(w)
            raise MemoryError()
        with nogil:
            for i in range(self.n_pieces):
                length = self.text_offsets[i + 1] - self.text_offsets[i]
                if length < WHOLE_TOKEN_MIN_BYTES:
                    continue      # never looked up (_encode_word)
                if length > WHOLE_TOKEN_MAX_BYTES:
                    continue      # left to _merge_word when met (bounded scratch here)
                w.out_ids.size = 0
                rc = self._merge_word(self.texts + self.text_offsets[i], length, w)
                if rc < 0:
                    break
                if w.out_ids.size == 3 and w.out_ids.data[0] == i:
                    _set_bit(self.whole_tokens, <uint64_t>i)
        _free_work(w)
        if rc < 0:
            raise MemoryError()
        return 0

    cdef int _fill_byte_pairs(self) except -1:
        """The direct table of byte pairs (512 KB), every entry "no merge" until
        _fill_short_merges / _fill_short_tokens write the pairs that merge: the first lookups of every
        pre-token then stay in cache."""
        cdef Py_ssize_t i
        self.byte_pairs = <RankMerged*>malloc(65536 * sizeof(RankMerged))
        if self.byte_pairs == NULL:
            raise MemoryError()
        for i in range(65536):
            self.byte_pairs[i].rank = INT32_MAX
            self.byte_pairs[i].merged = -1
        return 0

    cdef int _build_token_rank(self, list tokens, Py_ssize_t total) except -1:
        """TOKEN_RANK over raw texts (rank files): the token texts and their map are all
        the model needs, so they are written directly (no symbol table)."""
        cdef Py_ssize_t n = self.n_pieces, i, j, count, cap = 64, at = 0, length
        cdef object token
        cdef uint64_t keys[MERGE_BATCH]
        cdef uint64_t slot, h
        cdef unsigned char one
        self.texts = <unsigned char*>malloc(max(total, 1))
        self.text_offsets = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        while cap < 2 * n:
            cap *= 2
        self.text_slots = <TokenSlot*>calloc(cap, sizeof(TokenSlot))
        self.pairs = <PairSlot*>calloc(64, sizeof(PairSlot))
        self.token_bloom = bloom_new(n, &self.token_bloom_mask)
        self.pair_bloom = bloom_new(0, &self.pair_bloom_mask)
        if self.texts == NULL or self.text_offsets == NULL or self.text_slots == NULL \
                or self.pairs == NULL or self.token_bloom == NULL \
                or self.pair_bloom == NULL:
            raise MemoryError()
        self.text_mask = <uint64_t>(cap - 1)
        self.pair_mask = 63
        self.max_token_length = 0
        for i in range(n):
            token = tokens[i]
            self.text_offsets[i] = at
            length = 0
            if token is not None:
                length = PyBytes_GET_SIZE(token)
                memcpy(self.texts + at, PyBytes_AS_STRING(token), length)
                at += length
            if length > self.max_token_length:
                self.max_token_length = length
        self.text_offsets[n] = at
        # The map text -> id, a batch at a time with its slots prefetched; a text given
        # twice keeps its first id.
        for i in range(0, n, MERGE_BATCH):
            count = min(MERGE_BATCH, n - i)
            for j in range(count):
                length = self.text_offsets[i + j + 1] - self.text_offsets[i + j]
                keys[j] = token_key(self.texts + self.text_offsets[i + j], length) if length else 0
                prefetch(&self.text_slots[mix64(keys[j]) & self.text_mask])
            for j in range(count):
                length = self.text_offsets[i + j + 1] - self.text_offsets[i + j]
                if length == 0 or self._token_of(self.texts + self.text_offsets[i + j], length) >= 0:
                    continue
                h = mix64(keys[j])
                bloom_add(self.token_bloom, self.token_bloom_mask, h)
                slot = h & self.text_mask
                while self.text_slots[slot].length != 0:
                    slot = (slot + 1) & self.text_mask
                self.text_slots[slot].key = keys[j]
                self.text_slots[slot].id = <int32_t>(i + j)
                self.text_slots[slot].length = <int32_t>length
        for i in range(256):
            one = <unsigned char>i
            self.byte_symbol[i] = self._token_of(&one, 1)
        self.n_symbols = n
        return 0

    cdef int _add_merges(self, SymbolTexts* t, object merges, bint byte_unicode, IdBuf* char_merges,
                         IdBuf* short_merges) except -1:
        """Pairs of the merges list (MERGE_LIST), in batches: the hash slots of a batch are
        prefetched before they are probed, so the memory latency of one lookup overlaps
        the others' (load time is dominated by these random reads). A merge with a side
        that may be all or part of a character also goes to `char_merges` (left, right,
        rank) for _keep_char_starts; a pair kept that forms at most 4 bytes goes to
        `short_merges` (left, right, rank, merged) for _fill_short_merges."""
        cdef Py_ssize_t m = _merge_count(merges), first, i, j, count, length, split, k, total, at, guess
        cdef const char* lines = NULL          # merges given as one bytes object: the next line's start
        cdef const char* lines_end = NULL
        cdef const char* line_end
        cdef Py_ssize_t n = self.n_pieces
        cdef const unsigned char* p
        cdef object merge
        cdef unsigned char* buf = NULL
        cdef Py_ssize_t buf_cap = 0
        cdef Py_ssize_t starts[MERGE_BATCH]
        cdef Py_ssize_t left_len[MERGE_BATCH]
        cdef Py_ssize_t lengths[MERGE_BATCH]
        cdef uint64_t left_hash[MERGE_BATCH]
        cdef uint64_t right_hash[MERGE_BATCH]
        cdef int32_t lefts[MERGE_BATCH]
        cdef int32_t rights[MERGE_BATCH]
        cdef int32_t mergeds[MERGE_BATCH]
        cdef int32_t last_merged = -1, symbol
        cdef unsigned char* q
        if type(merges) is bytes:
            lines = PyBytes_AS_STRING(merges)
            lines_end = lines + PyBytes_GET_SIZE(merges)
        try:
            for first in range(0, m, MERGE_BATCH):
                count = min(MERGE_BATCH, m - first)
                at = 0
                for j in range(count):
                    if lines != NULL:
                        line_end = <const char*>memchr(lines, 10, lines_end - lines)
                        if line_end == NULL:
                            line_end = lines_end
                        p = <const unsigned char*>lines
                        length = line_end - lines
                        lines = line_end + 1
                    else:
                        merge = merges[first + j]
                        length = PyBytes_GET_SIZE(merge)
                        p = <const unsigned char*>PyBytes_AS_STRING(merge)
                    lengths[j] = -1
                    # Parity: llama.cpp llama_vocab::impl::load: word.find(' ', 1)
                    split = -1
                    for k in range(1, length):
                        if p[k] == 32:
                            split = k
                            break
                    if split < 0 or split + 1 >= length:
                        continue   # ("", "") or an empty right side: never matches a symbol
                    if at + length > buf_cap:
                        buf_cap = 2 * (at + length) + 4096
                        q = <unsigned char*>realloc(buf, buf_cap)
                        if q == NULL:
                            raise MemoryError()
                        buf = q
                    q = buf + at
                    if byte_unicode:
                        k = unmap_byte_unicode(p, split, q)
                        if k < 0:
                            continue   # a text outside the map: no pre-token has it
                        total = unmap_byte_unicode(p + split + 1, length - split - 1, q + k)
                        if total < 0:
                            continue
                        total += k
                    else:
                        memcpy(q, p, split)
                        memcpy(q + split, p + split + 1, length - split - 1)
                        k = split
                        total = length - 1
                    starts[j] = at
                    left_len[j] = k
                    lengths[j] = total
                    left_hash[j] = text_hash(q, k)
                    right_hash[j] = text_hash(q + k, total - k)
                    prefetch(&t.slots[left_hash[j] & t.mask])
                    prefetch(&t.slots[right_hash[j] & t.mask])
                    at += total
                for j in range(count):
                    if lengths[j] < 0:
                        continue
                    q = buf + starts[j]
                    lefts[j] = texts_find(t, q, left_len[j], left_hash[j])
                    if lefts[j] < 0:
                        lefts[j] = texts_add(t, q, left_len[j], left_hash[j], True)
                    rights[j] = texts_find(t, q + left_len[j], lengths[j] - left_len[j], right_hash[j])
                    if rights[j] < 0:
                        rights[j] = texts_add(t, q + left_len[j], lengths[j] - left_len[j],
                                               right_hash[j], True)
                    # Merges usually form the tokens in id order: try the ids after the
                    # last one formed (sequential reads) before hashing.
                    symbol = -1
                    for guess in range(last_merged + 1, min(last_merged + 4, n)):
                        if texts_equal(t, <int32_t>guess, q, lengths[j]):
                            symbol = <int32_t>guess
                            break
                    if symbol < 0:
                        symbol = texts_symbol(t, q, lengths[j])
                    if 0 <= symbol < n:
                        last_merged = symbol
                    mergeds[j] = symbol
                    if lefts[j] < 0 or rights[j] < 0 or symbol < 0:
                        raise MemoryError()
                    prefetch(&self.pairs[mix64(pair_key(lefts[j], rights[j])) & self.pair_mask])
                for j in range(count):
                    if lengths[j] >= 0:
                        # Parity: bpe_ranks.emplace: the first rank of a pair stays.
                        if self._add_pair(lefts[j], rights[j], <int32_t>(first + j), mergeds[j]) \
                                and lengths[j] <= 4:
                            if idbuf_reserve(short_merges, 4) < 0:
                                raise MemoryError()
                            short_merges.data[short_merges.size] = lefts[j]
                            short_merges.data[short_merges.size + 1] = rights[j]
                            short_merges.data[short_merges.size + 2] = <int32_t>(first + j)
                            short_merges.data[short_merges.size + 3] = mergeds[j]
                            short_merges.size += 4
                        q = buf + starts[j]
                        if (left_len[j] <= 3 and q[0] >= 0x80) or \
                                (lengths[j] - left_len[j] <= 3 and q[left_len[j]] >= 0xC2):
                            if idbuf_reserve(char_merges, 3) < 0:
                                raise MemoryError()
                            char_merges.data[char_merges.size] = lefts[j]
                            char_merges.data[char_merges.size + 1] = rights[j]
                            char_merges.data[char_merges.size + 2] = <int32_t>(first + j)
                            char_merges.size += 3
        finally:
            free(buf)
        return 0

    cdef int _keep_char_symbols(self, SymbolTexts* t) except -1:
        """Map each symbol of at most 4 bytes (a character, or a truncated one) to itself:
        the first symbols of a pre-token with utf8_symbols."""
        cdef Py_ssize_t i, cap = 64, count = 0
        cdef uint64_t key, slot
        for i in range(t.n):
            if 0 < t.refs[i].length <= 4:
                count += 1
        while cap < 2 * count:
            cap *= 2
        self.char_slots = <TokenSlot*>calloc(cap, sizeof(TokenSlot))
        if self.char_slots == NULL:
            raise MemoryError()
        self.char_mask = <uint64_t>(cap - 1)
        for i in range(t.n):
            if 0 < t.refs[i].length <= 4:
                key = token_key(<const unsigned char*>t.blob.data + t.refs[i].start, t.refs[i].length)
                slot = mix64(key) & self.char_mask
                while self.char_slots[slot].length != 0:
                    slot = (slot + 1) & self.char_mask
                self.char_slots[slot].key = key
                self.char_slots[slot].id = <int32_t>i
                self.char_slots[slot].length = <int32_t>t.refs[i].length
        return 0

    cdef int32_t _first_symbol(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t* length) noexcept nogil:
        """The symbol a pre-token's next character or byte s[0] starts as, and its length."""
        cdef Py_ssize_t clen
        cdef uint64_t key, slot
        if not self.utf8_symbols or s[0] < 0x80:
            length[0] = 1
            return self.byte_symbol[s[0]]
        # Parity: llama.cpp unicode_len_utf8 (a truncated last character stays one symbol)
        clen = min(one_char_len(s[0]), n)
        length[0] = clen
        key = token_key(s, clen)
        slot = mix64(key) & self.char_mask
        while self.char_slots[slot].length != 0:
            if self.char_slots[slot].key == key and self.char_slots[slot].length == clen:
                return self.char_slots[slot].id
            slot = (slot + 1) & self.char_mask
        return -1

    cdef int _keep_token_texts(self, SymbolTexts* t) except -1:
        """Copy the token texts (symbols 0..n_pieces-1) and their hash map into the model."""
        cdef Py_ssize_t n = self.n_pieces, i, cap = 64, total, first, j, count
        cdef uint64_t slot, key, h
        cdef uint64_t keys[MERGE_BATCH]
        total = t.refs[n - 1].start + t.refs[n - 1].length if n > 0 else 0
        self.texts = <unsigned char*>malloc(max(total, 1))
        self.text_offsets = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        while cap < 2 * n:
            cap *= 2
        self.text_slots = <TokenSlot*>calloc(cap, sizeof(TokenSlot))
        self.token_bloom = bloom_new(n, &self.token_bloom_mask)
        if self.texts == NULL or self.text_offsets == NULL or self.text_slots == NULL or self.token_bloom == NULL:
            raise MemoryError()
        memcpy(self.texts, t.blob.data, total)
        self.text_mask = <uint64_t>(cap - 1)
        # A batch at a time, its slots prefetched before any is written (random writes
        # into a table of 2n slots: the latency of one overlaps the others').
        for first in range(0, n, MERGE_BATCH):
            count = min(MERGE_BATCH, n - first)
            for j in range(count):
                i = first + j
                self.text_offsets[i] = t.refs[i].start
                keys[j] = token_key(self.texts + t.refs[i].start, t.refs[i].length) if t.refs[i].length > 0 else 0
                prefetch(&self.text_slots[mix64(keys[j]) & self.text_mask])
            for j in range(count):
                i = first + j
                if t.refs[i].length > 0:
                    key = keys[j]
                    h = mix64(key)
                    bloom_add(self.token_bloom, self.token_bloom_mask, h)
                    slot = h & self.text_mask
                    while self.text_slots[slot].length != 0:
                        slot = (slot + 1) & self.text_mask
                    self.text_slots[slot].key = key
                    self.text_slots[slot].id = <int32_t>i
                    self.text_slots[slot].length = <int32_t>t.refs[i].length
        self.text_offsets[n] = total
        self.max_token_length = 0
        for i in range(n):
            self.max_token_length = max(self.max_token_length, t.refs[i].length)
        return 0

    cdef int _add_pair(self, int32_t left, int32_t right, int32_t rank, int32_t merged) except -1:
        cdef uint64_t key = pair_key(left, right)
        cdef uint64_t slot = mix64(key) & self.pair_mask
        cdef PairSlot* grown
        bloom_add(self.pair_bloom, self.pair_bloom_mask, mix64(key))
        cdef PairSlot* old
        cdef Py_ssize_t old_cap, i
        # 1 when the pair is new, 0 when it has a rank already
        while self.pairs[slot].key != 0:
            if self.pairs[slot].key == key:
                return 0
            slot = (slot + 1) & self.pair_mask
        self.pairs[slot].key = key
        self.pairs[slot].rank = rank
        self.pairs[slot].merged = merged
        self.n_pairs += 1
        if 2 * self.n_pairs > <Py_ssize_t>self.pair_mask + 1:
            old = self.pairs
            old_cap = <Py_ssize_t>self.pair_mask + 1
            grown = <PairSlot*>calloc(2 * old_cap, sizeof(PairSlot))
            if grown == NULL:
                raise MemoryError()
            self.pairs = grown
            self.pair_mask = <uint64_t>(2 * old_cap - 1)
            for i in range(old_cap):
                if old[i].key != 0:
                    slot = mix64(old[i].key) & self.pair_mask
                    while self.pairs[slot].key != 0:
                        slot = (slot + 1) & self.pair_mask
                    self.pairs[slot] = old[i]
            free(old)
        return 1

    # ------------------------------------------------------------------ lookups

    cdef int32_t _token_of(self, const unsigned char* p, Py_ssize_t n) noexcept nogil:
        """The id of the token whose text is p[:n], or -1. A text of at most 8 bytes is its
        own key, so most lookups read one slot and never the token texts."""
        cdef uint64_t key = token_key(p, n)
        cdef uint64_t h = mix64(key)
        cdef uint64_t slot = h & self.text_mask
        cdef const TokenSlot* e
        if not bloom_has(self.token_bloom, self.token_bloom_mask, h):
            return -1
        while True:
            e = &self.text_slots[slot]
            if e.length == 0:
                return -1
            if e.key == key and e.length == n and (
                    n <= 8 or (same_bytes_upto24(self.texts + self.text_offsets[e.id], p, n) if n <= 24
                               else memcmp(self.texts + self.text_offsets[e.id], p, n) == 0)):
                return e.id
            slot = (slot + 1) & self.text_mask

    cdef inline PairSlot* _pair(self, int32_t left, int32_t right) noexcept nogil:
        """The merge of two adjacent symbols, or NULL."""
        cdef uint64_t key, slot
        if left < 0 or right < 0:
            return NULL
        key = pair_key(left, right)
        slot = mix64(key)
        if not bloom_has(self.pair_bloom, self.pair_bloom_mask, slot):
            return NULL
        slot &= self.pair_mask
        while self.pairs[slot].key != 0:
            if self.pairs[slot].key == key:
                return &self.pairs[slot]
            slot = (slot + 1) & self.pair_mask
        return NULL

    cdef int32_t _rank_slow(self, const unsigned char* s, int32_t left, int32_t right,
                              Py_ssize_t start, Py_ssize_t length, int32_t* merged) noexcept nogil:
        """Rank of merging adjacent symbols left, right (covering s[start:start+length]) and
        the symbol they form (in `merged`); INT32_MAX when they do not merge."""
        cdef PairSlot* pair
        cdef int32_t token
        if self.order == MergeOrder.MERGE_LIST:
            pair = self._pair(left, right)
            if pair == NULL:
                return INT32_MAX
            merged[0] = pair.merged
            return pair.rank
        # Parity: tiktoken byte_pair_merge: the rank of the concatenated bytes (id == rank).
        if length > self.max_token_length:
            return INT32_MAX
        token = self._token_of(s + start, length)
        if token < 0:
            return INT32_MAX
        merged[0] = token
        return token

    cdef inline int32_t _rank(self, const unsigned char* s, int32_t left, int32_t right, Py_ssize_t start,
                              Py_ssize_t left_length, Py_ssize_t length, int32_t* merged,
                              ByteBpeWork* w) noexcept nogil:
        """_rank_slow, through small cache-friendly tables when the two cover 2 to 4 bytes (most
        lookups): a direct table of byte pairs, and a map keyed by the bytes and the split.
        Longer pairs go through w.pair_memo, a direct-mapped record of recent lookups (the
        token and pair maps are megabytes, so each lookup there is a cache miss)."""
        cdef const RankMerged* e
        cdef PairSlot* m
        cdef uint64_t key, slot, h
        cdef uint32_t v = 0
        cdef int32_t rank
        if length == 2:
            e = &self.byte_pairs[s[start] | (<Py_ssize_t>s[start + 1] << 8)]
            merged[0] = e.merged
            return e.rank
        if length <= 4:
            v = <uint32_t>load_upto8(s + start, length)   # not memcpy: of a variable length, it is a call
            key = short_key(v, length, left_length if self.order == MergeOrder.MERGE_LIST else 0)
            slot = mix64(key)
            if not bloom_has(self.short_bloom, self.short_bloom_mask, slot):
                return INT32_MAX
            slot &= self.short_mask
            while self.short_pairs[slot].key != 0:
                if self.short_pairs[slot].key == key:
                    merged[0] = self.short_pairs[slot].merged
                    return self.short_pairs[slot].rank
                slot = (slot + 1) & self.short_mask
            return INT32_MAX
        if left < 0 or right < 0:
            return self._rank_slow(s, left, right, start, length, merged)
        # left, right and the order name the pair's bytes, so they key the memo. Most
        # pairs merge not: MERGE_LIST's Bloom filter of pairs, on the same hash, tells
        # first and leaves the memo to the others.
        key = pair_key(left, right)
        h = mix64(key)
        if self.order == MergeOrder.MERGE_LIST and not bloom_has(self.pair_bloom, self.pair_bloom_mask, h):
            return INT32_MAX
        slot = h & <uint64_t>(PAIR_MEMO_SLOTS - 1)
        m = &w.pair_memo[slot]
        if _bit(w.memo_valid, slot):
            if m.key == key:
                merged[0] = m.merged
                return m.rank
        else:
            _set_bit(w.memo_valid, slot)
        rank = self._rank_slow(s, left, right, start, length, merged)
        m.key = key
        m.rank = rank
        m.merged = merged[0] if rank != INT32_MAX else -1
        return rank

    cdef int _new_short_table(self, Py_ssize_t count) except -1:
        """An empty short-pair map (and its Bloom filter) for `count` keys."""
        cdef Py_ssize_t cap = 64
        while cap < 2 * count:
            cap *= 2
        self.short_pairs = <PairSlot*>calloc(cap, sizeof(PairSlot))
        self.short_bloom = bloom_new(count, &self.short_bloom_mask)
        if self.short_pairs == NULL or self.short_bloom == NULL:
            raise MemoryError()
        self.short_mask = <uint64_t>(cap - 1)
        return 0

    cdef void _put_short(self, const unsigned char* text, Py_ssize_t left_length, Py_ssize_t length,
                         int32_t rank, int32_t merged) noexcept nogil:
        """Map the 3- or 4-byte text (split after left_length bytes) to (rank, merged)."""
        cdef uint32_t v = 0
        cdef uint64_t key, slot
        memcpy(&v, text, length)
        key = short_key(v, length, left_length)
        slot = mix64(key)
        bloom_add(self.short_bloom, self.short_bloom_mask, slot)
        slot &= self.short_mask
        while self.short_pairs[slot].key != 0:
            slot = (slot + 1) & self.short_mask
        self.short_pairs[slot].key = key
        self.short_pairs[slot].rank = rank
        self.short_pairs[slot].merged = merged

    cdef int _fill_short_merges(self, const SymbolTexts* t, const IdBuf* short_merges) except -1:
        """MERGE_LIST: the merges forming 3 or 4 bytes into the short-pair map, keyed by
        those bytes and the split, and those forming 2 bytes into the byte-pair table; from
        the pairs _add_merges kept that form at most 4 bytes (not a walk of the whole pair
        table: Llama 3's has 1M slots). The pairs' texts are unique symbols, so each key is
        written once, in any order."""
        cdef Py_ssize_t i, count = 0, ll, rl
        cdef int32_t left, right
        cdef unsigned char buf[8]
        cdef RankMerged* e
        cdef const unsigned char* blob = <const unsigned char*>t.blob.data
        for i in range(0, short_merges.size, 4):
            ll = t.refs[short_merges.data[i]].length
            rl = t.refs[short_merges.data[i + 1]].length
            if 3 <= ll + rl <= 4:
                count += 1
        self._new_short_table(count)
        for i in range(0, short_merges.size, 4):
            left = short_merges.data[i]
            right = short_merges.data[i + 1]
            ll = t.refs[left].length
            rl = t.refs[right].length
            if ll + rl == 2:
                e = &self.byte_pairs[blob[t.refs[left].start] | (<Py_ssize_t>blob[t.refs[right].start] << 8)]
                e.rank = short_merges.data[i + 2]
                e.merged = short_merges.data[i + 3]
            elif 3 <= ll + rl <= 4:
                memcpy(buf, blob + t.refs[left].start, ll)
                memcpy(buf + ll, blob + t.refs[right].start, rl)
                self._put_short(buf, ll, ll + rl, short_merges.data[i + 2], short_merges.data[i + 3])
        return 0

    cdef int _fill_short_tokens(self) except -1:
        """TOKEN_RANK: the tokens of 3 or 4 bytes into the short-pair map (rank and merged
        symbol are the token's id, the split is not part of the key) and those of 2 bytes
        into the byte-pair table."""
        cdef Py_ssize_t i, count = 0, length
        cdef const unsigned char* text
        cdef RankMerged* e
        for i in range(self.n_pieces):
            if 3 <= self.text_offsets[i + 1] - self.text_offsets[i] <= 4:
                count += 1      # an upper bound (a text given twice keeps its first id)
        self._new_short_table(count)
        for i in range(self.n_pieces):
            text = self.texts + self.text_offsets[i]
            length = self.text_offsets[i + 1] - self.text_offsets[i]
            if not 2 <= length <= 4 or self._token_of(text, length) != i:
                continue
            if length == 2:
                e = &self.byte_pairs[text[0] | (<Py_ssize_t>text[1] << 8)]
                e.rank = <int32_t>i
                e.merged = <int32_t>i
            else:
                self._put_short(text, 0, length, <int32_t>i, <int32_t>i)
        return 0

    cdef int32_t _own_run(self, const unsigned char* c, Py_ssize_t n, int32_t* last_rank) noexcept nogil:
        """The one symbol the bytes of character c[:n] (2 or 3 bytes) merge into alone, and
        the highest rank of those merges in `last_rank`; -1 when they end as more symbols.
        The same _rank lookups and order (lowest rank, then leftmost) as the merge loops."""
        cdef int32_t first, second, whole, r0, r1, r
        cdef int32_t b0 = self.byte_symbol[c[0]], b1 = self.byte_symbol[c[1]]
        r0 = self._rank(c, b0, b1, 0, 1, 2, &first, NULL)
        if n == 2:
            last_rank[0] = r0
            return first if r0 != INT32_MAX else -1
        r1 = self._rank(c, b1, self.byte_symbol[c[2]], 1, 1, 2, &second, NULL)
        if r0 == INT32_MAX and r1 == INT32_MAX:
            return -1
        if r0 <= r1:
            r = self._rank(c, first, self.byte_symbol[c[2]], 0, 2, 3, &whole, NULL)
        else:
            r = self._rank(c, b0, second, 0, 1, 3, &whole, NULL)
        if r == INT32_MAX:
            return -1
        last_rank[0] = max(r, min(r0, r1))
        return whole

    cdef int _keep_char_starts(self, const SymbolTexts* t, const IdBuf* char_merges) except -1:
        """The characters that may start whole and their guards (char_starts.pyx): every
        token of one 2- or 3-byte character whose bytes merge into one symbol, guarded by
        the merges with a side that may be a character's part (MERGE_LIST: `char_merges`
        from _add_merges, texts from `t`) or by the tokens (t NULL)."""
        cdef Py_ssize_t i, length = 0, ll
        cdef const unsigned char* p
        cdef int32_t symbol, last_rank = 0, left, right
        cdef const int64_t* offsets = self.text_offsets
        cdef Py_ssize_t n = self.n_pieces
        chars_init(&self.chars)
        for i in range(n):
            ll = offsets[i + 1] - offsets[i]
            p = self.texts + offsets[i]
            if 2 <= ll <= 3 and p[0] >= 0xC2 and char_code_point(p, ll, &length) >= 0 and length == ll:
                symbol = self._own_run(p, length, &last_rank)
                if symbol >= 0:
                    chars_add(&self.chars, p, length, symbol, last_rank)
        if t == NULL:
            for i in range(n):
                ll = offsets[i + 1] - offsets[i]
                p = self.texts + offsets[i]
                if ll >= 2 and (p[0] >= 0x80 or p[ll - 1] >= 0x80):
                    chars_note_token(&self.chars, p, ll, <int32_t>i)
        else:
            for i in range(0, char_merges.size, 3):
                left = char_merges.data[i]
                right = char_merges.data[i + 1]
                chars_note_merge(&self.chars, <const unsigned char*>t.blob.data + t.refs[left].start,
                                 t.refs[left].length, <const unsigned char*>t.blob.data + t.refs[right].start,
                                 t.refs[right].length, char_merges.data[i + 2])
        chars_finish(&self.chars)
        return 0

    def token_bytes(self, Py_ssize_t token_id):
        """The raw bytes of a token, b"" for one no pre-token forms."""
        if not 0 <= token_id < self.n_pieces:
            raise IndexError(token_id)
        return (<char*>self.texts)[self.text_offsets[token_id]:self.text_offsets[token_id + 1]]

    # ------------------------------------------------------------------ Model contract

    cdef void* new_work(self) noexcept nogil:
        cdef ByteBpeWork* w = <ByteBpeWork*>calloc(1, sizeof(ByteBpeWork))
        if w != NULL:
            w.header.free = _free_work
            w.header.kind = &_WORK_KIND
        return w

    cdef void trim_work(self, void* work, Py_ssize_t keep_bytes) noexcept nogil:
        cdef ByteBpeWork* w = <ByteBpeWork*>work
        cdef Py_ssize_t held = (_idbuf_bytes(&w.symbols) + _idbuf_bytes(&w.starts)
                                + _idbuf_bytes(&w.lengths) + _idbuf_bytes(&w.prev)
                                + _idbuf_bytes(&w.next) + _idbuf_bytes(&w.out_ids)
                                + w.heap.cap * <Py_ssize_t>sizeof(HeapItem) + rq_bytes(&w.queue)
                                + w.kept.cap + _idbuf_bytes(&w.kept_at))
        if held <= keep_bytes:
            return
        bytebuf_free(&w.kept)
        idbuf_free(&w.kept_at)
        idbuf_free(&w.symbols)
        idbuf_free(&w.starts)
        idbuf_free(&w.lengths)
        idbuf_free(&w.prev)
        idbuf_free(&w.next)
        idbuf_free(&w.out_ids)
        heap_free(&w.heap)
        rq_free(&w.queue)

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        cdef ByteBpeWork* w = <ByteBpeWork*>work
        if w.cache_model != self.serial or w.cache == NULL:
            if self._ready_caches(w) < 0:
                return ERR_NO_MEMORY
        return self._encode_piece(s, n, w, ids, spans, base)

    cdef int encode_pieces(self, const unsigned char* s, const int32_t* ends, Py_ssize_t count,
                           void* work, IdBuf* ids, IdBuf* spans, Py_ssize_t base) noexcept nogil:
        cdef ByteBpeWork* w = <ByteBpeWork*>work
        cdef Py_ssize_t k, start = 0
        cdef int rc
        if w.cache_model != self.serial or w.cache == NULL:
            if self._ready_caches(w) < 0:
                return ERR_NO_MEMORY
        for k in range(count):
            rc = self._encode_piece(s + start, ends[k] - start, w, ids, spans, base + start)
            if rc < 0:
                return rc
            start = ends[k]
        return 0

    cdef inline int _encode_piece(self, const unsigned char* s, Py_ssize_t n, ByteBpeWork* w, IdBuf* ids,
                                  IdBuf* spans, Py_ssize_t base) noexcept nogil:
        """encode() of one pre-token on a work whose caches are this model's: one-byte
        pre-tokens and word-cache hits here (most pre-tokens), the rest in _encode_missed."""
        cdef uint64_t h = 0, slot = 0
        cdef WordEntry* e = NULL
        cdef WordEntry used
        cdef Py_ssize_t k, count
        if n <= 0:
            return 0
        if n == 1 and self.single_byte_id[s[0]] >= 0:
            # a third of the pre-tokens of prose are one byte: no hash, no cache
            if idbuf_reserve(ids, 1) < 0 or (spans != NULL and idbuf_reserve(spans, 2) < 0):
                return ERR_NO_MEMORY
            ids.data[ids.size] = self.single_byte_id[s[0]]
            ids.size += 1
            if spans != NULL:
                spans.data[spans.size] = <int32_t>base
                spans.data[spans.size + 1] = <int32_t>(base + 1)
                spans.size += 2
            return 0
        if n > WORD_IDS and s[0] == s[1] and self.run_id[s[0]] >= 0 and memchr_not(s, s[0], n) == NULL:
            # A run of one byte that never merges (GPT-2's indentation: 7 or 14 spaces),
            # too many ids for the word cache: n times the byte's id, as _merge_word gives.
            if idbuf_reserve(ids, n) < 0 or (spans != NULL and idbuf_reserve(spans, 2 * n) < 0):
                return ERR_NO_MEMORY
            for k in range(n):
                ids.data[ids.size + k] = self.run_id[s[0]]
            ids.size += n
            if spans != NULL:
                for k in range(n):
                    spans.data[spans.size + 2 * k] = <int32_t>(base + k)
                    spans.data[spans.size + 2 * k + 1] = <int32_t>(base + k + 1)
                spans.size += 2 * n
            return 0
        if n <= WORD_TEXT:
            # A text of at most 8 bytes hashes by mix64 of its bytes, a bijection: equal
            # hashes and lengths are equal texts, so the hit needs no text compare.
            h = mix64(load_upto8(s, n)) if n <= 8 else hash_bytes(s, n)
            slot = 2 * (h & <uint64_t>(CACHE_SETS - 1))
            e = &w.cache[slot]
            if not _word_is(e, w.cache_valid, slot, h, s, n):
                if not _word_is(e + 1, w.cache_valid, slot + 1, h, s, n):
                    return self._encode_missed(s, n, h, slot, e, w, ids, spans, base)
                # the word in the set's second slot becomes the one used last
                used = e[1]
                e[1] = e[0]
                e[0] = used
            count = e.n_ids
            if idbuf_reserve(ids, count) < 0:
                return ERR_NO_MEMORY
            for k in range(count):
                ids.data[ids.size + k] = e.ids[k]
            ids.size += count
            if spans != NULL:
                if idbuf_reserve(spans, 2 * count) < 0:
                    return ERR_NO_MEMORY
                for k in range(count):
                    spans.data[spans.size + 2 * k] = <int32_t>(base + e.starts[k])
                    spans.data[spans.size + 2 * k + 1] = <int32_t>(base + e.ends[k])
                spans.size += 2 * count
            return 0
        return self._encode_missed(s, n, h, slot, e, w, ids, spans, base)

    cdef int _encode_missed(self, const unsigned char* s, Py_ssize_t n, uint64_t h, uint64_t slot,
                            WordEntry* e, ByteBpeWork* w, IdBuf* ids, IdBuf* spans,
                            Py_ssize_t base) noexcept nogil:
        """A pre-token the word cache does not hold: merge it, then keep it in word-cache
        slot `slot` (entry e, hash h) when it fits (e is NULL when too long to cache)."""
        cdef Py_ssize_t k, count, cut
        cdef const int32_t* triples
        if n > INT32_MAX - 1:
            return ERR_TOO_LONG
        if self.drops_bytes and self._holds_dropped(s, n):
            # (before the cuts: a dropped byte's neighbours may merge across it)
            if self._merge_dropping(s, n, w) < 0:
                return ERR_NO_MEMORY
        else:
            if n >= SPLIT_MIN_BYTES and self.joined_pairs != NULL:
                cut = self._next_cut(s, 1, n)
                if cut < n:
                    # The whole-pre-token rules (ignore_merges, whole_newline_runs) look for a
                    # token, and no token holds the pair at a cut: the pieces are merged with
                    # no such rule (a piece that is a token may merge into other ids), so
                    # neither through the word cache, which holds whole pre-tokens.
                    k = 0
                    while True:
                        w.out_ids.size = 0
                        if self._merge_word(s + k, cut - k, w) < 0 or idbuf_append_triples(
                                ids, spans, w.out_ids.data, w.out_ids.size // 3, base + k) < 0:
                            return ERR_NO_MEMORY
                        if cut == n:
                            return 0
                        k = cut
                        cut = self._next_cut(s, k + 1, n)
            if self._encode_word(s, n, w) < 0:
                return ERR_NO_MEMORY
        triples = w.out_ids.data
        count = w.out_ids.size // 3
        if e != NULL and count <= WORD_IDS:
            # the word takes the set's first slot, the word there moves to the second, and
            # the one in the second (used least recently) is dropped
            if _bit(w.cache_valid, slot):
                e[1] = e[0]
                _set_bit(w.cache_valid, slot + 1)
            _set_bit(w.cache_valid, slot)
            e.hash = h
            e.text_len = <unsigned char>n
            e.n_ids = <unsigned char>count
            memcpy(e.text, s, n)
            for k in range(count):
                e.ids[k] = triples[3 * k]
                e.starts[k] = <unsigned char>triples[3 * k + 1]
                e.ends[k] = <unsigned char>triples[3 * k + 2]
        return ERR_NO_MEMORY if idbuf_append_triples(ids, spans, triples, count, base) < 0 else 0

    cdef bint _holds_dropped(self, const unsigned char* s, Py_ssize_t n) noexcept nogil:
        """Whether s[:n] holds a byte the vocabulary lacks (build's drop_unknown_bytes)."""
        cdef Py_ssize_t k
        for k in range(n):
            if self.dropped[s[k]]:
                return True
        return False

    cdef int _merge_dropping(self, const unsigned char* s, Py_ssize_t n, ByteBpeWork* w) noexcept nogil:
        """_encode_word of a pre-token holding a dropped byte (build's drop_unknown_bytes):
        its (id, start, end) triples into w.out_ids; 0, or -1 (memory).

        Parity: tokenizers BPE::merge_word with no unk_token and no byte_fallback: a
        character that is no token adds no symbol, and the symbols around it are merged
        as neighbours; each id keeps the span of its bytes in the pre-token."""
        cdef Py_ssize_t k, m = 0, count
        cdef int32_t whole
        cdef int32_t* t
        cdef const int32_t* at
        w.out_ids.size = 0
        if self.ignore_merges:
            # Parity: BPE::tokenize (ignore_merges) looks the whole word up first.
            whole = self._token_of(s, n)
            if whole >= 0:
                return self._emit(s, whole, 0, <int32_t>n, w)
        w.kept.size = 0
        w.kept_at.size = 0
        if bytebuf_reserve(&w.kept, n) < 0 or idbuf_reserve(&w.kept_at, n) < 0:
            return -1
        for k in range(n):
            if not self.dropped[s[k]]:
                w.kept.data[m] = <char>s[k]
                w.kept_at.data[m] = <int32_t>k
                m += 1
        if m == 0:
            return 0
        # No whole-pre-token rule: tokenizers looked the word up whole before dropping.
        if self._merge_word(<const unsigned char*>w.kept.data, m, w) < 0:
            return -1
        t = w.out_ids.data
        at = w.kept_at.data
        count = w.out_ids.size // 3
        for k in range(count):
            t[3 * k + 2] = at[t[3 * k + 2] - 1] + 1
            t[3 * k + 1] = at[t[3 * k + 1]]
        return 0

    cdef int _ready_caches(self, ByteBpeWork* w) noexcept nogil:
        """Empty the word cache and the pair memo of a work last used by another model
        (allocating them on first use); 0, or -1 (memory)."""
        if w.cache == NULL:
            # a set's two slots in one 128-byte block (malloc would start them 16 bytes
            # into a page, so that every slot straddled two cache lines)
            if posix_memalign(<void**>&w.cache, 128, CACHE_SLOTS * sizeof(WordEntry)) != 0:
                w.cache = NULL
            w.pair_memo = <PairSlot*>malloc(PAIR_MEMO_SLOTS * sizeof(PairSlot))
            w.cache_valid = <uint64_t*>malloc(CACHE_SLOTS // 8)
            w.memo_valid = <uint64_t*>malloc(PAIR_MEMO_SLOTS // 8)
            if w.cache == NULL or w.pair_memo == NULL or w.cache_valid == NULL or w.memo_valid == NULL:
                free(w.cache)
                free(w.pair_memo)
                free(w.cache_valid)
                free(w.memo_valid)
                w.cache = NULL
                w.pair_memo = NULL
                w.cache_valid = NULL
                w.memo_valid = NULL
                return -1
        # a slot is read only when its bit says this model filled it
        memset(w.cache_valid, 0, CACHE_SLOTS // 8)
        memset(w.memo_valid, 0, PAIR_MEMO_SLOTS // 8)
        w.cache_model = self.serial
        return 0

    # ------------------------------------------------------------------ merging

    cdef int _encode_word(self, const unsigned char* s, Py_ssize_t n, ByteBpeWork* w) noexcept nogil:
        """(id, start, end) triples of one pre-token into w.out_ids; 0, or -1 (memory)."""
        cdef int32_t whole
        w.out_ids.size = 0
        if self.ignore_merges:
            # Parity: llama.cpp llm_tokenizer_bpe_session::tokenize (ignore_merges) and
            # tiktoken encode_ordinary: a pre-token that is a token is emitted whole.
            whole = self._token_of(s, n)
            if whole >= 0:
                return self._emit(s, whole, 0, <int32_t>n, w)
        elif self.whole_tokens != NULL and WHOLE_TOKEN_MIN_BYTES <= n <= self.max_token_length:
            # A pre-token that is a token's text, where merging that text gives the token
            # (marked at load by the same merge): the one lookup replaces the merge.
            whole = self._token_of(s, n)
            if whole >= 0 and _bit(self.whole_tokens, <uint64_t>whole):
                return self._emit(s, whole, 0, <int32_t>n, w)
        if self.whole_newline_runs and memchr_not(s, 10, n) == NULL:
            # Parity: llama.cpp llm_tokenizer_bpe_session::tokenize (gemma4): a run of
            # newlines that is a token is emitted whole.
            whole = self._token_of(s, n)
            if whole >= 0:
                return self._emit(s, whole, 0, <int32_t>n, w)
        return self._merge_word(s, n, w)

    cdef int _merge_word(self, const unsigned char* s, Py_ssize_t n, ByteBpeWork* w) noexcept nogil:
        """(id, start, end) triples of the BPE of s[:n] (n >= 1) appended to w.out_ids, with
        no whole-pre-token rule; 0, or -1 (memory)."""
        cdef Py_ssize_t m, k
        if n == 1:
            return self._emit(s, self.byte_symbol[s[0]], 0, 1, w)
        if not self.utf8_symbols and s[0] < 0x80 and self.byte_pairs[s[0] | (<Py_ssize_t>s[0] << 8)].rank == INT32_MAX \
                and memchr_not(s, s[0], n) == NULL:
            # A run of one ASCII byte whose pair never merges (GPT-2's indentation: runs
            # of spaces): the only pair is that one, so every byte stays a symbol.
            for k in range(n):
                if self._emit(s, self.byte_symbol[s[0]], <int32_t>k, <int32_t>(k + 1), w) < 0:
                    return -1
            return 0
        if idbuf_reserve(&w.symbols, n + 1) < 0 or idbuf_reserve(&w.starts, n + 1) < 0:
            return -1
        m = self._start(s, n, w.symbols.data, w.starts.data)
        if m <= LINEAR_MAX_SYMBOLS:
            return self._merge_linear(s, m, w)
        if m >= QUEUE_MIN_SYMBOLS:
            return self._merge_queue(s, m, w)
        return self._merge_heap(s, m, w)

    cdef Py_ssize_t _start(self, const unsigned char* s, Py_ssize_t n, int32_t* sym,
                           int32_t* start) noexcept nogil:
        """The first symbols of pre-token s[:n] into `sym`, the offset of each into `start`
        (n after the last); returns their count. A symbol per byte, but a character
        starts whole where char_starts proved it changes no id (or per UTF-8 character
        with utf8_symbols)."""
        cdef Py_ssize_t i = 0, m = 0, clen
        cdef int32_t symbol
        if self.utf8_symbols:
            while i < n:
                sym[m] = self._first_symbol(s + i, n - i, &clen)
                start[m] = <int32_t>i
                m += 1
                i += clen
        elif self.chars.index != NULL:
            while i < n:
                clen = 1
                symbol = self.byte_symbol[s[i]]
                if s[i] >= 0xC2:
                    symbol = char_start(&self.chars, s, i, n, &clen)
                    if symbol < 0:
                        clen = 1
                        symbol = self.byte_symbol[s[i]]
                sym[m] = symbol
                start[m] = <int32_t>i
                m += 1
                i += clen
        else:
            for i in range(n):
                sym[i] = self.byte_symbol[s[i]]
                start[i] = <int32_t>i
            m = n
        start[m] = <int32_t>n
        return m

    cdef int _merge_linear(self, const unsigned char* s, Py_ssize_t m, ByteBpeWork* w) noexcept nogil:
        """Merge the m (<= LINEAR_MAX_SYMBOLS) first symbols (w.symbols, w.starts) of a short
        pre-token by scanning for the best pair. Merged-away symbols are unlinked, not
        shifted out (a shift compiles to calls to memmove), so symbol i covers
        s[start[i]:start[nxt[i]]] and the pair (i, nxt[i]) has rank[i]."""
        cdef int32_t* sym = w.symbols.data
        cdef int32_t* start = w.starts.data
        cdef int32_t rank[LINEAR_MAX_SYMBOLS]
        cdef int32_t merged[LINEAR_MAX_SYMBOLS]
        cdef int32_t nxt[LINEAR_MAX_SYMBOLS]
        cdef Py_ssize_t i, j, best, before, after
        cdef int32_t best_rank
        for i in range(m):
            nxt[i] = <int32_t>(i + 1)
        for i in range(m - 1):
            rank[i] = self._rank(s, sym[i], sym[i + 1], start[i], start[i + 1] - start[i],
                                 start[i + 2] - start[i], &merged[i], w)
        rank[m - 1] = INT32_MAX     # the last symbol has no right neighbour
        while True:
            best = -1
            before = -1
            best_rank = INT32_MAX
            j = -1
            i = 0
            while i < m:
                if rank[i] < best_rank:      # the leftmost of the lowest rank
                    best = i
                    before = j
                    best_rank = rank[i]
                j = i
                i = nxt[i]
            if best < 0:
                break
            sym[best] = merged[best]
            nxt[best] = nxt[nxt[best]]
            after = nxt[best]
            if before >= 0:
                rank[before] = self._rank(s, sym[before], sym[best], start[before], start[best] - start[before],
                                          start[after] - start[before], &merged[before], w)
            if after < m:
                rank[best] = self._rank(s, sym[best], sym[after], start[best], start[after] - start[best],
                                        start[nxt[after]] - start[best], &merged[best], w)
            else:
                rank[best] = INT32_MAX
        return self._emit_chain(s, sym, start, nxt, m, w)

    cdef int _merge_heap(self, const unsigned char* s, Py_ssize_t m, ByteBpeWork* w) noexcept nogil:
        """Merge the m first symbols of a long pre-token with a priority queue: O(m log m),
        same result as linear. Symbol k covers s[at[k] : at[k] + length[k]]."""
        cdef int32_t* sym = w.symbols.data
        cdef int32_t* at = w.starts.data
        cdef int32_t* length
        cdef int32_t* prev
        cdef int32_t* nxt
        cdef Py_ssize_t k
        cdef HeapItem e, top
        cdef int32_t left, right, other, rank
        if idbuf_reserve(&w.lengths, m) < 0 or idbuf_reserve(&w.prev, m) < 0 \
                or idbuf_reserve(&w.next, m) < 0 or heap_reserve(&w.heap, 2 * m + 2) < 0:
            return -1
        w.heap.size = 0
        length = w.lengths.data
        prev = w.prev.data
        nxt = w.next.data
        for k in range(m):
            length[k] = at[k + 1] - at[k]
            prev[k] = <int32_t>(k - 1)
            nxt[k] = <int32_t>(k + 1)
        nxt[m - 1] = -1
        for k in range(m - 1):
            rank = self._rank(s, sym[k], sym[k + 1], at[k], length[k], length[k] + length[k + 1], &e.value,
                              w)
            if rank != INT32_MAX:
                e.priority = _rank_priority(rank, <int32_t>k)
                e.left = <int32_t>k
                e.right = <int32_t>(k + 1)
                e.size = length[k] + length[k + 1]
                heap_push(&w.heap, e)
        while w.heap.size > 0:
            top = heap_pop(&w.heap)
            left = top.left
            right = top.right
            # Parity: llama.cpp skips a bigram whose text changed ("outdated"); tiktoken
            # one whose rank changed. Symbols only grow, so the size tells.
            if length[left] == 0 or length[right] == 0 or length[left] + length[right] != top.size:
                continue
            sym[left] = top.value
            length[left] += length[right]
            length[right] = 0
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            # Each merge pushes at most two entries: m - 1 initial + 2 per merge < 2m + 2.
            other = prev[left]
            if other >= 0:
                rank = self._rank(s, sym[other], sym[left], at[other], length[other], length[other] + length[left],
                                  &e.value, w)
                if rank != INT32_MAX:
                    e.priority = _rank_priority(rank, other)
                    e.left = other
                    e.right = left
                    e.size = length[other] + length[left]
                    heap_push(&w.heap, e)
            other = nxt[left]
            if other >= 0:
                rank = self._rank(s, sym[left], sym[other], at[left], length[left], length[left] + length[other],
                                  &e.value, w)
                if rank != INT32_MAX:
                    e.priority = _rank_priority(rank, left)
                    e.left = left
                    e.right = other
                    e.size = length[left] + length[other]
                    heap_push(&w.heap, e)
        k = 0
        while k >= 0:
            if self._emit(s, sym[k], at[k], at[k] + length[k], w) < 0:
                return -1
            k = nxt[k]
        return 0

    cdef int _merge_queue(self, const unsigned char* s, Py_ssize_t m, ByteBpeWork* w) noexcept nogil:
        """Merge the m first symbols of a very long pre-token (16M characters of one letter
        are one) through a RankQueue: the heap's order, in time linear in practice (see
        rank_queue.pxd). Eight bytes per queued pair and four arrays per symbol: symbol k
        covers s[at[k] : at[nxt[k]]] (at[m] is n and the last symbol's nxt is m); a
        merged-away symbol has prev MERGED_AWAY."""
        cdef int32_t* sym = w.symbols.data
        cdef int32_t* at = w.starts.data
        cdef int32_t* prev
        cdef int32_t* nxt
        cdef Py_ssize_t k
        cdef QueuedPair top
        cdef int32_t left, right, other, rank, merged
        if idbuf_reserve(&w.prev, m) < 0 or idbuf_reserve(&w.next, m) < 0 or rq_clear(&w.queue) < 0:
            return -1
        prev = w.prev.data
        nxt = w.next.data
        for k in range(m):
            prev[k] = <int32_t>(k - 1)
            nxt[k] = <int32_t>(k + 1)
        for k in range(m - 1):
            rank = self._rank(s, sym[k], sym[k + 1], at[k], at[k + 1] - at[k], at[k + 2] - at[k], &merged, w)
            if rank != INT32_MAX and rq_push(&w.queue, rank, <int32_t>k, at[k + 2] - at[k]) < 0:
                return -1
        while rq_pop(&w.queue, &top):
            left = top.left
            if prev[left] == MERGED_AWAY or nxt[left] == m:
                continue
            right = nxt[left]
            # Parity: as _merge_heap (a stale pair is skipped). The right side is the left's
            # neighbour now: were it not the queued one, the left grew or the neighbour
            # did, so the size differs.
            if at[nxt[right]] - at[left] != top.size:
                continue
            # The merged symbol is looked up again rather than queued (4 bytes more per
            # queued pair): one lookup per merge, against a queue of tens of millions.
            self._rank(s, sym[left], sym[right], at[left], at[right] - at[left], top.size, &merged, w)
            sym[left] = merged
            prev[right] = MERGED_AWAY
            nxt[left] = nxt[right]
            if nxt[right] < m:
                prev[nxt[right]] = left
            other = prev[left]
            if other >= 0:
                rank = self._rank(s, sym[other], sym[left], at[other], at[left] - at[other], at[nxt[left]] - at[other],
                                  &merged, w)
                if rank != INT32_MAX and rq_push(&w.queue, rank, other, at[nxt[left]] - at[other]) < 0:
                    return -1
            other = nxt[left]
            if other < m:
                rank = self._rank(s, sym[left], sym[other], at[left], at[other] - at[left], at[nxt[other]] - at[left],
                                  &merged, w)
                if rank != INT32_MAX and rq_push(&w.queue, rank, left, at[nxt[other]] - at[left]) < 0:
                    return -1
        return self._emit_chain(s, sym, at, nxt, m, w)

    cdef int _emit_chain(self, const unsigned char* s, const int32_t* sym, const int32_t* at, const int32_t* nxt,
                         Py_ssize_t m, ByteBpeWork* w) noexcept nogil:
        """_emit the symbols linked from symbol 0 by nxt (m ends the chain): symbol k covers
        s[at[k] : at[nxt[k]]]."""
        cdef Py_ssize_t k = 0
        while k < m:
            if self._emit(s, sym[k], at[k], at[nxt[k]], w) < 0:
                return -1
            k = nxt[k]
        return 0

    cdef int _emit(self, const unsigned char* s, int32_t symbol, int32_t start, int32_t end,
                   ByteBpeWork* w) noexcept nogil:
        """Append the ids of one final symbol covering s[start:end] to w.out_ids."""
        # Symbols below n_pieces are tokens (a gap or a text given twice has no text, so no
        # pre-token forms it); the others are texts only merges name.
        cdef int32_t token = symbol if 0 <= symbol < self.n_pieces else -1
        cdef int32_t k, j, f
        if token >= 0:
            if idbuf_reserve(&w.out_ids, 3) < 0:
                return -1
            w.out_ids.data[w.out_ids.size] = token
            w.out_ids.data[w.out_ids.size + 1] = start
            w.out_ids.data[w.out_ids.size + 2] = end
            w.out_ids.size += 3
            return 0
        # Parity: llama.cpp llm_tokenizer_bpe_session::tokenize: a symbol that is no
        # token becomes the tokens of its bytes; a byte with none is dropped.
        for k in range(start, end):
            for j in range(2):
                f = self.fallback[s[k]][j]
                if f >= 0:
                    if idbuf_reserve(&w.out_ids, 3) < 0:
                        return -1
                    w.out_ids.data[w.out_ids.size] = f
                    w.out_ids.data[w.out_ids.size + 1] = k
                    w.out_ids.data[w.out_ids.size + 2] = k + 1
                    w.out_ids.size += 3
        return 0

    # ------------------------------------------------------------------ Python helpers

    def encode_piece(self, piece):
        """The ids of one pre-token (bytes), as the engine's model stage gives them.

        >>> ByteLevelBpe.build([b"a", b"b", b"ab"], order=MergeOrder.TOKEN_RANK).encode_piece(b"aab")
        [0, 2]
        """
        cdef bytes data = bytes(piece)
        cdef IdBuf ids
        cdef void* work = self.new_work()
        cdef int rc
        cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(data)
        cdef Py_ssize_t n = len(data)
        if work == NULL:
            raise MemoryError()
        ids.data = NULL
        ids.size = 0
        ids.cap = 0
        try:
            with nogil:
                rc = self.encode(s, n, work, &ids, NULL, 0)
            if rc < 0:
                raise MemoryError() if rc == ERR_NO_MEMORY else ValueError(f"pre-token of {n} bytes is too long")
            return [ids.data[k] for k in range(ids.size)]
        finally:
            idbuf_free(&ids)
            _free_work(work)

    def encode_split(self, data, ends):
        """The ids of data cut at `ends` (pre-token end offsets), in one nogil loop
        through one work: what the engine does with a pre-tokenizer's output.

        >>> ByteLevelBpe.build([b"a", b"b", b"ab"], order=MergeOrder.TOKEN_RANK).encode_split(b"abab", [2, 4])
        [2, 2]
        """
        cdef bytes text = bytes(data)
        cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(text)
        cdef Py_ssize_t count = len(ends), k, at = 0, end
        cdef int64_t* cut = <int64_t*>malloc(max(count, 1) * sizeof(int64_t))
        cdef IdBuf ids
        cdef void* work = self.new_work()
        cdef int rc = 0
        ids.data = NULL
        ids.size = 0
        ids.cap = 0
        try:
            if cut == NULL or work == NULL:
                raise MemoryError()
            for k in range(count):
                end = ends[k]
                if not at <= end <= len(text):
                    raise ValueError(f"ends[{k}] = {end} is not in [{at}, {len(text)}]")
                cut[k] = end
                at = end
            at = 0
            with nogil:
                for k in range(count):
                    rc = self.encode(s + at, cut[k] - at, work, &ids, NULL, at)
                    if rc < 0:
                        break
                    at = cut[k]
            if rc < 0:
                raise MemoryError()
            return [ids.data[k] for k in range(ids.size)]
        finally:
            free(cut)
            idbuf_free(&ids)
            _free_work(work)

    def encode_pieces(self, pieces, bint with_spans=False):
        """The ids of each pre-token in `pieces` through one work (the word cache stays warm);
        with `with_spans`, (ids, spans) where spans are (start, end) per id in each piece."""
        cdef IdBuf ids, spans
        cdef void* work = self.new_work()
        cdef bytes data
        cdef int rc
        cdef list out = []
        if work == NULL:
            raise MemoryError()
        ids.data = NULL
        ids.size = 0
        ids.cap = 0
        spans.data = NULL
        spans.size = 0
        spans.cap = 0
        try:
            for piece in pieces:
                data = bytes(piece)
                ids.size = 0
                spans.size = 0
                rc = self.encode(<const unsigned char*>PyBytes_AS_STRING(data), len(data), work,
                                 &ids, &spans if with_spans else NULL, 0)
                if rc < 0:
                    raise MemoryError()
                if with_spans:
                    out.append(([ids.data[k] for k in range(ids.size)],
                                [(spans.data[2 * k], spans.data[2 * k + 1]) for k in range(ids.size)]))
                else:
                    out.append([ids.data[k] for k in range(ids.size)])
            return out
        finally:
            idbuf_free(&ids)
            idbuf_free(&spans)
            _free_work(work)
