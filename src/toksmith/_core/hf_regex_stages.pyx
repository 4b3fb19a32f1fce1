"""tokenizer.json's Split pre-tokenizer and Replace normalizer, natively, on LinearRegex.

Both find their pattern's matches like tokenizers' `find_matches` over Oniguruma (every match,
empty ones included, then the gaps between them) and then:
* HfSplit cuts the text into the segments and keeps, merges or removes the matched ones by
  its behavior (tokenizers NormalizedString::split; `invert` swaps matched and not);
* HfReplace puts `content` in place of every match (NormalizedString::replace).

    >>> from toksmith.hf.onig_regex import compile_onig
    >>> from toksmith._core.linear_regex import LinearRegex
    >>> HfSplit(LinearRegex(compile_onig(r"\\s+")), SPLIT_REMOVED, False).split_text(b"a  b")
    [b'a', b'b']
    >>> HfReplace(LinearRegex(compile_onig(" {2,}")), b" ").normalize_text("a   b")
    'a b'
"""
from libc.stdint cimport int32_t
from libc.string cimport memset

from toksmith._core.buffers cimport (ByteBuf, IdBuf, bytebuf_append, bytebuf_free, idbuf_free, idbuf_push,
                                     idbuf_reserve)
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.linear_regex cimport (LinearRegex, LrScratch, lr_find_all, lr_replace_all, lr_scratch_free,
                                          lr_scratch_init)
from toksmith._core.normalizer cimport NORMALIZED_LATE_START, TEXT_UNCHANGED, Normalizer, replace_carry_start
from toksmith._core.pretokenizer cimport PRETOK_REWRITTEN, PreTokenizer, PreTokenizerWork, pretok_inner_work
from toksmith._core.pretokenizer cimport SPLIT_CONTIGUOUS as _CONTIGUOUS, SPLIT_ISOLATED as _ISOLATED
from toksmith._core.pretokenizer cimport SPLIT_MERGED_WITH_NEXT as _MERGED_WITH_NEXT
from toksmith._core.pretokenizer cimport SPLIT_MERGED_WITH_PREVIOUS as _MERGED_WITH_PREVIOUS
from toksmith._core.pretokenizer cimport SPLIT_REMOVED as _REMOVED

# The split behaviors, for Python (the codes HfSplit and HfPunctuation take)
SPLIT_REMOVED = _REMOVED
SPLIT_ISOLATED = _ISOLATED
SPLIT_MERGED_WITH_PREVIOUS = _MERGED_WITH_PREVIOUS
SPLIT_MERGED_WITH_NEXT = _MERGED_WITH_NEXT
SPLIT_CONTIGUOUS = _CONTIGUOUS


cdef inline void _borrow(LrScratch* sc, PreTokenizerWork* work, PreTokenizerWork* inner) noexcept nogil:
    """Run the matcher in the pre-tokenizer's work buffers (given back by _give_back)."""
    sc.eq = work.a
    sc.match_end = work.c
    sc.cols = inner.a
    sc.conts = inner.b
    sc.tables = inner.text2


cdef inline void _give_back(LrScratch* sc, PreTokenizerWork* work, PreTokenizerWork* inner) noexcept nogil:
    work.a = sc.eq
    work.c = sc.match_end
    inner.a = sc.cols
    inner.b = sc.conts
    inner.text2 = sc.tables


cdef int _segments(const int32_t* pairs, Py_ssize_t n_pairs, Py_ssize_t n, bint invert, IdBuf* out) noexcept nogil:
    """(start, end, is_match) triples: the matches and the gaps between them.
    Parity: tokenizers utils/onig.rs Pattern::find_matches for &SysRegex, and Invert."""
    cdef Py_ssize_t k, prev = 0
    out.size = 0
    if idbuf_reserve(out, 3 * (2 * n_pairs + 1)) < 0:
        return ERR_NO_MEMORY
    for k in range(0, 2 * n_pairs, 2):
        if prev != pairs[k]:
            out.data[out.size] = <int32_t>prev
            out.data[out.size + 1] = pairs[k]
            out.data[out.size + 2] = invert
            out.size += 3
        out.data[out.size] = pairs[k]
        out.data[out.size + 1] = pairs[k + 1]
        out.data[out.size + 2] = not invert
        out.size += 3
        prev = pairs[k + 1]
    if prev != n:
        out.data[out.size] = <int32_t>prev
        out.data[out.size + 1] = <int32_t>n
        out.data[out.size + 2] = invert
        out.size += 3
    return 0


