"""The EM loop of sentencepiece's Unigram trainer: E-step, M-step and pruning, natively.

`UnigramEM(words, pieces, scores)` holds the training words (an SpmSentences) and the
current pieces in sentencepiece's order (the "sentencepieces" vector of TrainerModel);
each step runs over the words on the core's thread pool with the GIL released:

>>> from toksmith._core.spm_sentences import SpmSentences
>>> words = SpmSentences(); words.append("▁ab".encode(), 3)
>>> em = UnigramEM(words, ["▁".encode(), b"a", b"b", "▁ab".encode()], [-1.0, -2.0, -2.0, -3.0])
>>> expected = em.e_step(1)
>>> em.m_step(expected); em.size     # the characters are expected under 0.5 times: dropped
1

Every lattice is built from a trie of the pieces as sentencepiece's Model::PopulateNodes
builds it (a character no piece starts with gets an unknown node scored min_score - 10,
counted for the piece at index 0, as TrainerModel's unk id is 0). Forward-backward and
Viterbi run per position in sentencepiece's node order with its float arithmetic; the
expected counts of all words are added up in 64-bit fixed point (2**-28 units), so the
sums are the same whatever the number of threads and whichever thread takes which words.

Parity: sentencepiece 0.2.3 unigram_model_trainer.cc (RunEStep, RunMStep,
PruneSentencePieces, PruneUnreachableSentencePieces, Digamma) and unigram_model.cc
(Lattice::PopulateMarginal, ForwardAlgorithm, BackwardAlgorithm, Viterbi, LogSumExp).
"""
from array import array

from libc.math cimport exp, log, log1p, INFINITY
from libc.stdint cimport int8_t, int32_t, int64_t, uint16_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memcmp, memset

from toksmith._core.spm_sentences cimport SpmSentences
from toksmith._core.threadpool cimport parallel_for
from toksmith._core.trie cimport DANode, DoubleArrayTrie, KeyRef, da_child

cdef extern from *:
    """
    static inline int toksmith_em_claim(int* p) {
        int expected = 0;
        return __atomic_compare_exchange_n(p, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
    }
    static inline void toksmith_em_release(int* p) { __atomic_store_n(p, 0, __ATOMIC_RELEASE); }
    """
    bint toksmith_em_claim(int* p) nogil
    void toksmith_em_release(int* p) nogil

# Parity: unigram_model.cc kUnkPenalty; unigram_model_trainer.cc kExpectedFrequencyThreshold
cdef float UNK_PENALTY = 10.0
cdef float EXPECTED_FREQUENCY_THRESHOLD = 0.5
# Fixed-point unit of the summed expectations: 2**-28 (a piece's expected count may reach
# 2**35 before its 64-bit sum overflows).
cdef double FIXED_ONE = 268435456.0
cdef int MAX_SLOTS = 256

cdef enum:
    DROP = 0
    KEEP = 1
    CANDIDATE = 2


cdef inline float log_sum_exp(float x, float y) noexcept nogil:
    # Parity: unigram_model.cc LogSumExp (float, kMinusLogEpsilon = 50)
    cdef float vmin = y if y < x else x
    cdef float vmax = y if x < y else x
    if vmax > vmin + <float>50.0:
        return vmax
    return <float>(vmax + log1p(exp(<double>(vmin - vmax))))


cdef double digamma(double x) noexcept nogil:
    # Parity: unigram_model_trainer.cc Digamma
    cdef double result = 0.0, xx, xx2, xx4
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 1.0 / 2.0
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2 \
        - (127.0 / 30720.0) * xx4 * xx4
    return result


cdef struct Lattice:
    # one word: its characters and the nodes (pieces over character spans) in
    # sentencepiece's insertion order: by begin, shorter first, the unknown node last
    int32_t* char_start     # byte offset of each character, n_chars + 1 entries
    int32_t* char_at        # character index of each byte offset (at character starts)
    int32_t n_chars
    int32_t* begin
    int32_t* end
    int32_t* index          # index in the current pieces (0 for an unknown node)
    float* score
    int32_t n_nodes
    float* alpha            # per position
    float* beta
    int32_t* best_node      # Viterbi: best node ending at each position
    float* best_score
    Py_ssize_t cap_bytes
    Py_ssize_t cap_nodes


cdef void lattice_free(Lattice* t) noexcept nogil:
    free(t.char_start)
    free(t.char_at)
    free(t.begin)
    free(t.end)
    free(t.index)
    free(t.score)
    free(t.alpha)
    free(t.beta)
    free(t.best_node)
    free(t.best_score)
    memset(t, 0, sizeof(Lattice))


