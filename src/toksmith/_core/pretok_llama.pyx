"""llama.cpp's BPE pre-tokenizers, native and linear-time.

`LlamaSplitter(regexes)` splits text exactly like llama.cpp's unicode_regex_split with
that list of regexes: each regex cuts the pieces the previous one produced. A regex for
which llama.cpp has a hand-written splitter (GPT-2, Llama 3, Qwen2, Qwen3.5, Kimi-K2, the
AFMoE digit groups, newline runs) runs a port of that splitter (llama_splitters.pxi);
a few std::regex patterns have hand-written equivalents too (JAIS2, superbpe's digit
look-ahead, and the o200k-shaped patterns of GPT4O/TEKKEN/GRANITE_EMB_MULTI/TINY_AYA/YOUTU,
each checked against the matcher); any other regex runs on the linear-time backtracking
matcher (toksmith._core.linear_regex, program from toksmith.pretokenizers.regex_program)
over the same "collapsed" text that llama.cpp hands to std::regex, so the result is
std::regex's, in linear time.

Codepoint categories come from llama.cpp's own tables (unicode_llama.pxi), or, with
`oniguruma=True`, from tokenizers' Oniguruma (toksmith.hf.onig_unicode): then the splitters
of GPT-2's, Llama 3's and Qwen 2's tokenizer.json patterns (ONIGURUMA_STAGES) cut text as
tokenizers does. A GPT-2 or Llama 3 / Qwen 2 regex alone runs over the UTF-8 bytes
directly (llama_bytes.pxi); other lists decode into a codepoint buffer first.

    >>> LlamaSplitter([GPT2_REGEX]).split_text(b"Hello world!!")
    [b'Hello', b' world', b'!!']
"""
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy

from toksmith._core.buffers cimport ByteBuf, IdBuf, bytebuf_free, idbuf_free, idbuf_push, idbuf_reserve
from toksmith._core.linear_regex cimport LinearRegex, LrScratch, lr_find_all_symbols, lr_scratch_init
from cpython.ref cimport PyObject
from toksmith._core.pretok_common cimport (
    F_LETTER, F_MARK, F_NUMBER, F_SPACE, LF_DEFINED, LF_PUNCT, LF_SYMBOL, cut_to_bytes, decode_utf8,
    llama_clean_utf8_into, packed_cpt, packed_flags, table_flags,
)
from toksmith._core.pretokenizer cimport PreTokenizer, PreTokenizerWork, pretok_inner_work, pretok_work_free
from toksmith._core.swar cimport first_marked_byte, non_ascii_letter_bytes, spread_byte, zero_bytes

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
    STAGE_REGEX = 8         # param: the regex runs on the collapsed text
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
# whitespace runs for every piece (quadratic); superbpe's look-ahead is longer than one
# character (the VM's limit) and all its matches are empty, so it only cuts.
JAIS2_REGEX = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}"
SUPERBPE_DIGITS_REGEX = "(?=(\\d{3})+(?!\\d))"

# tokenizer.json patterns (tokenizers runs them on Oniguruma) -> the hand-written splitter
# that cuts them exactly when it reads Oniguruma's classes (LlamaSplitter(oniguruma=True)).
# Checked against tokenizers by tests/parity/test_hf_oniguruma_splitters.py.
HF_GPT2_REGEX = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"
HF_LLAMA3_REGEX = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                   "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
HF_QWEN2_REGEX = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                  "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
ONIGURUMA_STAGES = {
    HF_GPT2_REGEX: (STAGE_GPT2, 0),       # tokenizers ByteLevel's own regex (also r50k)
    HF_LLAMA3_REGEX: (STAGE_LLAMA3, 3),   # Llama 3, cl100k_base
    HF_QWEN2_REGEX: (STAGE_LLAMA3, 1),    # Qwen 2
}


def _rebuild(regexes, oniguruma, by_codepoints=False, tiktoken=False):
    return LlamaSplitter(regexes, oniguruma=oniguruma, by_codepoints=by_codepoints, tiktoken=tiktoken)


cdef struct Stage:
    int kind
    int param
    int prog          # index into the splitter's programs (STAGE_REGEX)


include "llama_span.pxi"
include "llama_splitters.pxi"
include "llama_bytes.pxi"


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


