"""tokenizers' BPE model over characters (tokenizer.json pipelines that are not byte-level).

Parity: tokenizers 0.23.3 models/bpe/model.rs (`BPE::merge_word`, `tokenize_with_cache`)
and word.rs (`Word::merge_all`). A pre-token ("word") starts as one symbol per character,
each a token id:

* the character's text, with `continuing_subword_prefix` before every character but the
  first and `end_of_word_suffix` after the last;
* a text that is no token becomes, with `byte_fallback`, the "<0xXX>" tokens of its bytes
  (prefix and suffix included) when all of them exist; else the `unk_token` (one for a run
  of unknown characters with `fuse_unk`); else nothing.

Then the adjacent pair of lowest merge rank merges (the leftmost on ties), again and
again. With `ignore_merges` a word that is itself a token is emitted whole.

Why not `byte_bpe.ByteLevelBpe` (which also runs BPE over UTF-8 characters for llama.cpp's
gemma4): there a symbol is known by the bytes it covers, and its fast tables are keyed by
those bytes. Here a symbol is a token id that the bytes do not name: "a" and "##a" cover the
same byte, an unknown character becomes `unk_token` or byte tokens that may merge further,
and a character that maps to nothing lets its neighbours meet. The hash keys and the pair
and token slots are byte_bpe's (byte_keys.pxd, byte_bpe.pxd), the word cache spm_bpe's.

    >>> bpe = HfBpe.build([b"a", b"b", b"ab"], [0], [1], [2])
    >>> bpe.encode_piece(b"abab")
    [2, 2]
"""
cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport INT32_MAX, int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memset

from toksmith._core.buffers cimport (ByteBuf, IdBuf, bytebuf_append, bytebuf_free, bytebuf_reserve,
                                     idbuf_append_triples, idbuf_free, idbuf_reserve)
from toksmith._core.byte_bpe cimport PairSlot, TokenSlot
from toksmith._core.spm_bpe cimport CacheEntry
from toksmith._core.byte_keys cimport hash_bytes, mix64, pair_key, token_key
from toksmith._core.errors cimport ERR_NO_MEMORY, ERR_TOO_LONG, ERR_UNK_NOT_IN_VOCAB
from toksmith._core.model cimport Model, WorkHeader
from toksmith._core.tables cimport HeapItem, MergeHeap, heap_free, heap_pop, heap_push, heap_reserve

from toksmith._core.errors import raise_for_status

# Words of at most this many initial symbols are merged by a linear scan (see _merge_linear).
cdef Py_ssize_t LINEAR_MAX_SYMBOLS = 32
# Per-thread word cache (spm_bpe's design: open addressing, texts and ids kept aside, started
# over when full) for words or chunks of at most CACHED_MAX_BYTES; per-thread pair memo.
cdef Py_ssize_t CACHED_MAX_BYTES = 256
cdef Py_ssize_t CACHE_SLOTS = 1 << 16
cdef Py_ssize_t CACHE_MAX_ENTRIES = 1 << 15
cdef Py_ssize_t CACHE_MAX_TEXT_BYTES = 1 << 20
cdef Py_ssize_t PAIR_MEMO_SLOTS = 1 << 13

# Which text a character's symbol has (merge_word): bit 0 a character after the first
# (continuing_subword_prefix), bit 1 the last character (end_of_word_suffix).
cdef enum:
    KIND_CONTINUING = 1
    KIND_LAST = 2

cdef char _WORK_KIND = 0


cdef struct HfBpeWork:
    WorkHeader header
    IdBuf sym           # per symbol: token id
    IdBuf lo            # per symbol: span in the word (bytes)
    IdBuf hi
    IdBuf hlen          # per symbol: tokenizers' Symbol::len (heap path: stale entries)
    IdBuf prev
    IdBuf next
    IdBuf rank          # linear path: rank and result of each adjacent pair
    IdBuf merged
    IdBuf out           # (id, start, end) triples of the word
    ByteBuf key         # a character's text with prefix / suffix
    MergeHeap heap
    CacheEntry* cache       # results of recent words (see _encode_chunk)
    Py_ssize_t cache_used
    ByteBuf cache_text
    IdBuf cache_ids         # (id, start, end) triples
    PairSlot* memo
    uint64_t cache_model


cdef void _free_work(void* work) noexcept nogil:
    cdef HfBpeWork* w = <HfBpeWork*>work
    if w == NULL:
        return
    _free_buffers(w)
    free(w.cache)
    free(w.memo)
    bytebuf_free(&w.cache_text)
    idbuf_free(&w.cache_ids)
    free(w)


