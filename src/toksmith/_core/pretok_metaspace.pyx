"""HF tokenizers' Metaspace pre-tokenizer: spaces become a replacement character (U+2581
"▁" by default), one is put in front of the text by the prepend scheme, and the text is
cut before every replacement character.

Parity: tokenizers pre_tokenizers/metaspace.rs Metaspace::pre_tokenize: `replace(' ',
rep)`, then "always" prepends rep unless the text starts with it, "first" does so only
where the text starts the input (`offsets_original().0 == 0`), "never" does not; then,
with `split`, NormalizedString::split(rep, MergedWithNext) (empty pieces dropped).

    >>> MetaspacePreTokenizer("▁", PREPEND_ALWAYS, True).split_text("Hey  friend!".encode())
    [b'\\xe2\\x96\\x81Hey', b'\\xe2\\x96\\x81', b'\\xe2\\x96\\x81friend!']
"""
from libc.stdint cimport int32_t, uint64_t
from libc.string cimport memchr, memcmp, memcpy

from toksmith._core.buffers cimport ByteBuf, IdBuf, bytebuf_reserve, idbuf_push, idbuf_reserve
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.pretokenizer cimport PRETOK_REWRITTEN, PreTokenizer, PreTokenizerWork
from toksmith._core.swar cimport first_marked_byte, spread_byte, zero_bytes

# prepend_scheme values (tokenizers' PrependScheme).
cdef enum:
    SCHEME_ALWAYS = 0
    SCHEME_FIRST = 1
    SCHEME_NEVER = 2

PREPEND_ALWAYS = SCHEME_ALWAYS
PREPEND_FIRST = SCHEME_FIRST
PREPEND_NEVER = SCHEME_NEVER


cdef class MetaspacePreTokenizer(PreTokenizer):
    """Metaspace with any replacement character, prepend scheme and split flag."""

    cdef char rep[4]
    cdef Py_ssize_t rep_len
    cdef readonly int prepend_scheme
    cdef readonly bint split_pieces

    def __cinit__(self, str replacement, int prepend_scheme, bint split):
        cdef bytes encoded
        if len(replacement) != 1:
            raise ValueError(f"the Metaspace replacement must be one character, not {replacement!r}")
        if prepend_scheme not in (PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER):
            raise ValueError(f"unknown prepend scheme {prepend_scheme}")
        encoded = replacement.encode("utf-8", "surrogatepass")
        self.rep_len = len(encoded)
        memcpy(self.rep, <const char*>encoded, self.rep_len)
        self.prepend_scheme = prepend_scheme
        self.split_pieces = split

    @property
    def replacement(self) -> str:
        return self.rep[:self.rep_len].decode("utf-8", "surrogatepass")

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef ByteBuf* text = &work.text
        cdef const char* rep = self.rep
        cdef Py_ssize_t rl = self.rep_len, i = 0, run
        cdef unsigned char first = <unsigned char>rep[0]
        cdef bint prepend
        cdef char* out
        if n == 0:
            return 0
        text.size = 0
        # at most every byte a space turned into rep, plus the prepended rep (and 8 bytes
        # that _split_spaces may write past the end)
        if bytebuf_reserve(text, n * rl + rl + 8) < 0:
            return ERR_NO_MEMORY
        out = text.data
        prepend = self.prepend_scheme == SCHEME_ALWAYS or \
            (self.prepend_scheme == SCHEME_FIRST and work.at_input_start)
        if prepend and s[0] != 32 and not _starts_with(s, n, rep, rl):
            memcpy(out, rep, rl)
            text.size = rl
        if first == 32 or memchr(s, first, n) == NULL:
            # Without the replacement's lead byte in s, only spaces matter.
            return self._split_spaces(s, n, work, ends)
        while i < n:
            # copy the run up to the next space or replacement character
            run = i
            while run < n and s[run] != 32 and s[run] != first:
                run += 1
            if run > i:
                memcpy(out + text.size, s + i, run - i)
                text.size += run - i
                i = run
                if i == n:
                    break
            if s[i] == 32:
                i += 1
            elif _starts_with(s + i, n - i, rep, rl):
                i += rl
            else:
                # the lead byte of rep, in another character
                out[text.size] = s[i]
                text.size += 1
                i += 1
                continue
            # a replacement character now starts at text.size: a piece ends before it
            if self.split_pieces and text.size > 0 and idbuf_push(ends, <int>text.size) < 0:
                return ERR_NO_MEMORY
            memcpy(out + text.size, rep, rl)
            text.size += rl
        if idbuf_push(ends, <int>text.size) < 0:
            return ERR_NO_MEMORY
        work.dropped_start = False
        return PRETOK_REWRITTEN

    cdef int _split_spaces(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                           IdBuf* ends) noexcept nogil:
        """split() of a text where only spaces become rep: copies 8 bytes at a time up to the
        next space (work.text holds the prepended rep, if any, and room for all)."""
        cdef char* out = work.text.data
        cdef Py_ssize_t size = work.text.size, i = 0, k, rl = self.rep_len
        cdef uint64_t w, spaces
        cdef uint64_t blank = spread_byte(32)
        cdef int32_t* piece_end
        if idbuf_reserve(ends, n + 2) < 0:
            return ERR_NO_MEMORY
        piece_end = ends.data + ends.size
        while i < n:
            if i + 8 <= n:
                memcpy(&w, s + i, 8)
                memcpy(out + size, &w, 8)        # the bytes after a space are overwritten below
                spaces = zero_bytes(w ^ blank)
                if spaces == 0:
                    i += 8
                    size += 8
                    continue
                k = first_marked_byte(spaces)
                i += k
                size += k
            elif s[i] != 32:
                out[size] = s[i]
                size += 1
                i += 1
                continue
            # s[i] is a space: a piece ends before the rep it becomes
            if self.split_pieces and size > 0:
                piece_end[0] = <int32_t>size
                piece_end += 1
            for k in range(rl):
                out[size + k] = self.rep[k]
            size += rl
            i += 1
        piece_end[0] = <int32_t>size
        ends.size = piece_end + 1 - ends.data
        work.text.size = size
        work.dropped_start = False
        return PRETOK_REWRITTEN


cdef inline bint _starts_with(const unsigned char* s, Py_ssize_t n, const char* rep, Py_ssize_t rl) noexcept nogil:
    return n >= rl and memcmp(s, rep, rl) == 0
