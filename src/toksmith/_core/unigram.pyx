"""Unigram (SentencePiece UNIGRAM / llama.cpp UGM) segmentation by Viterbi.

The lattice is never materialized: one pass over character starts walks the
double-array trie and relaxes best-path entries for every piece that matches,
then the best path is read back from the end. Time is linear in the input
times the longest piece; memory is one small record per input byte.
"""
from libc.float cimport DBL_MAX
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, uint32_t
from libc.stdlib cimport calloc, free, realloc
from libc.string cimport memset

from toksmith._core.buffers cimport IdBuf, idbuf_free, idbuf_reserve
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.model cimport Model, WorkHeader
from toksmith._core.token_types cimport TYPE_NORMAL, TYPE_UNUSED, TYPE_USER_DEFINED
from toksmith._core.trie cimport DANode, DoubleArrayTrie, da_child
from toksmith._core.unknown cimport UnknownRules, emit_path, fill_unknown_rules
from toksmith._core.utf8 cimport one_char_len

from toksmith._core.errors import ModelDataError


# Parity: sentencepiece unigram_model.cc kScoreResetThreshold.
cdef float SCORE_RESET_THRESHOLD = 100000.0


# Both Unigram models use UnigramWork: this static's address is their work_kind.
cdef char UNIGRAM_WORK_KIND = 0


cdef void _free_unigram_work(void* p) noexcept nogil:
    cdef UnigramWork* w = <UnigramWork*>p
    if w == NULL:
        return
    free(w.lattice)
    idbuf_free(&w.path_ids)
    idbuf_free(&w.path_starts)
    free(w)


cdef class Unigram(Model):
    """Pieces in a double-array trie with their scores, and the unknown-piece rules.

    >>> model = UnigramSentencePiece(pieces, scores, types, unk_id, byte_ids, byte_fallback)  # doctest: +SKIP
    """

    def __init__(self, list pieces, list scores, bytes types, int unk_id, list byte_ids,
                 bint byte_fallback):
        """`pieces` are UTF-8 bytes, `types` one token type per piece, `byte_ids` the
        byte piece of each byte value (-1: none)."""
        cdef Py_ssize_t n = len(pieces), i
        cdef int t
        cdef float min_score = 3.4028234663852886e38, score
        cdef list keys = [], values = [], key_scores = []
        if len(scores) != n or len(types) != n:
            raise ValueError("pieces, scores and types must have equal lengths")
        if unk_id < 0:
            raise ModelDataError("a Unigram model needs an unknown piece")
        for i in range(n):
            t = types[i]
            score = scores[i]
            if t == TYPE_NORMAL and score < min_score:
                # The unknown-piece score is min over NORMAL pieces minus 10 (both references).
                min_score = score
            if t == TYPE_NORMAL or t == TYPE_USER_DEFINED or t == TYPE_UNUSED:
                keys.append(pieces[i])
                values.append(i | (VALUE_USER_DEFINED if t == TYPE_USER_DEFINED else 0)
                              | (VALUE_UNUSED if t == TYPE_UNUSED else 0))
                key_scores.append(score)
        try:
            self.trie = DoubleArrayTrie.build(keys, values, key_scores)
        except ModelDataError as e:
            raise ModelDataError(f"{e}: a piece is already defined") from None
        self.trie.build_char3_nodes()
        self.params.nodes = self.trie.nodes
        self.params.char3_nodes = self.trie.char3_nodes
        self.params.unk_score = min_score - <float>10.0
        self.params.unk_id = unk_id
        self.params.max_piece_bytes = max(map(len, keys), default=0)
        # Parity: both references emit one <unk> for a run of unknown characters.
        fill_unknown_rules(&self.unknown, unk_id, unk_id, byte_fallback, True, byte_ids, n)
        self.n_pieces = n
        self.work_kind = &UNIGRAM_WORK_KIND

    cdef void* new_work(self) noexcept nogil:
        cdef UnigramWork* w = <UnigramWork*>calloc(1, sizeof(UnigramWork))
        if w != NULL:
            w.header.free = _free_unigram_work
            w.header.kind = &UNIGRAM_WORK_KIND
        return w

    cdef void trim_work(self, void* work, Py_ssize_t keep_bytes) noexcept nogil:
        cdef UnigramWork* w = <UnigramWork*>work
        if w.lattice_cap > keep_bytes:
            free(w.lattice)
            w.lattice = NULL
            w.lattice_cap = 0
        if w.path_ids.cap * 4 > keep_bytes:
            idbuf_free(&w.path_ids)
            idbuf_free(&w.path_starts)


