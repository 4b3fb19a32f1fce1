"""The byte-stream BPE trainer: merges learnt over each sequence's whole byte string.

`ByteStreamTrainer(ascii_only)` reads sequences (`add(data)` for a whole one, or
`begin()`, `append(chunk)`..., `end()` for one in parts), each one file or one item of
an iterator; identical sequences are kept once with their count. `prepare(vocab_size,
min_frequency, threads)` lays them out and counts their pairs, `run(max_merges)` learns
merges (True when training is over), `vocab()` and `merges()` give the result:

>>> t = ByteStreamTrainer(False); t.add(b"abab"); t.add(b"ab")      # doctest: +SKIP
>>> t.prepare(261, 0, 2); t.run(1 << 30); t.merges()                # doctest: +SKIP
[(101, 102, 260)]

The rules (README "Training a BPE vocabulary"):
- ids 0-3 are <|unk|>, <|bos|>, <|eos|>, <|pad|>; then the base tokens: every byte b as
  4 + b, or with `ascii_only` tab, LF, CR and 0x20-0x7E in byte order (4..101); a byte
  that is not a base token separates what is on its two sides as a sequence end does;
- a pair's count is the number of places where its two tokens stand side by side (in a
  run "aaa" the pair (a, a) stands twice), times the count of the sequence;
- the most frequent pair is merged, ties going to the smallest (left id, right id); its
  places are replaced left to right ("aaa" becomes "aa" "a"); the merged token's bytes
  are those of the two, and when a token with those bytes exists already the merge
  gives that token (the vocabulary is a set of byte strings, as tokenizer.json's is);
- a pair whose merged bytes spell a special token is never merged (a tokenizer.json
  vocabulary cannot hold the same text twice);
- training stops when the vocabulary holds `vocab_size` tokens, or when the best pair's
  count is below `min_frequency` (or no pair is left).

Memory: the distinct sequences are laid out once as ids, int16 up to a 32,768-token
vocabulary and int32 past it (2 or 4 bytes a corpus byte, plus one separator slot a
sequence; their bytes are freed once laid out), every pair keeps the places where it
stands (an int32 each: 4 bytes a corpus byte at the start, then the places merges make;
a list is compacted when its pair's count shows three quarters of it stale, or half of
it when it would grow, and one of at most two places needs no allocation), and the pair
table holds one record (32 bytes) and one map slot (16 bytes, at most half full) per
pair counted now: a pair counted 0 is forgotten (its places freed, its slot removed, its
record reused).
A symbol spanning corpus bytes [s, e) holds its id at s and at e - 1 and DEAD in between,
so the next symbol starts at s + len and the previous one ends at s - 1: no links are
stored. The merge loop runs without the GIL and fetches the symbols and map slots of
the places ahead; the layout and the first counts run on the core's thread pool, and
the result never depends on the number of threads.
"""
from libc.stdint cimport int16_t, int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memcmp, memcpy, memmove, memset

from toksmith._core.threadpool cimport parallel_for
from toksmith._core.bpe_tables cimport (Entry, Heap, PairMap, PairSlot, PosList, _mix, heap_pop, heap_push, pair_key,
                                        pairmap_entry, pairmap_get, pairmap_init, pairmap_remove, poslist_append,
                                        poslist_free, poslist_items)
