"""Split HF tokenizers' added tokens out of the input, before normalization.

The rules are tokenizers 0.23's (tokenizer/added_vocabulary.rs `find_matches`, run by
`extract_and_normalize`):

- matches are found leftmost-longest and never overlap: the scan resumes after a match
  even when that match is then dropped (a special token while parse_special is off,
  which is tokenizers' `encode_special_tokens`; a single_word token inside a word);
- single_word: kept only when no word character (Rust regex `\\w`) touches either end;
- lstrip/rstrip: the token also takes the whitespace (`\\s`) before/after it, never
  reaching into the previous token;
- tokens with normalized=False are matched first on the raw text; tokens with
  normalized=True then in the stretches between (the pipeline only builds this when it
  has no normalizer, so the raw stretches are the normalized ones).

    >>> HfAddedTokenSplitter.build([b"<s>"], [1], bytes([HF_SPECIAL]))  # doctest: +SKIP
"""
from libc.stdint cimport int32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from toksmith._core.buffers cimport IdBuf, idbuf_push3
from toksmith._core.specials cimport SpecialSplitter, SplitWork
from toksmith._core.trie cimport DANode, DoubleArrayTrie, da_child
from toksmith._core.utf8 cimport valid_char_len

include "unicode_hf_classes.pxi"

# Flags of one added token (the `flags` bytes given to build).
HF_SPECIAL = 1          # skipped when parse_special is off
HF_SINGLE_WORD = 2
HF_LSTRIP = 4
HF_RSTRIP = 8
HF_NORMALIZED = 16      # matched in the second pass

cdef enum:
    _SPECIAL = 1
    _SINGLE_WORD = 2
    _LSTRIP = 4
    _RSTRIP = 8
    _NORMALIZED = 16


cdef inline bint _in_ranges(unsigned int cp, const unsigned int* ranges, Py_ssize_t count) noexcept nogil:
    cdef Py_ssize_t lo = 0, hi = count, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if cp > ranges[2 * mid + 1]:
            lo = mid + 1
        elif cp < ranges[2 * mid]:
            hi = mid
        else:
            return True
    return False


