"""llama.cpp's WPM (BERT) preprocessing as two stages; the model is `wordpiece.WordPiece`.

Parity: llama-vocab.cpp llm_tokenizer_wpm_session::preprocess, which walks the code points
of each raw-text fragment (unicode_cpts_from_utf8; "NFD" first when strip_accents) and, in
this order: ends the word at whitespace; drops U+0000, U+FFFD and \\p{C}; drops accent
marks when strip_accents; makes punctuation, ASCII symbols and CJK ideographs words of
their own; appends anything else, lower-cased when lowercase, to the current word. Then
tokenize() looks each word up with the phantom space U+2581 in front. Here:

- `LlamaWpmNormalizer`: the per-code-point part (repair, NFD, drops, lower-casing);
  whitespace is kept for the pre-tokenizer.
- `LlamaWpmPreTokenizer`: the split (whitespace dropped, isolated characters alone),
  written to work.text; the model (`wordpiece.WordPiece` with word_prefix U+2581) adds
  the phantom space to each word's first lookup.

Lower-casing never changes how a code point splits (tools/gen_llama_wpm_tables.py checks
it), so splitting the normalized text is splitting as llama.cpp does.

    >>> LlamaWpmNormalizer(lowercase=True, strip_accents=True).normalize_text("Héllo,\\tWORLD")
    'hello,\\tworld'
    >>> LlamaWpmPreTokenizer().split_text("hello, world!!".encode())
    [b'hello', b',', b'world', b'!', b'!']
"""
from libc.stdint cimport int32_t, uint32_t

from toksmith._core.buffers cimport ByteBuf, IdBuf, bytebuf_append, bytebuf_push, bytebuf_reserve, idbuf_reserve
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.llama_lowercase cimport llama_tolower
from toksmith._core.normalizer cimport TEXT_UNCHANGED, Normalizer
from toksmith._core.pretok_common cimport _llama_seq, _utf8_len, append_cpt_utf8, table_flags
from toksmith._core.pretokenizer cimport PRETOK_REWRITTEN, PreTokenizer, PreTokenizerWork

include "unicode_llama_wpm.pxi"

# Class bits of the generated table (tools/gen_llama_wpm_tables.py)
cdef enum:
    W_SPACE = 1        # unicode_set_whitespace: ends a word
    W_DROP = 2         # U+0000, U+FFFD, \p{C}: dropped
    W_ACCENT = 4       # \p{M}: dropped when strip_accents
    W_ISOLATE = 8      # \p{P}, \p{S} below U+007F, is_chinese_char: a word of its own
    W_HAS_NFD = 16     # unicode_ranges_nfd maps it elsewhere
    W_HAS_LOWER = 32   # unicode_map_lowercase maps it elsewhere


cdef inline unsigned char wpm_class(uint32_t c) noexcept nogil:
    return table_flags(WPM_CLASS_INDEX, WPM_CLASS_BLOCKS, c)


cdef inline uint32_t llama_nfd(uint32_t c) noexcept nogil:
    """Parity: unicode_cpts_normalize_nfd, one code point (upper_bound over the range starts)."""
    cdef int lo = 0, hi = LLAMA_NFD_COUNT, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if LLAMA_NFD[3 * mid] <= c:
            lo = mid + 1
        else:
            hi = mid
    lo -= 1     # the first range starts at 0
    if LLAMA_NFD[3 * lo] <= c <= LLAMA_NFD[3 * lo + 1]:
        return LLAMA_NFD[3 * lo + 2]
    return c


