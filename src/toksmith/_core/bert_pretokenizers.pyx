"""HF tokenizers' character-class pre-tokenizers, natively: BertPreTokenizer, Whitespace,
WhitespaceSplit and Punctuation (every split behavior).

Character classes come from tables read from tokenizers itself
(tools/gen_hf_unicode_tables.py): Rust's `char::is_whitespace`, BERT's punctuation
(`is_ascii_punctuation || unicode_categories::is_punctuation`) and Rust regex's `\\w`.
A pre-tokenizer that drops characters (whitespace, or Punctuation with behavior
"removed") writes its pre-tokens to `work.text` and returns PRETOK_REWRITTEN, but only
once something is dropped; otherwise its pre-tokens are pieces of the input.

    >>> HfBertPreTokenizer().split_text(b"Hey friend!  How?")
    [b'Hey', b'friend', b'!', b'How', b'?']
    >>> from toksmith._core.hf_regex_stages import SPLIT_MERGED_WITH_NEXT
    >>> HfPunctuation(SPLIT_MERGED_WITH_NEXT).split_text(b"a!!b")
    [b'a', b'!', b'!b']
"""
from libc.stdint cimport int32_t, uint16_t, uint32_t

from libc.string cimport memcpy

from toksmith._core.buffers cimport ByteBuf, IdBuf, bytebuf_reserve, idbuf_push, idbuf_reserve
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.pretokenizer cimport (PRETOK_REWRITTEN, SPLIT_CONTIGUOUS, SPLIT_ISOLATED, SPLIT_MERGED_WITH_PREVIOUS,
                                          SPLIT_REMOVED, PreTokenizer, PreTokenizerWork, SplitBehavior)
from toksmith._core.unicode_hf cimport HF_PUNCT, HF_WHITESPACE, HF_WORD, utf8_decode

include "unicode_hf_flags.pxi"

cdef enum:
    C_OTHER = 0
    C_SPACE = 1      # dropped
    C_PUNCT = 2      # BertPreTokenizer / Punctuation: split off; Whitespace: [^\w\s]
    C_WORD = 3       # Whitespace: \w

# BertPreTokenizer: for characters of classes (prev, c), BERT_PAIRS[prev << 2 | c] has
# bit 0: a pre-token ends between them (prev is not whitespace, and it is punctuation or
# c is not an other character); bit 1: c is kept (not whitespace).
cdef unsigned char BERT_PAIRS[16]
for _prev in (C_OTHER, C_SPACE, C_PUNCT):
    for _c in (C_OTHER, C_SPACE, C_PUNCT):
        BERT_PAIRS[(_prev << 2) | _c] = ((_prev != C_SPACE and (_prev == C_PUNCT or _c != C_OTHER))
                                         | ((_c != C_SPACE) << 1))

# HF_WHITESPACE and HF_PUNCT are bits 10 and 11 of a character's flags: its BERT class
cdef unsigned char FLAG_CLASSES[4]
FLAG_CLASSES[:] = [C_OTHER, C_SPACE, C_PUNCT, C_SPACE]
assert HF_WHITESPACE == 1 << 10 and HF_PUNCT == 1 << 11



# ---------------------------------------------------------------------- pieces out

cdef struct Pieces:
    # Pre-tokens of s as (start, end) ranges in order; the first gap between them
    # (dropped characters) switches to writing their text to work.text. Room for every
    # end and byte is reserved up front: adding a pre-token checks nothing.
    const unsigned char* s
    PreTokenizerWork* work
    IdBuf* ends
    char* text                # work.text.data while rewriting
    Py_ssize_t text_size
    Py_ssize_t covered        # s[:covered] is accounted for while not rewriting
    Py_ssize_t first_start    # start of the first pre-token, -1 before it
    bint rewriting