cdef inline unsigned int _decode(const unsigned char* s, int length) noexcept nogil:
    if length == 1:
        return s[0]
    if length == 2:
        return ((s[0] & 0x1F) << 6) | (s[1] & 0x3F)
    if length == 3:
        return ((s[0] & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
    return ((s[0] & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F)


cdef inline int _char_before(const unsigned char* s, Py_ssize_t lo, Py_ssize_t p, unsigned int* cp) noexcept nogil:
    """Byte length of the character ending at p (not before lo), its code point in cp;
    an invalid byte counts as one character that is neither word nor space (U+FFFD)."""
    cdef Py_ssize_t k = p - 1
    cdef int length
    while k > lo and p - k < 4 and (s[k] & 0xC0) == 0x80:
        k -= 1
    length = valid_char_len(s + k, p - k)
    if length == p - k:
        cp[0] = _decode(s + k, length)
        return length
    cp[0] = 0xFFFD
    return 1


cdef inline int _char_at(const unsigned char* s, Py_ssize_t q, Py_ssize_t hi, unsigned int* cp) noexcept nogil:
    cdef int length = valid_char_len(s + q, hi - q)
    if length == 0:
        cp[0] = 0xFFFD
        return 1
    cp[0] = _decode(s + q, length)
    return length


cdef inline bint _is_word(unsigned int cp) noexcept nogil:
    if cp < 0x80:
        return (0x30 <= cp <= 0x39) or (0x41 <= cp <= 0x5A) or (0x61 <= cp <= 0x7A) or cp == 0x5F
    return _in_ranges(cp, HF_WORD_RANGES, HF_WORD_RANGES_COUNT)


cdef inline bint _is_space(unsigned int cp) noexcept nogil:
    return _in_ranges(cp, HF_SPACE_RANGES, HF_SPACE_RANGES_COUNT)


cdef class _TokenSet:
    """The added tokens of one pass: a trie of their texts -> index, and per index the id,
    byte length and flags."""
    cdef DoubleArrayTrie trie
    cdef int32_t* ids
    cdef int32_t* lengths
    cdef unsigned char* flags
    cdef unsigned char starts[256]
    cdef Py_ssize_t n
    cdef _TokenSet then         # matched in the text between this set's tokens
    cdef bint has_then

    def __cinit__(self):
        self.ids = NULL
        self.lengths = NULL
        self.flags = NULL

    def __dealloc__(self):
        free(self.ids)
        free(self.lengths)
        free(self.flags)

    def __init__(self, list texts, list ids, bytes flags):
        cdef Py_ssize_t i, n = len(texts)
        self.n = n
        self.ids = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
        self.lengths = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
        self.flags = <unsigned char*>malloc(max(n, 1))
        if self.ids == NULL or self.lengths == NULL or self.flags == NULL:
            raise MemoryError()
        memset(self.starts, 0, 256)
        for i in range(n):
            self.ids[i] = ids[i]
            self.lengths[i] = len(texts[i])
            self.flags[i] = flags[i]
            self.starts[texts[i][0]] = 1
        self.trie = DoubleArrayTrie.build(texts, list(range(n))) if n else None

    cdef int find(self, const unsigned char* s, Py_ssize_t lo, Py_ssize_t hi, bint parse_special,
                  IdBuf* segments) noexcept nogil:
        """Append the segments of s[lo:hi]: (id, start, end) for a token kept, (-1, start, end)
        for the text between; that text goes through `self.then` first when there is one.
        Returns 0, or -1 when memory runs out."""
        cdef const DANode* nodes
        cdef Py_ssize_t p = lo, q, k, start, stop, start_offset = lo, best_len
        cdef int32_t node, best, value
        cdef unsigned char f
        cdef unsigned int cp
        cdef int length
        if self.n == 0:
            return self._gap(s, lo, hi, parse_special, segments)
        nodes = self.trie.nodes
        while p < hi:
            if not self.starts[s[p]]:
                p += 1
                continue
            # the longest token starting at p (the leftmost start wins)
            node = 0
            best = -1
            best_len = 0
            for k in range(p, hi):
                node = da_child(nodes, node, s[k])
                if node < 0:
                    break
                value = nodes[node].value
                if value >= 0:
                    best = value
                    best_len = k + 1 - p
            if best < 0:
                p += 1
                continue
            q = p + best_len
            f = self.flags[best]
            start = p
            stop = q
            # Parity: added_vocabulary.rs find_matches: the scan resumes at the end of the
            # match whether or not the match is kept.
            p = q
            if f & _SPECIAL and not parse_special:
                continue
            if f & _SINGLE_WORD:
                if start > lo:
                    _char_before(s, lo, start, &cp)
                    if _is_word(cp):
                        continue
                if stop < hi:
                    _char_at(s, stop, hi, &cp)
                    if _is_word(cp):
                        continue
            if f & _LSTRIP:
                while start > start_offset:
                    length = _char_before(s, lo, start, &cp)
                    if not _is_space(cp):
                        break
                    start -= length
                if start < start_offset:
                    start = start_offset
            if f & _RSTRIP:
                while stop < hi:
                    length = _char_at(s, stop, hi, &cp)
                    if not _is_space(cp):
                        break
                    stop += length
            # A match inside whitespace the previous token's rstrip took (only a token that
            # starts with whitespace can do that) starts where that token ended.
            if start < start_offset:
                start = start_offset
            if start_offset < start and self._gap(s, start_offset, start, parse_special, segments) < 0:
                return -1
            if idbuf_push3(segments, self.ids[best], <int32_t>start, <int32_t>stop) < 0:
                return -1
            start_offset = stop
        if start_offset < hi:
            return self._gap(s, start_offset, hi, parse_special, segments)
        return 0

    cdef int _gap(self, const unsigned char* s, Py_ssize_t a, Py_ssize_t b, bint parse_special,
                  IdBuf* segments) noexcept nogil:
        if a >= b:
            return 0
        if self.has_then:
            return self.then.find(s, a, b, parse_special, segments)
        return idbuf_push3(segments, -1, <int32_t>a, <int32_t>b)


cdef class HfAddedTokenSplitter(SpecialSplitter):
    """HF tokenizers' added tokens as the engine's special-token splitter stage."""
    cdef _TokenSet raw
    cdef _TokenSet normalized

    @staticmethod
    def build(list texts, list token_ids, bytes flags):
        """`texts` (distinct, non-empty UTF-8), their ids and HF_* flags; tokens with
        HF_NORMALIZED are matched in the text between the others."""
        cdef HfAddedTokenSplitter self = HfAddedTokenSplitter()
        cdef Py_ssize_t i, n = len(texts)
        if len(token_ids) != n or len(flags) != n:
            raise ValueError("texts, token ids and flags must have equal lengths")
        groups = ([], [], []), ([], [], [])
        for i in range(n):
            if not texts[i]:
                raise ValueError(f"added token {token_ids[i]} has an empty text")
            g = groups[1 if flags[i] & _NORMALIZED else 0]
            g[0].append(texts[i])
            g[1].append(token_ids[i])
            g[2].append(flags[i])
        self.raw = _TokenSet(groups[0][0], groups[0][1], bytes(groups[0][2]))
        self.normalized = _TokenSet(groups[1][0], groups[1][1], bytes(groups[1][2]))
        if self.normalized.n:
            self.raw.then = self.normalized
            self.raw.has_then = True
        self.n = n
        self.has_always = any(not (f & _SPECIAL) for f in flags)
        return self

    cdef int split(self, const unsigned char* s, Py_ssize_t n, bint parse_special,
                   SplitWork* w, IdBuf* segments) noexcept nogil:
        segments.size = 0
        if n == 0:
            return 0
        return self.raw.find(s, 0, n, parse_special, segments)
