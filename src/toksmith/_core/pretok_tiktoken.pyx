"""The pre-tokenizers of OpenAI's tiktoken encodings, native and linear-time.

Each class reproduces one of tiktoken 0.14.0's patterns (tiktoken_ext/openai_public.py)
with the semantics of its regex engine (fancy-regex over Rust regex, leftmost-first,
possessive where the pattern says so), derived by hand alternative by alternative:

- `R50kSplitter`: r50k_base, p50k_base, p50k_edit (and gpt2):
  '(?:[sdmt]|ll|ve|re)| ?\\p{L}++| ?\\p{N}++| ?[^\\s\\p{L}\\p{N}]++|\\s++$|\\s+(?!\\S)|\\s
- `Cl100kSplitter`: cl100k_base:
  '(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s
- `O200kSplitter`: o200k_base and o200k_harmony (see the derivation in split_o200k).

Codepoint properties come from unicode_tiktoken.pxi, generated from the Unicode tables of
the Rust crate regex-syntax 0.8.11 (Unicode 16.0.0) that tiktoken 0.14.0 runs on (see
tools/gen_unicode_tables.py); the patterns' semantics were derived against the `regex` module.

    >>> Cl100kSplitter().split_text(b"Hello world's 12345")
    [b'Hello', b' world', b"'s", b' ', b'123', b'45']
"""
from libc.stdint cimport int32_t, uint32_t

from toksmith._core.buffers cimport IdBuf, idbuf_push, idbuf_reserve
from toksmith._core.pretok_common cimport (
    F_LETTER, F_NUMBER, F_SPACE, LF_DEFINED, TF_LOWERISH, TF_UPPERISH, cut_to_bytes, decode_utf8, table_flags,
)
from toksmith._core.pretokenizer cimport PreTokenizer, PreTokenizerWork

include "unicode_tiktoken.pxi"

cdef enum Pattern:
    PATTERN_R50K = 0
    PATTERN_CL100K = 1
    PATTERN_O200K = 2

cdef unsigned char ASCII_FLAGS[128]
for _c in range(128):
    ASCII_FLAGS[_c] = table_flags(TIKTOKEN_FLAGS_INDEX, TIKTOKEN_FLAGS_BLOCKS, _c)


cdef inline unsigned char tflags(uint32_t cp) noexcept nogil:
    if cp < 128:
        return ASCII_FLAGS[cp]
    return table_flags(TIKTOKEN_FLAGS_INDEX, TIKTOKEN_FLAGS_BLOCKS, cp)


def splitter_flag_table() -> bytes:
    """This module's table (tiktoken's Unicode) in the layout LlamaSplitter reads a table of its
    own in (hf.onig_unicode.splitter_flag_table's): 4352 little-endian u16 block numbers, then
    the blocks, bit 64 (LF_DEFINED) set on every code point as in llama.cpp's table."""
    index = [TIKTOKEN_FLAGS_INDEX[k] for k in range(4352)]
    n_blocks = max(index) + 1
    blocks = bytes(TIKTOKEN_FLAGS_BLOCKS[k] | LF_DEFINED for k in range(n_blocks * 256))
    return b"".join(k.to_bytes(2, "little") for k in index) + blocks


cdef inline uint32_t fold(uint32_t c) noexcept nogil:
    # (?i) simple case folding, for the letters the contractions use: ASCII, and
    # U+017F LATIN SMALL LETTER LONG S which folds to 's'.
    if 0x41 <= c <= 0x5A:
        return c + 32
    if c == 0x17F:
        return 0x73
    return c


cdef inline Py_ssize_t contraction(const int32_t* cp, Py_ssize_t p, Py_ssize_t n, bint icase) noexcept nogil:
    """Length of '(?:[sdmt]|ll|ve|re) at p (0 if none); `icase`: (?i:...)."""
    cdef uint32_t a, b
    if cp[p] != 0x27 or p + 1 >= n:
        return 0
    a = fold(cp[p + 1]) if icase else <uint32_t>cp[p + 1]
    if a == 0x73 or a == 0x64 or a == 0x6D or a == 0x74:
        return 2
    if p + 2 < n:
        b = fold(cp[p + 2]) if icase else <uint32_t>cp[p + 2]
        if (a == 0x6C and b == 0x6C) or (a == 0x76 and b == 0x65) or (a == 0x72 and b == 0x65):
            return 3
    return 0


cdef inline bint is_other(unsigned char f) noexcept nogil:
    # [^\s\p{L}\p{N}]
    return (f & (F_SPACE | F_LETTER | F_NUMBER)) == 0


cdef inline bint is_nl(int32_t c) noexcept nogil:
    return c == 0x0A or c == 0x0D


cdef inline Py_ssize_t run(const unsigned char* fl, Py_ssize_t p, Py_ssize_t n, unsigned char mask) noexcept nogil:
    while p < n and (fl[p] & mask):
        p += 1
    return p


