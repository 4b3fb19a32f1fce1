# A queue of BPE merge candidates for very long pre-tokens, popped in the order a merge
# heap pops them (the lowest rank first, then the leftmost), in time linear in practice.
# Header-only (every function is inline), nogil, and -1 on out-of-memory.
#
#     cdef RankQueue q                       # zeroed (a work's calloc), or rq_free'd
#     rq_clear(&q)                           # before each pre-token
#     rq_push(&q, rank, left, size)
#     while rq_pop(&q, &pair): ...           # pair.left, pair.size
#
# Why not the heap. A binary heap of 64M candidates (a 16M-character run of emoji is one
# pre-token of 64M bytes) costs ~26 levels per pop, the deep ones cache misses, so time
# grows as m log m and measurably faster than the text. Here the candidates of one rank
# share a bucket, kept in position order, and only the buckets (a few thousand ranks at
# most) sit in a heap. A rank's bucket is swept left to right.
#
# Why the order is the heap's. The pop takes the bucket of the lowest rank (heap of
# buckets) and its leftmost pending candidate. Pushes land at a bucket's end; while they
# come in position order (a sweep pushes its new pairs left to right) the bucket stays
# sorted, and a bucket that received one out of order is sorted again before its next
# pop. A push to a rank below the one being swept (a vocabulary whose merges do not
# rank in creation order) makes that bucket the heap's top, so it is popped next,
# exactly as the heap would.
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free, malloc, qsort, realloc
from libc.string cimport memset

from toksmith._core.tables cimport U64Map, u64map_free, u64map_get, u64map_init, u64map_put


cdef struct QueuedPair:
    int32_t left        # symbol position of the pair's left side
    int32_t size        # what the caller checks to tell a stale entry (merged byte length)


cdef struct RankBucket:
    QueuedPair* pairs
    Py_ssize_t count        # pairs[cursor:count] are pending
    Py_ssize_t cursor
    Py_ssize_t cap
    int32_t rank
    bint queued             # in the heap of buckets
    bint unsorted           # a push came left of the one before it


cdef struct RankQueue:
    RankBucket* buckets     # [0, n_buckets) in use for this pre-token; all keep their arrays
    Py_ssize_t n_buckets
    Py_ssize_t cap_buckets
    U64Map bucket_of        # rank + 1 -> bucket index
    int32_t last_rank       # the rank of the last push and its bucket (runs of pushes
    int32_t last_index      # share a rank: a sweep of 'a' * n pushes only 'aa' + 'aa')
    int32_t* heap           # indices of queued buckets, a min-heap by rank
    Py_ssize_t heap_size


cdef inline int _rq_by_left(const void* a, const void* b) noexcept nogil:
    cdef int32_t x = (<const QueuedPair*>a).left, y = (<const QueuedPair*>b).left
    return (x > y) - (x < y)


cdef inline void _rq_heap_up(RankQueue* q, Py_ssize_t i) noexcept nogil:
    cdef int32_t item = q.heap[i]
    cdef int32_t rank = q.buckets[item].rank
    cdef Py_ssize_t parent
    while i > 0:
        parent = (i - 1) >> 1
        if q.buckets[q.heap[parent]].rank <= rank:
            break
        q.heap[i] = q.heap[parent]
        i = parent
    q.heap[i] = item


cdef inline void _rq_heap_pop(RankQueue* q) noexcept nogil:
    cdef Py_ssize_t i = 0, child, n
    cdef int32_t last
    cdef int32_t rank
    q.heap_size -= 1
    n = q.heap_size
    if n == 0:
        return
    last = q.heap[n]
    rank = q.buckets[last].rank
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and q.buckets[q.heap[child + 1]].rank < q.buckets[q.heap[child]].rank:
            child += 1
        if q.buckets[q.heap[child]].rank >= rank:
            break
        q.heap[i] = q.heap[child]
        i = child
    q.heap[i] = last


cdef inline int rq_clear(RankQueue* q) noexcept nogil:
    """Empty the queue for a new pre-token (the buckets' arrays stay for reuse)."""
    cdef Py_ssize_t i
    for i in range(q.n_buckets):
        q.buckets[i].count = 0
        q.buckets[i].cursor = 0
        q.buckets[i].queued = False
        q.buckets[i].unsorted = False
    q.n_buckets = 0
    q.heap_size = 0
    q.last_rank = -1
    if q.bucket_of.slots == NULL:
        return u64map_init(&q.bucket_of, 1024)
    memset(q.bucket_of.slots, 0, (q.bucket_of.mask + 1) * sizeof(q.bucket_of.slots[0]))
    q.bucket_of.count = 0
    return 0


