"""The merge loop of Hugging Face's BpeTrainer, in C structures.

`BpeMergeTrainer(words, offsets, counts, initial, ...)` takes the distinct pre-tokens
(UTF-8, concatenated; `offsets[i]:offsets[i+1]` is word i) with their counts, and the
tokens that come first in the vocabulary (special tokens, then the kept alphabet, in
id order). It splits every word into its characters (those of the alphabet), counts
the pairs and learns merges until the vocabulary reaches `vocab_size`:

>>> t = BpeMergeTrainer(b"abab", array("q", [0, 2, 4]), array("Q", [3, 1]),
...                     [b"a", b"b"], 3, 0, 0, None, None)          # doctest: +SKIP
>>> t.run(1 << 30); t.vocab(), t.merges()                          # doctest: +SKIP
([b'a', b'b', b'ab'], [(0, 1)])

Parity: tokenizers 0.23.3 models/bpe/trainer.rs `BpeTrainer::do_train`, detail by detail:
- pairs are ranked by count, ties by the smaller (left id, right id);
- the queue is lazy: a popped entry whose count is stale is pushed back with the pair's
  current count; each entry carries the words it was pushed for, and a merge touches
  only those words (a pair that reappears in new words gets a new entry, so the same
  merge can be learnt twice; the later one's rank is the one kept);
- a merge never lowers the merged pair's own count (Word::merge reports only the
  neighbouring pairs), counts are i32 (`as u64` sign-extends a negative one);
- a new neighbour pair is counted only while its length in characters stays below
  `max_token_length` (models/bpe/word.rs `Word::merge`).
No Python object is touched between two calls of `run`.
"""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memmove, memset

from toksmith._core.byte_keys cimport prefetch
from toksmith._core.threadpool cimport parallel_for
from toksmith._core.bpe_tables cimport (Change, ChangeBuf, changes_push, Entry, Heap, PairMap, PairSlot, PosList, _utf8_len,
                                        find_pair, heap_pop, heap_push, pair_key, pairmap_entry, pairmap_get,
                                        pairmap_init, pairmap_prefetch, poslist_free, poslist_items, poslist_push)
from toksmith._core.word_table cimport WordTable, table_add, table_find, table_free


# ------------------------------------------------------------------ the trainer

# A merge that touches at least this many words runs on the thread pool: the words are
# merged in parallel (each word belongs to one chunk), their pair changes recorded per
# chunk, then applied on this thread in word order, exactly as one thread would.
cdef Py_ssize_t PARALLEL_MIN_WORDS = 4096
cdef Py_ssize_t CHUNKS_PER_THREAD = 4


cdef struct WordSpan:
    int64_t start        # the word's first symbol in `sym`
    int32_t size         # how many symbols it has now
    int32_t count        # how often it occurs (i32, as the pair counts add it)


cdef struct MergeJob:
    void* trainer
    const WordSpan* words    # the trainer's (read ahead of the merges)
    const int32_t* sym
    const int32_t* pos
    Py_ssize_t n_pos
    Py_ssize_t n_chunks
    ChangeBuf* bufs      # one per chunk
    int32_t c1
    int32_t c2
    int32_t rep


# How far ahead in a position list the words' records and symbols are prefetched: a
# merge visits words scattered over the whole table, each visit a cache miss otherwise.
cdef Py_ssize_t PREFETCH_RECORDS = 16
cdef Py_ssize_t PREFETCH_SYMBOLS = 8
# How far ahead the pair map's slots are prefetched when recorded changes are applied.
cdef Py_ssize_t PREFETCH_PAIRS = 16


