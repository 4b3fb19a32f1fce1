"""The seed pieces of sentencepiece's Unigram trainer: frequent substrings of the corpus.

`seed_substrings(sentences, seed_size, vocab_size, rules...)` concatenates the sentences
(each as often as it occurs, each followed by a NUL), builds the suffix array and LCP
array of that text, and walks its LCP interval tree: every interval (a substring that
repeats, as long as its common prefix) whose text is a valid piece becomes a candidate
scored frequency x length in characters. The best `seed_size` candidates are returned,
best first.

Parity: sentencepiece 0.2.3 unigram_model_trainer.cc
Trainer::MakeSeedSentencePiecesFromCorpus and BoundedPriorityQueue (scores as float,
ties by byte length then text; a candidate that ends in NUL counts as its text without
the NUL, merged with the same text's own interval).

>>> from toksmith._core.spm_sentences import SpmSentences
>>> s = SpmSentences(); s.append("▁abab▁abab".encode()); s.append("▁ab".encode())
>>> seed_substrings(s, 10, 100, 16, True, True, True, False, False, False)[0][:2]
[b'ab', b'\\xe2\\x96\\x81abab']

("ab" counts 5 occurrences plus the 2 of its interval "ab" + NUL: 7 x 2 characters.)
"""
from array import array

from libc.math cimport log
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memchr, memcmp, memcpy

from toksmith._core.spm_sentences cimport SpmSentences
from toksmith._core.spm_piece_rules cimport PieceRules, utf8_chars, valid_piece
from toksmith._core.suffix_array cimport permuted_lcp_parallel, suffix_array_bytes
from toksmith._core.threadpool cimport parallel_for

cdef extern from *:
    """
    #define TOKSMITH_SEEDS_PREFETCH(p) __builtin_prefetch((const void*)(p))
    """
    void prefetch "TOKSMITH_SEEDS_PREFETCH"(const void* p) nogil

# Parity: unigram_model_trainer.cc kMaxChunkBytes
MAX_CHUNK_BYTES = 500 * 1024 * 1024


cdef struct Candidates:
    int32_t* offset
    int32_t* length
    int64_t* freq
    float* score
    Py_ssize_t n
    Py_ssize_t cap


cdef int _add(Candidates* c, int32_t offset, int32_t length, int64_t freq, float score) noexcept nogil:
    cdef Py_ssize_t cap
    cdef void* p
    if c.n == c.cap:
        cap = c.cap * 2 if c.cap else 1 << 16
        p = realloc(c.offset, cap * sizeof(int32_t))
        if p == NULL:
            return -1
        c.offset = <int32_t*>p
        p = realloc(c.length, cap * sizeof(int32_t))
        if p == NULL:
            return -1
        c.length = <int32_t*>p
        p = realloc(c.freq, cap * sizeof(int64_t))
        if p == NULL:
            return -1
        c.freq = <int64_t*>p
        p = realloc(c.score, cap * sizeof(float))
        if p == NULL:
            return -1
        c.score = <float*>p
        c.cap = cap
    c.offset[c.n] = offset
    c.length[c.n] = length
    c.freq[c.n] = freq
    c.score[c.n] = score
    c.n += 1
    return 0


cdef void _free_candidates(Candidates* c) noexcept nogil:
    free(c.offset)
    free(c.length)
    free(c.freq)
    free(c.score)


cdef struct Walk:
    const unsigned char* text
    int32_t n
    const PieceRules* rules
    int64_t min_freq
    float power
    Candidates* out


cdef inline float _score(int64_t freq, Py_ssize_t chars, float power) noexcept nogil:
    # Parity: BoundedPriorityQueue::CalculateScore (float arithmetic)
    cdef float length = <float>chars
    if power == 1.0:
        return <float>freq * length
    if power == 0.0:
        return <float>freq
    return <float>freq * <float>(length ** power)


cdef int _emit(Walk* w, int32_t offset, int32_t length, int64_t freq) noexcept nogil:
    """A candidate's text is final: check it as a piece and keep it."""
    cdef const unsigned char* s = w.text + offset
    cdef Py_ssize_t chars
    if freq < 2 or length == 0:
        return 0
    # Parity: pieces crossing a sentence boundary (a NUL inside) are skipped
    if memchr(s, 0, length) != NULL:
        return 0
    if length > 4 * w.rules.max_piece_length:
        return 0          # more characters than max_piece_length, whatever the bytes
    chars = utf8_chars(s, length)
    if chars <= 1 or chars > w.rules.max_piece_length:
        return 0
    if not valid_piece(s, length, w.rules):
        return 0
    return _add(w.out, offset, length, freq, _score(freq, chars, w.power))


