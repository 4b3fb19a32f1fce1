"""The WordPiece and WordLevel models of HF tokenizers, natively.

WordPiece (models/wordpiece/mod.rs): greedy longest-match-first over each pre-token; the
first piece is looked up as it is, the others with the continuing_subword_prefix ("##")
in front; when any position has no match, or the pre-token has more than
max_input_chars_per_word characters, the whole pre-token is the unk token. Here the
vocabulary is two double-array tries, one of every token and one of the tokens that
start with the prefix (the prefix cut off): one walk per piece finds the longest match,
in time linear in the piece, with nothing allocated per call. The tries are walked in a
compact copy (8 bytes a cell, the values apart): the walk is a chain of dependent loads,
so the fewer cache lines it touches the faster it goes.

WordLevel (models/wordlevel/mod.rs): the pre-token's id, or the unk token's.

    >>> m = WordPiece([b"un", b"##aff", b"##able", b"[UNK]"], [0, 1, 2, 3], unk_id=3)
    >>> m.encode_text(b"unaffable"), m.encode_text(b"unknown")
    ([0, 1, 2], [3])
"""
from libc.stdint cimport int32_t, uint32_t
from libc.stdlib cimport free, malloc

from toksmith._core.buffers cimport IdBuf, idbuf_push, idbuf_reserve
from toksmith._core.errors cimport ERR_UNK_NOT_IN_VOCAB, ERR_NO_MEMORY
from toksmith._core.model cimport Model, new_header_work
from toksmith._core.trie cimport DoubleArrayTrie

from toksmith._core.errors import ModelDataError

# Both models need no working memory beyond a header: this static's address is their work_kind.
cdef int NO_WORK_KIND = 0


cdef struct Cell:
    uint32_t base      # children at (base & CELL_BASE) + byte; bit 31: a key ends here
    int32_t check      # the parent cell (-1 free, -2 root)


cdef enum:
    CELL_KEY_ENDS = 0x80000000
    CELL_BASE = 0x7FFFFFFF


cdef class CompactTrie:
    """A DoubleArrayTrie's cells as (base, check) pairs, with its values apart."""

    cdef Cell* cells
    cdef int32_t* values
    cdef readonly Py_ssize_t n_cells

    def __cinit__(self, DoubleArrayTrie trie):
        cdef Py_ssize_t i, need = 0
        # a walk reads used cells and the 256 cells from each used cell's base: only those
        # are kept, not the trie's spare capacity
        for i in range(trie.capacity):
            if trie.nodes[i].check != -1:
                need = max(need, i + 1, trie.nodes[i].base + 256)
        self.n_cells = min(need, trie.capacity)
        self.cells = <Cell*>malloc(max(self.n_cells, 1) * sizeof(Cell))
        self.values = <int32_t*>malloc(max(self.n_cells, 1) * sizeof(int32_t))
        if self.cells == NULL or self.values == NULL:
            raise MemoryError()
        for i in range(self.n_cells):
            self.cells[i].base = <uint32_t>trie.nodes[i].base | (CELL_KEY_ENDS if trie.nodes[i].value >= 0 else 0)
            self.cells[i].check = trie.nodes[i].check
            self.values[i] = trie.nodes[i].value

    def __dealloc__(self):
        free(self.cells)
        free(self.values)

    @property
    def memory_bytes(self):
        return self.n_cells * (sizeof(Cell) + sizeof(int32_t))

    cdef int32_t walk(self, bytes key):
        """The cell `key` leads to from the root (the root for b""), -1 when no key starts with it."""
        cdef int32_t node = 0, t
        cdef unsigned char c
        for c in key:
            t = <int32_t>(self.cells[node].base & CELL_BASE) + c
            if t >= self.n_cells or self.cells[t].check != node:
                return -1
            node = t
        return node


cdef inline Py_ssize_t _longest(const Cell* cells, const int32_t* values, const unsigned char* s, Py_ssize_t n,
                                int32_t* value) noexcept nogil:
    """Length of the longest key of the trie (cells NULL: empty) that prefixes s[:n] (0: none);
    its value in *value."""
    if cells == NULL:
        return 0
    return _longest_from(cells, values, 0, s, n, value)


