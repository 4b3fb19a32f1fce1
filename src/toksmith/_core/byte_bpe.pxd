# Byte-level BPE (GPT-2 family, tiktoken): merges by rank over the raw bytes of one pre-token.
cimport cython
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

from toksmith._core.char_starts cimport CharStarts
from toksmith._core.tables cimport MergeHeap
from toksmith._core.rank_queue cimport RankQueue
from toksmith._core.buffers cimport ByteBuf, IdBuf
from toksmith._core.model cimport Model, WorkHeader
from toksmith._core.symbol_texts cimport SymbolTexts


# Which pair merges first (chosen at load time).
cpdef enum MergeOrder:
    MERGE_LIST = 0      # rank of the (left, right) pair in the merges list (llama.cpp, HF)
    TOKEN_RANK = 1      # rank of the token the pair forms (tiktoken byte_pair_merge)


cdef struct PairSlot:
    uint64_t key        # (left symbol + 1) << 32 | (right symbol + 1); 0 marks an empty slot
    int32_t rank        # lower merges first
    int32_t merged      # symbol the two form (pair table)


# A merge of two bytes in the direct byte-pair table.
cdef struct RankMerged:
    int32_t rank        # INT32_MAX: no merge
    int32_t merged


# A slot of the token-text map: the text's bytes (at most 8) or its hash, its id and length.
cdef struct TokenSlot:
    uint64_t key
    int32_t id
    int32_t length      # 0 marks an empty slot



# One remembered pre-token ("word") and its ids, in one cache line (short words only).
cdef enum:
    WORD_TEXT = 18      # longest cached word, in bytes
    WORD_IDS = 6        # most ids of a cached word
cdef struct WordEntry:
    uint64_t hash               # of the text (a bit of cache_valid says the slot is filled)
    unsigned char text_len
    unsigned char n_ids
    unsigned char starts[WORD_IDS]      # span of each id in the word
    unsigned char ends[WORD_IDS]
    unsigned char text[WORD_TEXT]
    int32_t ids[WORD_IDS]


# Per-thread working memory of ByteLevelBpe.encode (starts with the WorkHeader).
cdef struct ByteBpeWork:
    WorkHeader header
    IdBuf symbols
    IdBuf starts
    IdBuf lengths
    IdBuf prev
    IdBuf next
    IdBuf out_ids           # (id, start, end) triples of the pre-token being encoded
    MergeHeap heap              # long pre-tokens: candidate pairs by (rank, left)
    RankQueue queue             # very long ones: the same, by rank buckets (rank_queue.pxd)
    WordEntry* cache            # two-way sets: a new word replaces its set's least recently used
    PairSlot* pair_memo         # direct-mapped: recent long pair lookups, rank INT32_MAX if none
    uint64_t* cache_valid       # a bit per slot of each: filled by cache_model (emptying a
    uint64_t* memo_valid        # cache clears 3 KB of bits, not its megabyte of slots)
    uint64_t cache_model        # serial of the model both caches were filled by
    ByteBuf kept                # drops_bytes: a pre-token without its dropped bytes
    IdBuf kept_at               # ... and where each kept byte was in the pre-token