cdef inline RankBucket* _rq_new_bucket(RankQueue* q, int32_t rank) noexcept nogil:
    cdef RankBucket* grown
    cdef int32_t* heap
    cdef Py_ssize_t cap
    if q.n_buckets == q.cap_buckets:
        cap = 2 * q.cap_buckets if q.cap_buckets else 64
        grown = <RankBucket*>realloc(q.buckets, cap * sizeof(RankBucket))
        if grown == NULL:
            return NULL
        memset(grown + q.cap_buckets, 0, (cap - q.cap_buckets) * sizeof(RankBucket))
        q.buckets = grown
        heap = <int32_t*>realloc(q.heap, cap * sizeof(int32_t))
        if heap == NULL:
            return NULL
        q.heap = heap
        q.cap_buckets = cap
    if u64map_put(&q.bucket_of, <uint64_t>rank + 1, <int32_t>q.n_buckets) < 0:
        return NULL
    q.n_buckets += 1
    q.buckets[q.n_buckets - 1].rank = rank
    return &q.buckets[q.n_buckets - 1]


cdef inline int rq_push(RankQueue* q, int32_t rank, int32_t left, int32_t size) noexcept nogil:
    """Queue the pair at `left` of rank `rank` (>= 0); 0, or -1 (memory)."""
    cdef int32_t index = q.last_index if rank == q.last_rank else u64map_get(&q.bucket_of, <uint64_t>rank + 1)
    cdef RankBucket* b
    cdef QueuedPair* grown
    cdef Py_ssize_t cap
    if index >= 0:
        b = &q.buckets[index]
    else:
        b = _rq_new_bucket(q, rank)
        if b == NULL:
            return -1
        index = <int32_t>(q.n_buckets - 1)
    q.last_rank = rank
    q.last_index = index
    if b.count == b.cap:
        cap = 2 * b.cap if b.cap else 16
        grown = <QueuedPair*>realloc(b.pairs, cap * sizeof(QueuedPair))
        if grown == NULL:
            return -1
        b.pairs = grown
        b.cap = cap
    if b.count > b.cursor and b.pairs[b.count - 1].left > left:
        b.unsorted = True
    b.pairs[b.count].left = left
    b.pairs[b.count].size = size
    b.count += 1
    if not b.queued:
        b.queued = True
        q.heap[q.heap_size] = index
        q.heap_size += 1
        _rq_heap_up(q, q.heap_size - 1)
    return 0


cdef inline bint rq_pop(RankQueue* q, QueuedPair* out) noexcept nogil:
    """The pending pair of the lowest rank, the leftmost of that rank, into `out`;
    False when the queue is empty."""
    cdef RankBucket* b
    while q.heap_size > 0:
        b = &q.buckets[q.heap[0]]
        if b.cursor < b.count:
            if b.unsorted:
                qsort(b.pairs + b.cursor, b.count - b.cursor, sizeof(QueuedPair), _rq_by_left)
                b.unsorted = False
            out[0] = b.pairs[b.cursor]
            b.cursor += 1
            return True
        b.count = 0
        b.cursor = 0
        b.queued = False
        _rq_heap_pop(q)
    return False


cdef inline Py_ssize_t rq_bytes(const RankQueue* q) noexcept nogil:
    """Bytes the queue holds (for a work's trim)."""
    cdef Py_ssize_t i, total = q.cap_buckets * (sizeof(RankBucket) + sizeof(int32_t))
    for i in range(q.cap_buckets):
        total += q.buckets[i].cap * sizeof(QueuedPair)
    if q.bucket_of.slots != NULL:
        total += (q.bucket_of.mask + 1) * sizeof(q.bucket_of.slots[0])
    return total


cdef inline void rq_free(RankQueue* q) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(q.cap_buckets):
        free(q.buckets[i].pairs)
    free(q.buckets)
    free(q.heap)
    u64map_free(&q.bucket_of)
    q.buckets = NULL
    q.heap = NULL
    q.n_buckets = 0
    q.cap_buckets = 0
    q.heap_size = 0
