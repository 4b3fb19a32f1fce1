"""llama.cpp's BPE pre-tokenizers, native and linear-time.

`LlamaSplitter(regexes)` splits text exactly like llama.cpp's unicode_regex_split with
that list of regexes: each regex cuts the pieces the previous one produced. A regex for
which llama.cpp has a hand-written splitter (GPT-2, Llama 3, Qwen2, Qwen3.5, Kimi-K2, the
AFMoE digit groups, newline runs) runs a port of that splitter; any other regex runs on a
Pike VM (see toksmith.pretokenizers.regex_program) over the same "collapsed" text that
llama.cpp hands to std::regex, so the result is std::regex's, in linear time.

Codepoint categories come from llama.cpp's own tables (unicode_llama.pxi).

    >>> LlamaSplitter([GPT2_REGEX]).split_text(b"Hello world!!")
    [b'Hello', b' world', b'!!']
"""
from libc.stdint cimport int32_t, uint32_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy

from toksmith._core.buffers cimport ByteBuf, IdBuf, bytebuf_free, idbuf_free, idbuf_push, idbuf_reserve
from toksmith._core.pretok_common cimport (
    F_LETTER, F_MARK, F_NUMBER, F_SPACE, LF_DEFINED, LF_PUNCT, LF_SYMBOL, cut_to_bytes, decode_utf8,
    llama_clean_utf8_into, packed_cpt, packed_flags, table_flags,
)
from toksmith._core.pretokenizer cimport PreTokenizer, PreTokenizerWork, pretok_work_free

from toksmith.pretokenizers import regex_program

include "unicode_llama.pxi"

cdef extern from *:
    """
    #define TOKSMITH_OUT_OF_RANGE 0xFFFFFFFFu
    """
    const uint32_t OUT_OF_RANGE "TOKSMITH_OUT_OF_RANGE"  # Parity: llama.cpp OUT_OF_RANGE

# Stage kinds: one per regex of the list.
cdef enum StageKind:
    STAGE_GPT2 = 1
    STAGE_LLAMA3 = 2        # param: max digits per number piece (3: llama3, 1: qwen2)
    STAGE_QWEN35 = 3
    STAGE_KIMI_K2 = 4
    STAGE_DIGIT_GROUPS = 5  # afmoe / tiny_aya digits
    STAGE_NEWLINES = 6
    STAGE_DIGIT_TRIPLES = 7 # superbpe's (?=(\d{3})+(?!\d))
    STAGE_REGEX = 8
    STAGE_JAIS2 = 9         # llama3 with the cascading whitespace tail
    STAGE_CASED_WORDS = 10  # the o200k-shaped regexes (GPT4O, TEKKEN, ...); param: CW_* bits

# Parity: llama.cpp unicode_regex_split_custom (the exact strings it dispatches on).
GPT2_REGEX = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
LLAMA3_REGEXES = (
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
QWEN2_REGEX = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
QWEN35_REGEX = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
KIMI_K2_REGEX = "\\p{Han}+"
AFMOE_DIGITS_REGEX = "\\p{AFMoE_digits}"
NEWLINES_REGEX = "[^\\n]+|[\\n]+"
TINY_AYA_DIGITS_REGEX = "\\d{1,3}(?=(?:\\d{3})*\\b)"
# Not special-cased by llama.cpp (std::regex runs these), but worked out by hand here:
# JAIS2's cascade of \s{512}(?!\S)|...|\s{4}(?!\S) would make the VM rescan long
# whitespace runs for every piece (quadratic), and superbpe's look-ahead is longer than
# one character. Its matches are empty, so it only cuts.
JAIS2_REGEX = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}"
SUPERBPE_DIGITS_REGEX = "(?=(\\d{3})+(?!\\d))"


cdef struct Stage:
    int kind
    int param
    int prog          # index into the splitter's programs (STAGE_REGEX)


cdef struct Prog:
    int32_t* insts    # op, x, y per instruction
    int n_insts
    unsigned char* bitmaps   # 32 bytes per class: membership of symbols 0..255
    int32_t* class_spans     # per class: first index into ranges, count (symbols >= 256)
    int32_t* ranges          # lo, hi pairs
    int n_classes
    bint collapsed


cdef inline unsigned char lflags(uint32_t cp) noexcept nogil:
    # llama.cpp returns flags with only UNDEFINED set past U+10FFFF: non-zero, nothing else.
    if cp >= 0x110000:
        return LF_DEFINED
    return table_flags(LLAMA_FLAGS_INDEX, LLAMA_FLAGS_BLOCKS, cp)


cdef inline bint is_han(uint32_t c) noexcept nogil:
    # Parity: llama.cpp unicode_cpt_is_han
    return ((0x4E00 <= c <= 0x9FFF) or (0x3400 <= c <= 0x4DBF) or (0x20000 <= c <= 0x2A6DF)
            or (0x2A700 <= c <= 0x2B73F) or (0x2B740 <= c <= 0x2B81F) or (0x2B820 <= c <= 0x2CEAF)
            or (0x2CEB0 <= c <= 0x2EBEF) or (0xF900 <= c <= 0xFAFF) or (0x2F800 <= c <= 0x2FA1F))


