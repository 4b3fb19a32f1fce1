# The contract of a normalizer (the stage between the special-token splitter and the
# pre-tokenizer), and the normalizers of the SentencePiece family.
#
# `normalize` replaces out's content with the normalized form of s[:n] and returns 0,
# or TEXT_UNCHANGED when the normalized form is s[:n] itself (out is then not written),
# or NORMALIZED_LATE_START when out holds a normalized form whose first character
# comes from after the first character of s (leading characters were dropped: a
# Hugging Face Strip, say), or a negative error code (errors.pxd). It runs without the
# GIL and keeps no state between calls, so one normalizer serves every thread.
from libc.stdint cimport int32_t, uint32_t

from toksmith._core.buffers cimport ByteBuf
from toksmith._core.trie cimport DoubleArrayTrie

# normalize() found nothing to change: use the input as it is.
cdef enum:
    TEXT_UNCHANGED = 1
# normalize() wrote `out`, and dropped the input's first character(s) (see above).
cdef enum:
    NORMALIZED_LATE_START = 2

cdef enum:
    PASS_NEVER = 0
    PASS_BEFORE_ASCII = 1          # ascii_kind only
    PASS_ALWAYS = 2
    PASS_UNLESS_KEY_MATCHES = 3    # bmp_passes only


cdef inline Py_ssize_t replace_carry_start(const int32_t* pairs, Py_ssize_t count, Py_ssize_t n,
                                           Py_ssize_t content_len, Py_ssize_t flagged) noexcept nogil:
    """carry_start (see Normalizer) of replacing `count` matches, (start, end) byte pairs in
    order, by content of content_len bytes. Parity: tokenizers NormalizedString::replace:
    copied text keeps its alignments; a match's content takes that of the match's last byte,
    (0, 0) (the input's start) for an empty match at 0."""
    cdef Py_ssize_t k, a, b, last = 0, out = 0, carried = 0
    for k in range(count):
        a = pairs[2 * k]
        b = pairs[2 * k + 1]
        if last < flagged:
            carried = out + (min(a, flagged) - last)
        out += a - last + content_len
        if content_len > 0 and b <= flagged:
            carried = out
        last = b
    if last < flagged:
        carried = out + (min(n, flagged) - last)
    return carried


# darts-clone double-array units of a precompiled charsmap (sentencepiece's layout).
cdef inline bint _has_leaf(uint32_t unit) noexcept nogil:
    return (unit >> 8) & 1


cdef inline uint32_t _value(uint32_t unit) noexcept nogil:
    return unit & 0x7FFFFFFF


cdef inline uint32_t _label(uint32_t unit) noexcept nogil:
    return unit & ((<uint32_t>1 << 31) | 0xFF)


cdef inline uint32_t _offset(uint32_t unit) noexcept nogil:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


cdef inline Py_ssize_t _charsmap_step(const uint32_t* units, Py_ssize_t n_units,
                                      Py_ssize_t node_pos, int c, bint* leaf) noexcept nogil:
    """darts-clone transition by byte c from node_pos (-1: none); *leaf says a key ends there."""
    cdef uint32_t unit
    leaf[0] = False
    if node_pos < 0:
        return -1
    node_pos ^= c
    if node_pos >= n_units:
        return -1
    unit = units[node_pos]
    if _label(unit) != <uint32_t>c:
        return -1
    node_pos ^= _offset(unit)
    if node_pos >= n_units:
        return -1
    leaf[0] = _has_leaf(unit)
    return node_pos


cdef class Normalizer:
    """Base: the text unchanged."""
    # True when normalize changes nothing in well-formed UTF-8 (it only repairs invalid
    # bytes), so the engine skips it for text that came from a str.
    cdef readonly bint repairs_utf8_only
    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil
    # Of the output o[:m] that normalize() made of s[:n], how many leading bytes come from
    # the first `flagged` bytes of s (negative: an error code). Parity: tokenizers'
    # NormalizedString gives each output character the alignment of one input byte (the
    # one it replaces, or for an inserted character the byte before it), in input order,
    # so the characters aligned with the input's first character are always a prefix
    # (Metaspace's prepend_scheme "first": `offsets_original().0 == 0`). The default:
    # the output of s[:flagged] alone (characters normalized on their own), rounded up to
    # a character of o.
    cdef Py_ssize_t carry_start(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t flagged,
                                const unsigned char* o, Py_ssize_t m) noexcept nogil


