# Native tables the models share: an open-addressing map from non-zero uint64 keys to
# int32 values, and a binary min-heap of merge candidates ordered by a uint64 priority.
# Header-only (every function is inline), nogil, and -1 on out-of-memory.
#
#     cdef U64Map pairs
#     u64map_init(&pairs, expected_keys)
#     u64map_put(&pairs, (left + 1) << 32 | (right + 1), merged)
#     merged = u64map_get(&pairs, key)          # -1 when absent
#
# A BPE merge heap orders candidates by priority (smaller first): rank-based BPE uses
# rank << 32 | left, score-based BPE score_priority(score, left) (see below).
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, realloc
from libc.string cimport memcpy


cdef struct U64Slot:
    uint64_t key        # 0 marks an empty slot
    int32_t value


cdef struct U64Map:
    U64Slot* slots
    uint64_t mask       # slots - 1 (a power of two)
    Py_ssize_t count


cdef inline uint64_t mix64(uint64_t key) noexcept nogil:
    # splitmix64's finalizer: every input bit reaches the low bits used as the slot
    key ^= key >> 30
    key *= <uint64_t>0xBF58476D1CE4E5B9
    key ^= key >> 27
    key *= <uint64_t>0x94D049BB133111EB
    key ^= key >> 31
    return key


cdef inline int u64map_init(U64Map* m, Py_ssize_t expected) noexcept nogil:
    """An empty map sized for `expected` keys at most half full."""
    cdef Py_ssize_t cap = 64
    while cap < 2 * expected:
        cap *= 2
    m.slots = <U64Slot*>calloc(cap, sizeof(U64Slot))
    m.mask = <uint64_t>(cap - 1)
    m.count = 0
    return -1 if m.slots == NULL else 0


cdef inline void u64map_free(U64Map* m) noexcept nogil:
    free(m.slots)
    m.slots = NULL
    m.mask = 0
    m.count = 0


cdef inline int32_t u64map_get(const U64Map* m, uint64_t key) noexcept nogil:
    """The value of `key` (non-zero), or -1 when absent."""
    cdef uint64_t slot = mix64(key) & m.mask
    while m.slots[slot].key != 0:
        if m.slots[slot].key == key:
            return m.slots[slot].value
        slot = (slot + 1) & m.mask
    return -1


cdef inline int _u64map_grow(U64Map* m) noexcept nogil:
    cdef U64Slot* old = m.slots
    cdef Py_ssize_t old_cap = <Py_ssize_t>m.mask + 1, i
    cdef uint64_t slot, mask = <uint64_t>(2 * old_cap - 1)
    cdef U64Slot* grown = <U64Slot*>calloc(2 * old_cap, sizeof(U64Slot))
    if grown == NULL:
        return -1
    for i in range(old_cap):
        if old[i].key != 0:
            slot = mix64(old[i].key) & mask
            while grown[slot].key != 0:
                slot = (slot + 1) & mask
            grown[slot] = old[i]
    m.slots = grown
    m.mask = mask
    free(old)
    return 0


cdef inline int u64map_put(U64Map* m, uint64_t key, int32_t value) noexcept nogil:
    """Insert `key` (non-zero) -> `value` unless the key is there (the first value stays).
    Returns 1 when inserted, 0 when present, -1 when out of memory."""
    cdef uint64_t slot
    if 2 * (m.count + 1) > <Py_ssize_t>m.mask + 1 and _u64map_grow(m) < 0:
        return -1
    slot = mix64(key) & m.mask
    while m.slots[slot].key != 0:
        if m.slots[slot].key == key:
            return 0
        slot = (slot + 1) & m.mask
    m.slots[slot].key = key
    m.slots[slot].value = value
    m.count += 1
    return 1


# ------------------------------------------------------------------ merge heap

cdef struct HeapItem:
    uint64_t priority   # smaller pops first
    int32_t left        # symbol positions of the candidate pair
    int32_t right
    int32_t size        # what the caller checks to tell a stale entry (e.g. merged byte length)
    int32_t value       # what the caller wants back when it pops (e.g. the merged symbol)


cdef struct MergeHeap:
    HeapItem* items
    Py_ssize_t size
    Py_ssize_t cap


cdef inline uint64_t score_priority(float score, int32_t left) noexcept nogil:
    """Priority of a score-based merge: the highest score first, then the leftmost pair
    (the order both SentencePiece-BPE references pop). Equal scores, -0.0 and 0.0
    included, give equal high words."""
    cdef uint32_t bits
    if score == 0:
        score = 0.0
    memcpy(&bits, &score, 4)
    # order-preserving map of the float to an unsigned integer, then reversed
    if bits >> 31:
        bits = ~bits
    else:
        bits = bits | (<uint32_t>1 << 31)
    return (<uint64_t>(~bits) << 32) | <uint32_t>left


cdef inline int heap_reserve(MergeHeap* h, Py_ssize_t need) noexcept nogil:
    cdef HeapItem* grown
    if h.cap >= need:
        return 0
    grown = <HeapItem*>realloc(h.items, need * sizeof(HeapItem))
    if grown == NULL:
        return -1
    h.items = grown
    h.cap = need
    return 0


cdef inline void heap_free(MergeHeap* h) noexcept nogil:
    free(h.items)
    h.items = NULL
    h.size = 0
    h.cap = 0


cdef inline void heap_push(MergeHeap* h, HeapItem e) noexcept nogil:
    """Push `e`; the caller reserved room (heap_reserve)."""
    cdef Py_ssize_t i = h.size, parent
    h.size += 1
    while i > 0:
        parent = (i - 1) >> 1
        if e.priority >= h.items[parent].priority:
            break
        h.items[i] = h.items[parent]
        i = parent
    h.items[i] = e


cdef inline HeapItem heap_pop(MergeHeap* h) noexcept nogil:
    """Remove and return the item of smallest priority (the heap must not be empty)."""
    cdef HeapItem top = h.items[0]
    cdef HeapItem last
    cdef Py_ssize_t i = 0, child, n
    h.size -= 1
    n = h.size
    if n > 0:
        last = h.items[n]
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and h.items[child + 1].priority < h.items[child].priority:
                child += 1
            if h.items[child].priority >= last.priority:
                break
            h.items[i] = h.items[child]
            i = child
        h.items[i] = last
    return top