from toksmith._core.word_table cimport WordTable, table_add, table_add_tail, table_free, table_tail

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define toksmith_prefetch(p) __builtin_prefetch(p)
    #else
    #define toksmith_prefetch(p) ((void)0)
    #endif
    """
    void toksmith_prefetch(const void* p) nogil

SPECIAL_TOKENS = (b"<|unk|>", b"<|bos|>", b"<|eos|>", b"<|pad|>")
N_SPECIALS = 4
# The bytes ascii_only keeps: tab, LF, CR and printable ASCII, in byte order.
ASCII_BYTES = bytes([9, 10, 13]) + bytes(range(0x20, 0x7F))

cdef int32_t SEP = -1          # a sequence boundary (or a byte that is no base token)
cdef int32_t DEAD = -2         # inside a symbol (neither its first nor its last byte)
# Laid-out symbols are int16 when every id fits (vocab_size <= 32768: 2 bytes a corpus
# byte, not 4), else int32; the code is the same for both (SEP and DEAD stay negative).
ctypedef fused sym_t:
    int16_t
    int32_t
cdef Py_ssize_t NARROW_MAX_VOCAB = 32768
cdef int32_t N_SPECIAL = 4
cdef Py_ssize_t SPECIAL_LEN = 7
# Places are int32: the slots (corpus bytes + one per sequence + 1) stay below this.
MAX_SLOTS = (1 << 31) - 2
cdef Py_ssize_t PIECE_BYTES = 1 << 20
cdef Py_ssize_t COMPACT_MIN = 32          # lists shorter than this just grow
cdef Py_ssize_t N_BYTE_PAIRS = 65536
cdef Py_ssize_t PREFETCH_AHEAD = 16       # places: their symbols are fetched this many places early,
cdef Py_ssize_t PREFETCH_PAIRS = 8        # their pairs' map slots this many
# While a merge walks the places of its pair, the places already walked are dropped (the
# rest moved to the front, the array shrunk) once they are at least DROP_WALKED_MIN and a
# quarter of those left: the list shrinks as the new pairs' lists grow (issue 30 item 10:
# on one run of a byte, all of (a, a)'s 4 bytes a corpus byte stood beside (aa, aa)'s).
# Each drop moves the places left, at most 4 times the list's length in all.
cdef Py_ssize_t DROP_WALKED_MIN = 1 << 16


cdef struct PairRec:
    int64_t count              # weighted count
    int32_t a
    int32_t b
    PosList pos                # places (slot of the left symbol's first byte); some may be stale


cdef struct Piece:
    int64_t src                # where its bytes start in the sequence table's data
    int64_t dst                # the slot of its first byte
    int64_t n                  # bytes
    int64_t weight             # the count of its sequence
    bint first                 # the first piece of its sequence (writes the separator before it)


cdef struct CountJob:
    void* trainer
    const char* data
    Piece* pieces
    Py_ssize_t n_pieces
    Py_ssize_t n_chunks
    uint32_t* occ              # n_chunks x 65536: places per byte pair (then: where the chunk's go)
    int64_t* weighted          # n_chunks x 65536
    int32_t* pair_index        # 65536: the record of each byte pair
    int pass_no                # 0: lay out the bytes, 1: count, 2: scatter places


cdef int _cmp_int32(const void* x, const void* y) noexcept nogil:
    cdef int32_t a = (<const int32_t*>x)[0], b = (<const int32_t*>y)[0]
    return (a > b) - (a < b)


cdef int _cmp_by_weight(const void* x, const void* y) noexcept nogil:
    """(weight, first appearance): two int64 each."""
    cdef const int64_t* a = <const int64_t*>x
    cdef const int64_t* b = <const int64_t*>y
    if a[0] != b[0]:
        return (a[0] > b[0]) - (a[0] < b[0])
    return (a[1] > b[1]) - (a[1] < b[1])


cdef void _count_chunks(void* ctx, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    cdef CountJob* job = <CountJob*>ctx
    cdef Py_ssize_t chunk, k, lo, hi
    for chunk in range(start, end):
        lo = job.n_pieces * chunk // job.n_chunks
        hi = job.n_pieces * (chunk + 1) // job.n_chunks
        for k in range(lo, hi):
            if job.pass_no == 0:
                (<ByteStreamTrainer>job.trainer)._lay_out(job.data, &job.pieces[k])
            elif job.pass_no == 1:
                (<ByteStreamTrainer>job.trainer)._count_piece(&job.pieces[k], job.occ + chunk * N_BYTE_PAIRS,
                                                              job.weighted + chunk * N_BYTE_PAIRS)
            else:
                (<ByteStreamTrainer>job.trainer)._scatter_piece(&job.pieces[k], job.occ + chunk * N_BYTE_PAIRS,
                                                                job.pair_index)


cdef class ByteStreamTrainer:
    """See the module docstring."""
    cdef WordTable seqs          # distinct sequences (raw bytes) with their counts
    cdef bint in_sequence
    cdef readonly int64_t bytes_read
    cdef readonly bint ascii_only
    cdef int32_t byte_id[256]    # base token of each byte, SEP when none
    cdef Py_ssize_t vocab_size
    cdef int64_t floor           # the smallest count that may be merged
    cdef int threads
    # tokens
    cdef WordTable strings       # each token's bytes, by id
    cdef int32_t* tlen
    cdef Py_ssize_t tlen_cap
    # the laid-out sequences
    cdef void* sym               # sym_t per slot: int16 when `narrow`, else int32
    cdef readonly bint narrow
    cdef readonly int64_t n_slots
    cdef int64_t* class_end      # sequences sorted by count: class k ends before slot class_end[k]
    cdef int64_t* class_weight
    cdef Py_ssize_t n_classes
    cdef int64_t min_weight      # the smallest count of a sequence
    # pairs
    cdef PairMap pairs           # pair key -> record index + 1 (value); pending: the merge that last raised it
    cdef PairRec* recs
    cdef Py_ssize_t n_recs
    cdef Py_ssize_t recs_cap
    cdef int32_t* free_recs      # records of pairs counted 0 (out of the map), for reuse
    cdef Py_ssize_t n_free
    cdef Py_ssize_t free_cap
    cdef uint64_t merging        # the key of the pair being merged (its record stays until the merge ends)
    cdef Heap queue              # entries for (at least) every pair counted >= theta
    cdef int64_t theta
    cdef int32_t* raised         # records whose count rose in this merge
    cdef Py_ssize_t n_raised
    cdef Py_ssize_t raised_cap
    cdef int32_t mark
    # merges learnt: (a, b, new id) each
    cdef int32_t* merge_triples
    cdef Py_ssize_t n_merges
    cdef Py_ssize_t merges_cap
    cdef readonly bint prepared
    cdef bint finished

    def __init__(self, bint ascii_only=False):
        cdef int b
        self.ascii_only = ascii_only
        for b in range(256):
            self.byte_id[b] = SEP
        if ascii_only:
            for b, byte in enumerate(ASCII_BYTES):
                self.byte_id[byte] = N_SPECIAL + b
        else:
            for b in range(256):
                self.byte_id[b] = N_SPECIAL + b

    def __dealloc__(self):
        cdef Py_ssize_t i
        table_free(&self.seqs)
        table_free(&self.strings)
        free(self.tlen)
        free(self.sym)
        free(self.class_end)
        free(self.class_weight)
        free(self.pairs.slots)
        if self.recs != NULL:
            for i in range(self.n_recs):
                poslist_free(&self.recs[i].pos)
            free(self.recs)
        free(self.queue.data)
        free(self.raised)
        free(self.free_recs)
        free(self.merge_triples)

    # ------------------------------------------------------------ reading

    def add(self, const unsigned char[::1] data, uint64_t count=1):
        """One whole sequence (`count` times)."""
        self.begin()
        self.append(data)
        self.end(count)

    def begin(self):
        """Start a sequence given in parts (`append`, then `end`)."""
        if self.prepared:
            raise RuntimeError("the trainer is prepared: no more sequences")
        if self.in_sequence:
            raise RuntimeError("begin() inside a sequence")
        self.in_sequence = True
        self.seqs.pending = 0

    def append(self, const unsigned char[::1] chunk):
        cdef Py_ssize_t n = chunk.shape[0]
        cdef char* out
        if not self.in_sequence:
            raise RuntimeError("append() outside a sequence")
        if n == 0:
            return
        if self.seqs.size + self.seqs.pending + n + self.seqs.n + 2 > MAX_SLOTS:
            self.seqs.pending = 0
            self.in_sequence = False
            raise ValueError(f"the corpus's distinct sequences hold over {MAX_SLOTS} bytes: more than one "
                             f"byte-stream training lays out (its places are int32)")
        out = table_tail(&self.seqs, n)
        if out == NULL:
            raise MemoryError("out of memory reading the corpus")
        memcpy(out, &chunk[0], n)
        self.bytes_read += n

    def end(self, uint64_t count=1):
        """End the sequence (an empty one is left out)."""
        if not self.in_sequence:
            raise RuntimeError("end() outside a sequence")
        self.in_sequence = False
        if self.seqs.pending <= 0:
            self.seqs.pending = 0
            return
        if self.seqs.size + self.seqs.pending + self.seqs.n + 2 > MAX_SLOTS:
            self.seqs.pending = 0
            raise ValueError(f"the corpus's distinct sequences hold over {MAX_SLOTS} bytes: more than one "
                             f"byte-stream training lays out (its places are int32)")
        if table_add_tail(&self.seqs, count) < 0:
            raise MemoryError("out of memory reading the corpus")

    @property
    def n_sequences(self):
        """Distinct non-empty sequences read."""
        return self.seqs.n

    @property
    def distinct_bytes(self):
        return self.seqs.size

    def base_bytes(self):
        """How many bytes read are base tokens (all of them unless ascii_only), counting
        repeats."""
        cdef Py_ssize_t i, k
        cdef int64_t total = 0
        cdef const unsigned char* d = <const unsigned char*>self.seqs.data
        for i in range(self.seqs.n):
            for k in range(self.seqs.starts[i], self.seqs.starts[i + 1]):
                if self.byte_id[d[k]] >= 0:
                    total += <int64_t>self.seqs.counts[i]
        return total

    # ------------------------------------------------------------ laying out and counting

    def prepare(self, Py_ssize_t vocab_size, uint64_t min_frequency, int threads=1):
        """Lay the sequences out, count their pairs (on `threads` threads) and set up the
        merge loop; the sequences' bytes are freed."""
        cdef int rc
        if self.prepared:
            raise RuntimeError("prepare() called twice")
        if self.in_sequence:
            raise RuntimeError("prepare() inside a sequence")
        self.vocab_size = vocab_size
        self.floor = <int64_t>min_frequency if min_frequency > 1 else 1
        self.threads = max(1, threads)
        self._init_tokens()
        with nogil:
            rc = self._prepare()
        table_free(&self.seqs)
        if rc < 0:
            raise MemoryError("out of memory laying out the corpus")
        self.prepared = True

    cdef int _init_tokens(self) except -1:
        cdef Py_ssize_t b
        cdef bytes text
        for text in SPECIAL_TOKENS:
            if table_add(&self.strings, text, len(text), 0) < 0 or self._set_len(self.strings.n - 1, len(text)) < 0:
                raise MemoryError()
        for b in range(256):
            if self.byte_id[b] >= 0:
                text = bytes([b])
                if table_add(&self.strings, text, 1, 0) != self.byte_id[b] or self._set_len(self.byte_id[b], 1) < 0:
                    raise MemoryError()
        return 0

    cdef int _set_len(self, Py_ssize_t id, int32_t n) noexcept nogil:
        cdef Py_ssize_t cap
        cdef int32_t* d
        if id >= self.tlen_cap:
            cap = self.tlen_cap * 2 if self.tlen_cap else 1024
            while cap <= id:
                cap *= 2
            d = <int32_t*>realloc(self.tlen, cap * sizeof(int32_t))
            if d == NULL:
                return -1
            self.tlen = d
            self.tlen_cap = cap
        self.tlen[id] = n
        return 0

    cdef int _prepare(self) noexcept nogil:
        cdef CountJob job
        cdef int64_t* order = NULL
        cdef int rc
        memset(&job, 0, sizeof(CountJob))
        rc = self._lay_out_all(&job, &order)
        table_free(&self.seqs)          # laid out: the bytes are no longer needed
        if rc == 0:
            rc = self._first_counts(&job)
        free(order)
        free(job.pieces)
        free(job.occ)
        free(job.weighted)
        free(job.pair_index)
        return rc

    cdef int _lay_out_all(self, CountJob* job, int64_t** order_out) noexcept nogil:
        """Sequences by (count, first appearance), each count's sequences one run of slots
        (its weight class), a separator before each and after the last; the bytes written
        as base token ids (SEP for a byte that is none) on the pool."""
        cdef Py_ssize_t S = self.seqs.n, i, k, n_pieces = 0
        cdef int64_t* order
        cdef Piece* pieces
        cdef int64_t slot = 0, length, off, w
        order = <int64_t*>malloc((2 * S + 2) * sizeof(int64_t))
        order_out[0] = order
        if order == NULL:
            return -1
        for i in range(S):
            order[2 * i] = <int64_t>self.seqs.counts[i]
            order[2 * i + 1] = i
        qsort(order, S, 2 * sizeof(int64_t), _cmp_by_weight)
        pieces = <Piece*>malloc((S + self.seqs.size // PIECE_BYTES + 1) * sizeof(Piece))
        job.pieces = pieces
        self.n_slots = self.seqs.size + S + 1
        self.narrow = self.vocab_size <= NARROW_MAX_VOCAB
        self.sym = malloc(self.n_slots * (sizeof(int16_t) if self.narrow else sizeof(int32_t)))
        self.class_end = <int64_t*>malloc((S + 1) * sizeof(int64_t))
        self.class_weight = <int64_t*>malloc((S + 1) * sizeof(int64_t))
        if pieces == NULL or self.sym == NULL or self.class_end == NULL or self.class_weight == NULL:
            return -1
        self.n_classes = 0
        for k in range(S):
            i = order[2 * k + 1]
            w = order[2 * k]
            if self.n_classes == 0 or self.class_weight[self.n_classes - 1] != w:
                if self.n_classes:
                    self.class_end[self.n_classes - 1] = slot + 1
                self.class_weight[self.n_classes] = w
                self.n_classes += 1
            length = self.seqs.starts[i + 1] - self.seqs.starts[i]
            off = 0
            while off < length:
                pieces[n_pieces].src = self.seqs.starts[i] + off
                pieces[n_pieces].dst = slot + 1 + off
                pieces[n_pieces].n = min(PIECE_BYTES, length - off)
                pieces[n_pieces].weight = w
                pieces[n_pieces].first = off == 0
                n_pieces += 1
                off += PIECE_BYTES
            slot += length + 1
        if self.n_classes == 0:
            self.class_weight[0] = 1
            self.n_classes = 1
        self.min_weight = max(1, self.class_weight[0])     # classes ascend
        self.class_end[self.n_classes - 1] = self.n_slots
        if self.narrow:
            (<int16_t*>self.sym)[self.n_slots - 1] = SEP
        else:
            (<int32_t*>self.sym)[self.n_slots - 1] = SEP
        job.trainer = <void*>self
        job.data = self.seqs.data
        job.n_pieces = n_pieces
        job.n_chunks = min(<Py_ssize_t>self.threads * 4, n_pieces) if n_pieces else 1
        if job.n_chunks > 64:
            job.n_chunks = 64
        job.pass_no = 0
        parallel_for(job.n_chunks, 1, self.threads, _count_chunks, job)
        return 0

    cdef int _first_counts(self, CountJob* job) noexcept nogil:
        """Count the byte pairs (per chunk on the pool, then summed), give each a record
        with room for exactly its places, and write the places (each chunk where its own
        go: every list comes out in slot order, whatever the number of chunks)."""
        cdef Py_ssize_t c, p, k
        cdef uint64_t total_occ
        cdef int64_t total_w, best = 0, run
        cdef int32_t a, b
        job.occ = <uint32_t*>calloc(job.n_chunks * N_BYTE_PAIRS, sizeof(uint32_t))
        job.weighted = <int64_t*>calloc(job.n_chunks * N_BYTE_PAIRS, sizeof(int64_t))
        job.pair_index = <int32_t*>malloc(N_BYTE_PAIRS * sizeof(int32_t))
        if job.occ == NULL or job.weighted == NULL or job.pair_index == NULL:
            return -1
        job.pass_no = 1
        parallel_for(job.n_chunks, 1, self.threads, _count_chunks, job)
        if pairmap_init(&self.pairs, 1 << 16) < 0:
            return -1
        for p in range(N_BYTE_PAIRS):
            total_occ = 0
            total_w = 0
            for c in range(job.n_chunks):
                run = job.occ[c * N_BYTE_PAIRS + p]
                job.occ[c * N_BYTE_PAIRS + p] = <uint32_t>total_occ     # where chunk c's places go
                total_occ += <uint64_t>run
                total_w += job.weighted[c * N_BYTE_PAIRS + p]
            job.pair_index[p] = -1
            if total_occ == 0:
                continue
            a = <int32_t>(p >> 8) + N_SPECIAL
            b = <int32_t>(p & 255) + N_SPECIAL
            k = self._record(a, b)
            if k < 0:
                return -1
            job.pair_index[p] = <int32_t>k
            self.recs[k].count = total_w
            self.recs[k].pos.data = <int32_t*>malloc(total_occ * sizeof(int32_t))
            if self.recs[k].pos.data == NULL:
                return -1
            self.recs[k].pos.size = <int32_t>total_occ
            self.recs[k].pos.cap = <int32_t>total_occ
            if total_w > best:
                best = total_w
        job.pass_no = 2
        parallel_for(job.n_chunks, 1, self.threads, _count_chunks, job)
        self.theta = best // 64
        if self.theta < self.floor:
            self.theta = self.floor
        return self._push_from(self.theta, -1)

    cdef void _lay_out(self, const char* data, const Piece* pc) noexcept nogil:
        if self.narrow:
            _lay_out_symbols(self, <int16_t*>self.sym, data, pc)
        else:
            _lay_out_symbols(self, <int32_t*>self.sym, data, pc)

    cdef void _count_piece(self, const Piece* pc, uint32_t* occ, int64_t* weighted) noexcept nogil:
        if self.narrow:
            _count_piece_pairs(<int16_t*>self.sym, pc, occ, weighted)
        else:
            _count_piece_pairs(<int32_t*>self.sym, pc, occ, weighted)

    cdef void _scatter_piece(self, const Piece* pc, uint32_t* where, const int32_t* pair_index) noexcept nogil:
        if self.narrow:
            _scatter_piece_places(self, <int16_t*>self.sym, pc, where, pair_index)
        else:
            _scatter_piece_places(self, <int32_t*>self.sym, pc, where, pair_index)

    cdef Py_ssize_t _record(self, int32_t a, int32_t b) noexcept nogil:
        """The record of pair (a, b), made (count 0, no places) when new; -1: out of memory."""
        cdef bint created
        cdef PairSlot* slot = pairmap_entry(&self.pairs, pair_key(a, b), &created)
        if slot == NULL:
            return -1
        if slot.value == 0:
            return self._new_record(slot, a, b)
        return slot.value - 1

    cdef Py_ssize_t _new_record(self, PairSlot* slot, int32_t a, int32_t b) noexcept nogil:
        """A record for the map's new slot of (a, b) (the map is not touched)."""
        cdef Py_ssize_t cap, k
        cdef PairRec* d
        if self.n_free:
            self.n_free -= 1
            k = self.free_recs[self.n_free]
            memset(&self.recs[k], 0, sizeof(PairRec))
            self.recs[k].a = a
            self.recs[k].b = b
            slot.value = <int32_t>(k + 1)
            return k
        if self.n_recs == self.recs_cap:
            cap = self.recs_cap * 2 if self.recs_cap else 1 << 16
            d = <PairRec*>realloc(self.recs, cap * sizeof(PairRec))
            if d == NULL:
                return -1
            self.recs = d
            self.recs_cap = cap
        if self.n_recs >= 0x7FFFFFFE:
            return -1
        memset(&self.recs[self.n_recs], 0, sizeof(PairRec))
        self.recs[self.n_recs].a = a
        self.recs[self.n_recs].b = b
        self.n_recs += 1
        slot.value = <int32_t>self.n_recs
        return self.n_recs - 1

    cdef int _push_from(self, int64_t lo, int64_t hi) noexcept nogil:
        """Queue every pair counted in [lo, hi) (hi < 0: no upper bound)."""
        cdef Py_ssize_t k
        cdef Entry e
        memset(&e, 0, sizeof(Entry))
        for k in range(self.n_recs):
            if self.recs[k].count >= lo and (hi < 0 or self.recs[k].count < hi):
                e.count = <uint64_t>self.recs[k].count
                e.a = <uint32_t>self.recs[k].a
                e.b = <uint32_t>self.recs[k].b
                if heap_push(&self.queue, e) < 0:
                    return -1
        return 0

    # ------------------------------------------------------------ the merge loop

    cdef inline int64_t _weight(self, int64_t slot) noexcept nogil:
        cdef Py_ssize_t lo = 0, hi = self.n_classes - 1, mid
        while lo < hi:
            mid = (lo + hi) >> 1
            if self.class_end[mid] > slot:
                hi = mid
            else:
                lo = mid + 1
        return self.class_weight[lo]

    cdef int _compact(self, PairRec* r) noexcept nogil:
        """Drop the places where the pair no longer stands; shrink a list mostly stale."""
        if self.narrow:
            return _compact_places(self, <int16_t*>self.sym, r)
        return _compact_places(self, <int32_t*>self.sym, r)

    cdef inline int _raise(self, int32_t a, int32_t b, int64_t w, int32_t place) noexcept nogil:
        """count(a, b) += w, a new place of the pair."""
        cdef bint created
        cdef PairSlot* slot = pairmap_entry(&self.pairs, pair_key(a, b), &created)
        cdef Py_ssize_t k, cap
        cdef PairRec* r
        cdef int32_t* d
        if slot == NULL:
            return -1
        if slot.value == 0:
            k = self._new_record(slot, a, b)
            if k < 0:
                return -1
        else:
            k = slot.value - 1
        if slot.pending != self.mark:
            slot.pending = self.mark
            if self.n_raised == self.raised_cap:
                cap = self.raised_cap * 2 if self.raised_cap else 1024
                d = <int32_t*>realloc(self.raised, cap * sizeof(int32_t))
                if d == NULL:
                    return -1
                self.raised = d
                self.raised_cap = cap
            self.raised[self.n_raised] = <int32_t>k
            self.n_raised += 1
        r = &self.recs[k]
        r.count += w
        if r.pos.size == r.pos.cap and r.pos.cap >= COMPACT_MIN and r.count // self.min_weight <= r.pos.size // 2:
            # at most count / min_weight places are live: at least half the list is stale
            self._compact(r)
        return poslist_append(&r.pos, place)

    cdef inline int _lower(self, int32_t a, int32_t b, int64_t w) noexcept nogil:
        cdef uint64_t key = pair_key(a, b)
        cdef int32_t k = pairmap_get(&self.pairs, key) - 1
        cdef PairRec* r = &self.recs[k]
        r.count -= w
        if r.count == 0 and key != self.merging:
            return self._forget(k, key)   # the pair stands nowhere: every place left is stale
        if r.pos.cap >= COMPACT_MIN and (r.count // self.min_weight) * 4 <= r.pos.size:
            self._compact(r)              # three quarters of the list or more are stale
        return 0

    cdef int _forget(self, int32_t k, uint64_t key) noexcept nogil:
        """Drop a pair counted 0: its places, its map slot; its record is reused."""
        cdef Py_ssize_t cap
        cdef int32_t* d
        poslist_free(&self.recs[k].pos)
        pairmap_remove(&self.pairs, key)
        if self.n_free == self.free_cap:
            cap = self.free_cap * 2 if self.free_cap else 4096
            d = <int32_t*>realloc(self.free_recs, cap * sizeof(int32_t))
            if d == NULL:
                return -1
            self.free_recs = d
            self.free_cap = cap
        self.free_recs[self.n_free] = k
        self.n_free += 1
        return 0

    cdef inline void _prefetch_slot(self, int32_t a, int32_t b) noexcept nogil:
        toksmith_prefetch(&self.pairs.slots[<Py_ssize_t>(_mix(pair_key(a, b) + 1) & <uint64_t>self.pairs.mask)])

    cdef int _apply(self, Py_ssize_t k, int32_t a, int32_t b, int32_t n) noexcept nogil:
        """Merge every place of pair record k, left to right."""
        if self.narrow:
            return _apply_merge(self, <int16_t*>self.sym, k, a, b, n)
        return _apply_merge(self, <int32_t*>self.sym, k, a, b, n)

    cdef bint _spells_special(self, int32_t a, int32_t b) noexcept nogil:
        cdef Py_ssize_t la = self.tlen[a], i
        cdef const char* s
        if la + self.tlen[b] != SPECIAL_LEN:
            return False
        for i in range(N_SPECIAL):
            s = self.strings.data + self.strings.starts[i]
            if (memcmp(s, self.strings.data + self.strings.starts[a], la) == 0
                    and memcmp(s + la, self.strings.data + self.strings.starts[b], SPECIAL_LEN - la) == 0):
                return True
        return False

    cdef int32_t _token(self, int32_t a, int32_t b) noexcept nogil:
        """The id of the token spelling a's bytes then b's, added when new; -1: out of memory."""
        cdef Py_ssize_t na = self.tlen[a], nb = self.tlen[b], id
        cdef char buf[256]
        cdef char* s = &buf[0]
        if na + nb > 256:
            s = <char*>malloc(na + nb)
            if s == NULL:
                return -1
        memcpy(s, self.strings.data + self.strings.starts[a], na)
        memcpy(s + na, self.strings.data + self.strings.starts[b], nb)   # (copied: table_add may move data)
        id = table_add(&self.strings, s, na + nb, 0)
        if s != &buf[0]:
            free(s)
        if id < 0 or self._set_len(id, <int32_t>(na + nb)) < 0:
            return -1
        return <int32_t>id

    cdef int _step(self) noexcept nogil:
        """One merge: 1 = training is over, 0 = go on, -1 = out of memory."""
        cdef Entry top
        cdef Py_ssize_t k, cap
        cdef int64_t current
        cdef int32_t n
        cdef int32_t* d
        while True:
            if self.strings.n >= self.vocab_size:
                return 1
            if self.queue.size == 0:
                if self.theta <= self.floor:
                    return 1
                current = self.theta
                self.theta = self.theta // 2
                if self.theta < self.floor:
                    self.theta = self.floor
                if self._push_from(self.theta, current) < 0:
                    return -1
                continue
            top = heap_pop(&self.queue)
            k = pairmap_get(&self.pairs, pair_key(top.a, top.b)) - 1
            if k < 0:
                continue                  # counted 0 since: forgotten
            current = self.recs[k].count
            if <uint64_t>current != top.count:
                if current >= self.theta:
                    top.count = <uint64_t>current
                    if heap_push(&self.queue, top) < 0:
                        return -1
                continue
            if self._spells_special(<int32_t>top.a, <int32_t>top.b):
                continue
            n = self._token(<int32_t>top.a, <int32_t>top.b)
            if n < 0:
                return -1
            if self.n_merges == self.merges_cap:
                cap = self.merges_cap * 2 if self.merges_cap else 4096
                d = <int32_t*>realloc(self.merge_triples, 3 * cap * sizeof(int32_t))
                if d == NULL:
                    return -1
                self.merge_triples = d
                self.merges_cap = cap
            self.merge_triples[3 * self.n_merges] = <int32_t>top.a
            self.merge_triples[3 * self.n_merges + 1] = <int32_t>top.b
            self.merge_triples[3 * self.n_merges + 2] = n
            self.n_merges += 1
            return self._apply(k, <int32_t>top.a, <int32_t>top.b, n)

    def run(self, Py_ssize_t max_merges):
        """Learn up to `max_merges` more merges; True when training is over."""
        cdef int rc = 0
        cdef Py_ssize_t goal
        if not self.prepared:
            raise RuntimeError("run() before prepare()")
        if self.finished:
            return True
        goal = self.n_merges + max_merges
        with nogil:
            while self.n_merges < goal:
                rc = self._step()
                if rc != 0:
                    break
        if rc < 0:
            raise MemoryError("out of memory while learning merges")
        if rc == 1:
            self.finished = True
            self._release()
        return self.finished

    cdef void _release(self):
        """Free what only the merge loop needs."""
        cdef Py_ssize_t i
        free(self.sym)
        self.sym = NULL
        if self.recs != NULL:
            for i in range(self.n_recs):
                poslist_free(&self.recs[i].pos)
            free(self.recs)
            self.recs = NULL
            self.n_recs = 0
        free(self.pairs.slots)
        self.pairs.slots = NULL
        free(self.queue.data)
        self.queue.data = NULL
        self.queue.size = 0
        free(self.free_recs)
        self.free_recs = NULL
        self.n_free = 0

    @property
    def n_tokens(self):
        return self.strings.n

    @property
    def n_pairs(self):
        """Distinct pairs counted now (for memory reports)."""
        return self.n_recs - self.n_free

    def memory(self):
        """Bytes held by each structure now (for memory reports)."""
        cdef Py_ssize_t i
        cdef int64_t places = 0, room = 0, live = 0
        if self.recs != NULL:
            for i in range(self.n_recs):
                live += self.recs[i].count > 0
                places += self.recs[i].pos.size
                room += self.recs[i].pos.cap
        return {"sequences": self.seqs.cap + self.seqs.n_cap * 16 + (self.seqs.mask + 1) * 4 if self.seqs.slots else 0,
                "symbols": self.n_slots * (2 if self.narrow else 4) if self.sym != NULL else 0,
                "places": places * 4, "place_room": room * 4,
                "pair_records": self.recs_cap * sizeof(PairRec) if self.recs != NULL else 0,
                "pair_map": (self.pairs.mask + 1) * sizeof(PairSlot) if self.pairs.slots != NULL else 0,
                "queue": self.queue.cap * sizeof(Entry) if self.queue.data != NULL else 0,
                "queue_entries": self.queue.size, "pairs": self.n_recs - self.n_free, "live_pairs": live}

    def vocab(self):
        """Every token's bytes, by id."""
        cdef Py_ssize_t i
        return [self.strings.data[self.strings.starts[i]:self.strings.starts[i + 1]]
                for i in range(self.strings.n)]

    def merges(self):
        """The merges as (left id, right id), in the order learnt; a pair merged again
        later (possible once a merge gave an existing token) is listed once, first."""
        cdef Py_ssize_t i
        seen = set()
        out = []
        for i in range(self.n_merges):
            pair = (self.merge_triples[3 * i], self.merge_triples[3 * i + 1])
            if pair not in seen:
                seen.add(pair)
                out.append(pair)
        return out

    def merge_results(self):
        """(left id, right id, merged id) of every merge learnt, in order (repeats kept)."""
        cdef Py_ssize_t i
        return [(self.merge_triples[3 * i], self.merge_triples[3 * i + 1], self.merge_triples[3 * i + 2])
                for i in range(self.n_merges)]


# ---------------------------------------------------------------- the symbol loops, per symbol width

cdef void _lay_out_symbols(ByteStreamTrainer t, sym_t* sym, const char* data, const Piece* pc) noexcept nogil:
    cdef const unsigned char* src = <const unsigned char*>data + pc.src
    cdef sym_t* out = sym + pc.dst
    cdef Py_ssize_t i
    if pc.first:
        sym[pc.dst - 1] = <sym_t>SEP
    for i in range(pc.n):
        out[i] = <sym_t>t.byte_id[src[i]]


cdef void _count_piece_pairs(const sym_t* sym, const Piece* pc, uint32_t* occ, int64_t* weighted) noexcept nogil:
    """The pairs whose left byte is in the piece (the right one may be in the next)."""
    cdef const sym_t* s = sym + pc.dst
    cdef Py_ssize_t i
    cdef int32_t x, y
    cdef uint32_t p
    cdef int64_t w = pc.weight
    for i in range(pc.n):
        x = s[i]
        y = s[i + 1]
        if x >= 0 and y >= 0:
            p = <uint32_t>((x - N_SPECIAL) << 8 | (y - N_SPECIAL))
            occ[p] += 1
            weighted[p] += w


cdef void _scatter_piece_places(ByteStreamTrainer t, const sym_t* sym, const Piece* pc, uint32_t* where,
                                const int32_t* pair_index) noexcept nogil:
    cdef const sym_t* s = sym + pc.dst
    cdef Py_ssize_t i
    cdef int32_t x, y
    cdef uint32_t p
    for i in range(pc.n):
        x = s[i]
        y = s[i + 1]
        if x >= 0 and y >= 0:
            p = <uint32_t>((x - N_SPECIAL) << 8 | (y - N_SPECIAL))
            t.recs[pair_index[p]].pos.data[where[p]] = <int32_t>(pc.dst + i)
            where[p] += 1


cdef int _compact_places(ByteStreamTrainer t, const sym_t* sym, PairRec* r) noexcept nogil:
    """ByteStreamTrainer._compact."""
    cdef Py_ssize_t i, k = 0
    cdef int32_t p, a = r.a, b = r.b
    cdef int32_t la = t.tlen[a]
    cdef int32_t* d
    cdef int32_t cap
    if r.pos.cap == 0:
        return 0
    for i in range(r.pos.size):
        if i + PREFETCH_AHEAD < r.pos.size:
            toksmith_prefetch(&sym[r.pos.data[i + PREFETCH_AHEAD]])
        p = r.pos.data[i]
        if sym[p] == a and sym[p + la] == b:
            r.pos.data[k] = p
            k += 1
    r.pos.size = <int32_t>k
    if k * 2 < r.pos.cap:
        cap = max(<int32_t>(k * 2), <int32_t>COMPACT_MIN)
        d = <int32_t*>realloc(r.pos.data, cap * sizeof(int32_t))
        if d != NULL:
            r.pos.data = d
            r.pos.cap = cap
    return 0


cdef inline void _prefetch_merge_pairs(ByteStreamTrainer t, const sym_t* sym, int32_t p, int32_t a, int32_t b,
                                       int32_t n, int32_t la, int32_t lb) noexcept nogil:
    """Fetch the map slots a merge at place p will look up (its symbols were fetched
    earlier)."""
    cdef int32_t x, u
    if sym[p] != a or sym[p + la] != b:
        return
    x = sym[p - 1]
    if x >= 0:
        t._prefetch_slot(x, a)
        t._prefetch_slot(x, n)
    u = sym[p + la + lb]
    if u >= 0:
        t._prefetch_slot(b, u)
        t._prefetch_slot(n, u)


cdef void _drop_walked(PosList* list, Py_ssize_t walked, Py_ssize_t left) noexcept nogil:
    """Drop the first `walked` places of an allocated list, keeping the `left` after them
    (moved to the front, the array shrunk to them where realloc can); the caller's walk
    goes on at the new front."""
    cdef int32_t* d
    memmove(list.data, list.data + walked, left * sizeof(int32_t))
    d = <int32_t*>realloc(list.data, left * sizeof(int32_t))
    if d != NULL:
        list.data = d
        list.cap = <int32_t>left
    list.size = <int32_t>left


cdef int _apply_merge(ByteStreamTrainer t, sym_t* sym, Py_ssize_t k, int32_t a, int32_t b,
                      int32_t n) noexcept nogil:
    """ByteStreamTrainer._apply."""
    cdef PosList list = t.recs[k].pos
    cdef PosList places
    cdef int32_t la = t.tlen[a], lb = t.tlen[b], ln
    cdef Py_ssize_t i
    cdef int32_t p, q, r, x, u
    cdef int64_t w
    cdef bint one_class = t.n_classes == 1
    cdef int64_t w1 = t.class_weight[0]
    cdef int64_t e
    cdef Entry entry
    cdef Py_ssize_t walked = 0      # places dropped from the front of places.data (_drop_walked)
    ln = la + lb
    t.merging = pair_key(a, b)
    places.data = poslist_items(&list)       # (the places themselves when inline: in `list`)
    places.size = list.size
    places.cap = list.cap
    t.recs[k].pos.data = NULL
    t.recs[k].pos.size = 0
    t.recs[k].pos.cap = 0
    if a == b:
        # overlapping places ("aaa"): left to right needs them in order
        for i in range(1, places.size):
            if places.data[i] < places.data[i - 1]:
                qsort(places.data, places.size, sizeof(int32_t), _cmp_int32)
                break
    t.mark += 1
    t.n_raised = 0
    # the loop fetches ahead; its first places are fetched here
    for i in range(min(PREFETCH_AHEAD, places.size)):
        toksmith_prefetch(&sym[places.data[i]])
    for i in range(min(PREFETCH_PAIRS, places.size)):
        _prefetch_merge_pairs(t, sym, places.data[i], a, b, n, la, lb)
    for i in range(places.size):
        if list.cap > 0 and i - walked >= DROP_WALKED_MIN and 4 * (i - walked) >= places.size - i:
            _drop_walked(&list, i - walked, places.size - i)
            places.data = list.data
            walked = i
        if i + PREFETCH_AHEAD < places.size:
            toksmith_prefetch(&sym[places.data[i + PREFETCH_AHEAD - walked]])
        if i + PREFETCH_PAIRS < places.size:
            _prefetch_merge_pairs(t, sym, places.data[i + PREFETCH_PAIRS - walked], a, b, n, la, lb)
        p = places.data[i - walked]
        if sym[p] != a:
            continue
        q = p + la
        if sym[q] != b:
            continue
        w = w1 if one_class else t._weight(p)
        x = sym[p - 1]
        if x >= 0:
            if t._lower(x, a, w) < 0 or t._raise(x, n, w, p - t.tlen[x]) < 0:
                poslist_free(&list)
                return -1
        r = q + lb
        u = sym[r]
        if u >= 0:
            if t._lower(b, u, w) < 0 or t._raise(n, u, w, p) < 0:
                poslist_free(&list)
                return -1
        if la > 1:
            sym[q - 1] = <sym_t>DEAD
        if lb > 1:
            sym[q] = <sym_t>DEAD
        sym[p] = <sym_t>n
        sym[p + ln - 1] = <sym_t>n
    poslist_free(&list)
    t.recs[k].count = 0         # every place was merged or taken by a neighbour's merge
    t.merging = 0
    if t._forget(<int32_t>k, pair_key(a, b)) < 0:
        return -1
    memset(&entry, 0, sizeof(Entry))
    for i in range(t.n_raised):
        e = t.recs[t.raised[i]].count
        if e >= t.theta:
            entry.count = <uint64_t>e
            entry.a = <uint32_t>t.recs[t.raised[i]].a
            entry.b = <uint32_t>t.recs[t.raised[i]].b
            if heap_push(&t.queue, entry) < 0:
                return -1
    return 0
