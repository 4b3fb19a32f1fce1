"""Suffix array (SA-IS, linear time) and permuted LCP array of a byte string.

`suffix_array_bytes(text, n, sa)` fills sa[0..n) with the start of every suffix of
text[:n] in lexicographic byte order (a suffix that is a prefix of another comes first);
`permuted_lcp(text, n, sa, plcp)` fills plcp[i] with the length of the common prefix of
the suffix at i and the suffix before it in `sa` (Kärkkäinen, Manzini and Puglisi's
Phi method): LCP[k] = plcp[sa[k]]. Both nogil, 32-bit positions (n < 2**31 - 1).

>>> suffix_array(b"banana")
[5, 3, 1, 0, 4, 2]
>>> lcp_array(b"banana")
[0, 1, 3, 0, 0, 2]

The algorithm is Nong, Zhang and Chan's induced sorting ("Two Efficient Algorithms for
Linear Time Suffix Array Construction", 2011), written for toksmith's Unigram trainer
(sentencepiece builds the same array with libsais).
"""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memmove, memset

from toksmith._core.threadpool cimport parallel_for

cdef extern from *:
    """
    #define TOKSMITH_PREFETCH(p) __builtin_prefetch((const void*)(p))
    """
    void prefetch "TOKSMITH_PREFETCH"(const void* p) nogil

# How far ahead the scans prefetch what they will read at random (the arrays are far
# larger than the caches; the addresses are known from the sequential scan).
cdef enum:
    AHEAD = 24


cdef inline bint _is_lms(const uint8_t* t, int32_t i) noexcept nogil:
    return i > 0 and t[i] and not t[i - 1]


cdef void _buckets(const int32_t* counts, int32_t* bkt, int32_t k, bint end) noexcept nogil:
    """Bucket starts (or ends) of each symbol from the symbol counts."""
    cdef int32_t i, total = 0
    for i in range(k + 1):
        total += counts[i]
        bkt[i] = total if end else total - counts[i]


cdef void _induce(const uint8_t* t, int32_t* sa, const int32_t* s, int32_t n, const int32_t* counts,
                  int32_t* bkt, int32_t k) noexcept nogil:
    cdef int32_t i, j, c
    _buckets(counts, bkt, k, False)
    for i in range(n):
        if i + AHEAD < n and sa[i + AHEAD] > 0:
            prefetch(s + sa[i + AHEAD] - 1)
            prefetch(t + sa[i + AHEAD] - 1)
        j = sa[i] - 1
        if j >= 0 and not t[j]:
            c = s[j]
            sa[bkt[c]] = j
            bkt[c] += 1
    _buckets(counts, bkt, k, True)
    for i in range(n - 1, -1, -1):
        if i >= AHEAD and sa[i - AHEAD] > 0:
            prefetch(s + sa[i - AHEAD] - 1)
            prefetch(t + sa[i - AHEAD] - 1)
        j = sa[i] - 1
        if j >= 0 and t[j]:
            c = s[j]
            bkt[c] -= 1
            sa[bkt[c]] = j


cdef int _sais(const int32_t* s, int32_t* sa, int32_t n, int32_t k) noexcept nogil:
    """sa of s[0..n), whose last symbol s[n-1] is a unique smallest sentinel (0);
    symbols in [0, k]. Returns -1 when memory runs out. t[i]: suffix i is S-type."""
    cdef int32_t i, j, n1 = 0, name, prev, pos, d
    cdef bint diff
    cdef uint8_t* t = <uint8_t*>malloc(n)
    cdef int32_t* bkt = <int32_t*>malloc((k + 1) * sizeof(int32_t))
    cdef int32_t* counts = <int32_t*>calloc(k + 1, sizeof(int32_t))
    cdef int32_t* s1
    cdef int rc = 0
    if t == NULL or bkt == NULL or counts == NULL:
        free(t)
        free(bkt)
        free(counts)
        return -1
    for i in range(n):
        counts[s[i]] += 1
    t[n - 1] = 1
    if n >= 2:
        t[n - 2] = 0
    for i in range(n - 3, -1, -1):
        t[i] = s[i] < s[i + 1] or (s[i] == s[i + 1] and t[i + 1])
    # Stage 1: sort the LMS substrings.
    _buckets(counts, bkt, k, True)
    for i in range(n):
        sa[i] = -1
    for i in range(1, n):
        if t[i] and not t[i - 1]:
            bkt[s[i]] -= 1
            sa[bkt[s[i]]] = i
    _induce(t, sa, s, n, counts, bkt, k)
    for i in range(n):
        if _is_lms(t, sa[i]):
            sa[n1] = sa[i]
            n1 += 1
    for i in range(n1, n):
        sa[i] = -1
    name = 0
    prev = -1
    for i in range(n1):
        pos = sa[i]
        diff = False
        for d in range(n):
            if prev == -1 or s[pos + d] != s[prev + d] or t[pos + d] != t[prev + d]:
                diff = True
                break
            elif d > 0 and (_is_lms(t, pos + d) or _is_lms(t, prev + d)):
                break
        if diff:
            name += 1
            prev = pos
        sa[n1 + (pos >> 1)] = name - 1
    j = n - 1
    for i in range(n - 1, n1 - 1, -1):
        if sa[i] >= 0:
            sa[j] = sa[i]
            j -= 1
    # Stage 2: sort the reduced string (recursively while names repeat).
    s1 = sa + n - n1
    if name < n1:
        rc = _sais(s1, sa, n1, name - 1)
        if rc < 0:
            free(t)
            free(bkt)
            free(counts)
            return rc
    else:
        for i in range(n1):
            sa[s1[i]] = i
    # Stage 3: induce the suffix array from the sorted LMS suffixes.
    _buckets(counts, bkt, k, True)
    j = 0
    for i in range(1, n):
        if t[i] and not t[i - 1]:
            s1[j] = i
            j += 1
    for i in range(n1):
        sa[i] = s1[sa[i]]
    for i in range(n1, n):
        sa[i] = -1
    for i in range(n1 - 1, -1, -1):
        j = sa[i]
        sa[i] = -1
        bkt[s[j]] -= 1
        sa[bkt[s[j]]] = j
    _induce(t, sa, s, n, counts, bkt, k)
    free(t)
    free(bkt)
    free(counts)
    return 0