cdef int64_t _interval(Walk* w, const int32_t* sa, int32_t l, int32_t r, int32_t depth, int64_t carry,
                       int32_t parent_depth, int* rc) noexcept nogil:
    """Process the LCP interval [l, r] of common prefix `depth`; returns what its text
    (without trailing NULs) passes on to its parent interval, whose text is the same
    (an interval ending in NUL), else 0 after keeping the candidate.
    Parity: MakeSeedSentencePiecesFromCorpus process_interval, BoundedPriorityQueue::Add."""
    cdef int64_t freq = r - l + 1, total = carry
    cdef int32_t offset = sa[l], t
    cdef int64_t eff_min = 2 if depth <= 3 else w.min_freq
    cdef bint passes = depth > 1 and freq >= eff_min and offset >= 0 and offset + depth <= w.n
    if passes:
        # Parity: candidates may not cut a UTF-8 character at either end
        passes = (w.text[offset] & 0xC0) != 0x80 and \
            (offset + depth == w.n or (w.text[offset + depth] & 0xC0) != 0x80)
    if passes:
        total += freq
    t = depth
    while t > 0 and w.text[offset + t - 1] == 0:
        t -= 1
    if t < depth and parent_depth >= t:
        return total       # the parent's text without its NULs is the same text
    if total > 0:
        rc[0] = _emit(w, offset, t, total)
    return 0


cdef int _walk(Walk* w, const int32_t* sa, const int32_t* plcp, int32_t a, int32_t b) noexcept nogil:
    """Post-order walk of the LCP interval tree over suffixes a..b-1, where the LCP of
    suffix a and of suffix b with their predecessors is 0 (whole subtrees of the root).
    Parity: the stack traversal of MakeSeedSentencePiecesFromCorpus (Abouelhoda et al.)."""
    cdef int32_t i, lcp, last_l, l, depth, top = 0, cap = 1024, parent_depth
    cdef int64_t carry, up
    cdef int32_t* st_l = <int32_t*>malloc(cap * sizeof(int32_t))
    cdef int32_t* st_d = <int32_t*>malloc(cap * sizeof(int32_t))
    cdef int64_t* st_c = <int64_t*>malloc(cap * sizeof(int64_t))
    cdef int rc = 0
    cdef void* p
    if st_l == NULL or st_d == NULL or st_c == NULL:
        free(st_l)
        free(st_d)
        free(st_c)
        return -1
    st_l[0] = a
    st_d[0] = 0
    st_c[0] = 0
    top = 1
    for i in range(a + 1, b + 1):
        if i + 24 < b:
            prefetch(plcp + sa[i + 24])    # plcp is read in suffix order: at random
        lcp = plcp[sa[i]] if i < b else 0
        last_l = i - 1
        while lcp < st_d[top - 1]:
            top -= 1
            l = st_l[top]
            depth = st_d[top]
            carry = st_c[top]
            last_l = l
            parent_depth = st_d[top - 1] if st_d[top - 1] > lcp else lcp
            up = _interval(w, sa, l, i - 1, depth, carry, parent_depth, &rc)
            if rc < 0:
                break
            if lcp > st_d[top - 1]:
                st_l[top] = l
                st_d[top] = lcp
                st_c[top] = 0
                top += 1
            st_c[top - 1] += up
        if rc < 0:
            break
        if lcp > st_d[top - 1]:
            if top == cap:
                cap *= 2
                p = realloc(st_l, cap * sizeof(int32_t))
                if p == NULL:
                    rc = -1
                    break
                st_l = <int32_t*>p
                p = realloc(st_d, cap * sizeof(int32_t))
                if p == NULL:
                    rc = -1
                    break
                st_d = <int32_t*>p
                p = realloc(st_c, cap * sizeof(int64_t))
                if p == NULL:
                    rc = -1
                    break
                st_c = <int64_t*>p
            st_l[top] = last_l
            st_d[top] = lcp
            st_c[top] = 0
            top += 1
    free(st_l)
    free(st_d)
    free(st_c)
    return rc