cdef inline Py_ssize_t other_run(const unsigned char* fl, Py_ssize_t p, Py_ssize_t n) noexcept nogil:
    while p < n and is_other(fl[p]):
        p += 1
    return p


cdef int split_r50k(const int32_t* cp, const unsigned char* fl, Py_ssize_t n, IdBuf* out) noexcept nogil:
    cdef Py_ssize_t p = 0, q, r, k
    cdef bint space
    while p < n:
        k = contraction(cp, p, n, False)
        if k:
            p += k
        else:
            # ' ?X++' alternatives: the space is taken only if X matches right after it.
            space = cp[p] == 0x20 and p + 1 < n
            q = p + 1 if space else p
            if fl[q] & F_LETTER:
                p = run(fl, q, n, F_LETTER)
            elif fl[q] & F_NUMBER:
                p = run(fl, q, n, F_NUMBER)
            elif is_other(fl[q]):
                p = other_run(fl, q, n)
            else:
                # \s++$ | \s+(?!\S) | \s
                r = run(fl, p, n, F_SPACE)
                if r == n:
                    p = n
                elif r - p >= 2:
                    p = r - 1
                else:
                    p += 1
        if idbuf_push(out, <int32_t>p) < 0:
            return -1
    return 0


cdef int split_cl100k(const int32_t* cp, const unsigned char* fl, Py_ssize_t n, IdBuf* out) noexcept nogil:
    cdef Py_ssize_t p = 0, q, r, k, last_nl
    cdef unsigned char f0
    while p < n:
        f0 = fl[p]
        k = contraction(cp, p, n, True)
        if k:
            p += k
        elif f0 & F_LETTER:
            p = run(fl, p, n, F_LETTER)
        elif not is_nl(cp[p]) and not (f0 & F_NUMBER) and p + 1 < n and (fl[p + 1] & F_LETTER):
            # [^\r\n\p{L}\p{N}]?+\p{L}++
            p = run(fl, p + 1, n, F_LETTER)
        elif f0 & F_NUMBER:
            # \p{N}{1,3}+
            q = p + 1
            while q < n and q < p + 3 and (fl[q] & F_NUMBER):
                q += 1
            p = q
        else:
            q = p + 1 if (cp[p] == 0x20 and p + 1 < n and is_other(fl[p + 1])) else p
            if is_other(fl[q]):
                # ' ?[^\s\p{L}\p{N}]++[\r\n]*+'
                p = other_run(fl, q, n)
                while p < n and is_nl(cp[p]):
                    p += 1
            else:
                # \s++$ | \s*[\r\n] | \s+(?!\S) | \s
                r = p
                last_nl = -1
                while r < n and (fl[r] & F_SPACE):
                    if is_nl(cp[r]):
                        last_nl = r
                    r += 1
                if r == n:
                    p = n
                elif last_nl >= 0:
                    p = last_nl + 1
                elif r - p >= 2:
                    p = r - 1
                else:
                    p += 1
        if idbuf_push(out, <int32_t>p) < 0:
            return -1
    return 0


cdef inline Py_ssize_t o200k_word(const int32_t* cp, const unsigned char* fl, Py_ssize_t p, Py_ssize_t n,
                                  bint upper_first) noexcept nogil:
    """End of [UP]*[LO]+ (upper_first=False) or [UP]+[LO]* (True) from p, plus the optional
    contraction; -1 if it does not match. UP = [\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}],
    LO = [\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}].

    Backtracking, worked out: UP* takes the longest UP run [p, j). If the char at j is in
    LO, LO+ runs from j. Otherwise UP* gives back characters until one is in LO: the last
    LO character t in [p, j), and LO+ is [t, t+1) (the characters after t are UP only).
    [UP]+[LO]* is tried only after [UP]*[LO]+ failed, so it is the UP run then the LO run.
    """
    cdef Py_ssize_t j = run(fl, p, n, TF_UPPERISH), t
    if upper_first:
        if j == p:
            return -1
        t = run(fl, j, n, TF_LOWERISH)
    elif j < n and (fl[j] & TF_LOWERISH):
        t = run(fl, j, n, TF_LOWERISH)
    else:
        t = j - 1
        while t >= p and not (fl[t] & TF_LOWERISH):
            t -= 1
        if t < p:
            return -1
        t += 1
    return t + contraction(cp, t, n, True) if t < n else t


