"""The merge loop of sentencepiece's BPE trainer, natively (GIL released).

`bpe_merges(words, n_merges, rules..., threads)` takes the training words (an
SpmSentences: normalized, whitespace-split, with frequencies; every character already an
alphabet character or U+2585) and returns the pieces sentencepiece's BPE trainer learns,
best first:

>>> from toksmith._core.spm_sentences import SpmSentences
>>> words = SpmSentences()
>>> words.append("▁abab".encode(), 2); words.append("▁ab".encode(), 1)
>>> [p.decode() for p in bpe_merges(words, 2, 16, True, True, True, False, False, False)]
['ab', '▁ab']

A symbol is a character or a pair of symbols (its left and right part); sentences hold a
symbol per character position (merged positions empty). Each pair symbol keeps its
frequency (weighted by the word frequencies, updated as merges happen) and the positions
where it was made; a priority queue gives the most frequent pair, the one of fewer
characters on equal frequency, then the smaller piece (bytes). A pair whose piece was
already taken (the same text made of other parts) is dropped, not merged.

Parity: sentencepiece 0.2.3 bpe_model_trainer.cc (Trainer::Train, InitSymbolsAndBigrams,
GetPairSymbol, AddNewPair, ResetFreq, ComputeFreq, AcceptSymbol) and bpe_model_trainer.h
(QueueEntryComparator). One thread: the result is the same for every thread count.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

from toksmith._core.byte_keys cimport prefetch
from toksmith._core.spm_piece_rules cimport PieceRules, decode_char, valid_piece
from toksmith._core.spm_sentences cimport SpmSentences

cdef enum:
    UNK_CHAR_CP = 0x2585
    NO_SYMBOL = -1
    BOUNDARY = -3         # `sym` before the first sentence and after each one
    INVALID = -2          # pair map value: the pair's piece is not a valid piece
    F_ACTIVE = 1
    F_PENDING = 2
    F_RECOMPUTE = 4
    F_UNK = 8


# How many positions ahead `accept` prefetches a pair's symbols.
cdef uint32_t PREFETCH_AHEAD = 8


cdef struct U32Vec:
    uint32_t* data
    uint32_t size
    uint32_t cap


cdef inline int u32_push(U32Vec* v, uint32_t x) noexcept nogil:
    cdef uint32_t cap
    cdef uint32_t* p
    if v.size == v.cap:
        cap = v.cap * 2 if v.cap else 4
        p = <uint32_t*>realloc(v.data, cap * sizeof(uint32_t))
        if p == NULL:
            return -1
        v.data = p
        v.cap = cap
    v.data[v.size] = x
    v.size += 1
    return 0


cdef inline void u32_clear(U32Vec* v) noexcept nogil:
    free(v.data)
    v.data = NULL
    v.size = v.cap = 0


cdef struct Symbol:
    int32_t left            # parts (-1 for a character)
    int32_t right
    int64_t piece           # offset of the piece's bytes in the arena
    int32_t piece_len
    int32_t char_len
    uint64_t freq           # unsigned, wraps as sentencepiece's uint64_t does
    uint8_t flags
    U32Vec positions        # character index of the left part where the pair was made


cdef struct HeapEntry:
    uint64_t freq
    int32_t symbol


cdef struct PairEntry:
    uint64_t key            # (left << 32) | right; ~0: an empty slot
    int32_t value           # the pair's symbol or INVALID


cdef struct Trainer:
    # sentences: a symbol per character position (NO_SYMBOL once merged away), each
    # sentence between two BOUNDARY entries (so a neighbour is found without its bounds)
    int32_t* sym
    int64_t* weight_of      # the frequency of the sentence of each position
    # symbols
    Symbol* symbols
    int32_t n_symbols
    int32_t cap_symbols
    char* arena
    int64_t arena_size
    int64_t arena_cap
    # (left, right) -> symbol or INVALID; open addressing, never shrinks
    PairEntry* pairs        # key and value side by side: one cache line per probe
    uint64_t pair_mask
    uint64_t pair_used
    # taken pieces (symbol ids, by piece text)
    int32_t* dup
    uint64_t dup_mask
    uint64_t dup_used
    HeapEntry* heap
    int64_t heap_size
    int64_t heap_cap
    int32_t* pending
    int64_t n_pending
    int64_t cap_pending
    PieceRules rules
    int failed


cdef inline uint64_t mix64(uint64_t x) noexcept nogil:
    x ^= x >> 33
    x *= 0xff51afd7ed558ccdULL
    x ^= x >> 33
    x *= 0xc4ceb9fe1a85ec53ULL
    x ^= x >> 33
    return x


cdef inline uint64_t hash_bytes(const char* s, int32_t n) noexcept nogil:
    cdef uint64_t h = 0xcbf29ce484222325ULL
    cdef int32_t i
    for i in range(n):
        h = (h ^ <uint8_t>s[i]) * 0x100000001b3ULL
    return mix64(h)


cdef int new_symbol(Trainer* t, int32_t left, int32_t right, const char* piece, int32_t piece_len,
                    int32_t char_len) noexcept nogil:
    """A new symbol (active, to be recomputed, as sentencepiece's Symbol() is); -1 on no memory."""
    cdef int32_t cap
    cdef Symbol* p
    cdef int64_t acap
    cdef char* a
    cdef Symbol* s
    if t.n_symbols == t.cap_symbols:
        cap = t.cap_symbols * 2 if t.cap_symbols else 4096
        p = <Symbol*>realloc(t.symbols, cap * sizeof(Symbol))
        if p == NULL:
            return -1
        t.symbols = p
        t.cap_symbols = cap
    if t.arena_size + piece_len > t.arena_cap:
        acap = t.arena_cap * 2 if t.arena_cap else 1 << 16
        while acap < t.arena_size + piece_len:
            acap *= 2
        a = <char*>realloc(t.arena, acap)
        if a == NULL:
            return -1
        t.arena = a
        t.arena_cap = acap
    if piece != NULL:
        memcpy(t.arena + t.arena_size, piece, piece_len)
    s = &t.symbols[t.n_symbols]
    memset(s, 0, sizeof(Symbol))
    s.left = left
    s.right = right
    s.piece = t.arena_size
    s.piece_len = piece_len
    s.char_len = char_len
    s.flags = F_ACTIVE | F_RECOMPUTE
    t.arena_size += piece_len
    t.n_symbols += 1
    return t.n_symbols - 1


cdef int pair_grow(Trainer* t) noexcept nogil:
    cdef uint64_t old_size = t.pair_mask + 1 if t.pairs != NULL else 0
    cdef uint64_t size = old_size * 2 if old_size else 1 << 16
    cdef PairEntry* pairs = <PairEntry*>malloc(size * sizeof(PairEntry))
    cdef uint64_t i, h, mask = size - 1
    if pairs == NULL:
        return -1
    for i in range(size):
        pairs[i].key = <uint64_t>-1           # empty
    for i in range(old_size):
        if t.pairs[i].key != <uint64_t>-1:
            h = mix64(t.pairs[i].key) & mask
            while pairs[h].key != <uint64_t>-1:
                h = (h + 1) & mask
            pairs[h] = t.pairs[i]
    free(t.pairs)
    t.pairs = pairs
    t.pair_mask = mask
    return 0


cdef int32_t get_pair(Trainer* t, int32_t left, int32_t right) noexcept nogil:
    """The pair symbol of left + right, made if needed; NO_SYMBOL where either part is empty
    or unknown or the piece is invalid. Parity: bpe_model_trainer.cc Trainer::GetPairSymbol
    (a symbol erased from the cache once taken or dropped is made anew)."""
    cdef uint64_t key, h
    cdef int32_t v, s
    cdef Symbol* l
    cdef Symbol* r
    cdef int64_t mark
    if left < 0 or right < 0:
        return NO_SYMBOL
    if (t.symbols[left].flags & F_UNK) or (t.symbols[right].flags & F_UNK):
        return NO_SYMBOL
    if (t.pair_used + 1) * 2 > t.pair_mask + 1 if t.pairs != NULL else True:
        if pair_grow(t) < 0:
            t.failed = 1
            return NO_SYMBOL
    key = (<uint64_t><uint32_t>left << 32) | <uint32_t>right
    h = mix64(key) & t.pair_mask
    while t.pairs[h].key != <uint64_t>-1:
        if t.pairs[h].key == key:
            v = t.pairs[h].value
            if v == INVALID:
                return NO_SYMBOL
            if t.symbols[v].flags & F_ACTIVE:
                return v
            break               # erased from sentencepiece's cache: made anew below
        h = (h + 1) & t.pair_mask
    l = &t.symbols[left]
    r = &t.symbols[right]
    s = new_symbol(t, left, right, NULL, l.piece_len + r.piece_len, l.char_len + r.char_len)
    if s < 0:
        t.failed = 1
        return NO_SYMBOL
    l = &t.symbols[left]        # (symbols may have moved)
    r = &t.symbols[right]
    mark = t.symbols[s].piece
    memcpy(t.arena + mark, t.arena + l.piece, l.piece_len)
    memcpy(t.arena + mark + l.piece_len, t.arena + r.piece, r.piece_len)
    if t.pairs[h].key != key:
        t.pairs[h].key = key
        t.pair_used += 1
    # Parity: GetPairSymbol "Do not make an invalid piece."
    if not valid_piece(<const unsigned char*>t.arena + mark, t.symbols[s].piece_len, &t.rules):
        t.n_symbols -= 1            # undo: an invalid pair is no symbol
        t.arena_size = mark
        t.pairs[h].value = INVALID
        return NO_SYMBOL
    t.pairs[h].value = s
    return s


cdef inline bint entry_less(const Trainer* t, const HeapEntry* a, const HeapEntry* b) noexcept nogil:
    """a ranks below b. Parity: bpe_model_trainer.h QueueEntryComparator (frequency, then
    fewer characters, then the smaller piece as std::string compares)."""
    cdef const Symbol* x
    cdef const Symbol* y
    cdef int32_t m
    cdef int c
    if a.freq != b.freq:
        return a.freq < b.freq
    x = &t.symbols[a.symbol]
    y = &t.symbols[b.symbol]
    if x.char_len != y.char_len:
        return x.char_len > y.char_len
    m = x.piece_len if x.piece_len < y.piece_len else y.piece_len
    c = memcmp(t.arena + x.piece, t.arena + y.piece, m)
    if c != 0:
        return c > 0
    return x.piece_len > y.piece_len


cdef int heap_push(Trainer* t, uint64_t freq, int32_t symbol) noexcept nogil:
    """std::priority_queue::push (libstdc++ __push_heap)."""
    cdef int64_t cap, hole, parent
    cdef HeapEntry* p
    cdef HeapEntry value
    if t.heap_size == t.heap_cap:
        cap = t.heap_cap * 2 if t.heap_cap else 1 << 16
        p = <HeapEntry*>realloc(t.heap, cap * sizeof(HeapEntry))
        if p == NULL:
            t.failed = 1
            return -1
        t.heap = p
        t.heap_cap = cap
    value.freq = freq
    value.symbol = symbol
    hole = t.heap_size
    t.heap_size += 1
    parent = (hole - 1) // 2
    while hole > 0 and entry_less(t, &t.heap[parent], &value):
        t.heap[hole] = t.heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    t.heap[hole] = value
    return 0


cdef void heap_pop(Trainer* t) noexcept nogil:
    """std::priority_queue::pop (libstdc++ __pop_heap / __adjust_heap)."""
    cdef int64_t len_ = t.heap_size - 1, hole = 0, child = 0, parent
    cdef HeapEntry value = t.heap[len_]
    if len_ == 0:
        t.heap_size = 0
        return
    t.heap[len_] = t.heap[0]
    while child < (len_ - 1) // 2:
        child = 2 * (child + 1)
        if entry_less(t, &t.heap[child], &t.heap[child - 1]):
            child -= 1
        t.heap[hole] = t.heap[child]
        hole = child
    if (len_ & 1) == 0 and child == (len_ - 2) // 2:
        child = 2 * (child + 1)
        t.heap[hole] = t.heap[child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > 0 and entry_less(t, &t.heap[parent], &value):
        t.heap[hole] = t.heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    t.heap[hole] = value
    t.heap_size = len_


cdef int push_pending(Trainer* t, int32_t s) noexcept nogil:
    cdef int64_t cap
    cdef int32_t* p
    if t.n_pending == t.cap_pending:
        cap = t.cap_pending * 2 if t.cap_pending else 4096
        p = <int32_t*>realloc(t.pending, cap * sizeof(int32_t))
        if p == NULL:
            t.failed = 1
            return -1
        t.pending = p
        t.cap_pending = cap
    t.pending[t.n_pending] = s
    t.n_pending += 1
    return 0


cdef inline void compute_freq(Trainer* t, int32_t s) noexcept nogil:
    """Parity: bpe_model_trainer.cc Trainer::ComputeFreq."""
    cdef Symbol* y = &t.symbols[s]
    if not (y.flags & F_RECOMPUTE):
        return
    if y.freq == 0:
        u32_clear(&y.positions)
    y.flags &= ~F_RECOMPUTE


cdef inline int64_t next_index(const Trainer* t, int64_t i) noexcept nogil:
    """Parity: Trainer::GetNextIndex (within the sentence; -1 at its end)."""
    i += 1
    while t.sym[i] == NO_SYMBOL:
        i += 1
    return -1 if t.sym[i] == BOUNDARY else i


cdef inline int64_t prev_index(const Trainer* t, int64_t i) noexcept nogil:
    """Parity: Trainer::GetPrevIndex."""
    i -= 1
    while t.sym[i] == NO_SYMBOL:
        i -= 1
    return -1 if t.sym[i] == BOUNDARY else i


cdef inline void add_new_pair(Trainer* t, int64_t left, int64_t right) noexcept nogil:
    """Parity: Trainer::AddNewPair."""
    cdef int32_t s
    cdef Symbol* y
    if left < 0 or right < 0:
        return
    s = get_pair(t, t.sym[left], t.sym[right])
    if s < 0:
        return
    y = &t.symbols[s]
    if u32_push(&y.positions, <uint32_t>left) < 0:
        t.failed = 1
        return
    y.freq += <uint64_t>t.weight_of[left]
    if not (y.flags & F_PENDING):
        y.flags |= F_PENDING
        push_pending(t, s)


cdef inline void reset_freq(Trainer* t, int64_t left, int64_t right, int32_t best) noexcept nogil:
    """Parity: Trainer::ResetFreq."""
    cdef int32_t s
    if left < 0 or right < 0:
        return
    s = get_pair(t, t.sym[left], t.sym[right])
    if s >= 0 and s != best:
        t.symbols[s].freq -= <uint64_t>t.weight_of[left]
        t.symbols[s].flags |= F_RECOMPUTE


cdef void accept(Trainer* t, int32_t best) noexcept nogil:
    """Merge best at its positions. Parity: Trainer::AcceptSymbol (a position is stale when
    its two parts are no longer there: the right part is the next symbol after the left)."""
    cdef uint32_t k = 0
    cdef int64_t left, right, nxt, prv
    cdef int32_t bl = t.symbols[best].left, br = t.symbols[best].right
    cdef const uint32_t* positions = t.symbols[best].positions.data
    cdef uint32_t n = t.symbols[best].positions.size
    while k < n:
        if k + PREFETCH_AHEAD < n:
            # positions are scattered over the corpus: each visit a cache miss otherwise
            prefetch(&t.sym[positions[k + PREFETCH_AHEAD]])
            prefetch(&t.weight_of[positions[k + PREFETCH_AHEAD]])
        left = positions[k]
        k += 1
        if t.sym[left] != bl:
            continue
        right = next_index(t, left)
        if right < 0 or t.sym[right] != br:
            continue
        nxt = next_index(t, right)
        prv = prev_index(t, left)
        reset_freq(t, prv, left, best)
        reset_freq(t, right, nxt, best)
        t.sym[left] = best
        t.sym[right] = NO_SYMBOL
        add_new_pair(t, prv, left)
        add_new_pair(t, left, nxt)
    t.symbols[best].flags &= ~F_ACTIVE       # (and erased from the pair cache: see get_pair)
    u32_clear(&t.symbols[best].positions)


cdef int dup_insert(Trainer* t, int32_t s) noexcept nogil:
    """Add s's piece to the taken pieces: 1 if added, 0 if taken already, -1 on no memory."""
    cdef uint64_t size, i, h, mask
    cdef int32_t* table
    cdef int32_t v
    cdef const Symbol* y
    cdef const Symbol* z
    if (t.dup_used + 1) * 2 > t.dup_mask + 1 or t.dup == NULL:
        size = (t.dup_mask + 1) * 2 if t.dup != NULL else 1 << 12
        table = <int32_t*>malloc(size * sizeof(int32_t))
        if table == NULL:
            return -1
        memset(table, 0xFF, size * sizeof(int32_t))
        mask = size - 1
        if t.dup != NULL:
            for i in range(t.dup_mask + 1):
                v = t.dup[i]
                if v >= 0:
                    y = &t.symbols[v]
                    h = hash_bytes(t.arena + y.piece, y.piece_len) & mask
                    while table[h] >= 0:
                        h = (h + 1) & mask
                    table[h] = v
            free(t.dup)
        t.dup = table
        t.dup_mask = mask
    y = &t.symbols[s]
    h = hash_bytes(t.arena + y.piece, y.piece_len) & t.dup_mask
    while t.dup[h] >= 0:
        z = &t.symbols[t.dup[h]]
        if z.piece_len == y.piece_len and memcmp(t.arena + z.piece, t.arena + y.piece, y.piece_len) == 0:
            return 0
        h = (h + 1) & t.dup_mask
    t.dup[h] = s
    t.dup_used += 1
    return 1


cdef int64_t merge_loop(Trainer* t, int32_t* out, int64_t n_merges) noexcept nogil:
    """Parity: bpe_model_trainer.cc Trainer::Train (the main loop). Returns the pieces taken."""
    cdef int64_t taken = 0, i
    cdef int32_t best, s
    cdef HeapEntry entry
    cdef Symbol* y
    cdef int rc
    while taken < n_merges and not t.failed:
        best = NO_SYMBOL
        while t.heap_size > 0:
            entry = t.heap[0]
            y = &t.symbols[entry.symbol]
            if not (y.flags & F_ACTIVE):
                heap_pop(t)
                continue
            if y.flags & F_RECOMPUTE:
                heap_pop(t)
                compute_freq(t, entry.symbol)
                heap_push(t, y.freq, entry.symbol)
                continue
            if entry.freq != y.freq:
                heap_pop(t)
                continue
            best = entry.symbol
            heap_pop(t)
            break
        if best < 0:
            break           # Parity: "No valid symbol found"
        rc = dup_insert(t, best)
        if rc < 0:
            t.failed = 1
            break
        if rc == 0:
            # the same piece made of other parts: dropped, not merged
            t.symbols[best].flags &= ~F_ACTIVE
            u32_clear(&t.symbols[best].positions)
            continue
        out[taken] = best
        taken += 1
        accept(t, best)
        for i in range(t.n_pending):
            s = t.pending[i]
            t.symbols[s].flags &= ~F_PENDING
            if t.symbols[s].flags & F_ACTIVE:
                compute_freq(t, s)
                heap_push(t, t.symbols[s].freq, s)
        t.n_pending = 0
    return taken


cdef void trainer_free(Trainer* t) noexcept nogil:
    cdef int32_t i
    if t.symbols != NULL:
        for i in range(t.n_symbols):
            free(t.symbols[i].positions.data)
    free(t.symbols)
    free(t.arena)
    free(t.sym)
    free(t.weight_of)
    free(t.pairs)
    free(t.dup)
    free(t.heap)
    free(t.pending)
    memset(t, 0, sizeof(Trainer))


def bpe_merges(SpmSentences words, Py_ssize_t n_merges, int max_piece_length, bint split_by_unicode_script,
               bint split_by_number, bint split_by_whitespace, bint split_digits,
               bint treat_whitespace_as_suffix, bint allow_whitespace_only_pieces, int threads=1):
    """The pieces of up to n_merges merges (bytes, in the order taken); see the module docstring."""
    cdef Trainer t
    cdef int64_t n_chars = 0, n_positions, sid, i, pos, end
    cdef int32_t* char_sym = NULL
    cdef int32_t* out = NULL
    cdef uint32_t c
    cdef int length
    cdef int32_t s, v
    cdef int64_t taken = 0
    cdef char buf[4]
    cdef const unsigned char* text
    cdef bint failed = False
    if n_merges < 0:
        raise ValueError(f"n_merges must be >= 0, not {n_merges}")
    memset(&t, 0, sizeof(Trainer))
    t.rules.max_piece_length = max_piece_length
    t.rules.split_by_unicode_script = split_by_unicode_script
    t.rules.split_by_number = split_by_number
    t.rules.split_by_whitespace = split_by_whitespace
    t.rules.split_digits = split_digits
    t.rules.treat_whitespace_as_suffix = treat_whitespace_as_suffix
    t.rules.allow_whitespace_only_pieces = allow_whitespace_only_pieces
    try:
        with nogil:
            for sid in range(words.n):
                i = words.offsets[sid]
                end = words.offsets[sid + 1]
                while i < end:
                    decode_char(<const unsigned char*>words.blob + i, end - i, &length)
                    i += length
                    n_chars += 1
        n_positions = n_chars + words.n + 1          # the characters and the boundaries
        if n_positions >= 0xFFFFFFFF:
            raise ValueError("the corpus has too many characters (2**32) for the BPE trainer")
        t.sym = <int32_t*>malloc(n_positions * sizeof(int32_t))
        t.weight_of = <int64_t*>malloc(n_positions * sizeof(int64_t))
        char_sym = <int32_t*>malloc(0x110000 * sizeof(int32_t))
        out = <int32_t*>malloc((n_merges + 1) * sizeof(int32_t))
        if t.sym == NULL or t.weight_of == NULL or char_sym == NULL or out == NULL:
            raise MemoryError()
        with nogil:
            memset(char_sym, 0xFF, 0x110000 * sizeof(int32_t))
            # Parity: InitSymbolsAndBigrams: a character symbol per character (U+2585 unknown)
            t.sym[0] = BOUNDARY
            pos = 1
            for sid in range(words.n):
                i = words.offsets[sid]
                end = words.offsets[sid + 1]
                while i < end and not failed:
                    text = <const unsigned char*>words.blob + i
                    c = decode_char(text, end - i, &length)
                    if c >= 0x110000:
                        c = 0xFFFD
                    if char_sym[c] < 0:
                        s = new_symbol(&t, NO_SYMBOL, NO_SYMBOL, <const char*>text, length, 1)
                        if s < 0:
                            failed = True
                            break
                        t.symbols[s].flags = F_ACTIVE | (F_UNK if c == UNK_CHAR_CP else 0)
                        char_sym[c] = s
                    t.sym[pos] = char_sym[c]
                    t.weight_of[pos] = words.freqs[sid]
                    pos += 1
                    i += length
                t.sym[pos] = BOUNDARY
                pos += 1
        if failed:
            raise MemoryError()
        with nogil:
            # Parity: InitSymbolsAndBigrams: each pair's positions in sentence order
            for i in range(1, n_positions - 1):
                if t.sym[i] < 0 or t.sym[i + 1] < 0:      # a boundary on either side
                    continue
                v = get_pair(&t, t.sym[i], t.sym[i + 1])
                if v < 0:
                    continue
                if u32_push(&t.symbols[v].positions, <uint32_t>i) < 0:
                    t.failed = 1
                    break
                t.symbols[v].freq += <uint64_t>t.weight_of[i]
                if not (t.symbols[v].flags & F_PENDING):
                    t.symbols[v].flags |= F_PENDING
                    push_pending(&t, v)
            for i in range(t.n_pending):
                s = t.pending[i]
                t.symbols[s].flags &= ~F_PENDING
                compute_freq(&t, s)
                heap_push(&t, t.symbols[s].freq, s)
            t.n_pending = 0
            if not t.failed:
                taken = merge_loop(&t, out, n_merges)
        if t.failed:
            raise MemoryError()
        return [t.arena[t.symbols[out[i]].piece:t.symbols[out[i]].piece + t.symbols[out[i]].piece_len]
                for i in range(taken)]
    finally:
        free(char_sym)
        free(out)
        trainer_free(&t)
