# The containers of the BPE trainer's merge loop (_core/bpe_trainer.pyx), all C:
# a pair -> (count, pending positions) map, word-position lists, the max-heap of
# candidate merges (tokenizers' `Merge` order) and the buffers of pair changes a merge
# records (the token strings live in a word_table.WordTable).
# Every function is nogil; those that allocate return -1 / NULL when memory runs out.
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy

from toksmith._core.byte_keys cimport prefetch


# ------------------------------------------------------------------ pair -> value map

cdef struct PairSlot:
    uint64_t key1            # the pair's key + 1 (0: a free slot)
    int32_t value
    int32_t pending          # the pair's index in the trainer's pending lists (valid when
                             # that index is in use this turn and holds this pair)


cdef struct PairMap:
    PairSlot* slots
    Py_ssize_t mask
    Py_ssize_t used


cdef inline uint64_t _mix(uint64_t x) noexcept nogil:
    x ^= x >> 33
    x *= 0xff51afd7ed558ccdULL
    x ^= x >> 33
    x *= 0xc4ceb9fe1a85ec53ULL
    x ^= x >> 33
    return x


cdef inline int pairmap_init(PairMap* m, Py_ssize_t cap) noexcept nogil:
    cdef Py_ssize_t n = 64
    while n < cap * 2:
        n *= 2
    m.slots = <PairSlot*>calloc(n, sizeof(PairSlot))
    if m.slots == NULL:
        return -1
    m.mask = n - 1
    m.used = 0
    return 0


cdef inline int pairmap_grow(PairMap* m) noexcept nogil:
    cdef PairSlot* old = m.slots
    cdef Py_ssize_t old_n = m.mask + 1, i, j
    cdef Py_ssize_t n = old_n * 2
    m.slots = <PairSlot*>calloc(n, sizeof(PairSlot))
    if m.slots == NULL:
        m.slots = old
        return -1
    m.mask = n - 1
    for i in range(old_n):
        if old[i].key1 != 0:
            j = <Py_ssize_t>(_mix(old[i].key1) & <uint64_t>m.mask)
            while m.slots[j].key1 != 0:
                j = (j + 1) & m.mask
            m.slots[j] = old[i]
    free(old)
    return 0


cdef inline PairSlot* pairmap_entry(PairMap* m, uint64_t key, bint* created) noexcept nogil:
    """The slot of `key`, made (value 0, pending -1) when absent; NULL when out of memory."""
    cdef Py_ssize_t j
    cdef uint64_t key1 = key + 1
    if (m.used + 1) * 2 > m.mask + 1:
        if pairmap_grow(m) < 0:
            return NULL
    j = <Py_ssize_t>(_mix(key1) & <uint64_t>m.mask)
    while m.slots[j].key1 != 0:
        if m.slots[j].key1 == key1:
            created[0] = False
            return &m.slots[j]
        j = (j + 1) & m.mask
    m.slots[j].key1 = key1
    m.slots[j].value = 0
    m.slots[j].pending = -1
    m.used += 1
    created[0] = True
    return &m.slots[j]


cdef inline void pairmap_prefetch(const PairMap* m, uint64_t key) noexcept nogil:
    """Start loading the home slot of `key` (a lookup soon after then waits less)."""
    prefetch(&m.slots[<Py_ssize_t>(_mix(key + 1) & <uint64_t>m.mask)])


cdef inline int32_t pairmap_get(const PairMap* m, uint64_t key) noexcept nogil:
    cdef uint64_t key1 = key + 1
    cdef Py_ssize_t j = <Py_ssize_t>(_mix(key1) & <uint64_t>m.mask)
    while m.slots[j].key1 != 0:
        if m.slots[j].key1 == key1:
            return m.slots[j].value
        j = (j + 1) & m.mask
    return 0


cdef inline bint pairmap_remove(PairMap* m, uint64_t key) noexcept nogil:
    """Remove `key`; False when it is not there. The slots after it in its probe run move
    back into the hole when their home allows (no tombstones: lookups stay as short)."""
    cdef uint64_t key1 = key + 1
    cdef Py_ssize_t j = <Py_ssize_t>(_mix(key1) & <uint64_t>m.mask), k, home
    while m.slots[j].key1 != key1:
        if m.slots[j].key1 == 0:
            return False
        j = (j + 1) & m.mask
    k = j
    while True:
        k = (k + 1) & m.mask
        if m.slots[k].key1 == 0:
            break
        home = <Py_ssize_t>(_mix(m.slots[k].key1) & <uint64_t>m.mask)
        # slot k may fill hole j unless its home lies cyclically in (j, k]
        if (j < k and (home <= j or home > k)) or (j > k and home <= j and home > k):
            m.slots[j] = m.slots[k]
            j = k
    m.slots[j].key1 = 0
    m.used -= 1
    return True


cdef extern from *:
    """
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    #endif
    #include <stdint.h>
    /* The first r' >= r with s[r'] == c1 and s[r' + 1] == c2 (r' + 1 < n), or -1. */
    static inline int32_t toksmith_find_pair(const int32_t* s, int32_t r, int32_t n, int32_t c1, int32_t c2) {
    #if defined(__SSE2__) || defined(_M_X64)
        __m128i v1 = _mm_set1_epi32(c1), v2 = _mm_set1_epi32(c2);
        while (r + 4 < n) {       /* s[r..r+3] against c1 and s[r+1..r+4] against c2 */
            __m128i a = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i*)(s + r)), v1);
            __m128i b = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i*)(s + r + 1)), v2);
            int m = _mm_movemask_ps(_mm_castsi128_ps(_mm_and_si128(a, b)));
            if (m) {
    #if defined(__GNUC__) || defined(__clang__)
                return r + __builtin_ctz(m);
    #else
                return r + ((m & 1) ? 0 : (m & 2) ? 1 : (m & 4) ? 2 : 3);
    #endif
            }
            r += 4;
        }
    #endif
        for (; r + 1 < n; r++)
            if (s[r] == c1 && s[r + 1] == c2)
                return r;
        return -1;
    }
    """
    # the first index r' >= r of the pair (c1, c2) in s[:n], or -1 (SSE2 where there is one)
    int32_t find_pair "toksmith_find_pair"(const int32_t* s, int32_t r, int32_t n, int32_t c1,
                                           int32_t c2) noexcept nogil