cdef inline Py_ssize_t _longest_from(const Cell* cells, const int32_t* values, int32_t node,
                                     const unsigned char* s, Py_ssize_t n, int32_t* value) noexcept nogil:
    """`_longest` from the cell `node` instead of the root: the longest key that is the bytes
    leading to `node` and then a non-empty prefix of s[:n] (0: none; the length counts s only)."""
    cdef int32_t t, best_node = 0
    cdef Py_ssize_t i, best = 0
    for i in range(n):
        t = <int32_t>(cells[node].base & CELL_BASE) + s[i]
        if cells[t].check != node:
            break
        node = t
        if cells[t].base & CELL_KEY_ENDS:
            best = i + 1
            best_node = t
    if best:
        value[0] = values[best_node]
    return best


cdef inline int32_t _exact(const Cell* cells, const int32_t* values, const unsigned char* s,
                           Py_ssize_t n) noexcept nogil:
    """The value of key s[:n], or -1."""
    cdef int32_t node = 0, t
    cdef Py_ssize_t i
    for i in range(n):
        t = <int32_t>(cells[node].base & CELL_BASE) + s[i]
        if cells[t].check != node:
            return -1
        node = t
    return values[node] if cells[node].base & CELL_KEY_ENDS else -1


cdef inline int _push_id(IdBuf* ids, IdBuf* spans, int32_t token, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    if idbuf_push(ids, token) < 0:
        return ERR_NO_MEMORY
    if spans != NULL and (idbuf_push(spans, <int32_t>start) < 0 or idbuf_push(spans, <int32_t>end) < 0):
        return ERR_NO_MEMORY
    return 0


cdef class VocabModel(Model):
    """Base of WordPiece and WordLevel: a vocabulary trie and an unk id."""

    cdef CompactTrie words            # every token
    cdef readonly int32_t unk_id      # -1: the unk token is not in the vocabulary

    cdef void* new_work(self) noexcept nogil:
        return new_header_work(&NO_WORK_KIND)

    cdef int _unknown(self, Py_ssize_t n, IdBuf* ids, IdBuf* spans, Py_ssize_t base) noexcept nogil:
        """The whole pre-token is the unk token. Parity: Error::MissingUnkToken when the
        vocabulary has no unk token."""
        if self.unk_id < 0:
            return ERR_UNK_NOT_IN_VOCAB
        return _push_id(ids, spans, self.unk_id, base, base + n)

    @property
    def memory_bytes(self):
        """Bytes of the vocabulary tries."""
        return self.words.memory_bytes


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
    no unk token (tokenizers then fails on a text that needs it, and so does this).

    `word_prefix`: bytes the first piece is looked up with in front, as if the pre-token
    began with them (llama.cpp's WPM puts U+2581 before each word); a key that is that
    prefix alone is a first piece of its own, after which the word's own bytes are looked
    up as continuations. No key may be a shorter part of it (such a key would end inside
    it: ModelDataError).
    """

    cdef CompactTrie continuations       # tokens starting with the prefix, the prefix cut off (or None)
    cdef const Cell* rest_cells          # its cells (NULL for None) and values
    cdef const int32_t* rest_values
    cdef readonly bytes prefix
    cdef readonly Py_ssize_t max_input_chars_per_word
    cdef readonly bytes word_prefix
    cdef int32_t word_prefix_cell        # the cell word_prefix leads to (-1: no key starts with it)
    cdef int32_t word_prefix_token       # the id of the key word_prefix itself, or -1
    cdef bint has_word_prefix

    def __cinit__(self, list keys, list ids, *, int unk_id=-1, bytes prefix=b"##",
                  Py_ssize_t max_input_chars_per_word=100, bytes word_prefix=b""):
        cdef Py_ssize_t p = len(prefix)
        self.n_pieces = max(ids) + 1 if ids else 0
        keys, ids = _checked_vocab(keys, ids)
        inside = [k for k in keys if len(k) < len(word_prefix) and word_prefix.startswith(k)]
        if inside:
            raise ModelDataError(f"the token {inside[0]!r} is a part of the bytes {word_prefix!r} every word "
                                 f"is looked up with in front: it would end inside them")
        self.words = CompactTrie(DoubleArrayTrie.build(keys, ids))
        self.word_prefix = word_prefix
        self.has_word_prefix = len(word_prefix) > 0
        self.word_prefix_cell = self.words.walk(word_prefix)
        self.word_prefix_token = -1
        if word_prefix and self.word_prefix_cell >= 0 and self.words.cells[self.word_prefix_cell].base & CELL_KEY_ENDS:
            self.word_prefix_token = self.words.values[self.word_prefix_cell]
        if p == 0:
            # no prefix (llama.cpp's WPM): every piece is looked up in the whole vocabulary
            cont = keys
            self.continuations = self.words
        else:
            cont = [(k[p:], i) for k, i in zip(keys, ids) if k.startswith(prefix) and len(k) > p]
            self.continuations = CompactTrie(DoubleArrayTrie.build([k for k, _ in cont], [i for _, i in cont])) \
                if cont else None
        self.rest_cells = self.continuations.cells if cont else NULL
        self.rest_values = self.continuations.values if cont else NULL
        self.prefix = prefix
        self.unk_id = unk_id
        self.max_input_chars_per_word = max_input_chars_per_word
        self.work_kind = &NO_WORK_KIND

    @property
    def memory_bytes(self):
        if self.continuations is None or self.continuations is self.words:
            return self.words.memory_bytes
        return self.words.memory_bytes + self.continuations.memory_bytes

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        # Parity: tokenizers models/wordpiece/mod.rs WordPiece::tokenize
        cdef Py_ssize_t start = 0, length, chars, i, count = 0, spans_before
        cdef int32_t* out
        cdef const Cell* cells = self.words.cells
        cdef const int32_t* values = self.words.values
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
        # room for the most pieces there can be (one a byte, and one for word_prefix alone):
        # the ids go in unchecked and count only once every piece matched
        if idbuf_reserve(ids, n + 1) < 0:
            return ERR_NO_MEMORY
        out = ids.data + ids.size
        spans_before = spans.size if spans != NULL else 0
        if self.has_word_prefix and self.word_prefix_cell >= 0:
            # the first piece: word_prefix and then the longest part of the word that makes a
            # key, else word_prefix alone (when it is a key) with the word looked up after it
            length = _longest_from(cells, values, self.word_prefix_cell, s, n, &token)
            if length == 0:
                token = self.word_prefix_token
                if token < 0:
                    return self._unknown(n, ids, spans, base)
            out[count] = token
            count += 1
            if spans != NULL and (idbuf_push(spans, <int32_t>base) < 0
                                  or idbuf_push(spans, <int32_t>(base + length)) < 0):
                return ERR_NO_MEMORY
            start = length
            cells = self.rest_cells
            values = self.rest_values
        elif self.has_word_prefix:
            return self._unknown(n, ids, spans, base)     # no key starts with word_prefix
        while start < n:
            length = _longest(cells, values, s + start, n - start, &token)
            if length == 0:
                # is_bad: the whole pre-token becomes the unk token
                if spans != NULL:
                    spans.size = spans_before
                return self._unknown(n, ids, spans, base)
            out[count] = token
            count += 1
            if spans != NULL and (idbuf_push(spans, <int32_t>(base + start)) < 0
                                  or idbuf_push(spans, <int32_t>(base + start + length)) < 0):
                return ERR_NO_MEMORY
            start += length
            cells = self.rest_cells
            values = self.rest_values
        ids.size += count
        return 0


cdef class WordLevel(VocabModel):
    """WordLevel: each pre-token is one token, or the unk token (`unk_id` -1: none)."""

    def __cinit__(self, list keys, list ids, *, int unk_id=-1):
        self.n_pieces = max(ids) + 1 if ids else 0
        keys, ids = _checked_vocab(keys, ids)
        self.words = CompactTrie(DoubleArrayTrie.build(keys, ids))
        self.unk_id = unk_id
        self.work_kind = &NO_WORK_KIND

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        # Parity: tokenizers models/wordlevel/mod.rs WordLevel::tokenize
        cdef int32_t token
        if n == 0:
            return 0
        token = _exact(self.words.cells, self.words.values, s, n)
        if token < 0:
            return self._unknown(n, ids, spans, base)
        return _push_id(ids, spans, token, base, base + n)

