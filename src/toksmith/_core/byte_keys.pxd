# Keys and hashes of byte-level BPE's tables (header only: every helper inlines into the
# hot loops of byte_bpe.pyx and the load-time maps of symbol_texts.pyx).
from libc.stdint cimport int32_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc
from libc.string cimport memcpy

from toksmith._core.tables cimport mix64

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define TOKSMITH_PREFETCH(p) __builtin_prefetch(p)
    #else
    #define TOKSMITH_PREFETCH(p) ((void)(p))
    #endif
    """
    void prefetch "TOKSMITH_PREFETCH"(const void* p) noexcept nogil


cdef inline uint64_t load_upto8(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """p[:n] (n <= 8) as one integer, the same for equal texts of one length (on a
    little-endian machine: memcpy into a zeroed uint64). Two overlapping loads instead of
    a byte loop; the overlapping bytes are equal, so OR joins them.

        load_upto8(b"abc", 3) == 0x636261
    """
    cdef uint32_t lo4, hi4
    cdef uint16_t lo2, hi2
    if n >= 4:
        memcpy(&lo4, p, 4)
        memcpy(&hi4, p + n - 4, 4)
        return <uint64_t>lo4 | (<uint64_t>hi4 << (8 * (n - 4)))
    if n >= 2:
        memcpy(&lo2, p, 2)
        memcpy(&hi2, p + n - 2, 2)
        return <uint64_t>lo2 | (<uint64_t>hi2 << (8 * (n - 2)))
    return p[0] if n == 1 else 0


cdef inline bint same_bytes_upto24(const unsigned char* a, const unsigned char* b, Py_ssize_t n) noexcept nogil:
    """a[:n] == b[:n] for 8 <= n <= 24: three overlapping eight-byte compares, no call."""
    cdef uint64_t x, y
    memcpy(&x, a, 8)
    memcpy(&y, b, 8)
    if x != y:
        return False
    memcpy(&x, a + n - 8, 8)
    memcpy(&y, b + n - 8, 8)
    if x != y:
        return False
    if n > 16:
        memcpy(&x, a + 8, 8)
        memcpy(&y, b + 8, 8)
        return x == y
    return True


cdef inline uint64_t hash_bytes(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """A 64-bit hash of p[:n], eight bytes at a time (never 0 after `| 1`)."""
    cdef uint64_t h = <uint64_t>0x9E3779B97F4A7C15 ^ (<uint64_t>n * <uint64_t>0xFF51AFD7ED558CCD)
    cdef uint64_t v
    while n >= 8:
        memcpy(&v, p, 8)
        h = (h ^ v) * <uint64_t>0xBF58476D1CE4E5B9
        h ^= h >> 29
        p += 8
        n -= 8
    if n > 0:
        v = load_upto8(p, n)
        h = (h ^ v) * <uint64_t>0x94D049BB133111EB
        h ^= h >> 32
    return mix64(h) | 1




# Texts in the load-time symbol table hash by a polynomial (byte by byte).
cdef inline uint64_t poly_hash(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = 0
    cdef Py_ssize_t i
    for i in range(n):
        h = h * <uint64_t>0x100000001B3 + p[i] + 1   # FNV's prime
    return h


cdef inline uint64_t poly_key(uint64_t poly, Py_ssize_t n) noexcept nogil:
    return mix64(poly + (<uint64_t>n << 56)) | 1


cdef inline uint64_t text_hash(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """Hash of a text in the load-time symbol table (SymbolTexts)."""
    return poly_key(poly_hash(p, n), n)


cdef inline uint64_t token_key(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """Key of a token text in TokenSlot: its bytes when at most 8, else a hash."""
    if n <= 8:
        return load_upto8(p, n) ^ (<uint64_t>n << 59)
    return hash_bytes(p, n)


cdef inline uint64_t short_key(uint32_t text, Py_ssize_t length, Py_ssize_t split) noexcept nogil:
    """Key of a 3- or 4-byte text and where its left part ends (never 0)."""
    return <uint64_t>text | (<uint64_t>length << 32) | (<uint64_t>split << 36)


cdef inline const unsigned char* memchr_not(const unsigned char* p, unsigned char c,
                                            Py_ssize_t n) noexcept nogil:
    """The first byte of p[:n] other than c, or NULL."""
    cdef Py_ssize_t i
    for i in range(n):
        if p[i] != c:
            return p + i
    return NULL


cdef inline uint64_t pair_key(int32_t left, int32_t right) noexcept nogil:
    return ((<uint64_t>(left + 1)) << 32) | <uint64_t>(right + 1)


# A one-hash Bloom filter over mix64 hashes (8 bits or more per key): a lookup of a text or
# pair that no table holds, the common case on unseen text, reads one bit of a small array
# that stays in cache instead of a slot of a table of megabytes.
cdef inline uint64_t* bloom_new(Py_ssize_t keys, uint64_t* mask) noexcept nogil:
    """A zeroed filter for `keys` keys (NULL when out of memory); its bit mask in `mask`."""
    cdef Py_ssize_t bits = 4096
    while bits < 8 * keys:
        bits *= 2
    mask[0] = <uint64_t>(bits - 1)
    return <uint64_t*>calloc(bits // 64, sizeof(uint64_t))


cdef inline void bloom_add(uint64_t* bloom, uint64_t mask, uint64_t h) noexcept nogil:
    cdef uint64_t bit = (h >> 32) & mask
    bloom[bit >> 6] |= (<uint64_t>1) << (bit & 63)


cdef inline bint bloom_has(const uint64_t* bloom, uint64_t mask, uint64_t h) noexcept nogil:
    """False when no key added has hash h (the high half picks the bit, the low half the slot)."""
    cdef uint64_t bit = (h >> 32) & mask
    return (bloom[bit >> 6] >> (bit & 63)) & 1