cdef int lattice_reserve(Lattice* t, Py_ssize_t n_bytes, Py_ssize_t max_chars) noexcept nogil:
    cdef Py_ssize_t nb = n_bytes + 1, nn = (n_bytes + 1) * (max_chars + 1)
    if nb > t.cap_bytes:
        lattice_free(t)
        t.char_start = <int32_t*>malloc(nb * sizeof(int32_t))
        t.char_at = <int32_t*>malloc(nb * sizeof(int32_t))
        t.alpha = <float*>malloc(nb * sizeof(float))
        t.beta = <float*>malloc(nb * sizeof(float))
        t.best_node = <int32_t*>malloc(nb * sizeof(int32_t))
        t.best_score = <float*>malloc(nb * sizeof(float))
        t.cap_bytes = nb
        if t.char_start == NULL or t.char_at == NULL or t.alpha == NULL or t.beta == NULL \
                or t.best_node == NULL or t.best_score == NULL:
            lattice_free(t)
            return -1
    if nn > t.cap_nodes:
        free(t.begin)
        free(t.end)
        free(t.index)
        free(t.score)
        t.begin = <int32_t*>malloc(nn * sizeof(int32_t))
        t.end = <int32_t*>malloc(nn * sizeof(int32_t))
        t.index = <int32_t*>malloc(nn * sizeof(int32_t))
        t.score = <float*>malloc(nn * sizeof(float))
        t.cap_nodes = nn
        if t.begin == NULL or t.end == NULL or t.index == NULL or t.score == NULL:
            lattice_free(t)
            return -1
    return 0


cdef struct RunJob:
    void* em
    int mode
    const unsigned char* blob
    const int64_t* offsets
    const int64_t* freqs


cdef struct PruneJob:
    void* em
    const float* freq
    float total
    float logsum
    int8_t* kind
    float* loss
    int status