cdef inline uint32_t ascii_lower(uint32_t c) noexcept nogil:
    # Parity: llama.cpp unicode_tolower, for the letters the contractions test (only ASCII
    # letters lower-case to s t m d r v e l: checked by tools/gen_unicode_tables.py).
    if 0x41 <= c <= 0x5A:
        return c + 32
    return c


# A view of one range [ini, end) of the (packed) codepoints with llama.cpp's out-of-range rules.
cdef struct Span:
    const int32_t* cpts
    Py_ssize_t ini
    Py_ssize_t end
    Py_ssize_t prev_end
    IdBuf* out


cdef inline uint32_t span_cpt(Span* v, Py_ssize_t pos) noexcept nogil:
    return packed_cpt(v.cpts[pos]) if v.ini <= pos < v.end else OUT_OF_RANGE


cdef inline unsigned char span_fl(Span* v, Py_ssize_t pos) noexcept nogil:
    return packed_flags(v.cpts[pos]) if v.ini <= pos < v.end else 0


cdef inline int add_token(Span* v, Py_ssize_t end) noexcept nogil:
    # Parity: llama.cpp _add_token (empty pieces are not emitted)
    if end > v.prev_end:
        v.prev_end = end
        return idbuf_push(v.out, <int32_t>end)
    v.prev_end = end
    return 0


cdef inline bint contraction_at(Span* v, Py_ssize_t pos, Py_ssize_t* length, bint fold) noexcept nogil:
    """'s 't 'm 'd (2) or 're 've 'll (3) at pos; `fold`: case-insensitive."""
    cdef uint32_t a, b
    if span_cpt(v, pos) != 0x27 or pos + 1 >= v.end:
        return False
    a = span_cpt(v, pos + 1)
    if fold:
        a = ascii_lower(a)
    if a == 0x73 or a == 0x74 or a == 0x6D or a == 0x64:
        length[0] = 2
        return True
    if pos + 2 < v.end:
        b = span_cpt(v, pos + 2)
        if fold:
            b = ascii_lower(b)
        if (a == 0x72 and b == 0x65) or (a == 0x76 and b == 0x65) or (a == 0x6C and b == 0x6C):
            length[0] = 3
            return True
    return False


cdef int split_gpt2(Span* v) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_custom_gpt2
    cdef Py_ssize_t pos = v.ini, k, nws
    cdef uint32_t cpt
    cdef unsigned char f, f2
    while pos < v.end:
        cpt = span_cpt(v, pos)
        f = span_fl(v, pos)
        if contraction_at(v, pos, &k, False):
            if add_token(v, pos + k) < 0:
                return -1
            pos += k
            continue
        f2 = span_fl(v, pos + 1) if cpt == 0x20 else f
        if f2 & F_LETTER:
            pos += (cpt == 0x20)
            while f2 & F_LETTER:
                pos += 1
                f2 = span_fl(v, pos)
            if add_token(v, pos) < 0:
                return -1
            continue
        if f2 & F_NUMBER:
            pos += (cpt == 0x20)
            while f2 & F_NUMBER:
                pos += 1
                f2 = span_fl(v, pos)
            if add_token(v, pos) < 0:
                return -1
            continue
        if not (f2 & (F_SPACE | F_LETTER | F_NUMBER)) and f2:
            pos += (cpt == 0x20)
            while not (f2 & (F_SPACE | F_LETTER | F_NUMBER)) and f2:
                pos += 1
                f2 = span_fl(v, pos)
            if add_token(v, pos) < 0:
                return -1
            continue
        nws = 0
        while span_fl(v, pos + nws) & F_SPACE:
            nws += 1
        if nws > 1 and span_cpt(v, pos + nws) != OUT_OF_RANGE:
            pos += nws - 1
            if add_token(v, pos) < 0:
                return -1
            continue
        if nws > 0:
            pos += nws
            if add_token(v, pos) < 0:
                return -1
            continue
        pos += 1
        if add_token(v, pos) < 0:
            return -1
    return 0


