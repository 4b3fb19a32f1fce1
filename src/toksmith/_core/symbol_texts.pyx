"""Load-time map of symbol texts for byte-level BPE: each distinct text (a token, or a text
only a merge names) gets a symbol number, found again by its hash.

    texts_init(&t, expected); s = texts_symbol(&t, p, n); ...; texts_free(&t)
"""
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc

from toksmith._core.buffers cimport bytebuf_append, bytebuf_free
from toksmith._core.byte_keys cimport text_hash


cdef int texts_init(SymbolTexts* t, Py_ssize_t expected) noexcept nogil:
    cdef Py_ssize_t cap = 64
    while cap < 2 * expected:
        cap *= 2
    t.blob.data = NULL
    t.blob.size = 0
    t.blob.cap = 0
    t.n = 0
    t.cap = expected + 16
    t.refs = <TextRef*>malloc(t.cap * sizeof(TextRef))
    t.slots = <uint64_t*>calloc(cap, sizeof(uint64_t))
    t.mask = <uint64_t>(cap - 1)
    if t.refs == NULL or t.slots == NULL:
        return -1
    return 0


cdef void texts_free(SymbolTexts* t) noexcept nogil:
    bytebuf_free(&t.blob)
    free(t.refs)
    free(t.slots)
    t.refs = NULL
    t.slots = NULL


cdef inline void _texts_index(SymbolTexts* t, int32_t symbol, uint64_t h) noexcept nogil:
    cdef uint64_t slot = h & t.mask
    while t.slots[slot] != 0:
        slot = (slot + 1) & t.mask
    t.slots[slot] = (h & <uint64_t>0xFFFFFFFF00000000) | <uint64_t>(symbol + 1)


cdef int _texts_grow_slots(SymbolTexts* t) noexcept nogil:
    cdef Py_ssize_t cap = 2 * (<Py_ssize_t>t.mask + 1), i
    cdef int32_t symbol
    cdef uint64_t* old = t.slots
    cdef uint64_t old_cap = t.mask + 1, v
    t.slots = <uint64_t*>calloc(cap, sizeof(uint64_t))
    if t.slots == NULL:
        t.slots = old
        return -1
    t.mask = <uint64_t>(cap - 1)
    for i in range(<Py_ssize_t>old_cap):
        v = old[i]
        if v != 0:
            symbol = <int32_t>(v & <uint64_t>0xFFFFFFFF) - 1
            _texts_index(t, symbol, text_hash(<const unsigned char*>t.blob.data + t.refs[symbol].start,
                                                t.refs[symbol].length))
    free(old)
    return 0


cdef int32_t texts_add(SymbolTexts* t, const unsigned char* p, Py_ssize_t n, uint64_t h,
                        bint index) noexcept nogil:
    """Append symbol t.n with text p[:n] (indexed under hash h when `index`); its number,
    or -1 (memory)."""
    cdef TextRef* refs
    cdef int32_t symbol = <int32_t>t.n
    if t.n >= t.cap:
        refs = <TextRef*>realloc(t.refs, 2 * t.cap * sizeof(TextRef))
        if refs == NULL:
            return -1
        t.refs = refs
        t.cap *= 2
    if t.blob.size + n > <Py_ssize_t>0xFFFFFFFF:
        return -1
    t.refs[symbol].start = <uint32_t>t.blob.size
    t.refs[symbol].length = <uint32_t>n
    if bytebuf_append(&t.blob, <const char*>p, n) < 0:
        return -1
    t.n += 1
    if index and n > 0:
        if 2 * t.n > <Py_ssize_t>t.mask + 1 and _texts_grow_slots(t) < 0:
            return -1
        _texts_index(t, symbol, h)
    return symbol


cdef int32_t texts_symbol(SymbolTexts* t, const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """The symbol with text p[:n], added when new; -1 when out of memory."""
    cdef uint64_t h = text_hash(p, n)
    cdef int32_t found = texts_find(t, p, n, h)
    if found >= 0:
        return found
    return texts_add(t, p, n, h, True)