cdef class LlamaWpmNormalizer(Normalizer):
    """The per-code-point half of llama.cpp's WPM preprocess (see the module docstring).

    `lowercase`, `strip_accents`: llama.cpp's normalizer options (GGUF
    tokenizer.ggml.normalizer.lowercase, default true, and .strip_accents, default lowercase).
    """

    cdef readonly bint lowercase
    cdef readonly bint strip_accents
    # what each ASCII byte becomes: -1 dropped, else the byte to write
    cdef short ascii_out[128]

    def __cinit__(self, *, bint lowercase=True, bint strip_accents=True):
        cdef int b
        cdef unsigned char cls
        self.lowercase = lowercase
        self.strip_accents = strip_accents
        for b in range(128):
            cls = wpm_class(b)
            if cls & W_DROP or (strip_accents and cls & W_ACCENT):
                self.ascii_out[b] = -1
            else:
                self.ascii_out[b] = <short>(llama_tolower(b) if lowercase and not cls & W_SPACE else b)

    def __reduce__(self):
        return _normalizer, (self.lowercase, self.strip_accents)

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef Py_ssize_t i = 0
        cdef unsigned char b, cls
        cdef unsigned char changing = W_DROP | (W_ACCENT | W_HAS_NFD if self.strip_accents else 0) \
            | (W_HAS_LOWER if self.lowercase else 0)
        cdef uint32_t c = 0
        cdef int k
        # Most text stays as it is (ASCII without capitals, CJK, ...): nothing to rewrite.
        while i < n:
            b = s[i]
            if b < 0x80:
                if self.ascii_out[b] != b:
                    break
                i += 1
                continue
            k = _llama_seq(s, n, i, &c)
            if k == 0 or k != _utf8_len(c) or wpm_class(c) & changing:
                break
            i += k
        if i == n:
            return TEXT_UNCHANGED
        out.size = 0
        if bytebuf_reserve(out, n) < 0 or bytebuf_append(out, <const char*>s, i) < 0:
            return ERR_NO_MEMORY
        while i < n:
            b = s[i]
            if b < 0x80:
                if self.ascii_out[b] >= 0 and bytebuf_push(out, <char>self.ascii_out[b]) < 0:
                    return ERR_NO_MEMORY
                i += 1
                continue
            k = _llama_seq(s, n, i, &c)
            if k == 0:
                # Parity: unicode_cpts_from_utf8 makes a byte that starts no sequence
                # U+FFFD, which preprocess drops.
                i += 1
                continue
            cls = wpm_class(c)
            if not cls & changing and k == _utf8_len(c):
                if bytebuf_append(out, <const char*>(s + i), k) < 0:
                    return ERR_NO_MEMORY
                i += k
                continue
            i += k
            if self.strip_accents and cls & W_HAS_NFD:
                c = llama_nfd(c)
                cls = wpm_class(c)
            if cls & W_DROP or (self.strip_accents and cls & W_ACCENT):
                continue
            # Parity: preprocess lower-cases what it keeps (whitespace is only a boundary).
            if self.lowercase and cls & W_HAS_LOWER:
                c = llama_tolower(c)
            if append_cpt_utf8(out, c) < 0:
                return ERR_NO_MEMORY
        return 0


def _normalizer(lowercase, strip_accents):
    return LlamaWpmNormalizer(lowercase=lowercase, strip_accents=strip_accents)


cdef class LlamaWpmPreTokenizer(PreTokenizer):
    """The split half of llama.cpp's WPM preprocess: the words of the normalized text, its
    whitespace dropped, written to work.text (the model looks each up with U+2581 in front)."""

    def __reduce__(self):
        return LlamaWpmPreTokenizer, ()

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef Py_ssize_t i = 0, first_word_at = -1
        cdef int k, j
        cdef uint32_t c = 0
        cdef unsigned char cls
        cdef bint in_word = False
        cdef ByteBuf* out = &work.text
        out.size = 0
        if bytebuf_reserve(out, n) < 0 or idbuf_reserve(ends, n) < 0:
            return ERR_NO_MEMORY
        while i < n:
            if s[i] < 0x80:
                c = s[i]
                k = 1
            else:
                k = _llama_seq(s, n, i, &c)
                if k == 0:      # never after the normalizer: kept as part of a word
                    k = 1
                    c = 0x41
            cls = wpm_class(c)
            if cls & W_SPACE:
                if in_word:
                    ends.data[ends.size] = <int32_t>out.size
                    ends.size += 1
                    in_word = False
            else:
                if in_word and cls & W_ISOLATE:
                    ends.data[ends.size] = <int32_t>out.size
                    ends.size += 1
                if first_word_at < 0:
                    first_word_at = i
                for j in range(k):
                    out.data[out.size + j] = <char>s[i + j]
                out.size += k
                in_word = True
                if cls & W_ISOLATE:
                    ends.data[ends.size] = <int32_t>out.size
                    ends.size += 1
                    in_word = False
            i += k
        if in_word:
            ends.data[ends.size] = <int32_t>out.size
            ends.size += 1
        work.dropped_start = first_word_at != 0
        return PRETOK_REWRITTEN