cdef class UnigramSentencePiece(Unigram):
    """Unigram with sentencepiece's rules (float sums, score rebasing, byte fallback)."""

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        cdef UnigramWork* w = <UnigramWork*>work
        if viterbi_sentencepiece(&self.params, s, n, &w.lattice, &w.lattice_cap,
                                 &w.path_ids, &w.path_starts) < 0:
            return ERR_NO_MEMORY
        return emit_path(&self.unknown, s, n, &w.path_ids, &w.path_starts, ids, spans, base)


cdef class UnigramLlamaCpp(Unigram):
    """Unigram with llama.cpp's UGM rules (double sums, user-defined pieces scored 0,
    no byte fallback)."""

    def __init__(self, list pieces, list scores, bytes types, int unk_id, list byte_ids,
                 bint byte_fallback):
        # Parity: llama.cpp's UGM tokenizer has no byte fallback.
        Unigram.__init__(self, pieces, scores, types, unk_id, byte_ids, False)

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        cdef UnigramWork* w = <UnigramWork*>work
        if viterbi_llama_cpp(&self.params, s, n, &w.lattice, &w.lattice_cap,
                             &w.path_ids, &w.path_starts) < 0:
            return ERR_NO_MEMORY
        return emit_path(&self.unknown, s, n, &w.path_ids, &w.path_starts, ids, spans, base)


cdef struct SpEntry:
    float score
    int32_t start
    int32_t id


cdef struct LlamaEntry:
    double score
    int32_t start
    int32_t id


# The two kernels differ in their reference's arithmetic (float or double sums) and
# rules; what they share is below: the entry update, the character step, the lattice
# buffer and the read-back.
ctypedef fused Entry:
    SpEntry
    LlamaEntry


cdef inline void _relax(Entry* target, double candidate, Py_ssize_t start, int32_t piece_id) noexcept nogil:
    """Keep the candidate path into `target` when it scores strictly higher (a tie keeps
    the earlier candidate, in both references). A float kernel passes a float sum: exact."""
    if candidate > target.score:
        target.score = candidate
        target.start = <int32_t>start
        target.id = piece_id


cdef inline Py_ssize_t _char_len_at(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n) noexcept nogil:
    """Bytes of the character at s[pos] by its lead byte, cut at the end of the text
    (both references step by character this way)."""
    cdef Py_ssize_t mblen = one_char_len(s[pos])
    return mblen if mblen <= n - pos else n - pos


cdef int _reserve_lattice(void** lattice, Py_ssize_t* cap, Py_ssize_t need) noexcept nogil:
    cdef void* p
    if need <= cap[0]:
        return 0
    if need < 4096:
        need = 4096
    p = realloc(lattice[0], need)
    if p == NULL:
        return -1
    lattice[0] = p
    cap[0] = need
    return 0


cdef int _read_back(const int32_t* entry_start, const int32_t* entry_id, Py_ssize_t stride,
                    Py_ssize_t n, IdBuf* ids, IdBuf* starts) noexcept nogil:
    """Follow start links from n back to 0, writing pieces in text order."""
    cdef Py_ssize_t count = 0, pos = n, i
    # At most one piece per byte: reserve once, then write directly.
    if idbuf_reserve(ids, n + 1) < 0 or idbuf_reserve(starts, n + 1) < 0:
        return -1
    while pos > 0:
        count += 1
        pos = entry_start[pos * stride]
    ids.size = count
    starts.size = count
    pos = n
    i = count - 1
    while pos > 0:
        ids.data[i] = entry_id[pos * stride]
        pos = entry_start[pos * stride]
        starts.data[i] = <int32_t>pos
        i -= 1
    return 0


cdef inline float _user_defined_score(Py_ssize_t length) noexcept nogil:
    # Parity: sentencepiece 0.2.3 unigram_model.cc GetUserDefinedScore, which
    # EncodeOptimized calls with the piece length in bytes: 0.1 * (length - 1)
    # computed in double, returned as float.
    return <float>(0.1 * <double>(<int>length - 1))


cdef inline void _rebase_scores(SpEntry* best, Py_ssize_t pos, Py_ssize_t last,
                                float offset) noexcept nogil:
    """Subtract `offset` from the path scores of entries pos..last.

    Unreached entries hold -inf and stay -inf, as sentencepiece skips them.
    """
    cdef Py_ssize_t i
    for i in range(pos, last + 1):
        best[i].score -= offset