cdef inline uint64_t pair_key(uint32_t a, uint32_t b) noexcept nogil:
    return (<uint64_t>a << 32) | b


# ------------------------------------------------------------------ word-position lists

cdef struct PosList:
    int32_t* data
    int32_t size
    int32_t cap


# A list of at most two positions keeps them in its `data` field itself (cap 0): most
# pairs a merge makes stand in one or two words, and then need no allocation. Read the
# positions through poslist_items, free the list with poslist_free.
cdef inline int32_t* poslist_items(PosList* p) noexcept nogil:
    return p.data if p.cap > 0 else <int32_t*>&p.data


cdef inline void poslist_free(PosList* p) noexcept nogil:
    """Free the list's memory; it is empty after."""
    if p.cap > 0:
        free(p.data)
    p.data = NULL
    p.size = 0
    p.cap = 0


cdef inline int poslist_append(PosList* p, int32_t w) noexcept nogil:
    """Append w; 0, or -1 (memory)."""
    cdef int32_t cap
    cdef int32_t* d
    if p.cap == 0:
        if p.size < 2:
            (<int32_t*>&p.data)[p.size] = w
            p.size += 1
            return 0
        d = <int32_t*>malloc(8 * sizeof(int32_t))
        if d == NULL:
            return -1
        memcpy(d, &p.data, 2 * sizeof(int32_t))
        p.data = d
        p.cap = 8
    elif p.size == p.cap:
        cap = p.cap * 2
        d = <int32_t*>realloc(p.data, cap * sizeof(int32_t))
        if d == NULL:
            return -1
        p.data = d
        p.cap = cap
    p.data[p.size] = w
    p.size += 1
    return 0


cdef inline int poslist_push(PosList* p, int32_t w) noexcept nogil:
    """Append word w unless it is the last one already (a word's changes come together:
    that is its only duplicate); 0, or -1 (memory)."""
    if p.size > 0 and poslist_items(p)[p.size - 1] == w:
        return 0
    return poslist_append(p, w)


# ------------------------------------------------------------------ the queue

cdef struct Entry:
    uint64_t count
    uint32_t a
    uint32_t b
    PosList pos


cdef inline bint _before(const Entry* x, const Entry* y) noexcept nogil:
    """x pops before y. Parity: trainer.rs `impl Ord for Merge` (max-heap: count, then
    the smaller pair)."""
    if x.count != y.count:
        return x.count > y.count
    if x.a != y.a:
        return x.a < y.a
    return x.b < y.b


cdef struct Heap:
    Entry* data
    Py_ssize_t size
    Py_ssize_t cap


cdef inline int heap_push(Heap* h, Entry e) noexcept nogil:
    cdef Py_ssize_t i, parent, cap
    cdef Entry* d
    if h.size == h.cap:
        cap = 1024 if h.cap == 0 else h.cap * 2
        d = <Entry*>realloc(h.data, cap * sizeof(Entry))
        if d == NULL:
            return -1
        h.data = d
        h.cap = cap
    i = h.size
    h.size += 1
    while i > 0:
        parent = (i - 1) >> 1
        if not _before(&e, &h.data[parent]):
            break
        h.data[i] = h.data[parent]
        i = parent
    h.data[i] = e
    return 0


cdef inline Entry heap_pop(Heap* h) noexcept nogil:
    cdef Entry top = h.data[0]
    cdef Entry last
    cdef Py_ssize_t i = 0, child, n
    h.size -= 1
    n = h.size
    if n > 0:
        last = h.data[n]
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if 4 * i + 6 < n:       # the next level's four candidates: 128 bytes, 2-3 lines
                prefetch(&h.data[4 * i + 3])
                prefetch(&h.data[4 * i + 5])
                prefetch(&h.data[4 * i + 6])
            if child + 1 < n and _before(&h.data[child + 1], &h.data[child]):
                child += 1
            if not _before(&h.data[child], &last):
                break
            h.data[i] = h.data[child]
            i = child
        h.data[i] = last
    return top


cdef inline Py_ssize_t _utf8_len(unsigned char c) noexcept nogil:
    if c < 0x80:
        return 1
    if c < 0xE0:
        return 2
    if c < 0xF0:
        return 3
    return 4


# ------------------------------------------------------------------ recorded pair changes

cdef struct Change:
    uint64_t key
    int32_t delta
    int32_t w            # >= 0: a pair the merge made in word w; -1: a count change only


cdef struct ChangeBuf:
    Change* data
    Py_ssize_t size
    Py_ssize_t cap
    bint failed          # out of memory


cdef inline void changes_push(ChangeBuf* b, uint64_t key, int32_t delta, int32_t w) noexcept nogil:
    cdef Py_ssize_t cap
    cdef Change* d
    if b.size == b.cap:
        cap = b.cap * 2 if b.cap else 4096
        d = <Change*>realloc(b.data, cap * sizeof(Change))
        if d == NULL:
            b.failed = True
            return
        b.data = d
        b.cap = cap
    b.data[b.size].key = key
    b.data[b.size].delta = delta
    b.data[b.size].w = w
    b.size += 1