cdef const unsigned char* _cmp_text = NULL
cdef const Candidates* _cmp_cands = NULL     # qsort has no context argument (GIL held)


cdef int _better_first(const void* a, const void* b) noexcept nogil:
    """Parity: BoundedPriorityQueue::Get order: score, then byte length, descending;
    then the text ascending."""
    cdef int32_t i = (<const int32_t*>a)[0], j = (<const int32_t*>b)[0]
    cdef const Candidates* c = _cmp_cands
    cdef int32_t li = c.length[i], lj = c.length[j], m
    cdef int r
    if c.score[i] != c.score[j]:
        return -1 if c.score[i] > c.score[j] else 1
    if li != lj:
        return -1 if li > lj else 1
    return memcmp(_cmp_text + c.offset[i], _cmp_text + c.offset[j], li)


cdef float _kth_largest(float* v, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """The k-th largest of v[0..n) (0-based), v reordered (quickselect)."""
    cdef Py_ssize_t lo = 0, hi = n - 1, i, j
    cdef float pivot, tmp
    while lo < hi:
        pivot = v[(lo + hi) >> 1]
        i = lo
        j = hi
        while i <= j:
            while v[i] > pivot:
                i += 1
            while v[j] < pivot:
                j -= 1
            if i <= j:
                tmp = v[i]
                v[i] = v[j]
                v[j] = tmp
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            break
    return v[k]


cdef struct WalkJob:
    const unsigned char* text
    int32_t n
    const int32_t* sa
    const int32_t* plcp
    const int32_t* bounds      # part k walks suffixes bounds[k] .. bounds[k+1]-1
    Walk* walks                # one per part, each with its own candidates
    int* status


cdef void _walk_parts(void* ctx, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    cdef WalkJob* job = <WalkJob*>ctx
    cdef Py_ssize_t k
    for k in range(start, end):
        job.status[k] = _walk(&job.walks[k], job.sa, job.plcp, job.bounds[k], job.bounds[k + 1])


cdef int _parallel_walk(const unsigned char* text, int32_t n, const int32_t* sa, const int32_t* plcp,
                        const PieceRules* rules, int64_t min_freq, float power, int threads,
                        Candidates* out) noexcept nogil:
    """The walk in parts cut where the LCP is 0 (subtrees of the root are independent),
    one per thread; the parts' candidates are joined in suffix order, as one walk finds
    them."""
    cdef int parts = threads if threads > 1 else 1
    cdef int32_t* bounds = <int32_t*>malloc((parts + 1) * sizeof(int32_t))
    cdef Walk* walks = <Walk*>calloc(parts, sizeof(Walk))
    cdef Candidates* cands = <Candidates*>calloc(parts, sizeof(Candidates))
    cdef int* status = <int*>calloc(parts, sizeof(int))
    cdef WalkJob job
    cdef int k, rc = 0
    cdef int32_t cut, j
    cdef Py_ssize_t m
    if bounds == NULL or walks == NULL or cands == NULL or status == NULL:
        free(bounds)
        free(walks)
        free(cands)
        free(status)
        return -1
    bounds[0] = 0
    for k in range(1, parts):
        cut = <int32_t>(<int64_t>n * k // parts)
        if cut < bounds[k - 1]:
            cut = bounds[k - 1]
        while cut < n and plcp[sa[cut]] != 0:
            cut += 1
        bounds[k] = cut
    bounds[parts] = n
    for k in range(parts):
        walks[k].text = text
        walks[k].n = n
        walks[k].rules = rules
        walks[k].min_freq = min_freq
        walks[k].power = power
        walks[k].out = &cands[k]
    job.text = text
    job.n = n
    job.sa = sa
    job.plcp = plcp
    job.bounds = bounds
    job.walks = walks
    job.status = status
    parallel_for(parts, 1, threads, _walk_parts, &job)
    for k in range(parts):
        if status[k] < 0:
            rc = -1
        if rc == 0:
            for m in range(cands[k].n):
                if _add(out, cands[k].offset[m], cands[k].length[m], cands[k].freq[m], cands[k].score[m]) < 0:
                    rc = -1
                    break
        _free_candidates(&cands[k])
    free(bounds)
    free(walks)
    free(cands)
    free(status)
    return rc


cdef tuple _chunk_candidates(bytes chunk, const PieceRules* rules, int64_t min_freq, float power, int threads):
    """Candidates of one chunk: (offsets, lengths, freqs, scores) arrays, text order."""
    cdef int32_t n = len(chunk)
    cdef const unsigned char* text = <const unsigned char*>chunk
    cdef int32_t* sa = <int32_t*>malloc((<size_t>n + 1) * sizeof(int32_t))
    cdef int32_t* plcp = NULL
    cdef Candidates cands
    cdef int rc = 0
    cdef int32_t[::1] vo, vl
    cdef int64_t[::1] vf
    cdef float[::1] vs
    cands.offset = NULL
    cands.length = NULL
    cands.freq = NULL
    cands.score = NULL
    cands.n = cands.cap = 0
    if sa == NULL:
        raise MemoryError()
    try:
        with nogil:
            rc = suffix_array_bytes(text, n, sa)
            if rc == 0:
                plcp = <int32_t*>malloc((<size_t>n + 1) * sizeof(int32_t))
                rc = -1 if plcp == NULL else permuted_lcp_parallel(text, n, sa, plcp, threads)
            if rc == 0:
                rc = _parallel_walk(text, n, sa, plcp, rules, min_freq, power, threads, &cands)
        free(sa)
        sa = NULL
        free(plcp)
        plcp = NULL
        if rc < 0:
            raise MemoryError()
        offsets = array("i", [0]) * cands.n
        lengths = array("i", [0]) * cands.n
        freqs = array("q", [0]) * cands.n
        scores = array("f", [0]) * cands.n
        if cands.n:
            vo = offsets
            vl = lengths
            vf = freqs
            vs = scores
            memcpy(&vo[0], cands.offset, cands.n * sizeof(int32_t))
            memcpy(&vl[0], cands.length, cands.n * sizeof(int32_t))
            memcpy(&vf[0], cands.freq, cands.n * sizeof(int64_t))
            memcpy(&vs[0], cands.score, cands.n * sizeof(float))
        return offsets, lengths, freqs, scores
    finally:
        free(sa)
        free(plcp)
        _free_candidates(&cands)


def best_candidates(bytes chunk, offsets, lengths, scores, Py_ssize_t keep):
    """Indices of the `keep` best candidates, best first (see _better_first)."""
    global _cmp_text, _cmp_cands
    cdef Candidates c
    cdef Py_ssize_t n = len(scores), i, m = 0
    cdef float threshold
    cdef int32_t[::1] off = offsets
    cdef int32_t[::1] length = lengths
    cdef float[::1] score = scores
    cdef float* tmp
    cdef int32_t* idx
    if n == 0:
        return []
    c.offset = &off[0]
    c.length = &length[0]
    c.score = &score[0]
    c.n = n
    idx = <int32_t*>malloc(n * sizeof(int32_t))
    tmp = <float*>malloc(n * sizeof(float))
    if idx == NULL or tmp == NULL:
        free(idx)
        free(tmp)
        raise MemoryError()
    try:
        with nogil:
            if keep < n:
                memcpy(tmp, &score[0], n * sizeof(float))
                threshold = _kth_largest(tmp, n, keep - 1) if keep > 0 else 3.4e38
                for i in range(n):
                    if score[i] >= threshold:
                        idx[m] = <int32_t>i
                        m += 1
            else:
                for i in range(n):
                    idx[i] = <int32_t>i
                m = n
        _cmp_text = <const unsigned char*>chunk
        _cmp_cands = &c
        with nogil:
            qsort(idx, m, sizeof(int32_t), _better_first)
        _cmp_text = NULL
        _cmp_cands = NULL
        if m > keep:
            m = keep
        return [idx[i] for i in range(m)]
    finally:
        free(idx)
        free(tmp)


cdef PieceRules _rules(int max_piece_length, bint split_by_unicode_script, bint split_by_number,
                       bint split_by_whitespace, bint split_digits, bint treat_whitespace_as_suffix,
                       bint allow_whitespace_only_pieces):
    cdef PieceRules rules
    rules.max_piece_length = max_piece_length
    rules.split_by_unicode_script = split_by_unicode_script
    rules.split_by_number = split_by_number
    rules.split_by_whitespace = split_by_whitespace
    rules.split_digits = split_digits
    rules.treat_whitespace_as_suffix = treat_whitespace_as_suffix
    rules.allow_whitespace_only_pieces = allow_whitespace_only_pieces
    return rules


def valid_pieces(list pieces, int max_piece_length, bint split_by_unicode_script, bint split_by_number,
                 bint split_by_whitespace, bint split_digits, bint treat_whitespace_as_suffix,
                 bint allow_whitespace_only_pieces):
    """One flag per piece (UTF-8 bytes): 1 where sentencepiece's trainer accepts it as a
    piece under these rules (Parity: TrainerInterface::IsValidSentencePiece), else 0.

    >>> list(valid_pieces([b"\\xe2\\x96\\x81ab", b"a b"], 16, True, True, True, False, False, False))
    [1, 0]
    """
    cdef PieceRules rules = _rules(max_piece_length, split_by_unicode_script, split_by_number, split_by_whitespace,
                                   split_digits, treat_whitespace_as_suffix, allow_whitespace_only_pieces)
    cdef bytearray out = bytearray(len(pieces))
    cdef Py_ssize_t i
    cdef bytes piece
    for i in range(len(pieces)):
        piece = pieces[i]
        out[i] = valid_piece(<const unsigned char*>piece, len(piece), &rules)
    return out


def seed_substrings(SpmSentences sentences, Py_ssize_t seed_size, int vocab_size, int max_piece_length,
                    bint split_by_unicode_script, bint split_by_number, bint split_by_whitespace,
                    bint split_digits, bint treat_whitespace_as_suffix, bint allow_whitespace_only_pieces,
                    float min_freq_alpha=0.0, float power=1.0, int threads=1):
    """The best `seed_size` substrings: (list of UTF-8 pieces, array('f') of scores), best
    first. See the module docstring."""
    cdef PieceRules rules = _rules(max_piece_length, split_by_unicode_script, split_by_number, split_by_whitespace,
                                   split_digits, treat_whitespace_as_suffix, allow_whitespace_only_pieces)
    cdef Py_ssize_t i = 0, r, start
    cdef int64_t k, min_freq
    cdef float vs, klogk
    merged = None
    while i < sentences.n:
        # Parity: each sentence repeated by its frequency, NUL after each, up to a chunk
        chunk, i = sentences.chunk(i, MAX_CHUNK_BYTES)
        if not chunk:
            break
        # Parity: min_freq = max(2, alpha * N / (K ln K)), all float
        vs = <float>max(1, vocab_size)
        klogk = vs * <float>log(vs)
        min_freq = max(2, <int64_t>(min_freq_alpha * <float>len(chunk) / max(<float>1.0, klogk)))
        offsets, lengths, freqs, scores = _chunk_candidates(chunk, &rules, min_freq, power, threads)
        if merged is None and i >= sentences.n:
            best = best_candidates(chunk, offsets, lengths, scores, seed_size)
            return ([chunk[offsets[j]:offsets[j] + lengths[j]] for j in best],
                    array("f", [scores[j] for j in best]))
        # Several chunks (a corpus over 500 MB): candidates merged by text.
        merged = {} if merged is None else merged
        for j in range(len(freqs)):
            piece = chunk[offsets[j]:offsets[j] + lengths[j]]
            merged[piece] = merged.get(piece, 0) + freqs[j]
        if len(merged) > 16 * seed_size:
            merged = dict(_ranked(merged, power)[:8 * seed_size])   # Parity: BoundedPriorityQueue::Gc
    if not merged:
        return [], array("f")
    ranked = _ranked(merged, power)[:seed_size]
    return [p for p, _ in ranked], array("f", [_py_score(f, p, power) for p, f in ranked])


def _py_score(int64_t freq, bytes piece, float power):
    return _score(freq, utf8_chars(<const unsigned char*>piece, len(piece)), power)


def _ranked(dict merged, float power):
    scored = array("f", [_py_score(f, p, power) for p, f in merged.items()])
    items = list(merged.items())
    order = sorted(range(len(items)), key=lambda j: (-scored[j], -len(items[j][0]), items[j][0]))
    return [items[j] for j in order]
