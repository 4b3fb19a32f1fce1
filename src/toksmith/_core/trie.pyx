"""Double-array trie: built once at load time, read lock-free by every thread.

Example (from Python)::

    >>> t = DoubleArrayTrie.build([b"a", b"ab"], [7, 9])
    >>> t.lookup(b"ab")
    9
"""
from libc.stdint cimport int32_t
from libc.stdlib cimport free, malloc, qsort, realloc
from libc.string cimport memcmp, memset

from toksmith._core.errors import ModelDataError

cdef enum:
    FREE_CELL = -1
    ROOT_CHECK = -2


cdef struct Frame:
    int32_t node
    Py_ssize_t lo
    Py_ssize_t hi
    Py_ssize_t depth


cdef int _compare_keys(const void* a, const void* b) noexcept nogil:
    cdef const KeyRef* x = <const KeyRef*>a
    cdef const KeyRef* y = <const KeyRef*>b
    cdef Py_ssize_t n = x.length if x.length < y.length else y.length
    cdef int c = memcmp(x.data, y.data, n)
    if c != 0:
        return c
    return (x.length > y.length) - (x.length < y.length)


cdef class DoubleArrayTrie:
    """Immutable byte-string -> (int32 value, float score) map with prefix search."""

    def __cinit__(self):
        self.nodes = NULL
        self.char3_nodes = NULL
        self.capacity = 0
        self.num_keys = 0
        self.max_key_length = 0

    def __dealloc__(self):
        free(self.nodes)
        free(self.char3_nodes)

    @staticmethod
    def build(list keys, values, scores=None):
        """Build from distinct non-empty byte strings; raises ValueError on duplicates."""
        cdef DoubleArrayTrie trie = DoubleArrayTrie()
        cdef Py_ssize_t n = len(keys), i
        cdef KeyRef* refs
        cdef bytes key
        if len(values) != n or (scores is not None and len(scores) != n):
            raise ValueError("keys, values and scores must have the same length")
        refs = <KeyRef*>malloc(max(n, 1) * sizeof(KeyRef))
        if refs == NULL:
            raise MemoryError()
        try:
            for i in range(n):
                key = keys[i]
                if len(key) == 0:
                    raise ModelDataError(f"empty key at index {i}")
                refs[i].data = <const unsigned char*>(<char*>key)
                refs[i].length = len(key)
                refs[i].value = values[i]
                refs[i].score = scores[i] if scores is not None else 0.0
                if refs[i].length > trie.max_key_length:
                    trie.max_key_length = refs[i].length
            with nogil:
                qsort(refs, n, sizeof(KeyRef), _compare_keys)
            for i in range(1, n):
                if _compare_keys(&refs[i - 1], &refs[i]) == 0:
                    raise ModelDataError(
                        f"duplicate key {bytes(refs[i].data[:refs[i].length])!r}")
            if trie._build(refs, n) < 0:
                raise MemoryError()
            trie.num_keys = n
        finally:
            free(refs)
        return trie

    cdef int _grow(self, Py_ssize_t need) noexcept nogil:
        cdef Py_ssize_t cap = self.capacity if self.capacity else 1024
        cdef Py_ssize_t i
        cdef DANode* p
        if need <= self.capacity:
            return 0
        while cap < need:
            cap *= 2
        p = <DANode*>realloc(self.nodes, cap * sizeof(DANode))
        if p == NULL:
            return -1
        for i in range(self.capacity, cap):
            p[i].base = 0
            p[i].check = FREE_CELL
            p[i].value = -1
            p[i].score = 0
        self.nodes = p
        self.capacity = cap
        return 0

    cdef int32_t _find_base(self, const int* labels, int n_labels, Py_ssize_t* next_check) noexcept nogil:
        """Smallest-found base whose cells for all `labels` are free.

        Scanning starts at `next_check`, which jumps forward once the cells
        behind it are 95% used (the heuristic of Kudo's darts), keeping the
        build near-linear at the cost of a few permanent holes.
        """
        cdef Py_ssize_t pos = next_check[0], occupied = 0
        cdef int32_t base
        cdef int k
        cdef bint fits, first = True
        if pos < labels[0] + 1:
            pos = labels[0] + 1
        while True:
            if self._grow(pos + 512) < 0:
                return -1
            if self.nodes[pos].check != FREE_CELL:
                occupied += 1
                pos += 1
                continue
            if first:
                next_check[0] = pos
                first = False
            base = <int32_t>(pos - labels[0])
            fits = True
            for k in range(1, n_labels):
                if self.nodes[base + labels[k]].check != FREE_CELL:
                    fits = False
                    break
            if fits:
                break
            pos += 1
        if occupied >= 0.95 * (pos - next_check[0] + 1):
            next_check[0] = pos
        return base

    cdef int _build(self, KeyRef* keys, Py_ssize_t n) noexcept nogil:
        cdef Frame* stack = NULL
        cdef Frame* grown
        cdef Py_ssize_t top = 0, stack_cap = 256
        cdef Py_ssize_t first_free = 1, lo, hi, depth, i, start
        cdef int labels[256]
        cdef Py_ssize_t group_start[257]
        cdef int n_labels, k, c
        cdef int32_t node, base, child
        if self._grow(1024) < 0:
            return -1
        self.nodes[0].check = ROOT_CHECK
        stack = <Frame*>malloc(stack_cap * sizeof(Frame))
        if stack == NULL:
            return -1
        stack[0].node = 0
        stack[0].lo = 0
        stack[0].hi = n
        stack[0].depth = 0
        top = 1
        while top > 0:
            top -= 1
            node = stack[top].node
            lo = stack[top].lo
            hi = stack[top].hi
            depth = stack[top].depth
            if lo < hi and keys[lo].length == depth:
                self.nodes[node].value = keys[lo].value
                self.nodes[node].score = keys[lo].score
                lo += 1
            if lo >= hi:
                continue
            # Keys are sorted, so keys sharing the next byte are contiguous.
            n_labels = 0
            i = lo
            while i < hi:
                c = keys[i].data[depth]
                labels[n_labels] = c
                group_start[n_labels] = i
                n_labels += 1
                start = i
                while i < hi and keys[i].data[depth] == c:
                    i += 1
            group_start[n_labels] = hi
            base = self._find_base(labels, n_labels, &first_free)
            if base < 0:
                free(stack)
                return -1
            self.nodes[node].base = base
            for k in range(n_labels):
                self.nodes[base + labels[k]].check = node
            if top + n_labels > stack_cap:
                while top + n_labels > stack_cap:
                    stack_cap *= 2
                grown = <Frame*>realloc(stack, stack_cap * sizeof(Frame))
                if grown == NULL:
                    free(stack)
                    return -1
                stack = grown
            for k in range(n_labels - 1, -1, -1):
                child = base + labels[k]
                stack[top].node = child
                stack[top].lo = group_start[k]
                stack[top].hi = group_start[k + 1]
                stack[top].depth = depth + 1
                top += 1
        free(stack)
        return 0

    cdef int build_char3_nodes(self) except -1:
        """Fill char3_nodes: one lookup replaces three steps at a CJK character."""
        cdef int b0, b1, b2
        cdef int32_t n0, n1
        if self.char3_nodes != NULL:
            return 0
        self.char3_nodes = <int32_t*>malloc(0x10000 * sizeof(int32_t))
        if self.char3_nodes == NULL:
            raise MemoryError()
        memset(self.char3_nodes, 0xFF, 0x10000 * sizeof(int32_t))   # -1 everywhere
        if self.nodes == NULL:
            return 0
        for b0 in range(0xE0, 0xF0):
            n0 = da_child(self.nodes, 0, <unsigned char>b0)
            if n0 < 0:
                continue
            for b1 in range(0x80, 0xC0):
                n1 = da_child(self.nodes, n0, <unsigned char>b1)
                if n1 < 0:
                    continue
                for b2 in range(0x80, 0xC0):
                    self.char3_nodes[((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)] = \
                        da_child(self.nodes, n1, <unsigned char>b2)
        # code points below U+0800 have no 3-byte form (overlong): keep -1
        memset(self.char3_nodes, 0xFF, 0x800 * sizeof(int32_t))
        return 0

    cdef int32_t exact(self, const unsigned char* key, Py_ssize_t n) noexcept nogil:
        cdef int32_t node = 0
        cdef Py_ssize_t i
        if self.nodes == NULL or n == 0:
            return -1
        for i in range(n):
            node = da_child(self.nodes, node, key[i])
            if node < 0:
                return -1
        return self.nodes[node].value

    cdef Py_ssize_t longest_prefix(self, const unsigned char* s, Py_ssize_t n,
                                   int32_t* value) noexcept nogil:
        """Length of the longest key that prefixes s[:n] (0 if none); its value in *value."""
        cdef int32_t node = 0
        cdef Py_ssize_t i, best = 0
        if self.nodes == NULL:
            return 0
        for i in range(n):
            node = da_child(self.nodes, node, s[i])
            if node < 0:
                break
            if self.nodes[node].value >= 0:
                best = i + 1
                value[0] = self.nodes[node].value
        return best

    def lookup(self, bytes key):
        """Value stored for `key`, or -1."""
        return self.exact(<const unsigned char*>(<char*>key), len(key))

    @property
    def memory_bytes(self):
        return self.capacity * sizeof(DANode)
