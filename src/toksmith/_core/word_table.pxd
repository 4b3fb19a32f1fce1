# A table of distinct words (byte strings) and their counts, in order of first
# appearance (_core/word_count.pyx counts each block into one, then merges them;
# _core/byte_stream_trainer.pyx its distinct sequences, written in parts with
# table_tail / table_add_tail).
# nogil; table_add returns -1 when memory runs out.
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, realloc
from libc.string cimport memcmp, memcpy, memset

from toksmith._core.byte_keys cimport hash_bytes


# ------------------------------------------------------------------ word -> count table

cdef struct WordTable:
    char* data           # keys back to back: a tag byte (0 text, 1 added token) + UTF-8
    Py_ssize_t size
    Py_ssize_t cap
    int64_t* starts      # key i is data[starts[i]:starts[i+1]], in order of first appearance
    uint64_t* counts
    Py_ssize_t n
    Py_ssize_t n_cap
    int32_t* slots       # open addressing: key index + 1, 0 = free
    Py_ssize_t mask
    Py_ssize_t pending   # bytes written after the keys by table_tail, not yet a key


cdef inline uint64_t _hash(const char* s, Py_ssize_t n) noexcept nogil:
    # eight bytes at a time (every key is hashed once per occurrence in the corpus)
    return hash_bytes(<const unsigned char*>s, n)


cdef inline int _rehash(WordTable* t, Py_ssize_t n_slots) noexcept nogil:
    cdef int32_t* slots = <int32_t*>calloc(n_slots, sizeof(int32_t))
    cdef Py_ssize_t i, j
    if slots == NULL:
        return -1
    free(t.slots)
    t.slots = slots
    t.mask = n_slots - 1
    for i in range(t.n):
        j = <Py_ssize_t>(_hash(t.data + t.starts[i], t.starts[i + 1] - t.starts[i]) & <uint64_t>t.mask)
        while t.slots[j] != 0:
            j = (j + 1) & t.mask
        t.slots[j] = <int32_t>(i + 1)
    return 0


cdef inline Py_ssize_t table_find(const WordTable* t, const char* key, Py_ssize_t n) noexcept nogil:
    """The index of key[:n], or -1."""
    cdef Py_ssize_t j, i
    if t.slots == NULL:
        return -1
    j = <Py_ssize_t>(_hash(key, n) & <uint64_t>t.mask)
    while t.slots[j] != 0:
        i = t.slots[j] - 1
        if t.starts[i + 1] - t.starts[i] == n and memcmp(t.data + t.starts[i], key, n) == 0:
            return i
        j = (j + 1) & t.mask
    return -1


cdef inline Py_ssize_t table_add(WordTable* t, const char* key, Py_ssize_t n, uint64_t count) noexcept nogil:
    """counts[key] += count (key added last when new); the key's index, or -1 when out of
    memory. (The BPE trainer interns its token strings here too, with count 0.)"""
    cdef Py_ssize_t j, cap, i
    cdef char* d
    cdef int64_t* st
    cdef uint64_t* ct
    if t.slots == NULL and _rehash(t, 1024) < 0:
        return -1
    j = <Py_ssize_t>(_hash(key, n) & <uint64_t>t.mask)
    while t.slots[j] != 0:
        i = t.slots[j] - 1
        if t.starts[i + 1] - t.starts[i] == n and memcmp(t.data + t.starts[i], key, n) == 0:
            t.counts[i] += count
            return i
        j = (j + 1) & t.mask
    if t.size + n > t.cap:
        cap = t.cap * 2 if t.cap else 65536
        while cap < t.size + n:
            cap *= 2
        d = <char*>realloc(t.data, cap)
        if d == NULL:
            return -1
        t.data = d
        t.cap = cap
    if t.n + 2 > t.n_cap:
        cap = t.n_cap * 2 if t.n_cap else 4096
        st = <int64_t*>realloc(t.starts, cap * sizeof(int64_t))
        if st == NULL:
            return -1
        t.starts = st
        ct = <uint64_t*>realloc(t.counts, cap * sizeof(uint64_t))
        if ct == NULL:
            return -1
        t.counts = ct
        t.n_cap = cap
    if t.n == 0:
        t.starts[0] = 0
    memcpy(t.data + t.size, key, n)
    t.size += n
    t.counts[t.n] = count
    t.n += 1
    t.starts[t.n] = t.size
    t.slots[j] = <int32_t>t.n
    if t.n * 2 > t.mask + 1 and _rehash(t, (t.mask + 1) * 2) < 0:
        return -1
    return t.n - 1


cdef inline char* table_tail(WordTable* t, Py_ssize_t n) noexcept nogil:
    """Room for `n` more bytes after the keys (a key written there in parts, then added
    with table_add_tail); the place to write them, or NULL when out of memory. The bytes
    already written after the keys stay."""
    cdef Py_ssize_t cap, need
    cdef char* d
    if t.pending < 0:
        t.pending = 0
    need = t.size + t.pending + n
    if need > t.cap:
        cap = t.cap * 2 if t.cap else 65536
        while cap < need:
            cap *= 2
        d = <char*>realloc(t.data, cap)
        if d == NULL:
            return NULL
        t.data = d
        t.cap = cap
    t.pending += n
    return t.data + t.size + t.pending - n


cdef inline Py_ssize_t table_add_tail(WordTable* t, uint64_t count) noexcept nogil:
    """table_add of the bytes written after the keys (table_tail), which are not copied
    again: counts[key] += count, the bytes dropped when the key is there already. The
    key's index, or -1 when out of memory."""
    cdef Py_ssize_t j, i, cap
    cdef Py_ssize_t n = t.pending if t.pending > 0 else 0
    cdef const char* key
    cdef int64_t* st
    cdef uint64_t* ct
    t.pending = 0
    if t.slots == NULL and _rehash(t, 1024) < 0:
        return -1
    if t.data == NULL and table_tail(t, 0) == NULL:
        return -1
    key = t.data + t.size
    j = <Py_ssize_t>(_hash(key, n) & <uint64_t>t.mask)
    while t.slots[j] != 0:
        i = t.slots[j] - 1
        if t.starts[i + 1] - t.starts[i] == n and memcmp(t.data + t.starts[i], key, n) == 0:
            t.counts[i] += count
            return i
        j = (j + 1) & t.mask
    if t.n + 2 > t.n_cap:
        cap = t.n_cap * 2 if t.n_cap else 4096
        st = <int64_t*>realloc(t.starts, cap * sizeof(int64_t))
        if st == NULL:
            return -1
        t.starts = st
        ct = <uint64_t*>realloc(t.counts, cap * sizeof(uint64_t))
        if ct == NULL:
            return -1
        t.counts = ct
        t.n_cap = cap
    if t.n == 0:
        t.starts[0] = 0
    t.size += n
    t.counts[t.n] = count
    t.n += 1
    t.starts[t.n] = t.size
    t.slots[j] = <int32_t>t.n
    if t.n * 2 > t.mask + 1 and _rehash(t, (t.mask + 1) * 2) < 0:
        return -1
    return t.n - 1


cdef inline void table_free(WordTable* t) noexcept nogil:
    free(t.data)
    free(t.starts)
    free(t.counts)
    free(t.slots)
    memset(t, 0, sizeof(WordTable))