cdef inline int pieces_init(Pieces* p, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                            IdBuf* ends) noexcept nogil:
    p.s = s
    p.work = work
    p.ends = ends
    p.covered = 0
    p.first_start = -1
    p.rewriting = False
    work.text.size = 0
    if idbuf_reserve(ends, n) < 0 or bytebuf_reserve(&work.text, n) < 0:
        return ERR_NO_MEMORY
    p.text = work.text.data
    p.text_size = 0
    return 0


cdef inline void pieces_add(Pieces* p, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """One pre-token s[start:end] (start < end, after every earlier one)."""
    cdef Py_ssize_t k, length = end - start
    if p.first_start < 0:
        p.first_start = start
    if not p.rewriting:
        if start == p.covered:
            p.covered = end
            p.ends.data[p.ends.size] = <int>end
            p.ends.size += 1
            return
        p.rewriting = True
        memcpy(p.text, p.s, p.covered)
        p.text_size = p.covered
    if length <= 16:
        for k in range(length):
            p.text[p.text_size + k] = p.s[start + k]
    else:
        memcpy(p.text + p.text_size, p.s + start, length)
    p.text_size += length
    p.ends.data[p.ends.size] = <int>p.text_size
    p.ends.size += 1


cdef inline int pieces_finish(Pieces* p, Py_ssize_t n) noexcept nogil:
    """0 when the pre-tokens cover s[:n] exactly, else PRETOK_REWRITTEN (work.text written)."""
    if not p.rewriting:
        if p.covered == n:
            return 0
        memcpy(p.text, p.s, p.covered)    # characters dropped at the end
        p.text_size = p.covered
    p.work.text.size = p.text_size
    p.work.dropped_start = p.first_start != 0
    return PRETOK_REWRITTEN


cdef inline int char_at(const unsigned char* s, Py_ssize_t n, Py_ssize_t i, uint16_t* flags) noexcept nogil:
    """Length of the character at s[i] and its flags (a byte that is not UTF-8: 1, no flags)."""
    cdef uint32_t cp
    cdef int l = utf8_decode(s + i, n - i, &cp)
    if l == 0:
        flags[0] = 0
        return 1
    flags[0] = hf_flags(cp)
    return l


# ---------------------------------------------------------------------- BertPreTokenizer

cdef void _bert_run(const unsigned char* s, Py_ssize_t n, const unsigned char* classes, char* d, int32_t* e,
                    Py_ssize_t* kept, Py_ssize_t* m, unsigned char* prev) noexcept nogil:
    """HfBertPreTokenizer.split's loop: every character of s[:n] in turn (the pair table
    decides; see there)."""
    cdef const unsigned char* p = s
    cdef const unsigned char* stop = s + n
    cdef char* out = d
    cdef int32_t* ends = e
    cdef unsigned char b, c, t, last = C_SPACE
    cdef uint32_t cp
    cdef int l, k
    while p < stop:
        b = p[0]
        if b < 0x80:
            c = classes[b]
            t = BERT_PAIRS[(last << 2) | c]
            ends[0] = <int32_t>(out - d)
            ends += t & 1
            out[0] = <char>b
            out += t >> 1
            last = c
            p += 1
            continue
        l = utf8_decode(p, stop - p, &cp)
        if l == 0:
            l = 1
            c = C_OTHER     # not UTF-8 (never from the engine): kept as it is
        else:
            c = FLAG_CLASSES[(hf_flags(cp) >> 10) & 3]
        t = BERT_PAIRS[(last << 2) | c]
        ends[0] = <int32_t>(out - d)
        ends += t & 1
        for k in range(l):
            out[k] = <char>p[k]
        out += (t >> 1) * l
        last = c
        p += l
    kept[0] = out - d
    m[0] = ends - e
    prev[0] = last


cdef class HfBertPreTokenizer(PreTokenizer):
    """tokenizers' BertPreTokenizer (pre_tokenizers/bert.rs): split on char::is_whitespace
    (removed), then isolate each BERT punctuation character."""

    cdef unsigned char ascii_class[128]

    def __cinit__(self):
        cdef int b
        cdef uint16_t f
        for b in range(128):
            f = hf_flags(b)
            self.ascii_class[b] = C_SPACE if f & HF_WHITESPACE else C_PUNCT if f & HF_PUNCT else C_OTHER

    def __reduce__(self):
        return HfBertPreTokenizer, ()

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        # One pass, no branch per character but ASCII or not: copy the characters that
        # are not whitespace, and between two characters note a pre-token end when the
        # table of the pair says so (after punctuation; after other characters unless
        # more follow).
        cdef Py_ssize_t i = 0, kept = 0, m = 0
        cdef char* d
        cdef int32_t* e
        if n == 0:
            return 0
        if bytebuf_reserve(&work.text, n) < 0 or idbuf_reserve(ends, n) < 0:
            return ERR_NO_MEMORY
        d = work.text.data
        e = ends.data + ends.size
        cdef unsigned char prev
        _bert_run(s, n, self.ascii_class, d, e, &kept, &m, &prev)
        e[m] = <int32_t>kept
        m += BERT_PAIRS[(prev << 2) | C_SPACE] & 1
        ends.size += m
        if kept == n:
            return 0
        work.text.size = kept
        work.dropped_start = m == 0 or self._first_is_space(s, n)
        return PRETOK_REWRITTEN

    cdef inline bint _first_is_space(self, const unsigned char* s, Py_ssize_t n) noexcept nogil:
        cdef uint16_t f
        if s[0] < 0x80:
            return self.ascii_class[s[0]] == C_SPACE
        char_at(s, n, 0, &f)
        return (f & HF_WHITESPACE) != 0


# ---------------------------------------------------------------------- Whitespace, WhitespaceSplit

cdef class HfRunsPreTokenizer(PreTokenizer):
    """Pre-tokens are the maximal runs of characters of one class, whitespace dropped.

    Whitespace (pre_tokenizers/whitespace.rs): the matches of `\\w+|[^\\w\\s]+` (Rust regex
    classes); WhitespaceSplit: split on char::is_whitespace, removed. Build with
    `HfRunsPreTokenizer.whitespace()` or `.whitespace_split()`."""

    cdef readonly bint word_runs          # Whitespace (True) or WhitespaceSplit
    cdef unsigned char ascii_class[128]

    def __cinit__(self, bint word_runs):
        cdef int b
        self.word_runs = word_runs
        for b in range(128):
            self.ascii_class[b] = self._class(hf_flags(b))

    @staticmethod
    def whitespace():
        return HfRunsPreTokenizer(True)

    @staticmethod
    def whitespace_split():
        return HfRunsPreTokenizer(False)

    def __reduce__(self):
        return HfRunsPreTokenizer, (self.word_runs,)

    cdef inline int _class(self, uint16_t f) noexcept nogil:
        if f & HF_WHITESPACE:
            return C_SPACE
        if not self.word_runs:
            return C_OTHER
        return C_WORD if f & HF_WORD else C_PUNCT

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef Pieces p
        cdef Py_ssize_t i = 0, run = 0
        cdef int l, cls, run_class = C_SPACE
        cdef uint16_t f
        if pieces_init(&p, s, n, work, ends) < 0:
            return ERR_NO_MEMORY
        while i < n:
            if s[i] < 0x80:
                cls = self.ascii_class[s[i]]
                l = 1
            else:
                l = char_at(s, n, i, &f)
                cls = self._class(f)
            if cls != run_class:
                if run_class != C_SPACE:
                    pieces_add(&p, run, i)
                run = i
                run_class = cls
            i += l
        if run_class != C_SPACE:
            pieces_add(&p, run, n)
        return pieces_finish(&p, n)


# ---------------------------------------------------------------------- Punctuation

cdef class HfPunctuation(PreTokenizer):
    """tokenizers' Punctuation pre-tokenizer (pre_tokenizers/punctuation.rs): every BERT
    punctuation character is a match, split with `behavior` as NormalizedString::split
    does (tokenizer/normalizer.rs): one of hf_regex_stages' SPLIT_* codes (removed,
    isolated, merged_with_previous, merged_with_next or contiguous).

    >>> from toksmith._core.hf_regex_stages import SPLIT_REMOVED
    >>> HfPunctuation(SPLIT_REMOVED).split_text(b"!a,b!")
    [b'a', b'b']
    """

    cdef readonly int behavior
    cdef SplitBehavior kind
    cdef unsigned char ascii_punct[128]

    def __cinit__(self, int behavior=SPLIT_ISOLATED):
        cdef int b
        if not SPLIT_REMOVED <= behavior <= SPLIT_CONTIGUOUS:
            raise ValueError(f"unknown split behavior {behavior}: one of hf_regex_stages' SPLIT_* codes")
        self.behavior = behavior
        self.kind = <SplitBehavior>behavior
        for b in range(128):
            self.ascii_punct[b] = (hf_flags(b) & HF_PUNCT) != 0

    def __reduce__(self):
        return HfPunctuation, (self.behavior,)

    cdef inline bint _punct_at(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t i, int* l) noexcept nogil:
        cdef uint16_t f
        if s[i] < 0x80:
            l[0] = 1
            return self.ascii_punct[s[i]]
        l[0] = char_at(s, n, i, &f)
        return (f & HF_PUNCT) != 0

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef Pieces p
        cdef Py_ssize_t i = 0, run = -1
        cdef int l, l2
        cdef bint prev_match = False, any_entry = False
        if self.kind == SPLIT_REMOVED:
            if pieces_init(&p, s, n, work, ends) < 0:
                return ERR_NO_MEMORY
            while i < n:
                if self._punct_at(s, n, i, &l):
                    if run >= 0:
                        pieces_add(&p, run, i)
                    run = -1
                elif run < 0:
                    run = i
                i += l
            if run >= 0:
                pieces_add(&p, run, n)
            return pieces_finish(&p, n)
        # The other behaviors keep every character: only where pre-tokens end changes.
        # Entries are the maximal runs of non-punctuation and each punctuation character.
        while i < n:
            if not self._punct_at(s, n, i, &l):
                if run < 0:
                    run = i
                i += l
                continue
            if run >= 0:
                # a run of non-matches ends here, whatever the behavior
                if idbuf_push(ends, <int>i) < 0:
                    return ERR_NO_MEMORY
                run = -1
                prev_match = False
                any_entry = True
            # the punctuation character s[i:i + l]. Parity: the fold of each behavior
            # in NormalizedString::split over (offsets, is_match) entries
            if self.kind == SPLIT_ISOLATED:
                if idbuf_push(ends, <int>(i + l)) < 0:
                    return ERR_NO_MEMORY
            elif self.kind == SPLIT_CONTIGUOUS:
                if prev_match:
                    ends.data[ends.size - 1] = <int>(i + l)
                elif idbuf_push(ends, <int>(i + l)) < 0:
                    return ERR_NO_MEMORY
            elif self.kind == SPLIT_MERGED_WITH_PREVIOUS:
                if not prev_match and any_entry:
                    ends.data[ends.size - 1] = <int>(i + l)
                elif idbuf_push(ends, <int>(i + l)) < 0:
                    return ERR_NO_MEMORY
            else:   # SPLIT_MERGED_WITH_NEXT: joins the run of non-matches right after it
                if i + l >= n or self._punct_at(s, n, i + l, &l2):
                    if idbuf_push(ends, <int>(i + l)) < 0:
                        return ERR_NO_MEMORY
            prev_match = True
            any_entry = True
            i += l
        if run >= 0 and idbuf_push(ends, <int>n) < 0:
            return ERR_NO_MEMORY
        return 0
