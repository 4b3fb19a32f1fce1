"""RWKV's tokenizer natively: greedy longest match over a byte trie of the token bytes.

`RwkvTrie` is the model stage of both RWKV vocabularies (a GGUF of tokenizer model
"rwkv", and RWKV's own rwkv_vocab_v20230424.txt). At each position it emits the longest
token whose bytes prefix the rest of the text and continues after it. The text is raw
bytes: nothing is decoded as UTF-8, so invalid UTF-8 is tokenized like any other bytes.
The vocabulary is a `DoubleArrayTrie` (any byte, NUL included, may label a node);
a walk reads one node per byte and never more than the longest token past the
position, so time is linear in the text. Nothing is allocated per call.

`RwkvVocabDecoder` decodes ids of the .txt vocabulary as the rwkv package does.

    >>> m = RwkvTrie([b"a", b"ab", b"b"], [1, 2, 3])
    >>> m.encode_text(b"abab"), m.encode_text(b"ba")
    ([2, 2], [3, 1])
"""
from libc.stdint cimport int32_t

from toksmith._core.buffers cimport ByteBuf, IdBuf, bytebuf_append, idbuf_push, idbuf_reserve
from toksmith._core.detokenizer cimport DecodeState, Decoder
from toksmith._core.errors cimport ERR_NO_MEMORY, ERR_NO_TOKEN_MATCHES
from toksmith._core.model cimport Model, new_header_work
from toksmith._core.trie cimport DANode, DoubleArrayTrie

from toksmith.errors import TokenIdError

# RwkvTrie needs no working memory beyond a header: this static's address is its work_kind.
cdef int RWKV_WORK_KIND = 0


cdef class RwkvTrie(Model):
    """Greedy longest match over `keys` (distinct non-empty byte strings) with `ids`.

    `unk_id`: what a byte that starts no token becomes (llama.cpp pushes
    `token_unk()`); -1: such a byte fails the call (ERR_NO_TOKEN_MATCHES), as
    the rwkv package's TRIE_TOKENIZER fails. A walk that passes no token's end
    (a byte that starts tokens but is none itself) fails the call too: the
    loaders refuse GGUF vocabularies where that can happen (llama.cpp loops).
    `n_pieces`: the size of the vocabulary the ids belong to.
    """

    cdef DoubleArrayTrie trie
    cdef const DANode* nodes
    cdef readonly int32_t unk_id

    def __cinit__(self, list keys, list ids, *, int unk_id=-1, Py_ssize_t n_pieces=0):
        if len(keys) != len(ids):
            raise ValueError("keys and ids must have the same length")
        self.n_pieces = n_pieces if n_pieces else (max(ids) + 1 if ids else 0)
        self.trie = DoubleArrayTrie.build(keys, ids)
        self.nodes = self.trie.nodes
        self.unk_id = unk_id
        self.work_kind = &RWKV_WORK_KIND

    cdef void* new_work(self) noexcept nogil:
        return new_header_work(&RWKV_WORK_KIND)

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        # Parity: llama-vocab.cpp llm_tokenizer_rwkv_session::tokenize; rwkv_tokenizer.py
        # TRIE_TOKENIZER.encodeBytes / TRIE.find_longest.
        cdef const DANode* nodes = self.nodes
        cdef Py_ssize_t pos = 0, i, end
        cdef int32_t node, t, token
        if n == 0:
            return 0
        if nodes == NULL:
            return ERR_NO_TOKEN_MATCHES
        # at most one id a byte: the ids go in unchecked
        if idbuf_reserve(ids, n) < 0:
            return ERR_NO_MEMORY
        while pos < n:
            t = nodes[0].base + s[pos]
            if nodes[t].check != 0:
                # Parity: llm_tokenizer_rwkv_session::tokenize: no token starts with this
                # byte: vocab.token_unk(), one byte on.
                if self.unk_id < 0:
                    return ERR_NO_TOKEN_MATCHES
                token = self.unk_id
                end = pos + 1
            else:
                node = t
                token = nodes[t].value
                end = pos + 1
                i = pos + 1
                while i < n:
                    t = nodes[node].base + s[i]
                    if nodes[t].check != node:
                        break
                    node = t
                    i += 1
                    if nodes[t].value >= 0:
                        token = nodes[t].value
                        end = i
                if token < 0:
                    return ERR_NO_TOKEN_MATCHES
            ids.data[ids.size] = token
            ids.size += 1
            if spans != NULL and (idbuf_push(spans, <int32_t>(base + pos)) < 0
                                  or idbuf_push(spans, <int32_t>(base + end)) < 0):
                return ERR_NO_MEMORY
            pos = end
        return 0

    @property
    def memory_bytes(self):
        """Bytes of the vocabulary trie."""
        return self.trie.memory_bytes


cdef class RwkvVocabDecoder(Decoder):
    """Parity: rwkv_tokenizer.py TRIE_TOKENIZER.decode: the tokens' bytes joined
    (decodeBytes), read as strict UTF-8; text that is not valid UTF-8 decodes to a
    single U+FFFD (its `except: return '\\ufffd'`). An id the file gives no token
    raises TokenIdError (there the bare except turns the KeyError into U+FFFD too).
    There are no special tokens: `skip_special` changes nothing. A StreamDecoder over it
    gives decode()'s text whenever the bytes are valid UTF-8; otherwise each malformed byte
    becomes U+FFFD as it comes (the rwkv package has no streaming).

    >>> dec = RwkvVocabDecoder.build([b"", b"a", b"\\xe6"], b"\\x00\\x01\\x01")
    >>> dec.decode([1, 1]), dec.decode([1, 2])
    ('aa', '\\ufffd')
    """

    @staticmethod
    def build(list pieces, bytes present):
        """`pieces`: each id's bytes; `present`: 1 for an id the file gives, 0 for a gap."""
        cdef RwkvVocabDecoder self = RwkvVocabDecoder()
        self._set_pieces(pieces, present, [-1] * len(pieces))
        return self

    cdef int _refuse_gap(self, long pid) except -1:
        raise TokenIdError(f"token id {pid} is no token of this vocabulary (its file gives no line "
                           f"for this id)")

    cdef int _feed(self, DecodeState* st, long pid, bint skip_special, ByteBuf* out) except -1:
        if not self.kinds[pid]:
            self._refuse_gap(pid)
        if bytebuf_append(out, self.piece_data + self.piece_offsets[pid],
                          self.piece_offsets[pid + 1] - self.piece_offsets[pid]) < 0:
            raise MemoryError()
        return 0

    cdef int _check_ids(self, IdBuf* ids) except -1:
        cdef Py_ssize_t i
        for i in range(ids.size):
            if not self.kinds[ids.data[i]]:
                self._refuse_gap(ids.data[i])
        return 0

    def decode(self, ids, *, bint skip_special=False):
        """Text of `ids`; U+FFFD alone when their bytes are not valid UTF-8 (see the class)."""
        data = self.decode_bytes(ids, skip_special=skip_special)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return "\ufffd"