cdef class EscapeSpacesNormalizer(Normalizer):
    """llama.cpp SPM: optional U+2581 prefix, every ' ' becomes U+2581, bytes kept raw."""
    cdef readonly bint add_prefix


cdef class CharsMapNormalizer(Normalizer):
    """Precompiled charsmap + whitespace flags (the tables both references share).
    Use a subclass: SentencePieceNormalizer or LlamaUgmNormalizer."""
    cdef uint32_t* units
    cdef Py_ssize_t n_units
    cdef const char* replacements
    cdef Py_ssize_t n_replacements
    cdef uint32_t* replacement_lengths
    cdef bytes _blob
    cdef DoubleArrayTrie user_defined
    cdef bint has_user_defined
    cdef readonly bint add_dummy_prefix
    cdef readonly bint remove_extra_whitespaces
    cdef readonly bint escape_whitespaces
    # the dummy space goes after the text instead of before it (sentencepiece's
    # TrainerSpec.treat_whitespace_as_suffix; SentencePieceNormalizer only)
    cdef readonly bint treat_whitespace_as_suffix
    # Set by each subclass, constant for its instances:
    cdef bint stop_at_nul              # a charsmap match ends at a NUL byte (llama.cpp)
    cdef bint structural_utf8          # characters are cut by lead byte only (llama.cpp)
    # ascii_kind[b] for an ASCII byte b other than space: PASS_ALWAYS when it
    # normalizes to itself whatever follows, PASS_BEFORE_ASCII when that holds
    # if the next byte is ASCII too (charsmap keys like "e" + U+0301 start with
    # ASCII letters), PASS_NEVER otherwise. Runs of passing bytes are copied.
    cdef unsigned char ascii_kind[256]
    # ' ' normalizes to itself (no charsmap key or user-defined piece starts with it)
    cdef bint plain_space
    # bmp_passes[cp] for U+0080..U+FFFF: PASS_ALWAYS when no charsmap key and
    # no user-defined piece starts with the character (it is copied unchanged),
    # PASS_UNLESS_KEY_MATCHES when only longer keys start with it.
    cdef unsigned char* bmp_passes

    cdef _load_charsmap(self, bytes blob)
    cdef _check_leaves(self)
    cdef _compute_passthrough(self)
    cdef _compute_bmp_passes(self)
    cdef bint _bmp_char_passes(self, unsigned int cp, const unsigned char* s, Py_ssize_t n) noexcept nogil
    cdef Py_ssize_t _passthrough_run(self, const unsigned char* s, Py_ssize_t n) noexcept nogil
    cdef Py_ssize_t _charsmap_match(self, const unsigned char* s, Py_ssize_t n,
                                    uint32_t* value) noexcept nogil
    cdef Py_ssize_t _prefix(self, const unsigned char* s, Py_ssize_t n,
                            const char** out, Py_ssize_t* out_len) noexcept nogil
    cdef int _append_space(self, ByteBuf* out) noexcept nogil
    cdef int _append_escaped(self, const char* r, Py_ssize_t rl, ByteBuf* out) noexcept nogil


cdef class SentencePieceNormalizer(CharsMapNormalizer):
    """Parity: sentencepiece normalizer.cc Normalizer::Normalize."""
    pass


cdef class LlamaUgmNormalizer(CharsMapNormalizer):
    """Parity: llama.cpp llm_tokenizer_ugm_session::normalize."""
    cdef int _word_start(self, bint* in_word, bint* is_space_prepended, ByteBuf* out) noexcept nogil
