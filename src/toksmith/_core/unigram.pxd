# Unigram models (SentencePiece UNIGRAM / llama.cpp UGM): Viterbi over piece scores.
from libc.stdint cimport int32_t

from toksmith._core.buffers cimport IdBuf
from toksmith._core.model cimport Model, WorkHeader
from toksmith._core.trie cimport DANode, DoubleArrayTrie
from toksmith._core.unknown cimport UnknownRules

# Trie values of the Unigram vocabulary: the piece id plus its type flags.
cdef enum:
    VALUE_ID_MASK = 0x0FFFFFFF
    VALUE_USER_DEFINED = 0x10000000
    VALUE_UNUSED = 0x20000000


cdef struct UnigramParams:
    const DANode* nodes
    const int32_t* char3_nodes   # see DoubleArrayTrie.char3_nodes
    float unk_score      # min over NORMAL pieces minus 10
    int32_t unk_id
    Py_ssize_t max_piece_bytes   # longest piece in the trie, in bytes


# Per-thread working memory of both Unigram models (they share it: same work_kind).
cdef struct UnigramWork:
    WorkHeader header
    void* lattice
    Py_ssize_t lattice_cap
    IdBuf path_ids
    IdBuf path_starts


cdef class Unigram(Model):
    """Tables shared by both rule sets; use UnigramSentencePiece or UnigramLlamaCpp."""
    cdef DoubleArrayTrie trie
    cdef UnigramParams params
    cdef UnknownRules unknown


cdef class UnigramSentencePiece(Unigram):
    pass


cdef class UnigramLlamaCpp(Unigram):
    pass


cdef int viterbi_sentencepiece(const UnigramParams* p, const unsigned char* s, Py_ssize_t n,
                               void** lattice, Py_ssize_t* lattice_cap,
                               IdBuf* ids, IdBuf* starts) noexcept nogil

cdef int viterbi_llama_cpp(const UnigramParams* p, const unsigned char* s, Py_ssize_t n,
                           void** lattice, Py_ssize_t* lattice_cap,
                           IdBuf* ids, IdBuf* starts) noexcept nogil