cdef void _merge_chunks(void* ctx, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    cdef MergeJob* job = <MergeJob*>ctx
    cdef Py_ssize_t chunk, k, lo, hi
    for chunk in range(start, end):
        lo = job.n_pos * chunk // job.n_chunks
        hi = job.n_pos * (chunk + 1) // job.n_chunks
        job.bufs[chunk].size = 0
        job.bufs[chunk].failed = False
        for k in range(lo, hi):
            if k + PREFETCH_RECORDS < hi:
                prefetch(&job.words[job.pos[k + PREFETCH_RECORDS]])
            if k + PREFETCH_SYMBOLS < hi:
                prefetch(job.sym + job.words[job.pos[k + PREFETCH_SYMBOLS]].start)
            (<BpeMergeTrainer>job.trainer)._merge_word_recorded(job.pos[k], job.c1, job.c2, job.rep,
                                                                 &job.bufs[chunk])


cdef class BpeMergeTrainer:
    """See the module docstring. `run(max_merges)` learns up to that many merges (for a
    progress bar) and returns True when training is over."""
    cdef WordTable strings     # the tokens' texts, by id (counts unused)
    cdef int32_t* sym            # every word's symbols (ids), word w at sym[words[w].start:][:words[w].size]
    cdef int32_t* sym_len        # length in characters of each symbol (NULL: no max_token_length)
    cdef WordSpan* words         # where each word's symbols are, how many, its count
    cdef Py_ssize_t n_words
    cdef PairMap pair_counts
    cdef PosList* pending_lists
    cdef uint64_t* pending_keys
    cdef Py_ssize_t n_pending
    cdef Py_ssize_t pending_cap
    cdef Heap queue
    cdef int32_t* merge_pairs    # (a, b, new id) per merge learnt, in order
    cdef Py_ssize_t n_merges
    cdef Py_ssize_t merges_cap
    cdef Py_ssize_t vocab_size
    cdef uint64_t min_frequency
    cdef Py_ssize_t max_length
    cdef bytes prefix
    cdef bint finished
    cdef int threads
    cdef ChangeBuf* bufs         # threads * CHUNKS_PER_THREAD change buffers (parallel merges)

    def __init__(self, const unsigned char[::1] words, const int64_t[::1] offsets, const uint64_t[::1] counts,
                 list initial, Py_ssize_t vocab_size, uint64_t min_frequency, Py_ssize_t max_token_length,
                 bytes prefix, bytes suffix, int threads=1):
        cdef bytes token
        cdef Py_ssize_t w
        cdef Py_ssize_t n_words = offsets.shape[0] - 1
        cdef Py_ssize_t total = offsets[n_words] if n_words >= 0 else 0
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.max_length = max_token_length if max_token_length >= 0 else (<Py_ssize_t>1 << 62)  # -1: none
        self.prefix = prefix
        self.threads = max(1, threads)
        self.bufs = <ChangeBuf*>calloc(self.threads * CHUNKS_PER_THREAD, sizeof(ChangeBuf))
        if self.bufs == NULL:
            raise MemoryError()
        if n_words < 0:
            n_words = 0
        self.n_words = n_words
        for token in initial:
            if table_add(&self.strings, token, len(token), 0) < 0:
                raise MemoryError()
        self.sym = <int32_t*>malloc((total + 1) * sizeof(int32_t))
        if max_token_length >= 0:        # symbol lengths matter only under a max_token_length
            self.sym_len = <int32_t*>malloc((total + 1) * sizeof(int32_t))
        self.words = <WordSpan*>malloc((n_words + 1) * sizeof(WordSpan))
        if self.sym == NULL or (max_token_length >= 0 and self.sym_len == NULL) or self.words == NULL:
            raise MemoryError()
        for w in range(n_words):
            # Parity: tokenizers keeps word counts as u64 and adds them to i32 pair counts `as i32`
            self.words[w].count = <int32_t>counts[w]
        cdef const char* pre = <const char*>prefix if prefix is not None else NULL
        cdef const char* suf = <const char*>suffix if suffix is not None else NULL
        cdef Py_ssize_t npre = len(prefix) if prefix is not None else 0
        cdef Py_ssize_t nsuf = len(suffix) if suffix is not None else 0
        cdef int rc
        with nogil:
            rc = self._split_words(&words[0] if total else NULL, &offsets[0], pre, npre, suf, nsuf)
            if rc == 0:
                rc = self._count_pairs()
        if rc < 0:
            raise MemoryError()

    def __dealloc__(self):
        cdef Py_ssize_t i
        table_free(&self.strings)
        free(self.sym)
        free(self.sym_len)
        free(self.words)
        free(self.pair_counts.slots)
        for i in range(self.n_pending):
            poslist_free(&self.pending_lists[i])
        free(self.pending_lists)
        free(self.pending_keys)
        for i in range(self.queue.size):
            poslist_free(&self.queue.data[i].pos)
        free(self.queue.data)
        free(self.merge_pairs)
        if self.bufs != NULL:
            for i in range(self.threads * CHUNKS_PER_THREAD):
                free(self.bufs[i].data)
            free(self.bufs)

    cdef int _split_words(self, const unsigned char* words, const int64_t* offsets, const char* pre,
                          Py_ssize_t npre, const char* suf, Py_ssize_t nsuf) noexcept nogil:
        """Parity: trainer.rs `tokenize_words`: each character of the alphabet becomes a
        symbol, with the prefix unless it is the word's first character and the suffix
        when it is its last (first/last among all its characters, kept or not)."""
        cdef Py_ssize_t w, i, k, n, clen, end
        cdef int64_t out = 0
        cdef int32_t id
        cdef char buf[256]
        cdef char* s
        cdef bint first, last
        if npre == 0 and nsuf == 0:
            return self._split_plain_words(words, offsets)
        for w in range(self.n_words):
            self.words[w].start = out
            i = offsets[w]
            end = offsets[w + 1]
            first = True
            while i < end:
                clen = _utf8_len(words[i])
                if i + clen > end:
                    clen = end - i
                last = i + clen >= end
                if table_find(&self.strings, <const char*>words + i, clen) >= 0:
                    n = 0
                    if not first and npre:
                        n += npre
                    n += clen
                    if last and nsuf:
                        n += nsuf
                    if n <= 256:
                        s = &buf[0]
                    else:
                        s = <char*>malloc(n)
                    if s == NULL:
                        return -1
                    k = 0
                    if not first and npre:
                        memcpy(s, pre, npre)
                        k = npre
                    memcpy(s + k, words + i, clen)
                    k += clen
                    if last and nsuf:
                        memcpy(s + k, suf, nsuf)
                    id = <int32_t>table_add(&self.strings, s, n, 0)
                    if s != &buf[0]:
                        free(s)
                    if id < 0:
                        return -1
                    self.sym[out] = id
                    if self.sym_len != NULL:
                        self.sym_len[out] = 1
                    out += 1
                first = False
                i += clen
            self.words[w].size = <int32_t>(out - self.words[w].start)
        return 0

    cdef int _split_plain_words(self, const unsigned char* words, const int64_t* offsets) noexcept nogil:
        """`_split_words` without prefix or suffix: a symbol is its character's own token,
        looked up once per character of one or two bytes (all of GPT-2's byte characters)
        and once per occurrence of the others."""
        cdef Py_ssize_t w, i, clen, end, code
        cdef int64_t out = 0
        cdef int32_t id
        cdef int32_t ascii_ids[128]          # -2: not looked up yet, -1: not in the alphabet
        cdef int32_t two_byte_ids[2048]      # the same, by code point (U+0080..U+07FF)
        for i in range(128):
            ascii_ids[i] = -2
        for i in range(2048):
            two_byte_ids[i] = -2
        for w in range(self.n_words):
            self.words[w].start = out
            i = offsets[w]
            end = offsets[w + 1]
            while i < end:
                if words[i] < 0x80:
                    clen = 1
                    id = ascii_ids[words[i]]
                    if id == -2:
                        id = <int32_t>table_find(&self.strings, <const char*>words + i, 1)
                        ascii_ids[words[i]] = id
                else:
                    clen = _utf8_len(words[i])
                    if i + clen > end:
                        clen = end - i
                    if clen == 2:
                        code = ((words[i] & 0x1F) << 6) | (words[i + 1] & 0x3F)
                        id = two_byte_ids[code]
                        if id == -2:
                            id = <int32_t>table_find(&self.strings, <const char*>words + i, 2)
                            two_byte_ids[code] = id
                    else:
                        id = <int32_t>table_find(&self.strings, <const char*>words + i, clen)
                if id >= 0:
                    self.sym[out] = id
                    if self.sym_len != NULL:
                        self.sym_len[out] = 1
                    out += 1
                i += clen
            self.words[w].size = <int32_t>(out - self.words[w].start)
        return 0

    cdef int _note_pending(self, PairSlot* slot, int32_t w) noexcept nogil:
        """Parity: `where_to_update.entry(pair).or_default().insert(iw)` (slot: the pair's)."""
        cdef Py_ssize_t cap
        cdef PosList* pl
        cdef uint64_t* pk
        if not (0 <= slot.pending < self.n_pending and self.pending_keys[slot.pending] == slot.key1 - 1):
            if self.n_pending == self.pending_cap:
                cap = self.pending_cap * 2 if self.pending_cap else 1024
                pl = <PosList*>realloc(self.pending_lists, cap * sizeof(PosList))
                if pl == NULL:
                    return -1
                self.pending_lists = pl
                pk = <uint64_t*>realloc(self.pending_keys, cap * sizeof(uint64_t))
                if pk == NULL:
                    return -1
                self.pending_keys = pk
                self.pending_cap = cap
            slot.pending = <int32_t>self.n_pending
            self.pending_lists[self.n_pending].data = NULL
            self.pending_lists[self.n_pending].size = 0
            self.pending_lists[self.n_pending].cap = 0
            self.pending_keys[self.n_pending] = slot.key1 - 1
            self.n_pending += 1
        return poslist_push(&self.pending_lists[slot.pending], w)

    cdef inline PairSlot* _add_count(self, uint64_t key, int32_t delta) noexcept nogil:
        """The pair's slot after counts[pair] += delta; NULL when out of memory."""
        cdef bint created
        cdef PairSlot* slot = pairmap_entry(&self.pair_counts, key, &created)
        if slot != NULL:
            # i32 arithmetic, wrapping as Rust's release build does
            slot.value = <int32_t>(<uint32_t>slot.value + <uint32_t>delta)
        return slot

    cdef inline int _add_new_pair(self, uint64_t key, int32_t count, int32_t w) noexcept nogil:
        """A pair the merge made in word w: counted, and w noted for its queue entry."""
        cdef PairSlot* slot = self._add_count(key, count)
        if slot == NULL:
            return -1
        return self._note_pending(slot, w)

    cdef int _flush_pending(self) noexcept nogil:
        """Push an entry for every pair that gained positions. Parity: the
        `where_to_update.drain()` after counting and after each merge."""
        cdef Py_ssize_t i
        cdef int32_t count
        cdef Entry e
        for i in range(self.n_pending):
            if i + PREFETCH_PAIRS < self.n_pending:
                pairmap_prefetch(&self.pair_counts, self.pending_keys[i + PREFETCH_PAIRS])
            count = pairmap_get(&self.pair_counts, self.pending_keys[i])
            if count > 0:
                e.count = <uint64_t>count
                e.a = <uint32_t>(self.pending_keys[i] >> 32)
                e.b = <uint32_t>(self.pending_keys[i] & 0xFFFFFFFFULL)
                e.pos = self.pending_lists[i]
                if heap_push(&self.queue, e) < 0:
                    return -1
            else:
                poslist_free(&self.pending_lists[i])
        self.n_pending = 0
        return 0

    cdef int _count_pairs(self) noexcept nogil:
        """Parity: trainer.rs `count_pairs` (every adjacent pair, no length limit)."""
        cdef Py_ssize_t w, k
        cdef int64_t s
        cdef uint64_t key
        if pairmap_init(&self.pair_counts, 1 << 16) < 0:
            return -1
        for w in range(self.n_words):
            s = self.words[w].start
            for k in range(self.words[w].size - 1):
                key = pair_key(self.sym[s + k], self.sym[s + k + 1])
                if self._add_new_pair(key, self.words[w].count, <int32_t>w) < 0:
                    return -1
        return self._flush_pending()

    cdef void _merge_word_recorded(self, int32_t w, int32_t c1, int32_t c2, int32_t rep,
                                   ChangeBuf* out) noexcept nogil:
        """Parity: models/bpe/word.rs `Word::merge`: word w merged in place, its pair
        changes appended to `out` in Word::merge's order (applied by `_merge_words`)."""
        cdef int32_t* sy = self.sym + self.words[w].start
        cdef int32_t n = self.words[w].size, o, r, gap
        cdef int32_t count = self.words[w].count
        cdef int32_t minus = <int32_t>(0 - <uint32_t>count)
        # The symbols before the first (c1, c2) stay where they are (a word of a stale
        # position list may hold the pair no more); between two merges they move down.
        r = find_pair(sy, 0, n, c1, c2)
        if r < 0:
            return
        if self.sym_len != NULL:
            self._merge_from(w, r, c1, c2, rep, out)
            return
        o = r
        while True:                 # sy[r], sy[r + 1] is (c1, c2)
            if o > 0:
                changes_push(out, pair_key(sy[o - 1], c1), minus, -1)
                changes_push(out, pair_key(sy[o - 1], rep), count, w)
            sy[o] = rep
            o += 1
            r += 2
            if r >= n:
                break
            changes_push(out, pair_key(c2, sy[r]), minus, -1)
            changes_push(out, pair_key(rep, sy[r]), count, w)
            gap = find_pair(sy, r, n, c1, c2)
            if gap < 0:
                gap = n
            memmove(sy + o, sy + r, (gap - r) * sizeof(int32_t))
            o += gap - r
            r = gap
            if r >= n:
                break
        self.words[w].size = o

    cdef void _merge_from(self, int32_t w, int32_t r, int32_t c1, int32_t c2, int32_t rep,
                          ChangeBuf* out) noexcept nogil:
        """`_merge_word_recorded` from the first (c1, c2) at r, with symbol lengths kept
        for `max_token_length` (a new neighbour pair counts only below it)."""
        cdef int32_t* sy = self.sym + self.words[w].start
        cdef int32_t* ln = self.sym_len + self.words[w].start
        cdef int32_t n = self.words[w].size, o = r, new_len
        cdef int32_t count = self.words[w].count
        cdef int32_t minus = <int32_t>(0 - <uint32_t>count)
        while r < n:
            if sy[r] == c1 and r + 1 < n and sy[r + 1] == c2:
                new_len = ln[r] + ln[r + 1]
                if o > 0:
                    changes_push(out, pair_key(sy[o - 1], c1), minus, -1)
                    if ln[o - 1] + new_len < self.max_length:
                        changes_push(out, pair_key(sy[o - 1], rep), count, w)
                sy[o] = rep
                ln[o] = new_len
                r += 2
                if r < n:
                    changes_push(out, pair_key(c2, sy[r]), minus, -1)
                    if ln[r] + new_len < self.max_length:
                        changes_push(out, pair_key(rep, sy[r]), count, w)
                o += 1
            else:
                sy[o] = sy[r]
                ln[o] = ln[r]
                o += 1
                r += 1
        self.words[w].size = o

    cdef int _merge_words(self, const PosList* pos, int32_t c1, int32_t c2, int32_t rep) noexcept nogil:
        """Merge the words of `pos` (on the thread pool when they are many), then apply
        their changes in word order."""
        cdef MergeJob job
        cdef Py_ssize_t chunk, k
        cdef Change* ch
        job.trainer = <void*>self
        job.words = self.words
        job.sym = self.sym
        job.pos = poslist_items(<PosList*>pos)
        job.n_pos = pos.size
        job.bufs = self.bufs
        job.c1 = c1
        job.c2 = c2
        job.rep = rep
        if self.threads > 1 and pos.size >= PARALLEL_MIN_WORDS:
            job.n_chunks = self.threads * CHUNKS_PER_THREAD
            parallel_for(job.n_chunks, 1, self.threads, _merge_chunks, &job)
        else:
            job.n_chunks = 1
            _merge_chunks(&job, 0, 1)
        for chunk in range(job.n_chunks):
            if self.bufs[chunk].failed:
                return -1
            for k in range(self.bufs[chunk].size):
                ch = &self.bufs[chunk].data[k]
                if k + PREFETCH_PAIRS < self.bufs[chunk].size:
                    pairmap_prefetch(&self.pair_counts, ch[PREFETCH_PAIRS].key)
                if ch.w < 0:
                    if self._add_count(ch.key, ch.delta) == NULL:
                        return -1
                elif self._add_new_pair(ch.key, ch.delta, ch.w) < 0:
                    return -1
        return 0

    cdef int _new_token(self, uint32_t a, uint32_t b, const char* pre, Py_ssize_t npre) noexcept nogil:
        """The id of token a + b (b without the continuing-subword prefix), added when new."""
        cdef const char* sa = self.strings.data + self.strings.starts[a]
        cdef Py_ssize_t na = self.strings.starts[a + 1] - self.strings.starts[a]
        cdef int64_t ob = self.strings.starts[b]
        cdef Py_ssize_t nb = self.strings.starts[b + 1] - ob
        cdef char* s
        cdef int32_t id
        if npre and nb >= npre and memcmp(self.strings.data + ob, pre, npre) == 0:
            ob += npre
            nb -= npre
        s = <char*>malloc(na + nb + 1)
        if s == NULL:
            return -1
        memcpy(s, sa, na)
        memcpy(s + na, self.strings.data + ob, nb)   # strings.data may move in table_add: copied first
        id = <int32_t>table_add(&self.strings, s, na + nb, 0)
        free(s)
        return id

    cdef int _step(self, const char* pre, Py_ssize_t npre) noexcept nogil:
        """One turn of the loop: 1 = over, 0 = go on, -1 = out of memory."""
        cdef Entry top
        cdef int32_t current, new_id, k
        cdef Py_ssize_t cap
        cdef int32_t* d
        if self.strings.n >= self.vocab_size or self.queue.size == 0:
            return 1
        top = heap_pop(&self.queue)
        current = pairmap_get(&self.pair_counts, pair_key(top.a, top.b))
        if top.count != <uint64_t><int64_t>current:
            top.count = <uint64_t><int64_t>current      # Rust's `i32 as u64`
            if heap_push(&self.queue, top) < 0:
                return -1
            return 0
        if top.count < 1 or self.min_frequency > top.count:
            poslist_free(&top.pos)
            return 1
        new_id = self._new_token(top.a, top.b, pre, npre)
        if new_id < 0:
            poslist_free(&top.pos)
            return -1
        if self.n_merges == self.merges_cap:
            cap = self.merges_cap * 2 if self.merges_cap else 4096
            d = <int32_t*>realloc(self.merge_pairs, 3 * cap * sizeof(int32_t))
            if d == NULL:
                poslist_free(&top.pos)
                return -1
            self.merge_pairs = d
            self.merges_cap = cap
        self.merge_pairs[3 * self.n_merges] = <int32_t>top.a
        self.merge_pairs[3 * self.n_merges + 1] = <int32_t>top.b
        self.merge_pairs[3 * self.n_merges + 2] = new_id
        self.n_merges += 1
        if self._merge_words(&top.pos, <int32_t>top.a, <int32_t>top.b, new_id) < 0:
            poslist_free(&top.pos)
            return -1
        poslist_free(&top.pos)
        return -1 if self._flush_pending() < 0 else 0

    def run(self, Py_ssize_t max_merges):
        """Learn up to `max_merges` more merges; True when training is over."""
        cdef int rc = 0
        cdef Py_ssize_t goal = self.n_merges + max_merges
        cdef const char* pre = <const char*>self.prefix if self.prefix is not None else NULL
        cdef Py_ssize_t npre = len(self.prefix) if self.prefix is not None else 0
        if self.finished:
            return True
        with nogil:
            while self.n_merges < goal:
                rc = self._step(pre, npre)
                if rc != 0:
                    break
        if rc < 0:
            raise MemoryError("out of memory while learning merges")
        if rc == 1:
            self.finished = True
        return self.finished

    @property
    def n_tokens(self):
        return self.strings.n

    def vocab(self):
        """Every token's UTF-8 text, by id."""
        cdef Py_ssize_t i
        return [self.strings.data[self.strings.starts[i]:self.strings.starts[i + 1]]
                for i in range(self.strings.n)]

    def merges(self):
        """The merges in the order tokenizers ranks them: a merge learnt twice keeps its
        later place (trainer.rs collects them into a map, the last rank wins)."""
        cdef Py_ssize_t i
        seen = {}
        for i in range(self.n_merges):
            seen[(self.merge_pairs[3 * i], self.merge_pairs[3 * i + 1])] = i
        return [pair for pair, _ in sorted(seen.items(), key=lambda item: item[1])]