cdef int _pieces(const int32_t* seg, Py_ssize_t n_seg, int behavior, IdBuf* out) noexcept nogil:
    """(start, end) of the pieces a behavior keeps, in order (empty ones included).
    Parity: tokenizers NormalizedString::split."""
    cdef Py_ssize_t k, i
    cdef bint previous_match = False, is_match, merge
    cdef int32_t t
    out.size = 0
    if idbuf_reserve(out, 2 * n_seg + 2) < 0:
        return ERR_NO_MEMORY
    if behavior == _MERGED_WITH_NEXT:
        for k in range(n_seg - 1, -1, -1):
            is_match = seg[3 * k + 2] != 0
            if is_match and not previous_match and out.size > 0:
                out.data[out.size - 2] = seg[3 * k]
            else:
                out.data[out.size] = seg[3 * k]
                out.data[out.size + 1] = seg[3 * k + 1]
                out.size += 2
            previous_match = is_match
        i = 0
        k = out.size - 2
        while i < k:
            t = out.data[i]; out.data[i] = out.data[k]; out.data[k] = t
            t = out.data[i + 1]; out.data[i + 1] = out.data[k + 1]; out.data[k + 1] = t
            i += 2
            k -= 2
        return 0
    for k in range(n_seg):
        is_match = seg[3 * k + 2] != 0
        if behavior == _REMOVED:
            if not is_match:
                out.data[out.size] = seg[3 * k]
                out.data[out.size + 1] = seg[3 * k + 1]
                out.size += 2
            continue
        if behavior == _ISOLATED:
            merge = False
        elif behavior == _CONTIGUOUS:
            merge = is_match == previous_match
        else:   # SPLIT_MERGED_WITH_PREVIOUS
            merge = is_match and not previous_match
        if merge and out.size > 0:
            out.data[out.size - 1] = seg[3 * k + 1]
        else:
            out.data[out.size] = seg[3 * k]
            out.data[out.size + 1] = seg[3 * k + 1]
            out.size += 2
        previous_match = is_match
    return 0


