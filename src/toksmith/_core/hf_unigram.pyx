"""HF tokenizers' Unigram model: Viterbi over piece scores by tokenizers' own rules, which
are not sentencepiece's (unigram.pyx has those).

Parity: tokenizers models/unigram/model.rs Unigram::encode_optimized and Model::tokenize:
* every piece of the vocabulary is a candidate (special and added ones too), scores are
  f64 sums, an unknown character (no piece of exactly its length starts there) costs
  min(every score) - 10, and a candidate replaces the best path into a position only
  when strictly better (the first candidate into a position always does);
* consecutive nodes whose id is unk_id are fused into one token, whose id is looked up
  by its text: the piece of that text if there is one, else (byte_fallback) the
  <0xXX> pieces of its bytes when all exist, else unk_id;
* a character with no piece when there is no unk_id is an error, as in tokenizers.

    >>> model = HfUnigram([b"<unk>", b"\\xe2\\x96\\x81a", b"b"], [0.0, -1.0, -2.0], 0, False)  # doctest: +SKIP
"""
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from toksmith._core.buffers cimport IdBuf, idbuf_free, idbuf_push, idbuf_reserve
from toksmith._core.tables cimport mix64
from toksmith._core.errors cimport ERR_NO_MEMORY, ERR_NO_UNK_ID
from toksmith._core.model cimport Model, WorkHeader
from toksmith._core.trie cimport DANode, DoubleArrayTrie
from toksmith._core.utf8 cimport one_char_len

from toksmith._core.errors import ModelDataError


# Parity: model.rs K_UNK_PENALTY.
cdef double UNK_PENALTY = 10.0

cdef char HF_UNIGRAM_WORK_KIND = 0

# Per-thread word cache: 2-way sets of two 128-byte entries (2 MB), for pre-tokens of at
# most WORD_TEXT bytes that give at most WORD_IDS ids (99% of the pre-tokens of Russian or
# English prose, 96% of Python code). An entry holds its word zero-padded in 64-bit lanes
# and the serial of the model that filled it, so a work serves several models without
# being cleared.
cdef enum:
    WORD_TEXT = 56
    WORD_LANES = 7
    WORD_IDS = 15        # (a 128-byte entry)
cdef Py_ssize_t CACHE_SETS = 1 << 13
cdef uint64_t[WORD_LANES] LANE_MIX = [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                                      0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5, 0xFF51AFD7ED558CCD,
                                      0xC4CEB9FE1A85EC53]


# 128 bytes laid out so that a hit on a word of up to 32 bytes and 5 ids reads only the
# first 64 (one cache line): lanes 0-3 and ids 0-4 there, the rest after.
cdef enum:
    HEAD_LANES = 4
    HEAD_IDS = 5

cdef struct WordEntry:
    uint64_t serial
    unsigned char text_len      # 0: an empty entry
    unsigned char n_ids
    unsigned char older         # in the set's first entry: which of the two goes next
    unsigned char _pad
    int32_t ids_head[HEAD_IDS]
    uint64_t text_head[HEAD_LANES]
    uint64_t text_tail[WORD_LANES - HEAD_LANES]
    int32_t ids_tail[WORD_IDS - HEAD_IDS]


# The trie's nodes packed in 8 bytes (DANode is 16): half the cache misses of the walk.
# base has HAS_VALUE set when a piece ends at the node (see pieces_at).
cdef struct PackedNode:
    int32_t base
    int32_t check

# The piece ending at a node: its score and id side by side (one cache line to read).
cdef struct NodePiece:
    double score
    int32_t id

cdef int32_t HAS_VALUE = <int32_t>0x80000000
cdef int32_t BASE_MASK = 0x7FFFFFFF


cdef struct Entry:
    double score
    int32_t start      # -1: no path reaches this position yet
    int32_t id


cdef struct HfUnigramWork:
    WorkHeader header
    Entry* lattice
    Py_ssize_t lattice_cap     # entries
    IdBuf path_ids
    IdBuf path_starts
    WordEntry* cache            # 2 * CACHE_SETS entries, made on first use


cdef void _free_work(void* p) noexcept nogil:
    cdef HfUnigramWork* w = <HfUnigramWork*>p
    if w == NULL:
        return
    free(w.cache)
    free(w.lattice)
    idbuf_free(&w.path_ids)
    idbuf_free(&w.path_starts)
    free(w)