cdef void _free_buffers(HfBpeWork* w) noexcept nogil:
    idbuf_free(&w.sym)
    idbuf_free(&w.lo)
    idbuf_free(&w.hi)
    idbuf_free(&w.hlen)
    idbuf_free(&w.prev)
    idbuf_free(&w.next)
    idbuf_free(&w.rank)
    idbuf_free(&w.merged)
    idbuf_free(&w.out)
    bytebuf_free(&w.key)
    heap_free(&w.heap)


cdef inline int _append_triples(const int32_t* t, Py_ssize_t count, IdBuf* ids, IdBuf* spans,
                                Py_ssize_t base) noexcept nogil:
    """Append the ids of `count` (id, start, end) triples, and their spans moved by base."""
    return ERR_NO_MEMORY if idbuf_append_triples(ids, spans, t, count, base) < 0 else 0


cdef inline Py_ssize_t _char_len(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Bytes of the character at s (n > 0). Input is valid UTF-8 (the pipeline repairs it
    first); a malformed sequence still advances, one byte at a time."""
    cdef unsigned char b = s[0]
    cdef Py_ssize_t k, need
    if b < 0x80:
        return 1
    if b >= 0xF0:
        need = 4
    elif b >= 0xE0:
        need = 3
    elif b >= 0xC0:
        need = 2
    else:
        return 1
    if need > n:
        return 1
    for k in range(1, need):
        if (s[k] & 0xC0) != 0x80:
            return 1
    return need


@cython.final
cdef class HfBpe(Model):
    """The vocabulary, merges and options of one tokenizer.json BPE model (module docstring)."""

    cdef unsigned char* texts          # token texts by id
    cdef int64_t* text_offsets         # n_pieces + 1
    cdef TokenSlot* text_slots         # text -> id
    cdef uint64_t text_mask
    cdef PairSlot* pairs               # (left id, right id) -> rank, merged id
    cdef uint64_t pair_mask
    cdef readonly Py_ssize_t n_pairs
    cdef int32_t ascii_ids[4][128]     # [kind][byte]: id of an ASCII character's text, or -1
    cdef int32_t* bmp_ids              # no prefix or suffix: id of each U+0800..U+FFFF character, or -1
    cdef int32_t byte_ids[256]         # id of "<0xXX>", or -1
    cdef bytes prefix
    cdef bytes suffix
    cdef const unsigned char* prefix_p
    cdef const unsigned char* suffix_p
    cdef Py_ssize_t prefix_len
    cdef Py_ssize_t suffix_len
    cdef bint affixed                  # a prefix or a suffix is set
    cdef bint prefix_bytes_known       # every byte of the prefix has a "<0xXX>" token
    cdef bint suffix_bytes_known
    cdef readonly int32_t unk_id       # -1: no unk_token (or not in the vocabulary)
    cdef readonly bint unk_missing     # unk_token set but not in the vocabulary
    cdef readonly bint fuse_unk
    cdef readonly bint byte_fallback
    cdef readonly bint ignore_merges
    cdef readonly bint exact_stale_check
    cdef list _cut_texts                   # keeps cut_chars alive
    cdef const unsigned char* cut_chars[2]
    cdef Py_ssize_t cut_lengths[2]
    cdef readonly Py_ssize_t n_cut_chars

    def __cinit__(self, *args, **kwargs):
        self.texts = NULL
        self.text_offsets = NULL
        self.text_slots = NULL
        self.pairs = NULL
        self.bmp_ids = NULL
        self.work_kind = &_WORK_KIND

    def __dealloc__(self):
        free(self.texts)
        free(self.text_offsets)
        free(self.text_slots)
        free(self.pairs)
        free(self.bmp_ids)

    @staticmethod
    def build(list tokens, lefts, rights, mergeds, *, int32_t unk_id=-1, bint unk_missing=False,
              bint fuse_unk=False, bint byte_fallback=False, bytes prefix=b"", bytes suffix=b"",
              bint ignore_merges=False, bint exact_stale_check=False, list cut_chars=None):
        """Tables for a vocabulary: token id i has UTF-8 text tokens[i] (None: no token).

        lefts, rights, mergeds: the merges in rank order as token ids (left + right
            forms merged); a pair given twice keeps its LAST rank, as tokenizers' map does.
        unk_id: the id of unk_token (-1: none); unk_missing: unk_token is set but is no
            token (a text that needs it is then refused, as tokenizers refuses it).
        prefix, suffix: continuing_subword_prefix and end_of_word_suffix (UTF-8).
        exact_stale_check: some merge's right side is no longer than the prefix (see
            _merge_heap): every word then takes the heap with tokenizers' exact check.
        cut_chars: at most two characters (UTF-8) that no merge joins to what comes
            before them unless it ends with them too (Llama's U+2581): a word is then cut
            before each one that follows another character, and the chunks are merged on
            their own (short words: the linear scan and the word cache). The caller checks
            that it holds (no prefix, suffix, ignore_merges, or unk_token ending with one).
        """
        cdef HfBpe self = HfBpe()
        cdef Py_ssize_t n = len(tokens), m = len(lefts), i, k, total = 0, length, at = 0, cap = 64
        cdef object token
        cdef uint64_t key, slot
        cdef int kind
        cdef unsigned char buf[64]
        if not (len(rights) == m and len(mergeds) == m):
            raise ValueError("lefts, rights and mergeds differ in length")
        if n >= INT32_MAX // 2 or m >= INT32_MAX // 2:
            raise ValueError("too many tokens or merges")
        self.n_pieces = n
        self.unk_id = unk_id
        self.unk_missing = unk_missing
        self.fuse_unk = fuse_unk
        self.byte_fallback = byte_fallback
        self.ignore_merges = ignore_merges
        self.exact_stale_check = exact_stale_check
        self.prefix = prefix
        self.suffix = suffix
        self.prefix_p = <const unsigned char*>PyBytes_AS_STRING(prefix)
        self.suffix_p = <const unsigned char*>PyBytes_AS_STRING(suffix)
        self.prefix_len = len(prefix)
        self.suffix_len = len(suffix)
        self.affixed = self.prefix_len > 0 or self.suffix_len > 0
        for i in range(n):
            token = tokens[i]
            if token is not None:
                total += PyBytes_GET_SIZE(token)
        self.texts = <unsigned char*>malloc(max(total, 1))
        self.text_offsets = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        while cap < 2 * n:
            cap *= 2
        self.text_slots = <TokenSlot*>calloc(cap, sizeof(TokenSlot))
        if self.texts == NULL or self.text_offsets == NULL or self.text_slots == NULL:
            raise MemoryError()
        self.text_mask = <uint64_t>(cap - 1)
        for i in range(n):
            self.text_offsets[i] = at
            token = tokens[i]
            if token is None:
                continue
            length = PyBytes_GET_SIZE(token)
            memcpy(self.texts + at, PyBytes_AS_STRING(token), length)
            if self._token_of(self.texts + at, length) < 0:
                key = token_key(self.texts + at, length)
                slot = mix64(key) & self.text_mask
                while self.text_slots[slot].length != 0:
                    slot = (slot + 1) & self.text_mask
                self.text_slots[slot].key = key
                self.text_slots[slot].id = <int32_t>i
                self.text_slots[slot].length = <int32_t>length if length > 0 else -1
            at += length
        self.text_offsets[n] = at
        # Parity: merge_word looks up format!("<{b:#04X}>") for each byte.
        for i in range(256):
            name = f"<0x{i:02X}>".encode()
            self.byte_ids[i] = self._token_of(<const unsigned char*>PyBytes_AS_STRING(name), len(name))
        self.prefix_bytes_known = all(self.byte_ids[b] >= 0 for b in prefix)
        self.suffix_bytes_known = all(self.byte_ids[b] >= 0 for b in suffix)
        for kind in range(4):
            for i in range(128):
                if self.prefix_len + self.suffix_len + 1 > 64:
                    text = (prefix if kind & KIND_CONTINUING else b"") + bytes([i]) \
                        + (suffix if kind & KIND_LAST else b"")
                    self.ascii_ids[kind][i] = self._token_of(<const unsigned char*>PyBytes_AS_STRING(text),
                                                             len(text))
                else:
                    buf[0] = <unsigned char>i
                    self.ascii_ids[kind][i] = self._affixed_token(kind, buf, 1, buf + 1)
        self._add_merges(lefts, rights, mergeds)
        if not self.affixed:
            self._fill_bmp_ids()
        self._cut_texts = [bytes(c) for c in (cut_chars or [])]
        if len(self._cut_texts) > 2 or not all(self._cut_texts):
            raise ValueError("at most two non-empty cut characters")
        self.n_cut_chars = len(self._cut_texts)
        for k in range(self.n_cut_chars):
            self.cut_chars[k] = <const unsigned char*>PyBytes_AS_STRING(self._cut_texts[k])
            self.cut_lengths[k] = len(self._cut_texts[k])
        return self

    cdef int _fill_bmp_ids(self) except -1:
        """The direct table of three-byte characters (CJK text looks each one up)."""
        cdef Py_ssize_t i, length
        cdef const unsigned char* p
        self.bmp_ids = <int32_t*>malloc(65536 * sizeof(int32_t))
        if self.bmp_ids == NULL:
            raise MemoryError()
        for i in range(65536):
            self.bmp_ids[i] = -1
        for i in range(self.n_pieces):
            length = self.text_offsets[i + 1] - self.text_offsets[i]
            p = self.texts + self.text_offsets[i]
            if length == 3 and (p[0] & 0xF0) == 0xE0 and self._token_of(p, 3) == i:
                self.bmp_ids[((p[0] & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F)] = <int32_t>i
        return 0

    cdef int _add_merges(self, lefts, rights, mergeds) except -1:
        cdef Py_ssize_t m = len(lefts), cap = 64, k
        cdef int32_t left, right, merged
        while cap < 2 * m:
            cap *= 2
        self.pairs = <PairSlot*>calloc(cap, sizeof(PairSlot))
        if self.pairs == NULL:
            raise MemoryError()
        self.pair_mask = <uint64_t>(cap - 1)
        for k in range(m):
            left = lefts[k]
            right = rights[k]
            merged = mergeds[k]
            if not (0 <= left < self.n_pieces and 0 <= right < self.n_pieces and 0 <= merged < self.n_pieces):
                raise ValueError(f"merge {k} names an id outside the vocabulary")
            self._put_pair(left, right, <int32_t>k, merged)
        return 0

    cdef void _put_pair(self, int32_t left, int32_t right, int32_t rank, int32_t merged) noexcept:
        """Parity: BpeBuilder::build collects the merges into a map: a later rank of the
        same pair replaces the earlier one."""
        cdef uint64_t key = pair_key(left, right)
        cdef uint64_t slot = mix64(key) & self.pair_mask
        while self.pairs[slot].key != 0 and self.pairs[slot].key != key:
            slot = (slot + 1) & self.pair_mask
        if self.pairs[slot].key == 0:
            self.n_pairs += 1
        self.pairs[slot].key = key
        self.pairs[slot].rank = rank
        self.pairs[slot].merged = merged

    # ------------------------------------------------------------------ lookups

    cdef int32_t _token_of(self, const unsigned char* p, Py_ssize_t n) noexcept nogil:
        """The id of the token whose text is p[:n], or -1."""
        cdef uint64_t key = token_key(p, n)
        cdef uint64_t slot = mix64(key) & self.text_mask
        cdef const TokenSlot* e
        cdef int32_t length = <int32_t>n if n > 0 else -1
        while True:
            e = &self.text_slots[slot]
            if e.length == 0:
                return -1
            if e.key == key and e.length == length and (
                    n <= 8 or memcmp(self.texts + self.text_offsets[e.id], p, n) == 0):
                return e.id
            slot = (slot + 1) & self.text_mask

    cdef int32_t _affixed_token(self, int kind, const unsigned char* c, Py_ssize_t clen,
                                unsigned char* buf) noexcept nogil:
        """The id of prefix? + c + suffix? (kind's bits), built in buf, or -1."""
        cdef Py_ssize_t at = 0
        if kind & KIND_CONTINUING:
            memcpy(buf, self.prefix_p, self.prefix_len)
            at = self.prefix_len
        memcpy(buf + at, c, clen)
        at += clen
        if kind & KIND_LAST:
            memcpy(buf + at, self.suffix_p, self.suffix_len)
            at += self.suffix_len
        return self._token_of(buf, at)

    cdef inline int32_t _pair(self, int32_t left, int32_t right, int32_t* merged, PairSlot* memo) noexcept nogil:
        """Rank of merging tokens left, right (the token they form in `merged`), INT32_MAX if none."""
        cdef uint64_t key = pair_key(left, right), slot
        cdef PairSlot* m = &memo[mix64(key) & <uint64_t>(PAIR_MEMO_SLOTS - 1)]
        if m.key == key:
            merged[0] = m.merged
            return m.rank
        m.key = key
        m.rank = INT32_MAX
        m.merged = -1
        slot = mix64(key) & self.pair_mask
        while self.pairs[slot].key != 0:
            if self.pairs[slot].key == key:
                m.rank = self.pairs[slot].rank
                m.merged = self.pairs[slot].merged
                break
            slot = (slot + 1) & self.pair_mask
        merged[0] = m.merged
        return m.rank

    # ------------------------------------------------------------------ Model contract

    cdef void* new_work(self) noexcept nogil:
        cdef HfBpeWork* w = <HfBpeWork*>calloc(1, sizeof(HfBpeWork))
        if w != NULL:
            w.header.free = _free_work
            w.header.kind = &_WORK_KIND
        return w

    cdef void trim_work(self, void* work, Py_ssize_t keep_bytes) noexcept nogil:
        cdef HfBpeWork* w = <HfBpeWork*>work
        cdef Py_ssize_t held = 4 * (w.sym.cap + w.lo.cap + w.hi.cap + w.hlen.cap + w.prev.cap + w.next.cap
                                    + w.rank.cap + w.merged.cap + w.out.cap) + w.key.cap \
            + w.heap.cap * <Py_ssize_t>sizeof(HeapItem)
        if held > keep_bytes:
            _free_buffers(w)

    cdef int _ready_caches(self, HfBpeWork* w) noexcept nogil:
        """Empty the word cache and pair memo (a work last used by another model, or a
        full cache), allocating them on first use; 0, or -1 (memory)."""
        if w.cache == NULL:
            w.cache = <CacheEntry*>calloc(CACHE_SLOTS, sizeof(CacheEntry))
            w.memo = <PairSlot*>calloc(PAIR_MEMO_SLOTS, sizeof(PairSlot))
            if w.cache == NULL or w.memo == NULL:
                free(w.cache)
                free(w.memo)
                w.cache = NULL
                w.memo = NULL
                return -1
        else:
            memset(w.cache, 0, CACHE_SLOTS * sizeof(CacheEntry))
            memset(w.memo, 0, PAIR_MEMO_SLOTS * sizeof(PairSlot))
        w.cache_used = 0
        w.cache_text.size = 0
        w.cache_ids.size = 0
        w.cache_model = self.serial
        return 0

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        cdef HfBpeWork* w = <HfBpeWork*>work
        cdef Py_ssize_t start = 0, cut
        cdef int rc
        if n <= 0:
            return 0
        if n > INT32_MAX - 1:
            return ERR_TOO_LONG
        if w.cache_model != self.serial or w.cache == NULL:
            if self._ready_caches(w) < 0:
                return ERR_NO_MEMORY
        if self.n_cut_chars == 0:
            return self._encode_chunk(s, n, w, ids, spans, base)
        # No merge crosses a cut (see build's cut_chars): each chunk is merged on its own.
        while start < n:
            cut = self._next_cut(s, n, start)
            rc = self._encode_chunk(s + start, cut - start, w, ids, spans, base + start)
            if rc < 0:
                return rc
            start = cut
        return 0

    cdef Py_ssize_t _next_cut(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t start) noexcept nogil:
        """The first position after `start` where a cut character follows another
        character than itself, or n."""
        cdef Py_ssize_t i, k, length
        cdef const unsigned char* c
        for i in range(start + 1, n):
            for k in range(self.n_cut_chars):
                c = self.cut_chars[k]
                length = self.cut_lengths[k]
                if s[i] == c[0] and i + length <= n and memcmp(s + i, c, length) == 0 \
                        and not (i >= length and memcmp(s + i - length, c, length) == 0):
                    return i
        return n

    cdef int _encode_chunk(self, const unsigned char* s, Py_ssize_t n, HfBpeWork* w, IdBuf* ids,
                           IdBuf* spans, Py_ssize_t base) noexcept nogil:
        """Append the ids of s[:n] (a word, or a chunk of one), through the word cache
        (it only remembers results: tokenizers' own cache does not change them either)."""
        cdef uint64_t h, slot, mask = <uint64_t>(CACHE_SLOTS - 1)
        cdef CacheEntry* e
        cdef int rc
        if n > CACHED_MAX_BYTES:
            rc = self._encode_word(s, n, w)
            return rc if rc < 0 else _append_triples(w.out.data, w.out.size // 3, ids, spans, base)
        if w.cache_used >= CACHE_MAX_ENTRIES or w.cache_text.size > CACHE_MAX_TEXT_BYTES:
            if self._ready_caches(w) < 0:
                return ERR_NO_MEMORY
        h = hash_bytes(s, n)
        slot = h & mask
        while w.cache[slot].hash != 0:
            e = &w.cache[slot]
            if e.hash == h and e.text_len == n and memcmp(w.cache_text.data + e.text_at, s, n) == 0:
                return _append_triples(w.cache_ids.data + e.ids_at, e.n_ids, ids, spans, base)
            slot = (slot + 1) & mask
        rc = self._encode_word(s, n, w)
        if rc < 0:
            return rc
        e = &w.cache[slot]
        if bytebuf_append(&w.cache_text, <const char*>s, n) < 0 \
                or idbuf_reserve(&w.cache_ids, w.out.size) < 0:
            return ERR_NO_MEMORY
        memcpy(w.cache_ids.data + w.cache_ids.size, w.out.data, w.out.size * sizeof(int32_t))
        e.hash = h
        e.text_at = <int32_t>(w.cache_text.size - n)
        e.text_len = <int32_t>n
        e.ids_at = <int32_t>w.cache_ids.size
        e.n_ids = <int32_t>(w.out.size // 3)
        w.cache_ids.size += w.out.size
        w.cache_used += 1
        return _append_triples(w.out.data, w.out.size // 3, ids, spans, base)

    # ------------------------------------------------------------------ one word

    cdef int _encode_word(self, const unsigned char* s, Py_ssize_t n, HfBpeWork* w) noexcept nogil:
        """(id, start, end) triples of one word into w.out; 0 or a negative error code."""
        cdef int32_t whole
        cdef Py_ssize_t m
        cdef int rc
        w.out.size = 0
        if self.ignore_merges:
            # Parity: BPE::tokenize_with_cache: a word that is a token is emitted whole.
            whole = self._token_of(s, n)
            if whole >= 0:
                return self._emit(whole, 0, <int32_t>n, w)
        rc = self._initial_symbols(s, n, w)
        if rc < 0:
            return rc
        m = w.sym.size
        if m == 0:
            return 0
        if m <= LINEAR_MAX_SYMBOLS and not self.exact_stale_check:
            rc = self._merge_linear(w)
        else:
            rc = self._merge_heap(w)
        return ERR_NO_MEMORY if rc < 0 else 0

    cdef inline int _add(self, HfBpeWork* w, int32_t token, Py_ssize_t lo, Py_ssize_t hi,
                         Py_ssize_t hlen) noexcept nogil:
        """Parity: Word::add (a symbol of tokenizers' length `hlen`; lo, hi its span)."""
        cdef Py_ssize_t k = w.sym.size      # the four buffers have this size
        if k >= w.sym.cap or k >= w.lo.cap or k >= w.hi.cap or k >= w.hlen.cap:
            if idbuf_reserve(&w.sym, 1) < 0 or idbuf_reserve(&w.lo, 1) < 0 \
                    or idbuf_reserve(&w.hi, 1) < 0 or idbuf_reserve(&w.hlen, 1) < 0:
                return -1
        w.sym.data[k] = token
        w.lo.data[k] = <int32_t>lo
        w.hi.data[k] = <int32_t>hi
        w.hlen.data[k] = <int32_t>hlen
        w.sym.size = k + 1
        w.lo.size = k + 1
        w.hi.size = k + 1
        w.hlen.size = k + 1
        return 0

    cdef int _initial_symbols(self, const unsigned char* s, Py_ssize_t n, HfBpeWork* w) noexcept nogil:
        """The word's first symbols into w.sym (with spans and lengths); 0 or an error code.

        Parity: BPE::merge_word, line by line (the pending unk is added when the next known
        character comes, or at the end: byte-fallback tokens in between come before it)."""
        cdef Py_ssize_t i = 0, clen
        cdef int kind
        cdef int32_t token
        cdef int32_t unk = -1        # the pending unk: id, span start, span end, length
        cdef Py_ssize_t unk_lo = 0, unk_hi = 0, unk_len = 0
        w.sym.size = 0
        w.lo.size = 0
        w.hi.size = 0
        w.hlen.size = 0
        if idbuf_reserve(&w.sym, n) < 0 or idbuf_reserve(&w.lo, n) < 0 or idbuf_reserve(&w.hi, n) < 0 \
                or idbuf_reserve(&w.hlen, n) < 0:
            return ERR_NO_MEMORY
        if self.affixed:
            w.key.size = 0
            if bytebuf_reserve(&w.key, self.prefix_len + self.suffix_len + 4) < 0:
                return ERR_NO_MEMORY
        while i < n:
            clen = _char_len(s + i, n - i)
            kind = (KIND_CONTINUING if i > 0 else 0) | (KIND_LAST if i + clen >= n else 0)
            if s[i] < 0x80:
                token = self.ascii_ids[kind][s[i]]
            elif not self.affixed:
                if clen == 3 and self.bmp_ids != NULL:
                    token = self.bmp_ids[((s[i] & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)]
                else:
                    token = self._token_of(s + i, clen)
            else:
                token = self._affixed_token(kind, s + i, clen, <unsigned char*>w.key.data)
            if token >= 0:
                if unk >= 0:
                    if self._add(w, unk, unk_lo, unk_hi, unk_len) < 0:
                        return ERR_NO_MEMORY
                    unk = -1
                if self._add(w, token, i, i + clen, clen) < 0:
                    return ERR_NO_MEMORY
                i += clen
                continue
            if self.byte_fallback and self._bytes_known(kind, s + i, clen):
                if self._add_byte_tokens(w, kind, s, i, clen) < 0:
                    return ERR_NO_MEMORY
                i += clen
                continue
            if self.unk_missing:
                return ERR_UNK_NOT_IN_VOCAB
            if self.unk_id >= 0:
                if unk >= 0 and self.fuse_unk:
                    unk_len += clen
                    unk_hi = i + clen
                else:
                    if unk >= 0 and self._add(w, unk, unk_lo, unk_hi, unk_len) < 0:
                        return ERR_NO_MEMORY
                    unk = self.unk_id
                    unk_lo = i
                    unk_hi = i + clen
                    unk_len = clen
            i += clen
        if unk >= 0 and self._add(w, unk, unk_lo, unk_hi, unk_len) < 0:
            return ERR_NO_MEMORY
        return 0

    cdef bint _bytes_known(self, int kind, const unsigned char* c, Py_ssize_t clen) noexcept nogil:
        """Every byte of the symbol's text (prefix and suffix included) has a "<0xXX>" token."""
        cdef Py_ssize_t k
        if (kind & KIND_CONTINUING) and not self.prefix_bytes_known:
            return False
        if (kind & KIND_LAST) and not self.suffix_bytes_known:
            return False
        for k in range(clen):
            if self.byte_ids[c[k]] < 0:
                return False
        return True

    cdef int _add_byte_tokens(self, HfBpeWork* w, int kind, const unsigned char* s, Py_ssize_t i,
                              Py_ssize_t clen) noexcept nogil:
        """Parity: merge_word's byte_fallback: one "<0xXX>" symbol of length 1 per byte of
        the symbol's text. Spans: each byte of the character its own, prefix and suffix
        bytes empty at the character's edges."""
        cdef Py_ssize_t k
        if kind & KIND_CONTINUING:
            for k in range(self.prefix_len):
                if self._add(w, self.byte_ids[self.prefix_p[k]], i, i, 1) < 0:
                    return -1
        for k in range(clen):
            if self._add(w, self.byte_ids[s[i + k]], i + k, i + k + 1, 1) < 0:
                return -1
        if kind & KIND_LAST:
            for k in range(self.suffix_len):
                if self._add(w, self.byte_ids[self.suffix_p[k]], i + clen, i + clen, 1) < 0:
                    return -1
        return 0

    cdef int _merge_linear(self, HfBpeWork* w) noexcept nogil:
        """Merge a short word by scanning for the pair of lowest rank, the leftmost on ties.

        This is Word::merge_all's order whenever a heap entry whose pair has changed never
        names the token the new pair forms (exact_stale_check false, see _merge_heap): then
        the heap only ever acts on current pairs, the lowest (rank, position) first."""
        cdef Py_ssize_t m = w.sym.size, i, best
        cdef int32_t best_rank
        cdef int32_t* sym = w.sym.data
        cdef int32_t* lo = w.lo.data
        cdef int32_t* hi = w.hi.data
        cdef int32_t* rank
        cdef int32_t* merged
        if idbuf_reserve(&w.rank, m) < 0 or idbuf_reserve(&w.merged, m) < 0:
            return -1
        rank = w.rank.data
        merged = w.merged.data
        for i in range(m - 1):
            rank[i] = self._pair(sym[i], sym[i + 1], &merged[i], w.memo)
        while m > 1:
            best = -1
            best_rank = INT32_MAX
            for i in range(m - 1):
                if rank[i] < best_rank:
                    best = i
                    best_rank = rank[i]
            if best < 0:
                break
            sym[best] = merged[best]
            hi[best] = hi[best + 1]
            for i in range(best + 1, m - 1):
                sym[i] = sym[i + 1]
                lo[i] = lo[i + 1]
                hi[i] = hi[i + 1]
            for i in range(best + 1, m - 2):
                rank[i] = rank[i + 1]
                merged[i] = merged[i + 1]
            m -= 1
            if best > 0:
                rank[best - 1] = self._pair(sym[best - 1], sym[best], &merged[best - 1], w.memo)
            if best < m - 1:
                rank[best] = self._pair(sym[best], sym[best + 1], &merged[best], w.memo)
        for i in range(m):
            if self._emit(sym[i], lo[i], hi[i], w) < 0:
                return -1
        return 0

    cdef int _merge_heap(self, HfBpeWork* w) noexcept nogil:
        """Parity: Word::merge_all: a min-heap of (rank, position); an entry whose symbol is
        gone or last is skipped, and so is one whose pair now forms another token.

        An entry is pushed with the pair's two tokenizers lengths: the same position with
        the same total length is the same pair (symbols only grow), so it is current. A
        changed pair covers more symbols; merged(a, b) is a + b minus len(prefix) leading
        bytes of b, so its text is longer too, and it forms another token, unless a merge's
        right side is no longer than the prefix (exact_stale_check): only then is it
        looked up."""
        cdef Py_ssize_t m = w.sym.size, i, need = 2 * m + 2
        cdef int32_t* sym
        cdef int32_t* hlen
        cdef int32_t* hi
        cdef int32_t* prev
        cdef int32_t* nxt
        cdef HeapItem e, top
        cdef int32_t pos, right, other, rank, merged
        if idbuf_reserve(&w.prev, m) < 0 or idbuf_reserve(&w.next, m) < 0 or heap_reserve(&w.heap, need) < 0:
            return -1
        sym = w.sym.data
        hlen = w.hlen.data
        hi = w.hi.data
        prev = w.prev.data
        nxt = w.next.data
        w.heap.size = 0
        for i in range(m):
            prev[i] = <int32_t>(i - 1)
            nxt[i] = <int32_t>(i + 1) if i + 1 < m else -1
        for i in range(m - 1):
            rank = self._pair(sym[i], sym[i + 1], &e.value, w.memo)
            if rank != INT32_MAX:
                e.priority = (<uint64_t>rank << 32) | <uint32_t>i
                e.left = <int32_t>i
                e.size = hlen[i] + hlen[i + 1]
                heap_push(&w.heap, e)
        while w.heap.size > 0:
            top = heap_pop(&w.heap)
            pos = top.left
            if hlen[pos] == 0:
                continue
            right = nxt[pos]
            if right < 0:
                continue
            if hlen[pos] + hlen[right] != top.size:
                if not self.exact_stale_check:
                    continue
                if self._pair(sym[pos], sym[right], &merged, w.memo) == INT32_MAX or merged != top.value:
                    continue
            sym[pos] = top.value
            hlen[pos] += hlen[right]
            hi[pos] = hi[right]
            hlen[right] = 0
            nxt[pos] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = pos
            # Each merge pushes at most two entries: m - 1 initial + 2 per merge < need.
            other = prev[pos]
            if other >= 0:
                rank = self._pair(sym[other], sym[pos], &e.value, w.memo)
                if rank != INT32_MAX:
                    e.priority = (<uint64_t>rank << 32) | <uint32_t>other
                    e.left = other
                    e.size = hlen[other] + hlen[pos]
                    heap_push(&w.heap, e)
            other = nxt[pos]
            if other >= 0:
                rank = self._pair(sym[pos], sym[other], &e.value, w.memo)
                if rank != INT32_MAX:
                    e.priority = (<uint64_t>rank << 32) | <uint32_t>pos
                    e.left = pos
                    e.size = hlen[pos] + hlen[other]
                    heap_push(&w.heap, e)
        i = 0
        while i >= 0:
            if self._emit(sym[i], w.lo.data[i], hi[i], w) < 0:
                return -1
            i = nxt[i]
        return 0

    cdef inline int _emit(self, int32_t token, int32_t start, int32_t end, HfBpeWork* w) noexcept nogil:
        if idbuf_reserve(&w.out, 3) < 0:
            return -1
        w.out.data[w.out.size] = token
        w.out.data[w.out.size + 1] = start
        w.out.data[w.out.size + 2] = end
        w.out.size += 3
        return 0

    # ------------------------------------------------------------------ Python helpers

    def token_id(self, text):
        """The id of the token with this text (bytes or str), or None."""
        cdef bytes data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        cdef int32_t i = self._token_of(<const unsigned char*>PyBytes_AS_STRING(data), len(data))
        return None if i < 0 else i

    def encode_piece(self, piece):
        """The ids of one pre-token (bytes or str), as the engine's model stage gives them.

        >>> HfBpe.build([b"a", b"b"], [], [], [], unk_id=-1).encode_piece(b"abc")
        [0, 1]
        """
        return self.encode_pieces([piece])[0]

    def encode_pieces(self, pieces, bint with_spans=False):
        """The ids of each pre-token through one work (the word cache stays warm); with
        `with_spans`, (ids, spans) per piece, spans (start, end) per id in the piece."""
        cdef IdBuf ids, spans
        cdef void* work = self.new_work()
        cdef bytes data
        cdef int rc
        cdef list out = []
        if work == NULL:
            raise MemoryError()
        memset(&ids, 0, sizeof(IdBuf))
        memset(&spans, 0, sizeof(IdBuf))
        try:
            for piece in pieces:
                data = piece.encode("utf-8") if isinstance(piece, str) else bytes(piece)
                ids.size = 0
                spans.size = 0
                rc = self.encode(<const unsigned char*>PyBytes_AS_STRING(data), len(data), work,
                                 &ids, &spans if with_spans else NULL, 0)
                raise_for_status(rc)
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