cdef class UnigramEM:
    """See the module docstring."""
    cdef SpmSentences words
    cdef bytes blob                 # every piece ever held (the seeds), back to back
    cdef const unsigned char* blob_data
    cdef int64_t* piece_start       # piece s at blob[piece_start[s]:piece_start[s+1]]
    cdef float* piece_score         # score of piece s (while held)
    cdef int32_t* position          # index of piece s in `order`, -1 once removed
    cdef int32_t* order             # the current pieces (seed numbers), sentencepiece's order
    cdef int32_t* node_of           # trie node of piece s (-1: not in the trie); the node
                                    # holds the piece's index and score, kept up to date
    cdef readonly Py_ssize_t size
    cdef Py_ssize_t n_seeds
    cdef readonly float min_score
    cdef DoubleArrayTrie trie
    cdef Py_ssize_t trie_keys
    cdef int max_chars              # longest piece, in characters
    # The candidate nodes of every word, found once with the trie of the seed pieces and
    # read back on later passes (pieces are only ever removed; removed ones are skipped,
    # and compacted away now and then): node k is piece cache_seed[k] over cache_len[k]
    # characters; word w's nodes are cache_seed[node_start[w]:node_start[w+1]], those of
    # its character c the next pos_count[pos_start[w] + c] of them, in trie order.
    cdef bint cached
    cdef int32_t* cache_seed
    cdef uint16_t* cache_len
    cdef uint16_t* pos_count
    cdef int64_t* node_start
    cdef int64_t* pos_start
    cdef Py_ssize_t cache_size_at_compaction
    # per-call state read by the workers
    cdef int64_t* slots[256]
    cdef int slot_busy[256]
    cdef int n_slots
    cdef int status

    def __cinit__(self):
        self.piece_start = NULL
        self.piece_score = NULL
        self.position = NULL
        self.order = NULL
        self.node_of = NULL
        self.cached = False
        self.cache_seed = NULL
        self.cache_len = NULL
        self.pos_count = NULL
        self.node_start = NULL
        self.pos_start = NULL
        memset(self.slots, 0, sizeof(self.slots))
        memset(self.slot_busy, 0, sizeof(self.slot_busy))

    def __init__(self, SpmSentences words, list pieces, scores):
        cdef Py_ssize_t n = len(pieces), s
        cdef int chars
        self.words = words
        self.blob = b"".join(pieces)
        self.blob_data = <const unsigned char*>self.blob
        if n == 0:
            raise ValueError("no pieces to train")
        self.n_seeds = n
        self.piece_start = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        self.piece_score = <float*>malloc(max(n, 1) * sizeof(float))
        self.position = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
        self.order = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
        self.node_of = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
        if self.piece_start == NULL or self.piece_score == NULL or self.position == NULL or self.order == NULL \
                or self.node_of == NULL:
            raise MemoryError()
        self.piece_start[0] = 0
        self.max_chars = 1
        for s in range(n):
            self.piece_start[s + 1] = self.piece_start[s] + len(<bytes>pieces[s])
            self.piece_score[s] = scores[s]
            self.position[s] = <int32_t>s
            self.order[s] = <int32_t>s
            chars = _chars(<const unsigned char*>self.blob + self.piece_start[s], len(<bytes>pieces[s]))
            if chars > self.max_chars:
                self.max_chars = chars
        self.size = n
        self._update_min_score()
        self._build_trie()

    def __dealloc__(self):
        cdef int k
        free(self.piece_start)
        free(self.piece_score)
        free(self.position)
        free(self.order)
        free(self.node_of)
        self._free_cache()
        for k in range(MAX_SLOTS):
            free(self.slots[k])

    cdef void _update_min_score(self) noexcept nogil:
        # Parity: TrainerModel::SetSentencePieces (min_score_ starts at FLT_MAX)
        cdef Py_ssize_t i
        cdef float m = 3.4028234663852886e38
        for i in range(self.size):
            if self.piece_score[self.order[i]] < m:
                m = self.piece_score[self.order[i]]
        self.min_score = m

    cdef _build_trie(self):
        """The trie of the pieces held now (value: seed number)."""
        cdef KeyRef* refs = <KeyRef*>malloc(max(self.size, 1) * sizeof(KeyRef))
        cdef Py_ssize_t i, s
        cdef DoubleArrayTrie trie = DoubleArrayTrie()
        cdef const unsigned char* base = <const unsigned char*>self.blob
        if refs == NULL:
            raise MemoryError()
        try:
            for i in range(self.size):
                s = self.order[i]
                refs[i].data = base + self.piece_start[s]
                refs[i].length = self.piece_start[s + 1] - self.piece_start[s]
                refs[i].value = <int32_t>s
                refs[i].score = 0
                if refs[i].length > trie.max_key_length:
                    trie.max_key_length = refs[i].length
            with nogil:
                qsort(refs, self.size, sizeof(KeyRef), _compare_keys)
            if trie._build(refs, self.size) < 0:
                raise MemoryError()
            trie.num_keys = self.size
        finally:
            free(refs)
        self.trie = trie
        self.trie_keys = self.size
        self._find_nodes()
        self._sync_trie()

    cdef void _find_nodes(self) noexcept nogil:
        cdef Py_ssize_t s, j
        cdef int32_t node
        cdef const DANode* nodes = self.trie.nodes
        for s in range(self.n_seeds):
            self.node_of[s] = -1
            if self.position[s] < 0:
                continue
            node = 0
            for j in range(self.piece_start[s], self.piece_start[s + 1]):
                node = da_child(nodes, node, self.blob_data[j])
            self.node_of[s] = node

    cdef _after_change(self):
        """The pieces changed: new min score, the trie's nodes updated (a new trie once
        most keys are gone)."""
        self._update_min_score()
        if self.size * 2 < self.trie_keys:
            self._build_trie()
        else:
            self._sync_trie()
        if self.cached and self.size * 3 < self.cache_size_at_compaction * 2:
            with nogil:
                self._compact_cache()

    cdef void _sync_trie(self) noexcept nogil:
        """Each trie node of a piece holds its current index and score (-1: removed)."""
        cdef Py_ssize_t s
        cdef int32_t node
        cdef DANode* nodes = self.trie.nodes
        for s in range(self.n_seeds):
            node = self.node_of[s]
            if node < 0:
                continue
            nodes[node].value = self.position[s]
            nodes[node].score = self.piece_score[s] if self.position[s] >= 0 else 0

    cdef int populate(self, Lattice* t, const unsigned char* s, Py_ssize_t n) noexcept nogil:
        """Build the lattice of s[:n]. Parity: unigram_model.cc Model::PopulateNodes."""
        cdef int32_t k = 0, c, b, j, node, seed, e, m
        cdef const DANode* nodes = self.trie.nodes
        cdef bint single
        cdef float unk_score = self.min_score - UNK_PENALTY
        if lattice_reserve(t, n, self.max_chars) < 0:
            return -1
        b = 0
        while b < n:
            t.char_start[k] = b
            t.char_at[b] = k
            m = _char_len(s[b])
            if m > n - b:
                m = <int32_t>(n - b)
            b += m
            k += 1
        t.char_start[k] = <int32_t>n
        t.char_at[n] = k
        t.n_chars = k
        t.n_nodes = 0
        for c in range(k):
            single = False
            node = 0
            for j in range(t.char_start[c], n):
                node = da_child(nodes, node, s[j])
                if node < 0:
                    break
                seed = nodes[node].value        # the piece's index (see _sync_trie)
                if seed >= 0:
                    e = t.char_at[j + 1]
                    t.begin[t.n_nodes] = c
                    t.end[t.n_nodes] = e
                    t.index[t.n_nodes] = seed
                    t.score[t.n_nodes] = nodes[node].score
                    t.n_nodes += 1
                    if e == c + 1:
                        single = True
            if not single:
                t.begin[t.n_nodes] = c
                t.end[t.n_nodes] = c + 1
                t.index[t.n_nodes] = 0
                t.score[t.n_nodes] = unk_score
                t.n_nodes += 1
        return 0

    cdef int populate_word(self, Lattice* t, Py_ssize_t w) noexcept nogil:
        """The lattice of word w: from the cache when there is one (the same nodes, in the
        same order, as populate() finds with the trie)."""
        cdef const unsigned char* blob
        cdef int64_t k, p, k_end
        cdef int32_t c, L, seed, idx, length
        cdef bint single
        cdef float unk_score
        if not self.cached:
            blob = <const unsigned char*>self.words.blob
            return self.populate(t, blob + self.words.offsets[w], self.words.offsets[w + 1] - self.words.offsets[w])
        p = self.pos_start[w]
        L = <int32_t>(self.pos_start[w + 1] - p)
        if lattice_reserve(t, L, self.max_chars) < 0:
            return -1
        unk_score = self.min_score - UNK_PENALTY
        t.n_chars = L
        t.n_nodes = 0
        k = self.node_start[w]
        for c in range(L):
            single = False
            k_end = k + self.pos_count[p + c]
            while k < k_end:
                seed = self.cache_seed[k]
                idx = self.position[seed]
                if idx >= 0:
                    length = self.cache_len[k]
                    t.begin[t.n_nodes] = c
                    t.end[t.n_nodes] = c + length
                    t.index[t.n_nodes] = idx
                    t.score[t.n_nodes] = self.piece_score[seed]
                    t.n_nodes += 1
                    if length == 1:
                        single = True
                k += 1
            if not single:
                t.begin[t.n_nodes] = c
                t.end[t.n_nodes] = c + 1
                t.index[t.n_nodes] = 0
                t.score[t.n_nodes] = unk_score
                t.n_nodes += 1
        return 0

    cdef void _free_cache(self) noexcept nogil:
        free(self.cache_seed)
        free(self.cache_len)
        free(self.pos_count)
        free(self.node_start)
        free(self.pos_start)
        self.cache_seed = NULL
        self.cache_len = NULL
        self.pos_count = NULL
        self.node_start = NULL
        self.pos_start = NULL
        self.cached = False

    def build_cache(self, int threads, Py_ssize_t budget_bytes):
        """Find every word's candidate nodes once (see the cache fields); left out (the
        trie is walked on every pass instead) when they would take over `budget_bytes`."""
        cdef Py_ssize_t n = self.words.n, w
        cdef CacheJob job
        cdef int64_t nodes = 0, chars = 0
        self._free_cache()
        if budget_bytes <= 0:
            return False
        job.em = <void*>self
        job.fill = False
        job.status = 0
        self.node_start = <int64_t*>calloc(n + 1, sizeof(int64_t))
        self.pos_start = <int64_t*>calloc(n + 1, sizeof(int64_t))
        if self.node_start == NULL or self.pos_start == NULL:
            self._free_cache()
            raise MemoryError()
        with nogil:
            # counts into node_start[w + 1] / pos_start[w + 1], then prefix sums
            parallel_for(n, 64, threads, _cache_range, &job)
            for w in range(n):
                nodes += self.node_start[w + 1]
                chars += self.pos_start[w + 1]
                self.node_start[w + 1] = nodes
                self.pos_start[w + 1] = chars
        if job.status < 0:
            self._free_cache()
            raise MemoryError()
        if nodes * (sizeof(int32_t) + sizeof(uint16_t)) + chars * sizeof(uint16_t) > budget_bytes:
            self._free_cache()
            return False
        self.cache_seed = <int32_t*>malloc(max(nodes, 1) * sizeof(int32_t))
        self.cache_len = <uint16_t*>malloc(max(nodes, 1) * sizeof(uint16_t))
        self.pos_count = <uint16_t*>malloc(max(chars, 1) * sizeof(uint16_t))
        if self.cache_seed == NULL or self.cache_len == NULL or self.pos_count == NULL:
            self._free_cache()
            raise MemoryError()
        job.fill = True
        with nogil:
            parallel_for(n, 64, threads, _cache_range, &job)
        if job.status < 0:
            self._free_cache()
            raise MemoryError()
        self.cached = True
        self.cache_size_at_compaction = self.size
        return True

    cdef int _cache_word(self, Lattice* t, Py_ssize_t w, bint fill) noexcept nogil:
        """Count (fill False) or write (fill True) the cached nodes of word w."""
        cdef const unsigned char* blob = <const unsigned char*>self.words.blob
        cdef int32_t i, c = -1
        cdef int64_t k, p
        # the unknown node is the only one at index 0 with that score (a piece scores at
        # least min_score)
        cdef float unk_score = self.min_score - UNK_PENALTY
        if self.populate(t, blob + self.words.offsets[w], self.words.offsets[w + 1] - self.words.offsets[w]) < 0:
            return -1
        if not fill:
            k = 0
            for i in range(t.n_nodes):
                if not (t.index[i] == 0 and t.score[i] == unk_score):
                    k += 1
            self.node_start[w + 1] = k
            self.pos_start[w + 1] = t.n_chars
            return 0
        k = self.node_start[w]
        p = self.pos_start[w]
        for c in range(t.n_chars):
            self.pos_count[p + c] = 0
        for i in range(t.n_nodes):
            if t.index[i] == 0 and t.score[i] == unk_score:
                continue
            self.cache_seed[k] = self.order[t.index[i]]
            self.cache_len[k] = <uint16_t>(t.end[i] - t.begin[i])
            self.pos_count[p + t.begin[i]] += 1
            k += 1
        return 0

    cdef void _compact_cache(self) noexcept nogil:
        """Drop the cached nodes of removed pieces (in place, order kept)."""
        cdef Py_ssize_t w, n = self.words.n
        cdef int64_t k, out = 0, p, k_end, first
        cdef int32_t c, L, kept
        if not self.cached:
            return
        k = 0
        for w in range(n):
            first = out
            p = self.pos_start[w]
            L = <int32_t>(self.pos_start[w + 1] - p)
            for c in range(L):
                k_end = k + self.pos_count[p + c]
                kept = 0
                while k < k_end:
                    if self.position[self.cache_seed[k]] >= 0:
                        self.cache_seed[out] = self.cache_seed[k]
                        self.cache_len[out] = self.cache_len[k]
                        out += 1
                        kept += 1
                    k += 1
                self.pos_count[p + c] = <uint16_t>kept
            self.node_start[w] = first
        self.node_start[n] = out
        self.cache_size_at_compaction = self.size

    cdef float viterbi(self, Lattice* t, int32_t skip) noexcept nogil:
        """Best path (best_node per position); returns its score, -INFINITY when no path.
        Node `skip` (or -1) is left out. Parity: Lattice::Viterbi (the first best wins)."""
        cdef int32_t i, p, e, L = t.n_chars
        cdef float v
        for p in range(L + 1):
            t.best_node[p] = -1
        t.best_score[0] = 0
        for i in range(t.n_nodes):
            if i == skip:
                continue
            p = t.begin[i]
            if p > 0 and t.best_node[p] < 0:
                continue
            v = t.best_score[p] + t.score[i]
            e = t.end[i]
            if t.best_node[e] < 0 or v > t.best_score[e]:
                t.best_score[e] = v
                t.best_node[e] = i
        if t.best_node[L] < 0:
            return -INFINITY
        return t.best_score[L]

    cdef int _claim(self) noexcept nogil:
        cdef int k
        while True:
            for k in range(self.n_slots):
                if toksmith_em_claim(&self.slot_busy[k]):
                    return k

    def e_step(self, int threads):
        """Expected count of each current piece (array('f'), sentencepiece's order).
        Parity: Trainer::RunEStep (Lattice::PopulateMarginal per word)."""
        return self._run(threads, 0)

    def viterbi_counts(self, int threads):
        """How often each current piece is on the best path of the words (array('f'))."""
        return self._run(threads, 1)

    cdef _run(self, int threads, int mode):
        cdef Py_ssize_t k, i
        cdef int64_t total
        cdef RunJob job
        out = array("f", [0]) * self.size
        cdef float[::1] view = out
        if threads < 1:
            threads = 1
        if threads > MAX_SLOTS:
            threads = MAX_SLOTS
        self.n_slots = threads
        for k in range(threads):
            free(self.slots[k])
            self.slots[k] = <int64_t*>calloc(max(self.size, 1), sizeof(int64_t))
            if self.slots[k] == NULL:
                raise MemoryError()
            self.slot_busy[k] = 0
        self.status = 0
        job.em = <void*>self
        job.mode = mode
        job.blob = <const unsigned char*>self.words.blob
        job.offsets = self.words.offsets
        job.freqs = self.words.freqs
        with nogil:
            parallel_for(self.words.n, 16, threads, _words_range, &job)
            for i in range(self.size):
                total = 0
                for k in range(threads):
                    total += self.slots[k][i]
                view[i] = <float>(<double>total / FIXED_ONE) if mode == 0 else <float>total
        for k in range(threads):
            free(self.slots[k])
            self.slots[k] = NULL
        if self.status < 0:
            raise MemoryError()
        return out

    cdef void _word(self, Lattice* t, int64_t* acc, Py_ssize_t w, int64_t freq, int mode) noexcept nogil:
        cdef int32_t i, p, L, first, k
        cdef float z, v, a
        cdef double f = <double><float>freq
        if self.populate_word(t, w) < 0:
            self.status = -1
            return
        L = t.n_chars
        if mode == 1:
            self.viterbi(t, -1)
            p = L
            while p > 0:
                i = t.best_node[p]
                acc[t.index[i]] += freq
                p = t.begin[i]
            return
        # Parity: Lattice::ForwardAlgorithm: alpha of a node = that of its begin position
        t.alpha[0] = 0
        for p in range(1, L + 1):
            t.best_node[p] = 0          # 0: no node has ended there yet
        for i in range(t.n_nodes):
            v = t.score[i] + t.alpha[t.begin[i]]
            p = t.end[i]
            if t.best_node[p] == 0:
                t.alpha[p] = v
                t.best_node[p] = 1
            else:
                t.alpha[p] = log_sum_exp(t.alpha[p], v)
        z = t.alpha[L]
        # Parity: Lattice::BackwardAlgorithm (nodes of a begin position in their order)
        t.beta[L] = 0
        i = t.n_nodes - 1
        for p in range(L - 1, -1, -1):
            # the nodes beginning at p are t.n_nodes[first..i], in order
            a = 0
            first = i
            while first > 0 and t.begin[first - 1] == p:
                first -= 1
            for k in range(first, i + 1):
                v = t.score[k] + t.beta[t.end[k]]
                a = v if k == first else log_sum_exp(a, v)
            t.beta[p] = a
            i = first - 1
        # Parity: Lattice::PopulateMarginal (float sum, then exp in double)
        for i in range(t.n_nodes):
            v = t.alpha[t.begin[i]] + t.score[i]
            v = v + t.beta[t.end[i]]
            v = v - z
            acc[t.index[i]] += <int64_t>(f * exp(<double>v) * FIXED_ONE + 0.5)

    def m_step(self, expected):
        """Keep the pieces expected at least 0.5 times, scored by the digamma estimate.
        Parity: Trainer::RunMStep."""
        cdef float[::1] e = expected
        cdef Py_ssize_t i, kept = 0
        cdef float total = 0
        cdef float logsum
        cdef int32_t s
        if e.shape[0] != self.size:
            raise ValueError("expected counts do not match the pieces")
        for i in range(self.size):
            s = self.order[i]
            if e[i] < EXPECTED_FREQUENCY_THRESHOLD:
                self.position[s] = -1
                continue
            self.order[kept] = s
            self.position[s] = <int32_t>kept
            kept += 1
            total += e[i]
        logsum = <float>digamma(total)     # Parity: a float, as RunMStep keeps it
        kept = 0
        for i in range(self.size):
            if e[i] < EXPECTED_FREQUENCY_THRESHOLD:
                continue
            self.piece_score[self.order[kept]] = <float>(digamma(e[i]) - logsum)
            kept += 1
        self.size = kept
        self._after_change()

    def prune(self, int threads, Py_ssize_t desired_size, float shrinking_factor):
        """Drop the pieces whose loss of likelihood is smallest, down to
        max(desired_size, shrinking_factor * size). Parity: Trainer::PruneSentencePieces
        (the second best segmentation of a piece is its best one without the piece itself)."""
        freq = self.viterbi_counts(threads)
        cdef float[::1] f = freq
        cdef double acc = 0
        cdef Py_ssize_t i, n = self.size, pruned_size, kept = 0
        cdef PruneJob job
        for i in range(n):
            acc += f[i]
        cdef float total = <float>acc
        job.em = <void*>self
        job.freq = &f[0] if n else NULL
        job.total = total
        job.logsum = <float>log(<double>total)
        job.kind = <int8_t*>malloc(max(n, 1))
        job.loss = <float*>malloc(max(n, 1) * sizeof(float))
        job.status = 0
        if job.kind == NULL or job.loss == NULL:
            free(job.kind)
            free(job.loss)
            raise MemoryError()
        try:
            with nogil:
                parallel_for(n, 64, threads, _prune_range, &job)
            if job.status < 0:
                raise MemoryError()
            pruned_size = max(desired_size, <int>(shrinking_factor * <float>n))
            new_order = [self.order[i] for i in range(n) if job.kind[i] == KEEP]
            candidates = array("i", [i for i in range(n) if job.kind[i] == CANDIDATE])
            _sort_by_loss(candidates, job.loss)
            for i in candidates:
                if len(new_order) == pruned_size:
                    break
                new_order.append(self.order[i])
            self._reorder(new_order)
        finally:
            free(job.kind)
            free(job.loss)

    def prune_unreachable(self, int threads):
        """Drop the pieces that some other segmentation of their own text beats.
        Parity: Trainer::PruneUnreachableSentencePieces."""
        cdef Py_ssize_t n = self.size, i
        cdef PruneJob job
        job.em = <void*>self
        job.kind = <int8_t*>malloc(max(n, 1))
        job.loss = NULL
        job.status = 0
        if job.kind == NULL:
            raise MemoryError()
        try:
            with nogil:
                parallel_for(n, 64, threads, _unreachable_range, &job)
            if job.status < 0:
                raise MemoryError()
            self._reorder([self.order[i] for i in range(n) if job.kind[i] == KEEP])
        finally:
            free(job.kind)

    cdef _reorder(self, list seeds):
        cdef Py_ssize_t i
        for i in range(self.size):
            self.position[self.order[i]] = -1
        for i in range(len(seeds)):
            self.order[i] = seeds[i]
            self.position[self.order[i]] = <int32_t>i
        self.size = len(seeds)
        self._after_change()

    def pieces(self):
        """[(UTF-8 piece, score)] in sentencepiece's order."""
        cdef Py_ssize_t i
        cdef int32_t s
        return [(self.blob[self.piece_start[s]:self.piece_start[s + 1]], self.piece_score[s])
                for s in [self.order[i] for i in range(self.size)]]