cdef int suffix_array_bytes(const unsigned char* text, int32_t n, int32_t* sa) noexcept nogil:
    """sa[0..n) of text[:n] (see the module docstring); sa must hold n + 1 entries.
    Runs SA-IS on the bytes shifted up by one with a 0 sentinel appended; -1 when
    memory runs out."""
    cdef int32_t i
    cdef int32_t* s
    cdef int rc
    if n == 0:
        return 0
    s = <int32_t*>malloc((<size_t>n + 1) * sizeof(int32_t))
    if s == NULL:
        return -1
    for i in range(n):
        s[i] = text[i] + 1
    s[n] = 0
    rc = _sais(s, sa, n + 1, 256)
    free(s)
    if rc == 0:
        memmove(sa, sa + 1, <size_t>n * sizeof(int32_t))    # sa[0] was the sentinel
    return rc


cdef int permuted_lcp(const unsigned char* text, int32_t n, const int32_t* sa, int32_t* plcp) noexcept nogil:
    """plcp[sa[k]] = LCP of suffixes sa[k-1] and sa[k] (0 for k = 0)."""
    _phi(n, sa, plcp, 0, n)
    _plcp(text, n, plcp, 0, n)
    return 0


cdef void _phi(int32_t n, const int32_t* sa, int32_t* plcp, int32_t start, int32_t end) noexcept nogil:
    """plcp[sa[k]] = sa[k-1] for k in [start, end) (-1 for k = 0)."""
    cdef int32_t k
    for k in range(start, end):
        if k + AHEAD < end:
            prefetch(plcp + sa[k + AHEAD])
        plcp[sa[k]] = sa[k - 1] if k > 0 else -1     # Phi: the suffix before, by position


cdef void _plcp(const unsigned char* text, int32_t n, int32_t* plcp, int32_t start, int32_t end) noexcept nogil:
    """Phi values of positions [start, end) replaced by their LCPs (Kärkkäinen et al.:
    the LCP at i + 1 is at least that at i, minus one; a part starts from 0)."""
    cdef int32_t i, j, h = 0
    for i in range(start, end):
        if i + AHEAD < end and plcp[i + AHEAD] >= 0:
            prefetch(text + plcp[i + AHEAD] + h)
        j = plcp[i]
        if j < 0:
            plcp[i] = 0
            h = 0
            continue
        while i + h < n and j + h < n and text[i + h] == text[j + h]:
            h += 1
        plcp[i] = h
        if h > 0:
            h -= 1


cdef struct LcpJob:
    const unsigned char* text
    int32_t n
    const int32_t* sa
    int32_t* plcp
    int parts
    bint phi


cdef void _lcp_parts(void* ctx, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    cdef LcpJob* job = <LcpJob*>ctx
    cdef Py_ssize_t k
    cdef int32_t a, b
    for k in range(start, end):
        a = <int32_t>(<int64_t>job.n * k // job.parts)
        b = <int32_t>(<int64_t>job.n * (k + 1) // job.parts)
        if job.phi:
            _phi(job.n, job.sa, job.plcp, a, b)
        else:
            _plcp(job.text, job.n, job.plcp, a, b)


cdef int permuted_lcp_parallel(const unsigned char* text, int32_t n, const int32_t* sa, int32_t* plcp,
                               int threads) noexcept nogil:
    """permuted_lcp on `threads` threads (the same array)."""
    cdef LcpJob job
    if threads <= 1 or n < 1 << 16:
        return permuted_lcp(text, n, sa, plcp)
    job.text = text
    job.n = n
    job.sa = sa
    job.plcp = plcp
    job.parts = threads
    job.phi = True
    parallel_for(threads, 1, threads, _lcp_parts, &job)
    job.phi = False
    parallel_for(threads, 1, threads, _lcp_parts, &job)
    return 0


def suffix_array(bytes text):
    """The suffix array of `text` as a list (for tests)."""
    cdef int32_t n = len(text), i
    cdef int32_t* sa = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    if sa == NULL:
        raise MemoryError()
    try:
        if suffix_array_bytes(<const unsigned char*>text, n, sa) < 0:
            raise MemoryError()
        return [sa[i] for i in range(n)]
    finally:
        free(sa)


def lcp_array(bytes text, int threads=1):
    """LCP[k] (common prefix of the k-1th and kth suffix in order) as a list (for tests)."""
    cdef int32_t n = len(text), i
    cdef int32_t* sa = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    cdef int32_t* plcp = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
    cdef const unsigned char* data
    try:
        if sa == NULL or plcp == NULL or suffix_array_bytes(<const unsigned char*>text, n, sa) < 0:
            raise MemoryError()
        data = <const unsigned char*>text
        with nogil:
            permuted_lcp_parallel(data, n, sa, plcp, threads)
        return [plcp[sa[i]] for i in range(n)]
    finally:
        free(sa)
        free(plcp)