@cython.final
cdef class ByteLevelBpe(Model):
    cdef readonly MergeOrder order
    cdef readonly bint ignore_merges
    cdef readonly bint utf8_symbols        # first symbols are UTF-8 characters, not bytes
    cdef readonly bint whole_newline_runs
    cdef readonly bint drops_bytes         # some byte is in `dropped` (see build's drop_unknown_bytes)
    cdef unsigned char dropped[256]        # 1: the byte is left out of a pre-token before merging
    cdef TokenSlot* char_slots             # utf8_symbols: symbols of at most 4 bytes
    cdef CharStarts chars                  # characters that may start whole (index NULL: none)
    cdef RankMerged* byte_pairs            # 65536: merge of bytes (b0, b1) at [b0 | b1 << 8]
    cdef PairSlot* short_pairs             # merges forming 3-4 bytes, by bytes and split (_short_key)
    cdef uint64_t short_mask
    cdef uint64_t* short_bloom             # Bloom filter of short_pairs' keys
    cdef uint64_t short_bloom_mask
    cdef uint64_t char_mask
    cdef readonly Py_ssize_t n_symbols
    cdef readonly Py_ssize_t n_pairs
    cdef Py_ssize_t max_token_length
    cdef PairSlot* pairs
    cdef uint64_t pair_mask
    cdef int32_t byte_symbol[256]      # symbol of each one-byte text, -1 when none
    cdef int32_t fallback[256][2]      # ids emitted for a byte of a symbol that is no token
    cdef int32_t single_byte_id[256]   # the one id a one-byte pre-token encodes to, -1 when not one
    cdef int32_t run_id[256]           # a pre-token that is a run of this byte is that many of this
                                       # id (its pair never merges), -1 when not so
    # token texts (raw bytes) by id, and a hash map text -> id (ignore_merges, lookups)
    cdef unsigned char* texts
    cdef int64_t* text_offsets         # n_pieces + 1; a token no pre-token can form has length 0
    cdef TokenSlot* text_slots
    cdef uint64_t text_mask
    cdef uint64_t* token_bloom             # Bloom filters of the texts of text_slots and the pairs
    cdef uint64_t token_bloom_mask         # of `pairs` (byte_keys.pxd)
    cdef uint64_t* pair_bloom
    cdef uint64_t pair_bloom_mask
    cdef uint64_t* joined_pairs            # 65536 bits: byte pair x y inside some symbol's text
                                           # (NULL with utf8_symbols: pre-tokens are never cut)
    cdef uint64_t* whole_tokens            # a bit per id: merging the token's own text gives
                                           # exactly that token (NULL with ignore_merges: not needed)

    cdef int _build_token_rank(self, list tokens, Py_ssize_t total) except -1
    cdef int _add_merges(self, SymbolTexts* t, object merges, bint byte_unicode, IdBuf* char_merges,
                         IdBuf* short_merges) except -1
    cdef int _keep_char_symbols(self, SymbolTexts* t) except -1
    cdef int32_t _first_symbol(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t* length) noexcept nogil
    cdef int _keep_token_texts(self, SymbolTexts* t) except -1
    cdef int _add_pair(self, int32_t left, int32_t right, int32_t rank, int32_t merged) except -1
    cdef int32_t _token_of(self, const unsigned char* p, Py_ssize_t n) noexcept nogil
    cdef inline PairSlot* _pair(self, int32_t left, int32_t right) noexcept nogil
    cdef int _ready_caches(self, ByteBpeWork* w) noexcept nogil
    cdef int32_t _rank_slow(self, const unsigned char* s, int32_t left, int32_t right,
                            Py_ssize_t start, Py_ssize_t length, int32_t* merged) noexcept nogil
    cdef inline int32_t _rank(self, const unsigned char* s, int32_t left, int32_t right, Py_ssize_t start,
                              Py_ssize_t left_length, Py_ssize_t length, int32_t* merged,
                              ByteBpeWork* w) noexcept nogil
    cdef int _fill_byte_pairs(self) except -1
    cdef int _fill_single_byte_ids(self) except -1
    cdef int _find_whole_tokens(self) except -1
    cdef int _new_joined_pairs(self) except -1
    cdef void _mark_joined(self, const unsigned char* p, Py_ssize_t n) noexcept nogil
    cdef inline Py_ssize_t _next_cut(self, const unsigned char* s, Py_ssize_t start, Py_ssize_t n) noexcept nogil
    cdef int _new_short_table(self, Py_ssize_t count) except -1
    cdef void _put_short(self, const unsigned char* text, Py_ssize_t left_length, Py_ssize_t length,
                         int32_t rank, int32_t merged) noexcept nogil
    cdef int _fill_short_merges(self, const SymbolTexts* t, const IdBuf* short_merges) except -1
    cdef int _fill_short_tokens(self) except -1
    cdef int32_t _own_run(self, const unsigned char* c, Py_ssize_t n, int32_t* last_rank) noexcept nogil
    cdef int _keep_char_starts(self, const SymbolTexts* t, const IdBuf* char_merges) except -1
    cdef Py_ssize_t _start(self, const unsigned char* s, Py_ssize_t n, int32_t* sym,
                           int32_t* start) noexcept nogil
    cdef int _merge_linear(self, const unsigned char* s, Py_ssize_t m, ByteBpeWork* w) noexcept nogil
    cdef int _merge_heap(self, const unsigned char* s, Py_ssize_t m, ByteBpeWork* w) noexcept nogil
    cdef int _merge_queue(self, const unsigned char* s, Py_ssize_t m, ByteBpeWork* w) noexcept nogil
    cdef int _emit(self, const unsigned char* s, int32_t symbol, int32_t start, int32_t end,
                   ByteBpeWork* w) noexcept nogil
    cdef int _emit_chain(self, const unsigned char* s, const int32_t* sym, const int32_t* at, const int32_t* nxt,
                         Py_ssize_t m, ByteBpeWork* w) noexcept nogil
    cdef int _encode_word(self, const unsigned char* s, Py_ssize_t n, ByteBpeWork* w) noexcept nogil
    cdef int _merge_word(self, const unsigned char* s, Py_ssize_t n, ByteBpeWork* w) noexcept nogil
    cdef bint _holds_dropped(self, const unsigned char* s, Py_ssize_t n) noexcept nogil
    cdef int _merge_dropping(self, const unsigned char* s, Py_ssize_t n, ByteBpeWork* w) noexcept nogil
    cdef inline int _encode_piece(self, const unsigned char* s, Py_ssize_t n, ByteBpeWork* w, IdBuf* ids,
                                  IdBuf* spans, Py_ssize_t base) noexcept nogil
    cdef int _encode_missed(self, const unsigned char* s, Py_ssize_t n, uint64_t h, uint64_t slot,
                            WordEntry* e, ByteBpeWork* w, IdBuf* ids, IdBuf* spans,
                            Py_ssize_t base) noexcept nogil