cdef int split_o200k(const int32_t* cp, const unsigned char* fl, Py_ssize_t n, IdBuf* out) noexcept nogil:
    # [^\r\n\p{L}\p{N}]?UP*LO+C? | [^\r\n\p{L}\p{N}]?UP+LO*C? | \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n/]*
    # | \s*[\r\n]+ | \s+(?!\S) | \s+
    cdef Py_ssize_t p = 0, q, r, last_nl
    cdef unsigned char f0
    cdef bint prefix
    while p < n:
        f0 = fl[p]
        prefix = not is_nl(cp[p]) and not (f0 & (F_LETTER | F_NUMBER))
        r = -1
        if prefix:
            r = o200k_word(cp, fl, p + 1, n, False)
        if r < 0:
            r = o200k_word(cp, fl, p, n, False)
        if r < 0 and prefix:
            r = o200k_word(cp, fl, p + 1, n, True)
        if r < 0:
            r = o200k_word(cp, fl, p, n, True)
        if r >= 0:
            p = r
        elif f0 & F_NUMBER:
            q = p + 1
            while q < n and q < p + 3 and (fl[q] & F_NUMBER):
                q += 1
            p = q
        else:
            q = p + 1 if (cp[p] == 0x20 and p + 1 < n and is_other(fl[p + 1])) else p
            if is_other(fl[q]):
                p = other_run(fl, q, n)
                while p < n and (is_nl(cp[p]) or cp[p] == 0x2F):
                    p += 1
            else:
                r = p
                last_nl = -1
                while r < n and (fl[r] & F_SPACE):
                    if is_nl(cp[r]):
                        last_nl = r
                    r += 1
                if last_nl >= 0:
                    p = last_nl + 1
                elif r == n:
                    p = n
                elif r - p >= 2:
                    p = r - 1
                else:
                    p = r
        if idbuf_push(out, <int32_t>p) < 0:
            return -1
    return 0


cdef class TiktokenSplitter(PreTokenizer):
    """Base of the tiktoken pattern splitters: decode once, then the pattern's scanner.
    `oniguruma`: the classes are tokenizers' Oniguruma's (toksmith.hf.onig_unicode's
    splitter_flag_table), for the same pattern in a tokenizer.json; else the regex module's."""
    cdef int pattern
    cdef readonly bint oniguruma
    cdef bytes flag_table
    cdef const unsigned short* flag_index
    cdef const unsigned char* flag_blocks
    cdef unsigned char ascii_flags[128]

    def __init__(self, *, bint oniguruma=False):
        self.oniguruma = oniguruma
        self.flag_index = TIKTOKEN_FLAGS_INDEX
        self.flag_blocks = TIKTOKEN_FLAGS_BLOCKS
        if oniguruma:
            from toksmith.hf.onig_unicode import splitter_flag_table
            self.flag_table = splitter_flag_table()
            self.flag_index = <const unsigned short*><const char*>self.flag_table
            self.flag_blocks = <const unsigned char*><const char*>self.flag_table + 2 * 4352
        for k in range(128):
            self.ascii_flags[k] = table_flags(self.flag_index, self.flag_blocks, k)

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef Py_ssize_t base = ends.size, n_cpt, i
        cdef unsigned char* fl
        cdef uint32_t c
        cdef int rc
        if n == 0:
            return 0
        n_cpt = decode_utf8(s, n, &work.a, &work.b)
        if n_cpt < 0:
            return -1
        # work.c (unused otherwise) holds one flag byte per codepoint
        if idbuf_reserve(&work.c, n_cpt // 4 + 1) < 0:
            return -1
        fl = <unsigned char*>work.c.data
        for i in range(n_cpt):
            c = <uint32_t>work.a.data[i]
            fl[i] = self.ascii_flags[c] if c < 128 else table_flags(self.flag_index, self.flag_blocks, c)
        fl[n_cpt] = 0
        if self.pattern == PATTERN_R50K:
            rc = split_r50k(work.a.data, fl, n_cpt, ends)
        elif self.pattern == PATTERN_CL100K:
            rc = split_cl100k(work.a.data, fl, n_cpt, ends)
        else:
            rc = split_o200k(work.a.data, fl, n_cpt, ends)
        if rc < 0:
            ends.size = base
            return -1
        return cut_to_bytes(ends, base, work.b.data)

    def __reduce__(self):
        return (_rebuild, (type(self), self.oniguruma))


def _rebuild(cls, oniguruma):
    return cls(oniguruma=oniguruma)


cdef class R50kSplitter(TiktokenSplitter):
    """r50k_base / p50k_base / p50k_edit / gpt2.

        >>> R50kSplitter().split_text(b"I'm  here")
        [b'I', b"'m", b' ', b' here']
    """
    def __init__(self, *, bint oniguruma=False):
        TiktokenSplitter.__init__(self, oniguruma=oniguruma)
        self.pattern = PATTERN_R50K


cdef class Cl100kSplitter(TiktokenSplitter):
    """cl100k_base."""
    def __init__(self, *, bint oniguruma=False):
        TiktokenSplitter.__init__(self, oniguruma=oniguruma)
        self.pattern = PATTERN_CL100K


cdef class O200kSplitter(TiktokenSplitter):
    """o200k_base / o200k_harmony."""
    def __init__(self, *, bint oniguruma=False):
        TiktokenSplitter.__init__(self, oniguruma=oniguruma)
        self.pattern = PATTERN_O200K