cdef class HfSplit(PreTokenizer):
    """Parity: tokenizers pre_tokenizers/split.rs Split::pre_tokenize (pattern, behavior, invert);
    the pre-tokens are the non-empty pieces (PreTokenizedString::split drops empty ones)."""
    cdef readonly LinearRegex regex
    cdef readonly int behavior
    cdef readonly bint invert

    def __init__(self, LinearRegex regex, int behavior, bint invert):
        if not _REMOVED <= behavior <= _CONTIGUOUS:
            raise ValueError(f"unknown split behavior {behavior}")
        self.regex = regex
        self.behavior = behavior
        self.invert = invert

    def __reduce__(self):
        return (HfSplit, (self.regex, self.behavior, self.invert))

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef PreTokenizerWork* inner
        cdef LrScratch sc
        cdef Py_ssize_t count, k, a, b, base = ends.size
        cdef int rc
        cdef bint gaps = False
        if n == 0:
            return 0
        inner = pretok_inner_work(work)
        if inner == NULL:
            return ERR_NO_MEMORY
        _borrow(&sc, work, inner)
        inner.c.size = 0
        count = lr_find_all(self.regex, s, n, &sc, &inner.c)
        rc = <int>count if count < 0 else 0
        # segments into sc.match_end, pieces into sc.eq (both free once the matches are found)
        if rc == 0:
            rc = _segments(inner.c.data, count, n, self.invert, &sc.match_end)
        if rc == 0:
            rc = _pieces(sc.match_end.data, sc.match_end.size // 3, self.behavior, &sc.eq)
        _give_back(&sc, work, inner)
        if rc < 0:
            return rc
        # pieces are in order; any gap between them is removed text
        b = 0
        for k in range(0, work.a.size, 2):
            if work.a.data[k] != b:
                gaps = True
            b = work.a.data[k + 1]
        if b != n:
            gaps = True
        if not gaps:
            for k in range(0, work.a.size, 2):
                if work.a.data[k + 1] > work.a.data[k] and idbuf_push(ends, work.a.data[k + 1]) < 0:
                    ends.size = base
                    return ERR_NO_MEMORY
            return 0
        # Removed text: the kept pieces become the pre-tokenizer's own text.
        work.text.size = 0
        work.dropped_start = True
        for k in range(0, work.a.size, 2):
            a = work.a.data[k]
            b = work.a.data[k + 1]
            if b == a:
                continue
            if work.text.size == 0 and a == 0:
                work.dropped_start = False
            if (bytebuf_append(&work.text, <const char*>s + a, b - a) < 0
                    or idbuf_push(ends, <int32_t>work.text.size) < 0):
                ends.size = base
                return ERR_NO_MEMORY
        return PRETOK_REWRITTEN


cdef class HfReplace(Normalizer):
    """Parity: tokenizers normalizers/replace.rs Replace::normalize (NormalizedString::replace).

    Returns NORMALIZED_LATE_START when the output's first character is aligned, by
    NormalizedString::replace, to an input character after the first (a leading match of
    several characters replaced, or leading text deleted): tokenizers then sees the
    normalized text as not starting the input (Metaspace's prepend_scheme "first")."""
    cdef readonly LinearRegex regex
    cdef readonly bytes content
    cdef const char* content_data
    cdef Py_ssize_t content_len

    def __init__(self, LinearRegex regex, bytes content):
        self.regex = regex
        self.content = content
        self.content_data = self.content
        self.content_len = len(self.content)

    def __reduce__(self):
        return (HfReplace, (self.regex, self.content))

    def starts_late(self, bytes text):
        """Whether normalize() reports NORMALIZED_LATE_START for `text` (tests)."""
        cdef ByteBuf out
        cdef int rc
        memset(&out, 0, sizeof(ByteBuf))
        rc = self.normalize(<const unsigned char*>(<char*>text), len(text), &out)
        bytebuf_free(&out)
        if rc < 0:
            raise MemoryError()
        return rc == NORMALIZED_LATE_START

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef LrScratch sc
        cdef IdBuf pairs
        cdef Py_ssize_t count, k, p = 0, b
        cdef Py_ssize_t content_len = self.content_len
        cdef const char* content = self.content_data
        cdef bint late = False, decided = False
        lr_scratch_init(&sc)
        memset(&pairs, 0, sizeof(IdBuf))
        count = lr_replace_all(self.regex, s, n, content, content_len, &sc, &pairs, out)
        if count > 0:
            # Parity: NormalizedString::replace alignments of the first output character:
            # copied text keeps its own; a match's content takes that of the match's last
            # byte ((0, 0) for an empty match at 0).
            for k in range(0, pairs.size, 2):
                if pairs.data[k] > p:
                    break
                if content_len > 0:
                    b = pairs.data[k + 1] - 1
                    while b > 0 and (s[b] & 0xC0) == 0x80:
                        b -= 1
                    late = b > 0
                    decided = True
                    break
                p = pairs.data[k + 1]
            if not decided:
                late = p > 0 and p < n
        lr_scratch_free(&sc)
        idbuf_free(&pairs)
        if count < 0:
            return <int>count
        if count == 0:
            return TEXT_UNCHANGED
        return NORMALIZED_LATE_START if late else 0

    cdef Py_ssize_t carry_start(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t flagged,
                                const unsigned char* o, Py_ssize_t m) noexcept nogil:
        cdef LrScratch sc
        cdef IdBuf pairs
        cdef Py_ssize_t count, k
        lr_scratch_init(&sc)
        memset(&pairs, 0, sizeof(IdBuf))
        count = lr_find_all(self.regex, s, n, &sc, &pairs)
        k = count if count < 0 else min(replace_carry_start(pairs.data, count, n, self.content_len, flagged), m)
        lr_scratch_free(&sc)
        idbuf_free(&pairs)
        return k