cdef inline int split_whitespace_tail(Span* v, Py_ssize_t* ppos, Py_ssize_t* run_end) noexcept nogil:
    """The shared end of the llama3/qwen2/qwen35/kimi splitters: \\s*[\\r\\n]+|\\s+(?!\\S)|\\s+|<one char>.

    `run_end` (JAIS2 only, else NULL): the end of the newline-free whitespace run `pos`
    is in, kept between calls so that the cascade below scans each run once.
    """
    cdef Py_ssize_t pos = ppos[0], nws = 0, last_nl = 0, m
    cdef uint32_t c2
    if run_end != NULL and pos < run_end[0]:
        nws = run_end[0] - pos   # inside a run scanned before: all whitespace, no newline
    else:
        while span_fl(v, pos + nws) & F_SPACE:
            c2 = span_cpt(v, pos + nws)
            if c2 == 0x0D or c2 == 0x0A:
                last_nl = pos + nws + 1
            nws += 1
    if last_nl > 0:
        pos = last_nl
    elif run_end != NULL and nws > 0:
        # JAIS2: \s{512}(?!\S)|\s{256}(?!\S)|...|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}:
        # \s{m}(?!\S) matches iff the run is longer than m, or exactly m up to the piece's end.
        run_end[0] = pos + nws
        m = 512
        while m >= 1:
            if nws > m or (nws == m and pos + nws == v.end):
                break
            m = 2 if m == 4 else m >> 1
        pos += m if m >= 1 else 1
    elif nws > 1 and span_cpt(v, pos + nws) != OUT_OF_RANGE:
        pos += nws - 1
    elif nws > 0:
        pos += nws
    else:
        pos += 1
    ppos[0] = pos
    return add_token(v, pos)


cdef int split_llama3(Span* v, int max_digits, bint marks, bint jais2) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_custom_llama3 (max_digits 3),
    # unicode_regex_split_custom_qwen2 (max_digits 1), unicode_regex_split_custom_qwen35 (marks);
    # jais2: JAIS2's regex (llama3's, with a cascade of whitespace lengths), std::regex semantics
    cdef Py_ssize_t pos = v.ini, k, ini, run_end = -1
    cdef uint32_t cpt, c2
    cdef unsigned char f, f2
    cdef unsigned char word = F_LETTER | (F_MARK if marks else 0)
    cdef unsigned char not_punct = F_SPACE | F_LETTER | F_NUMBER | (F_MARK if marks else 0)
    while pos < v.end:
        cpt = span_cpt(v, pos)
        f = span_fl(v, pos)
        if contraction_at(v, pos, &k, True):
            if add_token(v, pos + k) < 0:
                return -1
            pos += k
            continue
        if not (cpt == 0x0D or cpt == 0x0A or (f & F_NUMBER)):
            if (f & word) or (span_fl(v, pos + 1) & word):
                pos += 1
                while span_fl(v, pos) & word:
                    pos += 1
                if add_token(v, pos) < 0:
                    return -1
                continue
        if f & F_NUMBER:
            if max_digits == 1:
                pos += 1
                if add_token(v, pos) < 0:
                    return -1
                continue
            ini = pos
            while span_fl(v, pos) & F_NUMBER:
                pos += 1
                if pos - ini >= max_digits:
                    if add_token(v, pos) < 0:
                        return -1
                    ini = pos
            if add_token(v, pos) < 0:
                return -1
            continue
        f2 = span_fl(v, pos + 1) if cpt == 0x20 else f
        if not (f2 & not_punct) and f:
            pos += (cpt == 0x20)
            while not (f2 & not_punct) and f2:
                pos += 1
                f2 = span_fl(v, pos)
            c2 = span_cpt(v, pos)
            while c2 == 0x0D or c2 == 0x0A:
                pos += 1
                c2 = span_cpt(v, pos)
            if add_token(v, pos) < 0:
                return -1
            continue
        if split_whitespace_tail(v, &pos, &run_end if jais2 else NULL) < 0:
            return -1
    return 0


# Parameters of split_cased_words (Stage.param bits).
DEF CW_CASE_SPLIT = 1     # upper = letters but a-z, lower = letters but A-Z (else both = all letters)
DEF CW_MARKS = 2          # \p{M} counts as a letter in the word classes
DEF CW_CONTRACTIONS = 4   # (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])? after a word
DEF CW_THREE_DIGITS = 8   # \p{N}{1,3} (else \p{N})


cdef inline bint cw_class(Span* v, Py_ssize_t pos, int param, bint upper) noexcept nogil:
    cdef unsigned char f = span_fl(v, pos)
    cdef uint32_t c
    if not (f & (F_LETTER | (F_MARK if param & CW_MARKS else 0))):
        return False
    if param & CW_CASE_SPLIT:
        c = span_cpt(v, pos)
        if upper:
            return not (0x61 <= c <= 0x7A)
        return not (0x41 <= c <= 0x5A)
    return True


cdef inline Py_ssize_t cw_run(Span* v, Py_ssize_t pos, int param, bint upper) noexcept nogil:
    while pos < v.end and cw_class(v, pos, param, upper):
        pos += 1
    return pos


cdef inline Py_ssize_t cw_word(Span* v, Py_ssize_t p, int param, bint upper_first) noexcept nogil:
    """End of UP*LO+ (or UP+LO*, upper_first) from p plus the optional contraction, or -1.

    The backtracking worked out (see pretok_tiktoken.o200k_word, same shape): UP* takes
    the longest UP run [p, j); if the char at j is LO, LO+ runs from there; otherwise UP*
    gives back down to the last LO char t in [p, j) and LO+ is [t, t+1).
    """
    cdef Py_ssize_t j = cw_run(v, p, param, True), t, k
    if upper_first:
        if j == p:
            return -1
        t = cw_run(v, j, param, False)
    elif j < v.end and cw_class(v, j, param, False):
        t = cw_run(v, j, param, False)
    else:
        t = j - 1
        while t >= p and not cw_class(v, t, param, False):
            t -= 1
        if t < p:
            return -1
        t += 1
    if (param & CW_CONTRACTIONS) and contraction_at(v, t, &k, True):
        t += k
    return t


