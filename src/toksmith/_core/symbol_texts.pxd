# Load-time map of symbol texts: the tokens of a byte-level BPE vocabulary, then the texts
# only its merges name (byte_bpe.pyx builds its tables through it, then frees it).
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libc.string cimport memcmp

from toksmith._core.buffers cimport ByteBuf


cdef struct TextRef:
    uint32_t start          # in SymbolTexts.blob
    uint32_t length


cdef struct SymbolTexts:
    ByteBuf blob
    TextRef* refs           # per symbol
    Py_ssize_t n            # symbols
    Py_ssize_t cap
    uint64_t* slots         # hash high half << 32 | symbol + 1; 0 for empty
    uint64_t mask


cdef int texts_init(SymbolTexts* t, Py_ssize_t expected) noexcept nogil
cdef void texts_free(SymbolTexts* t) noexcept nogil
cdef int32_t texts_add(SymbolTexts* t, const unsigned char* p, Py_ssize_t n, uint64_t h,
                       bint index) noexcept nogil
cdef int32_t texts_symbol(SymbolTexts* t, const unsigned char* p, Py_ssize_t n) noexcept nogil


cdef inline bint texts_equal(const SymbolTexts* t, int32_t i, const unsigned char* p,
                              Py_ssize_t n) noexcept nogil:
    return t.refs[i].length == n and memcmp(t.blob.data + t.refs[i].start, p, n) == 0


cdef inline int32_t texts_find(const SymbolTexts* t, const unsigned char* p, Py_ssize_t n,
                                uint64_t h) noexcept nogil:
    """The symbol with text p[:n] (h = text_hash(p, n)), or -1. A slot holds the hash's
    high half and symbol + 1, so most other texts are told apart without reading them."""
    cdef uint64_t slot = h & t.mask, tag = h & <uint64_t>0xFFFFFFFF00000000, v
    cdef int32_t i
    while True:
        v = t.slots[slot]
        if v == 0:
            return -1
        if (v & <uint64_t>0xFFFFFFFF00000000) == tag:
            i = <int32_t>(v & <uint64_t>0xFFFFFFFF) - 1
            if texts_equal(t, i, p, n):
                return i
        slot = (slot + 1) & t.mask
