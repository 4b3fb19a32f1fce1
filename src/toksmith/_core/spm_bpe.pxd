# SentencePiece BPE: adjacent symbols merge by the score of the piece they form.
cimport cython
from libc.stdint cimport int32_t, uint32_t, uint64_t

from toksmith._core.buffers cimport ByteBuf, IdBuf
from toksmith._core.model cimport Model, WorkHeader
from toksmith._core.tables cimport MergeHeap, U64Map
from toksmith._core.trie cimport DoubleArrayTrie
from toksmith._core.unknown cimport UnknownRules


cdef struct TextTable:
    int32_t* slots              # piece id, -1 for empty
    uint64_t mask
    const unsigned char* base   # concatenated piece texts
    const Py_ssize_t* offsets


# A remembered chunk ("word"): its text and the (id, offset) pairs it encodes to.
cdef struct CacheEntry:
    uint64_t hash           # 0 marks an empty slot
    int32_t text_at         # in BpeWork.cache_text
    int32_t text_len
    int32_t ids_at          # in BpeWork.cache_ids, as (id, offset in the chunk) pairs
    int32_t n_ids


# Per-thread working memory of encode calls.
cdef struct BpeWork:
    IdBuf symbols       # symbol id of each initial symbol
    IdBuf starts        # byte offset of each initial symbol
    IdBuf lengths       # byte length (heap path) / candidate merge (linear path)
    IdBuf prev
    IdBuf next
    IdBuf candidates
    IdBuf rev_merges    # (merged, left, right) triples, for sentencepiece's UNUSED resegmentation
    MergeHeap heap      # candidates of the long-chunk path
    # results of recent short chunks, valid for the model numbered cache_model
    CacheEntry* cache
    Py_ssize_t cache_used
    uint64_t cache_model
    ByteBuf cache_text
    IdBuf cache_ids


# The work ScoreBpe.new_work makes: merge state, then the path emit_path reads.
cdef struct ScoreBpeWork:
    WorkHeader header
    BpeWork bpe
    IdBuf path_ids
    IdBuf path_starts


cdef void bpe_work_free(BpeWork* w) noexcept nogil


@cython.final
cdef class ScoreBpe(Model):
    cdef U64Map pairs                  # (left + 1) << 32 | (right + 1) -> the piece they form
    cdef U64Map chars                  # _char_key of a character -> its symbol
    cdef int32_t byte_symbol[256]      # symbol of each one-byte character, -1 if none
    cdef float* scores                 # score of each piece id
    cdef int32_t* output_ids           # id emitted for each symbol (-1: not a piece)
    cdef int32_t* symbol_lengths       # byte length of each symbol's text
    cdef unsigned char* is_unused      # per piece: resegment it (sentencepiece rules)
    cdef Py_ssize_t n_symbols
    cdef DoubleArrayTrie frozen        # user-defined pieces never merge (sentencepiece), or None
    cdef bint has_frozen
    cdef bint resegment_unused
    cdef bint split_at_spaces          # no piece joins a character to a following U+2581
    cdef readonly bint chunked
    cdef UnknownRules unknown          # how unknown and missing pieces are emitted
    cdef int32_t space_symbol          # symbol of U+2581, -1 if none

    cdef int _add_single_char_piece(self, const unsigned char* p, Py_ssize_t plen,
                                    int32_t piece_id) except -1
    cdef int32_t _text_symbol(self, const unsigned char* p, Py_ssize_t length,
                              const TextTable* by_text) except? -2
    cdef int _insert_char(self, const unsigned char* s, int length, int32_t symbol) except -1
    cdef int _add_pair(self, int32_t left, int32_t right, int32_t merged) except -1
    cdef int32_t _char_symbol(self, const unsigned char* s, int length) noexcept nogil
    cdef int32_t _candidate(self, int32_t left, int32_t right, BpeWork* w) noexcept nogil
    cdef int32_t _pair(self, int32_t left, int32_t right) noexcept nogil
    cdef int _segment(self, const unsigned char* s, Py_ssize_t n, BpeWork* w,
                      IdBuf* ids, IdBuf* starts) noexcept nogil
    cdef bint _starts_word(self, const unsigned char* s, const int32_t* sym,
                           const int32_t* start, Py_ssize_t b) noexcept nogil
    cdef int _cached_chunk(self, const unsigned char* s, int32_t* sym, int32_t* start,
                           Py_ssize_t m, Py_ssize_t end, BpeWork* w,
                           IdBuf* ids, IdBuf* starts) noexcept nogil
    cdef int _merge_linear(self, int32_t* sym, int32_t* start, Py_ssize_t m, BpeWork* w,
                           IdBuf* ids, IdBuf* starts) noexcept nogil
    cdef int _merge_heap(self, int32_t* sym, int32_t* start, Py_ssize_t m, Py_ssize_t end,
                         BpeWork* w, IdBuf* ids, IdBuf* starts) noexcept nogil
    cdef int _emit(self, int32_t symbol, int32_t start, BpeWork* w,
                   IdBuf* ids, IdBuf* starts) noexcept nogil
