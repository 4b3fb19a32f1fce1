# Double-array trie over byte strings: one cache-friendly array of nodes,
# one array probe per input byte.
from libc.stdint cimport int32_t


cdef struct DANode:
    int32_t base    # children of this node live at base + byte
    int32_t check   # index of the parent node; -1 = free cell, -2 = root
    int32_t value   # payload of a key ending here, -1 when none
    float score     # score attached to that key (unused by some callers)


cdef struct KeyRef:
    const unsigned char* data
    Py_ssize_t length
    int32_t value
    float score


cdef class DoubleArrayTrie:
    cdef DANode* nodes
    cdef Py_ssize_t capacity
    cdef readonly Py_ssize_t num_keys
    cdef readonly Py_ssize_t max_key_length
    # node reached from the root by the 3 UTF-8 bytes of each code point
    # U+0800..U+FFFF (-1 when no key starts with it); NULL until built
    cdef int32_t* char3_nodes

    cdef int _grow(self, Py_ssize_t need) noexcept nogil
    cdef int32_t _find_base(self, const int* labels, int n_labels, Py_ssize_t* first_free) noexcept nogil
    cdef int _build(self, KeyRef* keys, Py_ssize_t n) noexcept nogil
    cdef int build_char3_nodes(self) except -1
    cdef int32_t exact(self, const unsigned char* key, Py_ssize_t n) noexcept nogil
    cdef Py_ssize_t longest_prefix(self, const unsigned char* s, Py_ssize_t n,
                                   int32_t* value) noexcept nogil


cdef inline int32_t da_child(const DANode* nodes, int32_t node, unsigned char c) noexcept nogil:
    """Index of the child of `node` labelled `c`, or -1."""
    cdef int32_t t = nodes[node].base + c
    if nodes[t].check == node:
        return t
    return -1
