# A regex matcher with a backtracking engine's results (Oniguruma's, for tokenizer.json
# Split/Replace patterns) in time linear in the text: see linear_regex.pyx.
#
# Other stages (a Replace decoder, say) use it without the GIL:
#     cdef LrScratch sc            # zeroed (lr_scratch_init), freed with lr_scratch_free
#     rc = lr_find_all(regex, s, n, &sc, &pairs)      # pairs: (start, end) byte offsets
#     rc = lr_replace_all(regex, s, n, content, content_len, &sc, &out)
from libc.stdint cimport int32_t, uint64_t

from toksmith._core.buffers cimport ByteBuf, IdBuf


cdef struct LrPass:
    int32_t* states      # op, a, b, c per state (backtrack_program.OP_*)
    int32_t* order       # evaluation order within a column
    int32_t n_states
    int32_t start
    bint reversed        # a look-behind body: consumes s[j-1], sweeps left to right
    int32_t output       # the look-around table it fills, or -1 (the main pass)
    int32_t* slots       # (atomic slot, state after the group) pairs
    int32_t n_slots


# Per-call memory of lr_find_all, grown as needed (one thread at a time).
cdef struct LrScratch:
    IdBuf eq             # per code point: its class-partition id (the DFA's live sets then)
    IdBuf match_end      # per position: end of the match that starts there, or -1
    IdBuf cols           # two columns of state values
    IdBuf conts          # per atomic slot and position: the value after the group
    ByteBuf tables       # per look-around table and position: 0 or 1


cdef void lr_scratch_init(LrScratch* sc) noexcept nogil
cdef void lr_scratch_free(LrScratch* sc) noexcept nogil


cdef class LinearRegex:
    cdef LrPass* passes
    cdef int32_t n_passes
    cdef int32_t n_tables
    cdef int32_t n_slots
    cdef int32_t max_states
    cdef int32_t words              # 64-bit words per class mask
    cdef uint64_t* masks            # per partition id: `words` words, bit k = in class k
    cdef int32_t n_parts
    cdef int32_t ascii_part[128]
    cdef int32_t* bmp_part          # partition id of U+0000..U+FFFF
    cdef int32_t* astral_starts     # partition boundaries above U+FFFF (sorted)
    cdef int32_t* astral_parts
    cdef int32_t n_astral
    cdef int32_t newline_class
    cdef int32_t word_class
    cdef int32_t grapheme_table     # the look table of grapheme cluster boundaries, or -1
    cdef unsigned char* part_graphemes   # per partition id: its grapheme break code | GRAPHEME_PICT
    cdef readonly str pattern
    cdef object _keep
    # The main pass as a DFA over its columns' sets of live states (when the pass only
    # looks at the character at each position): dfa_next[d * (n_parts + 1) + part] is the
    # set of the column to the left of a column whose set is d (part n_parts: no character,
    # the end of the text); dfa_live[d * dfa_words + q / 64] bit q: state q is live in set d
    # (its first path from there succeeds), which is all a match's path needs to be followed.
    cdef int32_t dfa_states         # 0: no DFA, run the passes
    cdef int32_t dfa_words
    cdef int32_t* dfa_next
    cdef uint64_t* dfa_live
    cdef int32_t main_states
    cdef int32_t main_start
    cdef int32_t* main_ops          # the main pass's states (op, a, b, c), for following paths
    # dfa_resolve[d * main_states + q]: the character step or match a live state q leads to
    # in a column whose set is d (alternatives and anchors resolved); NULL when too big
    cdef int32_t* dfa_resolve

    cdef int32_t part_of(self, int32_t cp) noexcept nogil
    cdef _build_dfa(self, Py_ssize_t max_work)
    cdef _set_graphemes(self, int32_t table, list classes)


# Append the matches of `regex` in s[:n] to `pairs` as (start, end) byte offsets, in the
# order and with the empty-match rules of tokenizers' find_matches over onig's find_iter.
# Returns the number of matches, or a negative error code.
cdef Py_ssize_t lr_find_all(LinearRegex regex, const unsigned char* s, Py_ssize_t n, LrScratch* sc,
                            IdBuf* pairs) noexcept nogil

# lr_find_all over a text of symbols (code points, or any values below 0x110000 that the
# program's classes are written for: llama.cpp's collapsed text, say); pairs are indices.
cdef Py_ssize_t lr_find_all_symbols(LinearRegex regex, const int32_t* symbols, Py_ssize_t n, LrScratch* sc,
                                    IdBuf* pairs) noexcept nogil

# out = s[:n] with every match replaced by content (tokenizers' Replace). Returns the number
# of matches, or a negative error code.
cdef Py_ssize_t lr_replace_all(LinearRegex regex, const unsigned char* s, Py_ssize_t n,
                               const char* content, Py_ssize_t content_len, LrScratch* sc,
                               IdBuf* pairs, ByteBuf* out) noexcept nogil