cdef int split_cased_words(Span* v, int param) noexcept nogil:
    # The std::regex (collapsed text) semantics of
    #   [^\r\n\p{L}\p{N}]?UP*LO+C?|[^\r\n\p{L}\p{N}]?UP+LO*C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*
    #   |\s*[\r\n]+|\s+(?!\S)|\s+
    # as llama.cpp's GPT4O/MINIMAX_M2 ((?=[\p{L}])([^a-z]) ...), GRANITE_EMB_MULTI (with \p{M}),
    # TEKKEN (no contractions, \p{N}), TINY_AYA and YOUTU ([\p{Lu}..\p{M}] collapse to letters
    # and marks, so UP = LO) write it. Checked against the VM running those regexes.
    cdef Py_ssize_t p = v.ini, r, q, last_nl, e
    cdef uint32_t c0
    cdef unsigned char f0
    cdef bint prefix
    while p < v.end:
        c0 = span_cpt(v, p)
        f0 = span_fl(v, p)
        prefix = not (c0 == 0x0D or c0 == 0x0A) and not (f0 & (F_LETTER | F_NUMBER))
        r = -1
        if prefix:
            r = cw_word(v, p + 1, param, False)
        if r < 0:
            r = cw_word(v, p, param, False)
        if r < 0 and prefix:
            r = cw_word(v, p + 1, param, True)
        if r < 0:
            r = cw_word(v, p, param, True)
        if r >= 0:
            p = r
        elif f0 & F_NUMBER:
            q = p + 1
            if param & CW_THREE_DIGITS:
                while q < v.end and q < p + 3 and (span_fl(v, q) & F_NUMBER):
                    q += 1
            p = q
        else:
            q = p + 1 if (c0 == 0x20 and p + 1 < v.end and not (span_fl(v, p + 1) & (F_SPACE | F_LETTER | F_NUMBER))) else p
            if not (span_fl(v, q) & (F_SPACE | F_LETTER | F_NUMBER)):
                p = q
                while p < v.end and not (span_fl(v, p) & (F_SPACE | F_LETTER | F_NUMBER)):
                    p += 1
                while p < v.end:
                    c0 = span_cpt(v, p)
                    if not (c0 == 0x0D or c0 == 0x0A or c0 == 0x2F):
                        break
                    p += 1
            else:
                r = p
                last_nl = -1
                while r < v.end and (span_fl(v, r) & F_SPACE):
                    c0 = span_cpt(v, r)
                    if c0 == 0x0D or c0 == 0x0A:
                        last_nl = r
                    r += 1
                if last_nl >= 0:
                    p = last_nl + 1
                elif r == v.end:
                    p = r
                elif r - p >= 2:
                    p = r - 1
                else:
                    p = r
        if add_token(v, p) < 0:
            return -1
    return 0


cdef inline bint kimi_letter(Span* v, Py_ssize_t pos) noexcept nogil:
    return (span_fl(v, pos) & F_LETTER) != 0 and not is_han(span_cpt(v, pos))


cdef int split_kimi_k2(Span* v) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_custom_kimi_k2
    cdef Py_ssize_t pos = v.ini, k, ini
    cdef uint32_t cpt, c2
    cdef unsigned char f, f2
    cdef bint lead, has_letters, pattern
    while pos < v.end:
        cpt = span_cpt(v, pos)
        f = span_fl(v, pos)
        if is_han(cpt):
            while is_han(span_cpt(v, pos)):
                pos += 1
            if add_token(v, pos) < 0:
                return -1
            continue
        pattern = ((f & F_LETTER) and not is_han(cpt)) or (
            not (cpt == 0x0D or cpt == 0x0A or (f & (F_LETTER | F_NUMBER))) and kimi_letter(v, pos + 1))
        if pattern:
            lead = False
            if not (cpt == 0x0D or cpt == 0x0A or (f & (F_LETTER | F_NUMBER))):
                lead = True
                pos += 1
            has_letters = False
            while kimi_letter(v, pos):
                has_letters = True
                pos += 1
            if has_letters or (not lead and kimi_letter(v, pos)):
                if not has_letters:
                    pos += 1
                while kimi_letter(v, pos):
                    pos += 1
                if contraction_at(v, pos, &k, True):
                    pos += k
                if add_token(v, pos) < 0:
                    return -1
                continue
            elif lead:
                pos -= 1
        if f & F_NUMBER:
            ini = pos
            while span_fl(v, pos) & F_NUMBER:
                pos += 1
                if pos - ini >= 3:
                    if add_token(v, pos) < 0:
                        return -1
                    ini = pos
            if add_token(v, pos) < 0:
                return -1
            continue
        f2 = span_fl(v, pos + 1) if cpt == 0x20 else f
        if not (f2 & (F_SPACE | F_LETTER | F_NUMBER)) and f2:
            pos += (cpt == 0x20)
            while not (f2 & (F_SPACE | F_LETTER | F_NUMBER)) and f2:
                pos += 1
                f2 = span_fl(v, pos)
            c2 = span_cpt(v, pos)
            while c2 == 0x0D or c2 == 0x0A:
                pos += 1
                c2 = span_cpt(v, pos)
            if add_token(v, pos) < 0:
                return -1
            continue
        if split_whitespace_tail(v, &pos, NULL) < 0:
            return -1
    return 0