cdef int viterbi_sentencepiece(const UnigramParams* p, const unsigned char* s, Py_ssize_t n,
                               void** lattice, Py_ssize_t* lattice_cap,
                               IdBuf* ids, IdBuf* starts) noexcept nogil:
    # Parity: sentencepiece 0.2.3 unigram_model.cc Model::EncodeOptimized.
    # Path scores are float sums (float piece score + float path score), and a
    # tie keeps the earlier candidate. Whenever the path score at the current
    # start leaves [-100000, 100000] (kScoreResetThreshold), every reached
    # entry from the current start to the frontier is rebased by that score,
    # in float: this changes which near-ties win on long inputs, so it is
    # reproduced step for step.
    cdef SpEntry* best
    cdef const DANode* nodes = p.nodes
    cdef const unsigned char* cursor
    cdef const unsigned char* end = s + n
    cdef Py_ssize_t pos, i, mblen, length, frontier_span
    cdef int32_t node, child, value
    cdef float till_here, unk_candidate
    cdef float score, candidate
    cdef bint has_single_node, stepped
    if _reserve_lattice(lattice, lattice_cap, (n + 1) * sizeof(SpEntry)) < 0:
        return -1
    best = <SpEntry*>lattice[0]
    # -inf marks "not reached": any real candidate beats it, as the
    # reference's starts_at == -1 test makes the first candidate win.
    for i in range(1, n + 1):
        best[i].score = -INFINITY
    best[0].score = 0
    # Entries past pos reached so far end at most this far beyond pos (the
    # reference's max_frontier); later ones are unreached and stay -inf.
    frontier_span = p.max_piece_bytes if p.max_piece_bytes > 4 else 4
    pos = 0
    while pos < n:
        till_here = best[pos].score
        if till_here < -SCORE_RESET_THRESHOLD or till_here > SCORE_RESET_THRESHOLD:
            _rebase_scores(best, pos, min(n, pos + frontier_span), till_here)
            till_here = 0.0
        has_single_node = False
        mblen = _char_len_at(s, pos, n)
        node = 0
        cursor = s + pos
        stepped = False
        if mblen == 3 and (cursor[1] & 0xC0) == 0x80 and (cursor[2] & 0xC0) == 0x80:
            # One table lookup for the three bytes of a BMP character.
            node = p.char3_nodes[((cursor[0] & 0x0F) << 12) | ((cursor[1] & 0x3F) << 6)
                                 | (cursor[2] & 0x3F)]
            cursor += 3
            stepped = True
        while node >= 0:
            if stepped:
                stepped = False
            else:
                if cursor >= end:
                    break
                child = nodes[node].base + cursor[0]
                cursor += 1
                if nodes[child].check != node:
                    break
                node = child
            value = nodes[node].value
            # one test for "no piece ends here" (-1) and "UNUSED piece"
            if <uint32_t>value >= <uint32_t>VALUE_UNUSED:
                continue
            length = cursor - (s + pos)
            if value & VALUE_USER_DEFINED:
                score = _user_defined_score(length)
            else:
                score = nodes[node].score
            candidate = score + till_here
            _relax(&best[pos + length], candidate, pos, value & VALUE_ID_MASK)
            if length == mblen:
                has_single_node = True
        if not has_single_node:
            unk_candidate = p.unk_score + till_here
            _relax(&best[pos + mblen], unk_candidate, pos, p.unk_id)
        pos += mblen
    return _read_back(&best[0].start, &best[0].id, sizeof(SpEntry) // sizeof(int32_t), n, ids, starts)


cdef int viterbi_llama_cpp(const UnigramParams* p, const unsigned char* s, Py_ssize_t n,
                           void** lattice, Py_ssize_t* lattice_cap,
                           IdBuf* ids, IdBuf* starts) noexcept nogil:
    # Parity: llama.cpp llm_tokenizer_ugm_session::tokenize: double sums,
    # user-defined pieces scored 0, UNUSED pieces not skipped.
    cdef LlamaEntry* best
    cdef const DANode* nodes = p.nodes
    cdef Py_ssize_t pos, k, i, mblen
    cdef int32_t node, value
    cdef double till_here, candidate
    cdef bint has_single_node
    if _reserve_lattice(lattice, lattice_cap, (n + 1) * sizeof(LlamaEntry)) < 0:
        return -1
    best = <LlamaEntry*>lattice[0]
    for i in range(n + 1):
        best[i].score = -DBL_MAX
        best[i].start = 0
        best[i].id = p.unk_id
    best[0].score = 0
    pos = 0
    while pos < n:
        till_here = best[pos].score
        has_single_node = False
        mblen = _char_len_at(s, pos, n)
        node = 0
        k = pos
        while k < n:
            node = da_child(nodes, node, s[k])
            k += 1
            if node < 0:
                break
            value = nodes[node].value
            if value < 0:
                continue
            if k - pos == mblen:
                has_single_node = True
            if value & VALUE_USER_DEFINED:
                candidate = till_here
            else:
                candidate = till_here + <double>nodes[node].score
            _relax(&best[k], candidate, pos, value & VALUE_ID_MASK)
        if not has_single_node:
            _relax(&best[pos + mblen], till_here + <double>p.unk_score, pos, p.unk_id)
        pos += mblen
    return _read_back(&best[0].start, &best[0].id, sizeof(LlamaEntry) // sizeof(int32_t), n, ids, starts)
