# Growable C buffers used by the hot loops. Every function is nogil and
# returns -1 when memory runs out so the caller can raise MemoryError once
# it holds the GIL again.
from libc.stdint cimport int32_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy


cdef struct ByteBuf:
    char* data
    Py_ssize_t size
    Py_ssize_t cap


cdef struct IdBuf:
    int32_t* data
    Py_ssize_t size
    Py_ssize_t cap


cdef inline Py_ssize_t _grown(Py_ssize_t cap, Py_ssize_t need) noexcept nogil:
    if cap < 64:
        cap = 64
    while cap < need:
        cap *= 2
    return cap


cdef inline int bytebuf_reserve(ByteBuf* b, Py_ssize_t extra) noexcept nogil:
    cdef Py_ssize_t need = b.size + extra
    cdef Py_ssize_t cap
    cdef char* p
    if need <= b.cap:
        return 0
    cap = _grown(b.cap, need)
    p = <char*>realloc(b.data, cap)
    if p == NULL:
        return -1
    b.data = p
    b.cap = cap
    return 0


cdef inline int bytebuf_append(ByteBuf* b, const char* s, Py_ssize_t n) noexcept nogil:
    if bytebuf_reserve(b, n) < 0:
        return -1
    memcpy(b.data + b.size, s, n)
    b.size += n
    return 0


cdef inline int bytebuf_push(ByteBuf* b, char c) noexcept nogil:
    if b.size >= b.cap and bytebuf_reserve(b, 1) < 0:
        return -1
    b.data[b.size] = c
    b.size += 1
    return 0


cdef inline void bytebuf_free(ByteBuf* b) noexcept nogil:
    free(b.data)
    b.data = NULL
    b.size = 0
    b.cap = 0


cdef inline int idbuf_reserve(IdBuf* b, Py_ssize_t extra) noexcept nogil:
    cdef Py_ssize_t need = b.size + extra
    cdef Py_ssize_t cap
    cdef int32_t* p
    if need <= b.cap:
        return 0
    cap = _grown(b.cap, need)
    p = <int32_t*>realloc(b.data, cap * sizeof(int32_t))
    if p == NULL:
        return -1
    b.data = p
    b.cap = cap
    return 0


cdef inline int idbuf_push(IdBuf* b, int32_t v) noexcept nogil:
    if b.size >= b.cap and idbuf_reserve(b, 1) < 0:
        return -1
    b.data[b.size] = v
    b.size += 1
    return 0


cdef inline int idbuf_push3(IdBuf* b, int32_t x, Py_ssize_t y, Py_ssize_t z) noexcept nogil:
    """Append the triple (x, y, z), y and z as int32 (an id and its span, say)."""
    if idbuf_reserve(b, 3) < 0:
        return -1
    b.data[b.size] = x
    b.data[b.size + 1] = <int32_t>y
    b.data[b.size + 2] = <int32_t>z
    b.size += 3
    return 0


cdef inline int idbuf_append_triples(IdBuf* ids, IdBuf* spans, const int32_t* t, Py_ssize_t count,
                                     Py_ssize_t base) noexcept nogil:
    """Append the ids of `count` (id, start, end) triples to `ids` and, unless spans is
    NULL, their (start, end) moved by `base` to `spans`. 0, or -1 (memory)."""
    cdef Py_ssize_t k
    if idbuf_reserve(ids, count) < 0:
        return -1
    for k in range(count):
        ids.data[ids.size + k] = t[3 * k]
    ids.size += count
    if spans != NULL:
        if idbuf_reserve(spans, 2 * count) < 0:
            return -1
        for k in range(count):
            spans.data[spans.size + 2 * k] = <int32_t>(base + t[3 * k + 1])
            spans.data[spans.size + 2 * k + 1] = <int32_t>(base + t[3 * k + 2])
        spans.size += 2 * count
    return 0


cdef inline void idbuf_free(IdBuf* b) noexcept nogil:
    free(b.data)
    b.data = NULL
    b.size = 0
    b.cap = 0