cdef struct CacheJob:
    void* em
    bint fill
    int status


cdef void _cache_range(void* ctx, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    cdef CacheJob* job = <CacheJob*>ctx
    cdef Lattice t
    cdef Py_ssize_t w
    memset(&t, 0, sizeof(Lattice))
    for w in range(start, end):
        if (<UnigramEM>job.em)._cache_word(&t, w, job.fill) < 0:
            job.status = -1
            break
    lattice_free(&t)


cdef void _words_range(void* ctx, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    cdef RunJob* job = <RunJob*>ctx
    cdef Lattice t
    cdef Py_ssize_t w
    cdef int slot = (<UnigramEM>job.em)._claim()
    cdef int64_t* acc = (<UnigramEM>job.em).slots[slot]
    memset(&t, 0, sizeof(Lattice))
    for w in range(start, end):
        (<UnigramEM>job.em)._word(&t, acc, w, job.freqs[w], job.mode)
    lattice_free(&t)
    toksmith_em_release(&(<UnigramEM>job.em).slot_busy[slot])


cdef int32_t _self_node(Lattice* t, int32_t index) noexcept nogil:
    cdef int32_t i
    for i in range(t.n_nodes):
        if t.begin[i] != 0:
            break
        if t.index[i] == index and t.end[i] == t.n_chars:
            return i
    return -1


cdef void _prune_range(void* ctx, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    cdef PruneJob* job = <PruneJob*>ctx
    cdef Lattice t
    cdef Py_ssize_t i
    cdef int32_t s, self_i, p, k, n_alt, n_best
    cdef float fi, logprob_sp, logsum_alt, logprob_alt, F
    cdef const unsigned char* blob = (<UnigramEM>job.em).blob_data
    cdef const int64_t* starts = (<UnigramEM>job.em).piece_start
    cdef const int32_t* order = (<UnigramEM>job.em).order
    memset(&t, 0, sizeof(Lattice))
    for i in range(start, end):
        s = order[i]
        if (<UnigramEM>job.em).populate(&t, blob + starts[s], starts[s + 1] - starts[s]) < 0:
            job.status = -1
            break
        fi = job.freq[i]
        if t.n_chars == 1:
            # Parity: a one-character piece has no second segmentation: always kept
            job.kind[i] = KEEP if fi != 0 else DROP
            continue
        (<UnigramEM>job.em).viterbi(&t, -1)
        n_best = 0
        p = t.n_chars
        while p > 0:
            n_best += 1
            p = t.begin[t.best_node[p]]
        if n_best >= 2 or fi == 0:
            job.kind[i] = DROP      # its Viterbi path splits it (or it is never used)
            continue
        self_i = _self_node(&t, <int32_t>i)
        (<UnigramEM>job.em).viterbi(&t, self_i)
        # Parity: the loss of replacing the piece by its alternatives
        logprob_sp = <float>(log(<double>fi) - job.logsum)
        n_alt = 0
        p = t.n_chars
        while p > 0:
            n_alt += 1
            p = t.begin[t.best_node[p]]
        logsum_alt = <float>log(<double>(job.total + fi * <float>(n_alt - 1)))
        logprob_alt = 0
        p = t.n_chars
        while p > 0:
            k = t.best_node[p]
            logprob_alt = <float>(logprob_alt + (log(<double>(job.freq[t.index[k]] + fi)) - logsum_alt))
            p = t.begin[k]
        F = fi / job.total
        job.loss[i] = F * (logprob_sp - logprob_alt)
        job.kind[i] = CANDIDATE
    lattice_free(&t)


cdef void _unreachable_range(void* ctx, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    cdef PruneJob* job = <PruneJob*>ctx
    cdef Lattice t
    cdef Py_ssize_t i
    cdef int32_t s, self_i
    cdef float original, alt
    cdef const unsigned char* blob = (<UnigramEM>job.em).blob_data
    cdef const int64_t* starts = (<UnigramEM>job.em).piece_start
    cdef const int32_t* order = (<UnigramEM>job.em).order
    memset(&t, 0, sizeof(Lattice))
    for i in range(start, end):
        s = order[i]
        if (<UnigramEM>job.em).populate(&t, blob + starts[s], starts[s + 1] - starts[s]) < 0:
            job.status = -1
            break
        self_i = _self_node(&t, <int32_t>i)
        if self_i < 0:
            job.kind[i] = DROP
            continue
        original = t.score[self_i]
        alt = (<UnigramEM>job.em).viterbi(&t, self_i)
        # Parity: a path without the piece that scores strictly higher makes it unreachable
        job.kind[i] = DROP if alt > original else KEEP
    lattice_free(&t)


cdef const float* _losses = NULL     # qsort has no context argument (the GIL is held)


cdef int _loss_then_index(const void* a, const void* b) noexcept nogil:
    # Parity: util.h Sorted(candidates): loss descending, then index ascending
    cdef int32_t i = (<const int32_t*>a)[0], j = (<const int32_t*>b)[0]
    if _losses[i] != _losses[j]:
        return -1 if _losses[i] > _losses[j] else 1
    return (i > j) - (i < j)


cdef void _sort_by_loss(int32_t[::1] candidates, const float* losses):
    global _losses
    if candidates.shape[0] == 0:
        return
    _losses = losses
    qsort(&candidates[0], candidates.shape[0], sizeof(int32_t), _loss_then_index)
    _losses = NULL


cdef inline int32_t _char_len(unsigned char lead) noexcept nogil:
    # Parity: util.h OneCharLen
    if lead < 0xC0:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


cdef int _chars(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef int count = 0
    for i in range(n):
        if (s[i] & 0xC0) != 0x80:
            count += 1
    return count


cdef int _compare_keys(const void* a, const void* b) noexcept nogil:
    cdef const KeyRef* x = <const KeyRef*>a
    cdef const KeyRef* y = <const KeyRef*>b
    cdef Py_ssize_t n = x.length if x.length < y.length else y.length
    cdef int c = memcmp(x.data, y.data, n)
    if c != 0:
        return c
    return (x.length > y.length) - (x.length < y.length)
