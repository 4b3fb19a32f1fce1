"""Split special-token texts out of raw input, before normalization.

The result is a list of segments: a token id, or a range of raw text that
the model then encodes on its own. The rules are llama.cpp's
(llama_vocab::impl::tokenizer_st_partition): tokens are taken in rank order
(longest text first); each token claims its leftmost non-overlapping
occurrences in the text that no earlier token claimed; LSTRIP/RSTRIP tokens
also swallow the whitespace beside them.

    >>> splitter = SpecialSplitter.build([b"</s>", b"<s>"], [2, 1], b"\\0\\0")  # doctest: +SKIP
"""
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free, malloc, qsort
from libc.string cimport memset

from toksmith._core.buffers cimport (ByteBuf, IdBuf, bytebuf_free, bytebuf_reserve, idbuf_free,
                                     idbuf_push, idbuf_push3)
from toksmith._core.trie cimport DANode, DoubleArrayTrie, da_child


cdef void split_work_free(SplitWork* w) noexcept nogil:
    bytebuf_free(&w.claimed)
    idbuf_free(&w.found)
    idbuf_free(&w.accepted)


cdef int _compare_pairs(const void* a, const void* b) noexcept nogil:
    cdef const int32_t* x = <const int32_t*>a
    cdef const int32_t* y = <const int32_t*>b
    if x[0] != y[0]:
        return -1 if x[0] < y[0] else 1
    if x[1] != y[1]:
        return -1 if x[1] < y[1] else 1
    return 0


cdef inline bint _c_isspace(unsigned char c) noexcept nogil:
    # Parity: llama.cpp strips with isspace() in the C locale.
    return c == 32 or (9 <= c <= 13)


cdef class SpecialSplitter:
    """Special-token texts ranked in the order llama.cpp tries them."""

    def __cinit__(self):
        self.token_ids = NULL
        self.lengths = NULL
        self.flags = NULL

    def __dealloc__(self):
        free(self.token_ids)
        free(self.lengths)
        free(self.flags)

    @staticmethod
    def build(list texts, list token_ids, bytes flags):
        """`texts` in rank order (distinct, non-empty), their ids and SPLIT_*/STRIP_* flags."""
        cdef SpecialSplitter self = SpecialSplitter()
        cdef Py_ssize_t n = len(texts), i
        if len(token_ids) != n or len(flags) != n:
            raise ValueError("texts, token ids and flags must have equal lengths")
        self.n = n
        self.token_ids = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
        self.lengths = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
        self.flags = <unsigned char*>malloc(max(n, 1))
        if self.token_ids == NULL or self.lengths == NULL or self.flags == NULL:
            raise MemoryError()
        memset(self.starts_any, 0, 256)
        memset(self.starts_always, 0, 256)
        self.has_always = False
        for i in range(n):
            self.token_ids[i] = token_ids[i]
            self.lengths[i] = len(texts[i])
            self.flags[i] = flags[i]
            self.starts_any[texts[i][0]] = 1
            if flags[i] & SPLIT_ALWAYS:
                self.starts_always[texts[i][0]] = 1
                self.has_always = True
        self.trie = DoubleArrayTrie.build(texts, list(range(n)))
        return self

    cdef int split(self, const unsigned char* s, Py_ssize_t n, bint parse_special,
                   SplitWork* w, IdBuf* segments) noexcept nogil:
        """Segments of s[:n] as (token id, start, end) triples, token id -1 for raw text.

        Returns 0, or -1 when memory runs out.
        """
        cdef const unsigned char* starts = &self.starts_always[0]
        cdef const DANode* nodes = self.trie.nodes
        cdef Py_ssize_t p, q, k, a, b, prev_end
        cdef int32_t node, rank, length
        cdef char* claimed
        cdef bint free_run
        if parse_special:
            starts = &self.starts_any[0]
        segments.size = 0
        w.found.size = 0
        w.accepted.size = 0
        for p in range(n):
            if not starts[s[p]]:
                continue
            node = 0
            for q in range(p, n):
                node = da_child(nodes, node, s[q])
                if node < 0:
                    break
                rank = nodes[node].value
                if rank >= 0 and (parse_special or self.flags[rank] & SPLIT_ALWAYS):
                    if idbuf_push(&w.found, rank) < 0 or idbuf_push(&w.found, <int32_t>p) < 0:
                        return -1
        if w.found.size == 0:
            return 0 if n == 0 else idbuf_push3(segments, -1, 0, n)
        qsort(w.found.data, w.found.size // 2, 2 * sizeof(int32_t), _compare_pairs)
        w.claimed.size = 0
        if bytebuf_reserve(&w.claimed, n) < 0:
            return -1
        claimed = w.claimed.data
        memset(claimed, 0, n)
        for k in range(0, w.found.size, 2):
            rank = w.found.data[k]
            p = w.found.data[k + 1]
            length = self.lengths[rank]
            free_run = True
            for q in range(p, p + length):
                if claimed[q]:
                    free_run = False
                    break
            if not free_run:
                continue
            memset(claimed + p, 1, length)
            if self.flags[rank] & STRIP_LEFT:
                q = p - 1
                while q >= 0 and not claimed[q] and _c_isspace(s[q]):
                    claimed[q] = 1
                    q -= 1
            if self.flags[rank] & STRIP_RIGHT:
                q = p + length
                while q < n and not claimed[q] and _c_isspace(s[q]):
                    claimed[q] = 1
                    q += 1
            if idbuf_push(&w.accepted, <int32_t>p) < 0 or idbuf_push(&w.accepted, rank) < 0:
                return -1
        qsort(w.accepted.data, w.accepted.size // 2, 2 * sizeof(int32_t), _compare_pairs)
        prev_end = 0
        for k in range(0, w.accepted.size + 2, 2):
            if k < w.accepted.size:
                p = w.accepted.data[k]
                rank = w.accepted.data[k + 1]
            else:
                p = n
                rank = -1
            # Between two tokens the unclaimed bytes are one run: stripping only
            # removes whitespace at the edges.
            a = prev_end
            b = p
            while a < b and claimed[a]:
                a += 1
            while b > a and claimed[b - 1]:
                b -= 1
            if b > a and idbuf_push3(segments, -1, a, b) < 0:
                return -1
            if rank >= 0:
                if idbuf_push3(segments, self.token_ids[rank], p, p + self.lengths[rank]) < 0:
                    return -1
                prev_end = p + self.lengths[rank]
        return 0