cdef class HfUnigram(Model):
    """The pieces in a double-array trie, their f64 scores by id, the unknown-piece rules."""

    cdef DoubleArrayTrie trie
    cdef PackedNode* nodes
    cdef NodePiece* pieces_at              # the piece ending at each node (id -1: none)
    cdef const int32_t* char3_nodes
    cdef int32_t char2_nodes[0x800]        # node reached by the 2 bytes of U+0080..U+07FF (-1: none)
    cdef double* scores
    cdef double unk_score
    cdef readonly int unk_id               # -1: none
    cdef readonly bint byte_fallback
    cdef int32_t byte_ids[256]             # id of "<0xXX>" for each byte, -1 when missing

    def __cinit__(self, *args, **kwargs):
        self.scores = NULL
        self.nodes = NULL
        self.pieces_at = NULL

    def __dealloc__(self):
        free(self.scores)
        free(self.nodes)
        free(self.pieces_at)

    def __init__(self, list pieces, list scores, int unk_id, bint byte_fallback):
        """`pieces`: UTF-8 bytes by id; `scores`: their log-probabilities; `unk_id`: -1 for none."""
        cdef Py_ssize_t n = len(pieces), i
        cdef double min_score = float("inf")
        cdef list keys = [], values = []
        cdef bytes byte_piece
        if len(scores) != n:
            raise ValueError("pieces and scores must have equal lengths")
        if n == 0:
            raise ModelDataError("the Unigram vocabulary is empty")
        if not -1 <= unk_id < n:
            raise ModelDataError(f"unk_id {unk_id} is outside the vocabulary of {n} pieces")
        self.scores = <double*>malloc(n * sizeof(double))
        if self.scores == NULL:
            raise MemoryError()
        for i in range(n):
            self.scores[i] = scores[i]
            # Parity: Unigram::from takes the minimum over every piece.
            if self.scores[i] < min_score:
                min_score = self.scores[i]
            if pieces[i]:
                keys.append(pieces[i])
                values.append(i)
        try:
            self.trie = DoubleArrayTrie.build(keys, values)
        except ModelDataError as e:
            raise ModelDataError(f"{e}: a piece is already defined") from None
        self.trie.build_char3_nodes()
        self.char3_nodes = self.trie.char3_nodes
        self._pack_nodes()
        for i in range(0x800):
            self.char2_nodes[i] = -1
            if i >= 0x80:
                byte_piece = bytes([0xC0 | (i >> 6), 0x80 | (i & 0x3F)])
                self.char2_nodes[i] = self._walk(byte_piece, 2)
        self.unk_score = min_score - UNK_PENALTY
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        for i in range(256):
            byte_piece = b"<0x%02X>" % i
            self.byte_ids[i] = self.trie.exact(byte_piece, 6)
        self.n_pieces = n
        self.work_kind = &HF_UNIGRAM_WORK_KIND

    cdef _pack_nodes(self):
        cdef Py_ssize_t i, count = self.trie.capacity
        cdef const DANode* src = self.trie.nodes
        self.nodes = <PackedNode*>malloc(max(count, 1) * sizeof(PackedNode))
        self.pieces_at = <NodePiece*>malloc(max(count, 1) * sizeof(NodePiece))
        if self.nodes == NULL or self.pieces_at == NULL:
            raise MemoryError()
        for i in range(count):
            if src[i].base < 0:
                raise ModelDataError("trie node base out of range")
            self.nodes[i].base = src[i].base | (HAS_VALUE if src[i].value >= 0 else 0)
            self.nodes[i].check = src[i].check
            self.pieces_at[i].id = src[i].value
            self.pieces_at[i].score = self.scores[src[i].value] if src[i].value >= 0 else 0.0

    cdef int32_t _walk(self, const unsigned char* s, Py_ssize_t n) noexcept nogil:
        """The node reached from the root by s[:n], or -1."""
        cdef int32_t node = 0, child
        cdef Py_ssize_t i
        for i in range(n):
            child = (self.nodes[node].base & BASE_MASK) + s[i]
            if self.nodes[child].check != node:
                return -1
            node = child
        return node

    cdef void* new_work(self) noexcept nogil:
        cdef HfUnigramWork* w = <HfUnigramWork*>calloc(1, sizeof(HfUnigramWork))
        if w != NULL:
            w.header.free = _free_work
            w.header.kind = &HF_UNIGRAM_WORK_KIND
        return w

    cdef void trim_work(self, void* work, Py_ssize_t keep_bytes) noexcept nogil:
        cdef HfUnigramWork* w = <HfUnigramWork*>work
        if w.lattice_cap * <Py_ssize_t>sizeof(Entry) > keep_bytes:
            free(w.lattice)
            w.lattice = NULL
            w.lattice_cap = 0
        if w.path_ids.cap * 4 > keep_bytes:
            idbuf_free(&w.path_ids)
            idbuf_free(&w.path_starts)

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        cdef HfUnigramWork* w = <HfUnigramWork*>work
        cdef WordEntry* e = NULL
        cdef WordEntry* set_
        cdef uint64_t lanes[WORD_LANES]
        cdef uint64_t h
        cdef Py_ssize_t k, first = ids.size, count, n_lanes
        cdef int way, rc
        cdef bint same
        if n == 0:
            return 0
        if n <= WORD_TEXT and spans == NULL:
            if w.cache == NULL:
                w.cache = <WordEntry*>calloc(2 * CACHE_SETS, sizeof(WordEntry))
            if w.cache != NULL:
                n_lanes = _lanes(s, n, lanes)
                h = self.serial * <uint64_t>0xD6E8FEB86659FD93 + <uint64_t>n
                for k in range(n_lanes):
                    h += lanes[k] * LANE_MIX[k]
                set_ = &w.cache[2 * <Py_ssize_t>(mix64(h) & <uint64_t>(CACHE_SETS - 1))]
                for way in range(2):
                    e = &set_[way]
                    if e.text_len != n or e.serial != self.serial:
                        continue
                    same = True
                    for k in range(n_lanes):
                        if (e.text_head[k] if k < HEAD_LANES else e.text_tail[k - HEAD_LANES]) != lanes[k]:
                            same = False
                            break
                    if same:
                        set_[0].older = 1 - way
                        if idbuf_reserve(ids, e.n_ids) < 0:
                            return ERR_NO_MEMORY
                        for k in range(e.n_ids):
                            ids.data[ids.size + k] = e.ids_head[k] if k < HEAD_IDS else e.ids_tail[k - HEAD_IDS]
                        ids.size += e.n_ids
                        return 0
                way = set_[0].older
                e = &set_[way]
        rc = self._viterbi(s, n, w)
        if rc < 0:
            return rc
        rc = self._emit(s, n, &w.path_ids, &w.path_starts, ids, spans, base)
        count = ids.size - first
        if rc == 0 and e != NULL and count <= WORD_IDS:
            # the word replaces the older entry of its set
            for k in range(HEAD_LANES):
                e.text_head[k] = lanes[k]
            for k in range(HEAD_LANES, WORD_LANES):
                e.text_tail[k - HEAD_LANES] = lanes[k]
            e.serial = self.serial
            e.text_len = <unsigned char>n
            e.n_ids = <unsigned char>count
            for k in range(count):
                if k < HEAD_IDS:
                    e.ids_head[k] = ids.data[first + k]
                else:
                    e.ids_tail[k - HEAD_IDS] = ids.data[first + k]
            set_[0].older = 1 - way
        return rc

    cdef int _viterbi(self, const unsigned char* s, Py_ssize_t n, HfUnigramWork* w) noexcept nogil:
        # Parity: model.rs Unigram::encode_optimized (its trie yields the pieces starting at
        # a position shortest first; a later candidate wins only when strictly better).
        cdef Entry* best
        cdef Entry* e
        cdef const PackedNode* nodes = self.nodes
        cdef const NodePiece* pieces_at = self.pieces_at
        cdef const unsigned char* cursor
        cdef const unsigned char* end = s + n
        cdef Py_ssize_t pos, i, mblen, length
        cdef int32_t node, child, base
        cdef double till_here, candidate
        cdef bint has_single_node
        if n + 1 > w.lattice_cap:
            free(w.lattice)
            w.lattice_cap = n + 1 if n + 1 > 256 else 256
            w.lattice = <Entry*>malloc(w.lattice_cap * sizeof(Entry))
            if w.lattice == NULL:
                w.lattice_cap = 0
                return ERR_NO_MEMORY
        best = w.lattice
        for i in range(1, n + 1):
            best[i].start = -1
        best[0].score = 0.0
        best[0].start = 0
        best[0].id = -1
        pos = 0
        while pos < n:
            till_here = best[pos].score
            has_single_node = False
            mblen = one_char_len(s[pos])
            if mblen > n - pos:
                mblen = n - pos
            cursor = s + pos
            # The node after the position's first character.
            if mblen == 2 and (cursor[1] & 0xC0) == 0x80:
                # one table lookup for the two bytes of a character (Cyrillic, Greek, ...)
                node = self.char2_nodes[((cursor[0] & 0x1F) << 6) | (cursor[1] & 0x3F)]
                cursor += 2
            elif mblen == 3 and (cursor[1] & 0xC0) == 0x80 and (cursor[2] & 0xC0) == 0x80:
                # one table lookup for the three bytes of a BMP character
                node = self.char3_nodes[((cursor[0] & 0x0F) << 12) | ((cursor[1] & 0x3F) << 6)
                                        | (cursor[2] & 0x3F)]
                cursor += 3
            else:
                node = 0
                while cursor < s + pos + mblen:
                    child = (nodes[node].base & BASE_MASK) + cursor[0]
                    cursor += 1
                    if nodes[child].check != node:
                        node = -1
                        break
                    node = child
                    if nodes[node].base < 0 and cursor < s + pos + mblen:
                        # a piece ending inside a character (malformed text only)
                        self._relax(best, pos, cursor - (s + pos), &pieces_at[node], till_here)
            if node >= 0:
                # Then every piece starting here, shortest first (their trie's order).
                base = nodes[node].base
                if base < 0:
                    self._relax(best, pos, mblen, &pieces_at[node], till_here)
                    has_single_node = True
                while cursor < end:
                    child = (base & BASE_MASK) + cursor[0]
                    cursor += 1
                    if nodes[child].check != node:
                        break
                    node = child
                    base = nodes[node].base
                    if base < 0:
                        self._relax(best, pos, cursor - (s + pos), &pieces_at[node], till_here)
            if not has_single_node:
                if self.unk_id < 0:
                    return ERR_NO_UNK_ID
                candidate = self.unk_score + till_here
                e = &best[pos + mblen]
                if e.start < 0 or candidate > e.score:
                    e.score = candidate
                    e.start = <int32_t>pos
                    e.id = self.unk_id
            pos += mblen
        return _read_back(best, n, &w.path_ids, &w.path_starts)

    cdef inline void _relax(self, Entry* best, Py_ssize_t pos, Py_ssize_t length, const NodePiece* piece,
                            double till_here) noexcept nogil:
        """The path through piece s[pos:pos + length] into best[pos + length], when it is the
        first there or strictly better (model.rs encode_optimized)."""
        cdef double candidate = piece.score + till_here
        cdef Entry* e = &best[pos + length]
        if e.start < 0 or candidate > e.score:
            e.score = candidate
            e.start = <int32_t>pos
            e.id = piece.id

    cdef int _emit(self, const unsigned char* s, Py_ssize_t n, const IdBuf* path_ids,
                   const IdBuf* path_starts, IdBuf* out, IdBuf* spans, Py_ssize_t base) noexcept nogil:
        # Parity: encode_optimized's fuse_unk read-back, then Model::tokenize's lookup of
        # each token's text.
        cdef Py_ssize_t i = 0, j, k, start, end, count = path_ids.size
        cdef int32_t pid, unk = self.unk_id
        cdef bint bytes_ok
        if idbuf_reserve(out, n + count) < 0:
            return ERR_NO_MEMORY
        while i < count:
            pid = path_ids.data[i]
            start = path_starts.data[i]
            j = i
            if pid == unk:
                while j + 1 < count and path_ids.data[j + 1] == unk:
                    j += 1
            end = path_starts.data[j + 1] if j + 1 < count else n
            i = j + 1
            if pid == unk:
                pid = self.trie.exact(s + start, end - start)
                if pid < 0 and self.byte_fallback:
                    bytes_ok = True
                    for k in range(start, end):
                        if self.byte_ids[s[k]] < 0:
                            bytes_ok = False
                            break
                    if bytes_ok:
                        for k in range(start, end):
                            out.data[out.size] = self.byte_ids[s[k]]
                            out.size += 1
                            if spans != NULL and (idbuf_push(spans, <int32_t>(base + k)) < 0
                                                  or idbuf_push(spans, <int32_t>(base + k + 1)) < 0):
                                return ERR_NO_MEMORY
                        continue
                if pid < 0:
                    pid = unk
            out.data[out.size] = pid
            out.size += 1
            if spans != NULL and (idbuf_push(spans, <int32_t>(base + start)) < 0
                                  or idbuf_push(spans, <int32_t>(base + end)) < 0):
                return ERR_NO_MEMORY
        return 0