cdef int split_digit_groups(Span* v) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_custom_afmoe (also used for tiny_aya's digits)
    cdef Py_ssize_t pos = v.ini, start, count, rem, cur
    while pos < v.end:
        if span_fl(v, pos) & F_NUMBER:
            start = pos
            count = 0
            while (span_fl(v, pos) & F_NUMBER) and pos < v.end:
                count += 1
                pos += 1
            rem = count % 3
            cur = start
            if rem > 0:
                if add_token(v, cur + rem) < 0:
                    return -1
                cur += rem
            while cur < start + count:
                if add_token(v, cur + 3) < 0:
                    return -1
                cur += 3
            continue
        pos += 1
    if v.prev_end < v.end:
        return add_token(v, v.end)
    return 0


cdef int split_newlines(Span* v) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_custom_newlines
    cdef Py_ssize_t pos = v.ini
    cdef bint nl
    while pos < v.end:
        nl = packed_cpt(v.cpts[pos]) == 0x0A
        while pos < v.end and (packed_cpt(v.cpts[pos]) == 0x0A) == nl:
            pos += 1
        if add_token(v, pos) < 0:
            return -1
    return 0


cdef int split_digit_triples(Span* v) noexcept nogil:
    """std::regex's empty matches of (?=(\\d{3})+(?!\\d)): a cut before every position from
    which a multiple of three ASCII digits runs to a non-digit or the end of the piece."""
    cdef Py_ssize_t pos = v.ini, run_end, p
    while pos < v.end:
        if 0x30 <= packed_cpt(v.cpts[pos]) <= 0x39:
            run_end = pos
            while run_end < v.end and 0x30 <= packed_cpt(v.cpts[run_end]) <= 0x39:
                run_end += 1
            p = pos
            while p < run_end:
                if (run_end - p) % 3 == 0 and add_token(v, p) < 0:
                    return -1
                p += 1
            pos = run_end
        else:
            pos += 1
    return add_token(v, v.end)


# ----------------------------------------------------------------------------------------
# Pike VM for the std::regex path

DEF OP_CLASS = 0
DEF OP_SPLIT = 1
DEF OP_JMP = 2
DEF OP_MATCH = 3
DEF OP_LOOK = 4
DEF OP_NLOOK = 5
DEF OP_EOL = 6


cdef inline int32_t wide_symbol(uint32_t cp, unsigned char f) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split wtext (non-ASCII whitespace -> 0x0B)
    if cp > 0x7F and (f & F_SPACE):
        return 0x0B
    return cp


cdef inline int32_t collapsed_symbol(uint32_t cp, unsigned char f) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split text_collapsed
    if cp < 128:
        return cp
    if f & F_SPACE:
        return 0x0B
    if f & F_NUMBER:
        return 0xD1
    if f & F_LETTER:
        return 0xD2
    if f & LF_PUNCT:
        return 0xD3
    if f & F_MARK:
        return 0xD4
    if f & LF_SYMBOL:
        return 0xD5
    return 0xD0


cdef inline int32_t vm_symbol(int32_t packed, bint collapsed) noexcept nogil:
    """The symbol std::regex sees for one packed codepoint (collapsed text or wide text)."""
    cdef uint32_t cp = packed_cpt(packed)
    cdef unsigned char f = packed_flags(packed)
    if cp < 128:
        return cp
    return collapsed_symbol(cp, f) if collapsed else wide_symbol(cp, f)


cdef inline bint in_class(const Prog* p, int k, int32_t sym) noexcept nogil:
    cdef const int32_t* r
    cdef Py_ssize_t lo, hi, mid
    if sym < 256:
        return (p.bitmaps[k * 32 + (sym >> 3)] >> (sym & 7)) & 1
    r = p.ranges + 2 * p.class_spans[2 * k]
    lo = 0
    hi = p.class_spans[2 * k + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if sym > r[2 * mid + 1]:
            lo = mid + 1
        elif sym < r[2 * mid]:
            hi = mid
        else:
            return True
    return False


cdef struct VmMem:
    int32_t* pcs[2]
    int32_t* starts[2]
    int32_t* counts      # [2]
    int32_t* mark        # per instruction: stamp of the list it is in
    int32_t* stack       # pc, start pairs
    int32_t stamp


cdef inline void vm_add(const Prog* p, VmMem* m, int li, int32_t pc0, int32_t start, const int32_t* sym,
                        Py_ssize_t at, Py_ssize_t end) noexcept nogil:
    """Add the thread at pc0 and its epsilon closure to list li, in priority order."""
    cdef Py_ssize_t sp = 0
    cdef int32_t pc, op
    cdef bint ok
    m.stack[0] = pc0
    sp = 1
    while sp > 0:
        sp -= 1
        pc = m.stack[sp]
        if m.mark[pc] == m.stamp:
            continue
        m.mark[pc] = m.stamp
        op = p.insts[3 * pc]
        if op == OP_JMP:
            m.stack[sp] = p.insts[3 * pc + 1]
            sp += 1
        elif op == OP_SPLIT:
            m.stack[sp] = p.insts[3 * pc + 2]
            m.stack[sp + 1] = p.insts[3 * pc + 1]
            sp += 2
        elif op == OP_LOOK or op == OP_NLOOK:
            ok = at < end and in_class(p, p.insts[3 * pc + 1], vm_symbol(sym[at], p.collapsed))
            if ok == (op == OP_LOOK):
                m.stack[sp] = pc + 1
                sp += 1
        elif op == OP_EOL:
            if at == end:
                m.stack[sp] = pc + 1
                sp += 1
        else:
            m.pcs[li][m.counts[li]] = pc
            m.starts[li][m.counts[li]] = start
            m.counts[li] += 1


cdef bint vm_search(const Prog* p, VmMem* m, const int32_t* sym, Py_ssize_t pos, Py_ssize_t end,
                    Py_ssize_t* mstart, Py_ssize_t* mend) noexcept nogil:
    """Leftmost-first match in sym[pos:end] (std::regex ECMAScript semantics)."""
    cdef int cur = 0, nxt = 1, t
    cdef int32_t pc
    cdef Py_ssize_t i = pos
    cdef bint matched = False
    m.counts[0] = 0
    m.counts[1] = 0
    m.stamp += 1
    while True:
        if not matched:
            vm_add(p, m, cur, 0, <int32_t>i, sym, i, end)
        if m.counts[cur] == 0:
            if matched or i >= end:
                break
            i += 1
            m.stamp += 1
            continue
        m.stamp += 1
        m.counts[nxt] = 0
        for t in range(m.counts[cur]):
            pc = m.pcs[cur][t]
            if p.insts[3 * pc] == OP_MATCH:
                matched = True
                mstart[0] = m.starts[cur][t]
                mend[0] = i
                break
            if i < end and in_class(p, p.insts[3 * pc + 1], vm_symbol(sym[i], p.collapsed)):
                vm_add(p, m, nxt, pc + 1, m.starts[cur][t], sym, i + 1, end)
        m.counts[cur] = 0
        cur, nxt = nxt, cur
        if i >= end:
            if m.counts[cur] == 0:
                break
        else:
            i += 1
    return matched


cdef int split_regex(Span* v, const Prog* p, const int32_t* sym, VmMem* m) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_stl (regex_iterator over one piece; the gaps
    # between matches are pieces too)
    cdef Py_ssize_t pos = v.ini, ms = 0, me = 0
    while pos < v.end:
        if not vm_search(p, m, sym, pos, v.end, &ms, &me):
            break
        if add_token(v, ms) < 0 or add_token(v, me) < 0:
            return -1
        pos = me if me > ms else me + 1
    return add_token(v, v.end)


cdef class RegexProgram:
    """A compiled std::regex pattern in C arrays (see regex_program.compile_pattern)."""
    cdef Prog prog
    cdef readonly str pattern

    def __cinit__(self):
        self.prog.insts = NULL
        self.prog.bitmaps = NULL
        self.prog.class_spans = NULL
        self.prog.ranges = NULL

    def __init__(self, program):
        cdef int k, i, n_ranges = 0
        self.pattern = program.pattern
        self.prog.collapsed = program.collapsed
        self.prog.n_insts = len(program.insts)
        self.prog.n_classes = len(program.classes)
        high = [[(max(lo, 256), hi) for lo, hi in cls if hi >= 256] for cls in program.classes]
        n_ranges = sum(len(h) for h in high)
        self.prog.insts = <int32_t*>malloc(sizeof(int32_t) * 3 * self.prog.n_insts)
        self.prog.bitmaps = <unsigned char*>malloc(32 * self.prog.n_classes + 1)
        self.prog.class_spans = <int32_t*>malloc(sizeof(int32_t) * (2 * self.prog.n_classes + 1))
        self.prog.ranges = <int32_t*>malloc(sizeof(int32_t) * (2 * n_ranges + 1))
        if not (self.prog.insts and self.prog.bitmaps and self.prog.class_spans and self.prog.ranges):
            raise MemoryError()
        for i, (op, x, y) in enumerate(program.insts):
            self.prog.insts[3 * i] = op
            self.prog.insts[3 * i + 1] = x
            self.prog.insts[3 * i + 2] = y
        n_ranges = 0
        for k, cls in enumerate(program.classes):
            for i in range(32):
                self.prog.bitmaps[32 * k + i] = 0
            for lo, hi in cls:
                for i in range(lo, min(hi, 255) + 1):
                    self.prog.bitmaps[32 * k + (i >> 3)] |= 1 << (i & 7)
            self.prog.class_spans[2 * k] = n_ranges
            self.prog.class_spans[2 * k + 1] = len(high[k])
            for lo, hi in high[k]:
                self.prog.ranges[2 * n_ranges] = lo
                self.prog.ranges[2 * n_ranges + 1] = hi
                n_ranges += 1

    def __dealloc__(self):
        free(self.prog.insts)
        free(self.prog.bitmaps)
        free(self.prog.class_spans)
        free(self.prog.ranges)


_CASED = {}


def _cased_word_regexes():
    """{regex: CW_* bits} for the o200k-shaped regexes of llama.cpp's table."""
    if not _CASED:
        from toksmith.pretokenizers.llama_cpp import PreType, regexes_for
        _CASED[regexes_for(PreType.GPT4O)[0]] = CW_CASE_SPLIT | CW_CONTRACTIONS | CW_THREE_DIGITS
        _CASED[regexes_for(PreType.GRANITE_EMB_MULTI)[0]] = (
            CW_CASE_SPLIT | CW_MARKS | CW_CONTRACTIONS | CW_THREE_DIGITS)
        _CASED[regexes_for(PreType.TEKKEN)[0]] = CW_CASE_SPLIT
        _CASED[regexes_for(PreType.TINY_AYA)[1]] = CW_MARKS | CW_CONTRACTIONS | CW_THREE_DIGITS
        _CASED[regexes_for(PreType.YOUTU)[1]] = CW_MARKS | CW_CONTRACTIONS
    return _CASED


def _stage_for(str regex, bint force_vm=False):
    """(kind, param, program or None) for one regex, as llama.cpp dispatches it."""
    if force_vm:
        return STAGE_REGEX, 0, RegexProgram(regex_program.compile_pattern(regex))
    if regex == GPT2_REGEX:
        return STAGE_GPT2, 0, None
    if regex in LLAMA3_REGEXES:
        return STAGE_LLAMA3, 3, None
    if regex == QWEN2_REGEX:
        return STAGE_LLAMA3, 1, None
    if regex == QWEN35_REGEX:
        return STAGE_QWEN35, 0, None
    if regex == KIMI_K2_REGEX:
        return STAGE_KIMI_K2, 0, None
    if regex == AFMOE_DIGITS_REGEX or regex == TINY_AYA_DIGITS_REGEX:
        return STAGE_DIGIT_GROUPS, 0, None
    if regex == NEWLINES_REGEX:
        return STAGE_NEWLINES, 0, None
    cased = _cased_word_regexes().get(regex)
    if cased is not None:
        return STAGE_CASED_WORDS, cased, None
    if regex == JAIS2_REGEX:
        return STAGE_JAIS2, 0, None
    if regex == SUPERBPE_DIGITS_REGEX:
        return STAGE_DIGIT_TRIPLES, 0, None
    return STAGE_REGEX, 0, RegexProgram(regex_program.compile_pattern(regex))


cdef class LlamaSplitter(PreTokenizer):
    """The pre-tokenizer of one llama.cpp pre type: its regexes applied one after the other.

        >>> LlamaSplitter(["\\\\p{N}", GPT2_REGEX]).split_text(b"ab 123")
        [b'ab', b' ', b'1', b'2', b'3']
    """
    cdef Stage* stages
    cdef const Prog** progs
    cdef int n_stages
    cdef list programs
    cdef readonly tuple regexes
    cdef int max_insts
    cdef bint need_collapsed
    cdef bint need_wide

    def __cinit__(self):
        self.stages = NULL
        self.progs = NULL

    def __init__(self, regexes, *, bint force_vm=False):
        """`force_vm` (tests only): run every regex on the VM, even those with a hand-written splitter."""
        self.regexes = tuple(regexes)
        if not self.regexes:
            raise ValueError("a LlamaSplitter needs at least one regex")
        self.n_stages = len(self.regexes)
        self.stages = <Stage*>malloc(sizeof(Stage) * self.n_stages)
        if self.stages == NULL:
            raise MemoryError()
        self.programs = []
        self.max_insts = 1
        for i, regex in enumerate(self.regexes):
            kind, param, program = _stage_for(regex, force_vm)
            self.stages[i].kind = kind
            self.stages[i].param = param
            self.stages[i].prog = -1
            if program is not None:
                self.stages[i].prog = len(self.programs)
                self.programs.append(program)
                self.max_insts = max(self.max_insts, (<RegexProgram>program).prog.n_insts)
                self.progs = <const Prog**>realloc(self.progs, sizeof(Prog*) * len(self.programs))
                if self.progs == NULL:
                    raise MemoryError()
                for k, kept in enumerate(self.programs):
                    self.progs[k] = &(<RegexProgram>kept).prog
                if (<RegexProgram>program).prog.collapsed:
                    self.need_collapsed = True
                else:
                    self.need_wide = True

    def __dealloc__(self):
        free(self.stages)
        free(self.progs)

    def __reduce__(self):
        return (LlamaSplitter, (list(self.regexes),))

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef Py_ssize_t base = ends.size, n_cpt, i, r, start
        cdef int si, kind, rc = 0
        cdef int32_t* vm_block = NULL
        cdef VmMem mem
        cdef Span v
        cdef const Prog* prog
        mem.pcs[0] = mem.pcs[1] = mem.starts[0] = mem.starts[1] = NULL
        mem.counts = mem.mark = mem.stack = NULL
        mem.stamp = 0
        if n == 0:
            return 0
        n_cpt = decode_utf8(s, n, &work.a, &work.b)
        if n_cpt < 0:
            return -1
        for i in range(n_cpt):
            work.a.data[i] |= (<int32_t>lflags(<uint32_t>work.a.data[i])) << 24
        if self.need_collapsed or self.need_wide:
            # pcs[2], starts[2], mark, stack (2 per instruction + 2)
            vm_block = <int32_t*>malloc(sizeof(int32_t) * (7 * self.max_insts + 8))
            if vm_block == NULL:
                rc = -1
            else:
                mem.pcs[0] = vm_block
                mem.pcs[1] = vm_block + self.max_insts
                mem.starts[0] = vm_block + 2 * self.max_insts
                mem.starts[1] = vm_block + 3 * self.max_insts
                mem.mark = vm_block + 4 * self.max_insts
                mem.stack = vm_block + 5 * self.max_insts
                mem.counts = vm_block + 7 * self.max_insts + 4
                mem.stamp = 0
                for i in range(self.max_insts):
                    mem.mark[i] = 0
        # Pieces (codepoint end positions) live in work.c between stages.
        work.c.size = 0
        if rc == 0 and idbuf_push(&work.c, <int32_t>n_cpt) < 0:
            rc = -1
        si = 0
        while rc == 0 and si < self.n_stages:
            ends.size = base
            v.cpts = work.a.data
            v.out = ends
            start = 0
            for r in range(work.c.size):
                v.ini = start
                v.end = work.c.data[r]
                v.prev_end = start
                start = v.end
                kind = self.stages[si].kind
                if kind == STAGE_GPT2:
                    rc = split_gpt2(&v)
                elif kind == STAGE_LLAMA3:
                    rc = split_llama3(&v, self.stages[si].param, False, False)
                elif kind == STAGE_QWEN35:
                    rc = split_llama3(&v, 1, True, False)
                elif kind == STAGE_CASED_WORDS:
                    rc = split_cased_words(&v, self.stages[si].param)
                elif kind == STAGE_JAIS2:
                    rc = split_llama3(&v, 3, False, True)
                elif kind == STAGE_KIMI_K2:
                    rc = split_kimi_k2(&v)
                elif kind == STAGE_DIGIT_GROUPS:
                    rc = split_digit_groups(&v)
                elif kind == STAGE_NEWLINES:
                    rc = split_newlines(&v)
                elif kind == STAGE_DIGIT_TRIPLES:
                    rc = split_digit_triples(&v)
                else:
                    prog = self.progs[self.stages[si].prog]
                    rc = split_regex(&v, prog, work.a.data, &mem)
                if rc < 0:
                    break
            if rc == 0 and si + 1 < self.n_stages:
                work.c.size = 0
                if idbuf_reserve(&work.c, ends.size - base) < 0:
                    rc = -1
                else:
                    memcpy(work.c.data, ends.data + base, sizeof(int32_t) * (ends.size - base))
                    work.c.size = ends.size - base
            si += 1
        free(vm_block)
        if rc < 0:
            ends.size = base
            return -1
        return cut_to_bytes(ends, base, work.b.data)



def codepoint_symbols(int cp):
    """(collapsed, wide) symbols of a codepoint as llama.cpp's std::regex path sees it (tests).

        >>> codepoint_symbols(0x4E2D), codepoint_symbols(0x3000)
        ((210, 20013), (11, 11))
    """
    cdef unsigned char f = lflags(<uint32_t>cp)
    return collapsed_symbol(<uint32_t>cp, f), wide_symbol(<uint32_t>cp, f)


def clean_utf8(bytes text):
    """`text` as llama.cpp's tokenizer sees it (see pretok_common.llama_clean_utf8_into).

        >>> clean_utf8(b"a\\xffb\\xc0\\x80")
        b'a\\xef\\xbf\\xbdb\\x00'
    """
    cdef ByteBuf out
    cdef int rc
    cdef const unsigned char* s = text
    cdef Py_ssize_t n = len(text)
    out.data = NULL
    out.size = 0
    out.cap = 0
    try:
        with nogil:
            rc = llama_clean_utf8_into(s, n, &out)
        if rc < 0:
            raise MemoryError()
        return text if rc == 1 else out.data[:out.size]
    finally:
        bytebuf_free(&out)
