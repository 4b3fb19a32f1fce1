# The contract of a pre-tokenizer (the stage between normalizer and model).
#
# A pre-tokenizer cuts normalized text into pre-tokens that the model segments one
# by one (a model never merges across them). It appends the end offset of every
# pre-token to `ends` (ascending, the last one is the end of the text; nothing for an
# empty text) and returns 0: every byte of s[:n] then belongs to exactly one pre-token.
#
# A pre-tokenizer that rewrites or drops text (Hugging Face's Metaspace, Whitespace,
# Split with behavior "removed", ...) instead writes the text of its pre-tokens to
# `work.text` (replacing its content), appends their ends in that text to `ends`, and
# returns PRETOK_REWRITTEN. The engine then hands the model pieces of `work.text`.
#
# `work` is per-thread memory the pre-tokenizer may use (kept in the engine's
# scratch, freed with pretok_work_free); it holds nothing between calls but the
# input flag `at_input_start`, which the caller sets before each call, and the output
# flag `dropped_start`.
from toksmith._core.buffers cimport ByteBuf, IdBuf


cdef enum:
    PRETOK_REWRITTEN = 1     # split() returned pre-tokens of work.text, not of s


# What a split does with each match of its delimiter (HfSplit, HfPunctuation).
# Parity: tokenizers' SplitDelimiterBehavior.
cdef enum SplitBehavior:
    SPLIT_REMOVED = 0
    SPLIT_ISOLATED = 1
    SPLIT_MERGED_WITH_PREVIOUS = 2
    SPLIT_MERGED_WITH_NEXT = 3
    SPLIT_CONTIGUOUS = 4


cdef struct PreTokenizerWork:
    IdBuf a
    IdBuf b
    IdBuf c
    ByteBuf text             # a rewriting pre-tokenizer's output (see PRETOK_REWRITTEN)
    ByteBuf text2            # scratch of rewriting pre-tokenizers
    PreTokenizerWork* inner  # the work of the pre-tokenizers a sequence runs (made on first use)
    # In: s[0] is the first character of the caller's input (no added token and no
    # character dropped by the normalizer before it). Parity: tokenizers' Metaspace
    # prepend_scheme "first" prepends only there (offsets_original().0 == 0).
    bint at_input_start
    # Out, with PRETOK_REWRITTEN: the first pre-token does not begin with s[0] (the
    # pre-tokenizer dropped what came before it), or there is no pre-token at all.
    bint dropped_start


cdef void pretok_work_free(PreTokenizerWork* w) noexcept nogil
# The inner work of `w`, made (zeroed) on first use; NULL when out of memory.
cdef PreTokenizerWork* pretok_inner_work(PreTokenizerWork* w) noexcept nogil
# Bytes held by `w` and its inner works (the engine trims large scratch after a call).
cdef Py_ssize_t pretok_work_bytes(const PreTokenizerWork* w) noexcept nogil


cdef class PreTokenizer:
    # Returns 0, PRETOK_REWRITTEN, or a negative error code (ERR_NO_MEMORY, ...).
    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil
