"""The WordPiece and WordLevel models of HF tokenizers, natively.

WordPiece (models/wordpiece/mod.rs): greedy longest-match-first over each pre-token; the
first piece is looked up as it is, the others with the continuing_subword_prefix ("##")
in front; when any position has no match, or the pre-token has more than
max_input_chars_per_word characters, the whole pre-token is the unk token. Here the
vocabulary is two double-array tries, one of every token and one of the tokens that
start with the prefix (the prefix cut off): one walk per piece finds the longest match,
in time linear in the piece, with nothing allocated per call.

WordLevel (models/wordlevel/mod.rs): the pre-token's id, or the unk token's.

    >>> m = WordPiece([b"un", b"##aff", b"##able", b"[UNK]"], [0, 1, 2, 3], unk_id=3)
    >>> m.encode_text(b"unaffable"), m.encode_text(b"unknown")
    ([0, 1, 2], [3])
"""
from libc.stdint cimport int32_t
from libc.stdlib cimport free, malloc

from toksmith._core.buffers cimport IdBuf, idbuf_free, idbuf_push, idbuf_reserve
from toksmith._core.errors cimport ERR_MISSING_UNK, ERR_NO_MEMORY
from toksmith._core.model cimport Model, WorkHeader
from toksmith._core.trie cimport DANode, DoubleArrayTrie, da_child

from toksmith._core.errors import raise_for_status

# Both models need no working memory beyond a header: this static's address is their work_kind.
cdef int NO_WORK_KIND = 0


cdef void _free_header(void* work) noexcept nogil:
    free(work)


cdef void* _new_header() noexcept nogil:
    cdef WorkHeader* w = <WorkHeader*>malloc(sizeof(WorkHeader))
    if w != NULL:
        w.free = _free_header
        w.kind = &NO_WORK_KIND
    return w


cdef inline Py_ssize_t _longest(const DANode* nodes, const unsigned char* s, Py_ssize_t n,
                                int32_t* value) noexcept nogil:
    """Length of the longest key of the trie that prefixes s[:n] (0: none); its value in *value."""
    cdef int32_t node = 0
    cdef Py_ssize_t i, best = 0
    if nodes == NULL:
        return 0
    for i in range(n):
        node = da_child(nodes, node, s[i])
        if node < 0:
            break
        if nodes[node].value >= 0:
            best = i + 1
            value[0] = nodes[node].value
    return best