cdef inline Py_ssize_t _lanes(const unsigned char* s, Py_ssize_t n, uint64_t* lanes) noexcept nogil:
    """s[:n] (n <= WORD_TEXT) zero-padded into WORD_LANES 64-bit lanes; returns how many
    lanes the text reaches."""
    cdef Py_ssize_t i = 0, k
    cdef uint64_t v
    for k in range(WORD_LANES):
        lanes[k] = 0
    while i + 8 <= n:
        memcpy(&lanes[i >> 3], s + i, 8)
        i += 8
    if i < n:
        v = 0
        for k in range(n - 1, i - 1, -1):
            v = (v << 8) | s[k]
        lanes[i >> 3] = v
    return (n + 7) >> 3


cdef int _read_back(const Entry* best, Py_ssize_t n, IdBuf* ids, IdBuf* starts) noexcept nogil:
    """Follow start links from n back to 0, writing the path's pieces in text order."""
    cdef Py_ssize_t count = 0, pos = n, i
    ids.size = 0
    starts.size = 0
    if idbuf_reserve(ids, n + 1) < 0 or idbuf_reserve(starts, n + 1) < 0:
        return ERR_NO_MEMORY
    while pos > 0:
        count += 1
        pos = best[pos].start
    ids.size = count
    starts.size = count
    pos = n
    i = count - 1
    while pos > 0:
        ids.data[i] = best[pos].id
        pos = best[pos].start
        starts.data[i] = <int32_t>pos
        i -= 1
    return 0