cdef int split_regex(Span* v, LinearRegex regex, bint collapsed, IdBuf* symbols, LrScratch* sc,
                     IdBuf* pairs) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_stl (regex_iterator over one piece; the gaps
    # between matches are pieces too; the patterns cannot match the empty string)
    cdef Py_ssize_t k, n = v.end - v.ini, count
    if idbuf_reserve(symbols, n + 1) < 0:
        return -1
    for k in range(n):
        symbols.data[k] = vm_symbol(v.cpts[v.ini + k], collapsed)
    pairs.size = 0
    count = lr_find_all_symbols(regex, symbols.data, n, sc, pairs)
    if count < 0:
        return -1
    for k in range(0, pairs.size, 2):
        if add_token(v, v.ini + pairs.data[k]) < 0 or add_token(v, v.ini + pairs.data[k + 1]) < 0:
            return -1
    return add_token(v, v.end)


def _linear_regex(str regex):
    program = regex_program.compile_pattern(regex)
    return program.collapsed, LinearRegex(program.linear, regex)


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
        return (STAGE_REGEX, *_linear_regex(regex))
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
    return (STAGE_REGEX, *_linear_regex(regex))


cdef class LlamaSplitter(PreTokenizer):
    """The pre-tokenizer of one llama.cpp pre type: its regexes applied one after the other.

        >>> LlamaSplitter(["\\\\p{N}", GPT2_REGEX]).split_text(b"ab 123")
        [b'ab', b' ', b'1', b'2', b'3']
    """
    cdef Stage* stages
    cdef PyObject** linear       # LinearRegex of each STAGE_REGEX (kept alive by `programs`)
    cdef int n_stages
    cdef list programs
    cdef readonly tuple regexes
    cdef readonly bint oniguruma
    cdef readonly bint tiktoken
    cdef bint own_table             # oniguruma or tiktoken: flag_table, ONIGURUMA_STAGES, (?i) folds U+017F
    cdef bytes flag_table           # own_table: the flag table (index then blocks)
    cdef const unsigned short* flag_index
    cdef const unsigned char* flag_blocks
    cdef unsigned char ascii_flags[128]
    cdef uint64_t ascii_chars[128]      # bt_char of ASCII
    cdef int byte_kind                  # STAGE_GPT2 / STAGE_LLAMA3: split over bytes (llama_bytes.pxi)

    def __cinit__(self):
        self.stages = NULL
        self.linear = NULL

    def __init__(self, regexes, *, bint force_vm=False, bint oniguruma=False, bint by_codepoints=False,
                 bint tiktoken=False):
        """`force_vm` (tests only): run every regex on the linear-time matcher, even those with a
        hand-written splitter. `oniguruma`: the regexes are tokenizer.json patterns of
        ONIGURUMA_STAGES, matched as tokenizers' Oniguruma matches them (its \\p{L} \\p{N}
        \\p{M} \\s, and (?i) folding U+017F to s) by the same hand-written splitters.
        `by_codepoints` (tests only): a GPT-2 or Llama 3 / Qwen 2 regex alone runs on the
        codepoint buffer too, not over the bytes (llama_bytes.pxi). `tiktoken`: the same
        patterns in a rank file (Llama 3's), matched as tiktoken's fancy-regex matches them:
        the same cuts and folding as Oniguruma, tiktoken's own Unicode (regex-syntax 0.8.11,
        pretok_tiktoken's table)."""
        self.regexes = tuple(regexes)
        if not self.regexes:
            raise ValueError("a LlamaSplitter needs at least one regex")
        if oniguruma and tiktoken:
            raise ValueError("a LlamaSplitter reads Oniguruma's or tiktoken's tables, not both")
        self.oniguruma = oniguruma
        self.tiktoken = tiktoken
        self.own_table = oniguruma or tiktoken
        self.flag_index = LLAMA_FLAGS_INDEX
        self.flag_blocks = LLAMA_FLAGS_BLOCKS
        if self.own_table:
            if force_vm or not all(regex in ONIGURUMA_STAGES for regex in self.regexes):
                raise ValueError("oniguruma and tiktoken splitters take only the patterns of ONIGURUMA_STAGES")
            if oniguruma:
                from toksmith.hf.onig_unicode import splitter_flag_table
            else:
                from toksmith._core.pretok_tiktoken import splitter_flag_table
            self.flag_table = splitter_flag_table()
            self.flag_index = <const unsigned short*><const char*>self.flag_table
            self.flag_blocks = <const unsigned char*><const char*>self.flag_table + 2 * 4352
        self.n_stages = len(self.regexes)
        self.stages = <Stage*>malloc(sizeof(Stage) * self.n_stages)
        if self.stages == NULL:
            raise MemoryError()
        self.programs = []
        for i, regex in enumerate(self.regexes):
            kind, param, program = ONIGURUMA_STAGES[regex] + (None,) if self.own_table else _stage_for(regex, force_vm)
            self.stages[i].kind = kind
            self.stages[i].param = param
            self.stages[i].prog = -1
            if program is not None:
                self.stages[i].prog = len(self.programs)
                self.programs.append(program)
        self.linear = <PyObject**>malloc(sizeof(PyObject*) * (len(self.programs) + 1))
        if self.linear == NULL:
            raise MemoryError()
        for k, kept in enumerate(self.programs):
            self.linear[k] = <PyObject*>kept
        for k in range(128):
            self.ascii_flags[k] = table_flags(self.flag_index, self.flag_blocks, k)
            self.ascii_chars[k] = (<uint64_t>k << 16) | (1 << 8) | self.ascii_flags[k]
            # bt_letters (llama_bytes.pxi) takes A-Z a-z (str.isalpha below 128) as the ASCII letters
            if bool(self.ascii_flags[k] & F_LETTER) != chr(k).isalpha():
                raise ValueError(f"flag table: ASCII {k} disagrees with A-Z a-z on being a letter")
        self.byte_kind = 0
        if self.n_stages == 1 and not by_codepoints and self.stages[0].kind in (STAGE_GPT2, STAGE_LLAMA3):
            self.byte_kind = self.stages[0].kind

    def __dealloc__(self):
        free(self.stages)
        free(self.linear)

    def __reduce__(self):
        return (_rebuild, (list(self.regexes), self.oniguruma, self.byte_kind == 0, self.tiktoken))

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef Py_ssize_t base = ends.size, n_cpt, i, r, start
        cdef int si, kind, rc = 0
        cdef Span v
        cdef LrScratch sc
        cdef IdBuf symbols, pairs
        cdef PreTokenizerWork* inner
        cdef PreTokenizerWork* inner2
        cdef ByteText t
        if n == 0:
            return 0
        if self.byte_kind:
            if idbuf_reserve(ends, n) < 0:
                return -1
            t.s = s
            t.n = n
            t.prev_end = 0
            t.ascii = self.ascii_chars
            t.index = self.flag_index
            t.blocks = self.flag_blocks
            t.long_s = self.own_table
            t.out = ends.data + base
            t.n_out = 0
            if self.byte_kind == STAGE_GPT2:
                bt_split_gpt2(&t)
            else:
                bt_split_llama3(&t, self.stages[0].param)
            ends.size = base + t.n_out
            return 0
        n_cpt = decode_utf8(s, n, &work.a, &work.b)
        if n_cpt < 0:
            return -1
        if self.own_table:
            for i in range(n_cpt):
                work.a.data[i] |= (<int32_t>splitter_flags(self.ascii_flags, self.flag_index, self.flag_blocks,
                                                           <uint32_t>work.a.data[i])) << 24
        else:
            for i in range(n_cpt):
                work.a.data[i] |= (<int32_t>lflags(<uint32_t>work.a.data[i])) << 24
        # The matcher's memory: the work's inner works (kept between calls, freed with them).
        inner = pretok_inner_work(work)
        inner2 = pretok_inner_work(inner) if inner != NULL else NULL
        if inner2 == NULL:
            return -1
        lr_scratch_init(&sc)
        sc.eq = inner.a
        sc.match_end = inner.b
        sc.cols = inner.c
        sc.conts = inner2.a
        sc.tables = inner.text2
        symbols = inner2.b
        pairs = inner2.c
        # Pieces (codepoint end positions) live in work.c between stages.
        work.c.size = 0
        if rc == 0 and idbuf_push(&work.c, <int32_t>n_cpt) < 0:
            rc = -1
        si = 0
        while rc == 0 and si < self.n_stages:
            ends.size = base
            v.cpts = work.a.data
            v.out = ends
            v.long_s = self.own_table
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
                    rc = split_regex(&v, <LinearRegex>self.linear[self.stages[si].prog], self.stages[si].param,
                                     &symbols, &sc, &pairs)
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
        inner.a = sc.eq
        inner.b = sc.match_end
        inner.c = sc.cols
        inner2.a = sc.conts
        inner.text2 = sc.tables
        inner2.b = symbols
        inner2.c = pairs
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