cdef inline int _push_id(IdBuf* ids, IdBuf* spans, int32_t token, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    if idbuf_push(ids, token) < 0:
        return ERR_NO_MEMORY
    if spans != NULL and (idbuf_push(spans, <int32_t>start) < 0 or idbuf_push(spans, <int32_t>end) < 0):
        return ERR_NO_MEMORY
    return 0


cdef class VocabModel(Model):
    """Base of WordPiece and WordLevel: a vocabulary trie and an unk id."""

    cdef DoubleArrayTrie words        # every token
    cdef readonly int32_t unk_id      # -1: the unk token is not in the vocabulary

    cdef void* new_work(self) noexcept nogil:
        return _new_header()

    cdef int _unknown(self, Py_ssize_t n, IdBuf* ids, IdBuf* spans, Py_ssize_t base) noexcept nogil:
        """The whole pre-token is the unk token. Parity: Error::MissingUnkToken when the
        vocabulary has no unk token."""
        if self.unk_id < 0:
            return ERR_MISSING_UNK
        return _push_id(ids, spans, self.unk_id, base, base + n)

    @property
    def memory_bytes(self):
        """Bytes of the vocabulary tries."""
        return self.words.memory_bytes

    def encode_text(self, bytes text):
        """The ids of one pre-token (tests and debugging; the engine calls encode)."""
        cdef IdBuf ids
        cdef int rc
        cdef void* work = _new_header()
        ids.data = NULL
        ids.size = 0
        ids.cap = 0
        try:
            rc = self.encode(<const unsigned char*>(<char*>text), len(text), work, &ids, NULL, 0)
            raise_for_status(rc)
            return [ids.data[i] for i in range(ids.size)]
        finally:
            idbuf_free(&ids)
            free(work)


cdef tuple _checked_vocab(list keys, list ids):
    """(keys, ids) without the empty key (it can never match a piece of text)."""
    if len(keys) != len(ids):
        raise ValueError("keys and ids must have the same length")
    if not keys:
        raise ValueError("the vocabulary is empty")
    if any(len(k) == 0 for k in keys):
        kept = [(k, i) for k, i in zip(keys, ids) if len(k)]
        keys, ids = [k for k, _ in kept], [i for _, i in kept]
    return keys, ids


cdef class WordPiece(VocabModel):
    """WordPiece over `keys` (UTF-8 bytes) with `ids`; `unk_id` -1 when the vocabulary has
    no unk token (tokenizers then fails on a text that needs it, and so does this)."""

    cdef DoubleArrayTrie continuations   # tokens starting with the prefix, the prefix cut off
    cdef readonly bytes prefix
    cdef readonly Py_ssize_t max_input_chars_per_word

    def __cinit__(self, list keys, list ids, *, int unk_id=-1, bytes prefix=b"##",
                  Py_ssize_t max_input_chars_per_word=100):
        cdef Py_ssize_t p = len(prefix)
        self.n_pieces = max(ids) + 1 if ids else 0
        keys, ids = _checked_vocab(keys, ids)
        self.words = DoubleArrayTrie.build(keys, ids)
        cont = [(k[p:], i) for k, i in zip(keys, ids) if k.startswith(prefix) and len(k) > p]
        self.continuations = DoubleArrayTrie.build([k for k, _ in cont], [i for _, i in cont]) if cont else None
        self.prefix = prefix
        self.unk_id = unk_id
        self.max_input_chars_per_word = max_input_chars_per_word
        self.work_kind = &NO_WORK_KIND

    @property
    def memory_bytes(self):
        return self.words.memory_bytes + (self.continuations.memory_bytes if self.continuations is not None else 0)

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        # Parity: tokenizers models/wordpiece/mod.rs WordPiece::tokenize
        cdef Py_ssize_t start = 0, length, chars, i, ids_before, spans_before
        cdef const DANode* trie = self.words.nodes
        cdef const DANode* rest = self.continuations.nodes if self.continuations is not None else NULL
        cdef int32_t token = -1
        if n == 0:
            return 0
        if n > self.max_input_chars_per_word:
            # characters, not bytes (a byte count is never smaller)
            chars = 0
            for i in range(n):
                chars += (s[i] & 0xC0) != 0x80
            if chars > self.max_input_chars_per_word:
                return self._unknown(n, ids, spans, base)
        ids_before = ids.size
        spans_before = spans.size if spans != NULL else 0
        while start < n:
            length = _longest(trie, s + start, n - start, &token)
            if length == 0:
                # is_bad: the whole pre-token becomes the unk token
                ids.size = ids_before
                if spans != NULL:
                    spans.size = spans_before
                return self._unknown(n, ids, spans, base)
            if _push_id(ids, spans, token, base + start, base + start + length) < 0:
                return ERR_NO_MEMORY
            start += length
            trie = rest
        return 0


cdef class WordLevel(VocabModel):
    """WordLevel: each pre-token is one token, or the unk token (`unk_id` -1: none)."""

    def __cinit__(self, list keys, list ids, *, int unk_id=-1):
        self.n_pieces = max(ids) + 1 if ids else 0
        keys, ids = _checked_vocab(keys, ids)
        self.words = DoubleArrayTrie.build(keys, ids)
        self.unk_id = unk_id
        self.work_kind = &NO_WORK_KIND

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        # Parity: tokenizers models/wordlevel/mod.rs WordLevel::tokenize
        cdef int32_t token
        if n == 0:
            return 0
        token = self.words.exact(s, n)
        if token < 0:
            return self._unknown(n, ids, spans, base)
        return _push_id(ids, spans, token, base, base + n)
