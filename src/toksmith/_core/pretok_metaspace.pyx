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
from libc.string cimport memchr, memcmp, memcpy

from toksmith._core.buffers cimport ByteBuf, IdBuf, bytebuf_reserve, idbuf_push
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.pretokenizer cimport PRETOK_REWRITTEN, PreTokenizer, PreTokenizerWork

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
        cdef bint prepend, only_spaces
        cdef const unsigned char* hit
        cdef char* out
        if n == 0:
            return 0
        text.size = 0
        # at most every byte a space turned into rep, plus the prepended rep
        if bytebuf_reserve(text, n * rl + rl) < 0:
            return ERR_NO_MEMORY
        out = text.data
        prepend = self.prepend_scheme == SCHEME_ALWAYS or \
            (self.prepend_scheme == SCHEME_FIRST and work.at_input_start)
        if prepend and s[0] != 32 and not _starts_with(s, n, rep, rl):
            memcpy(out, rep, rl)
            text.size = rl
        # Without the replacement's lead byte in s, only spaces stop a run (memchr finds them).
        only_spaces = first == 32 or memchr(s, first, n) == NULL
        while i < n:
            # copy the run up to the next space or replacement character
            if only_spaces:
                hit = <const unsigned char*>memchr(s + i, 32, n - i)
                run = n if hit == NULL else hit - s
            else:
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


cdef inline bint _starts_with(const unsigned char* s, Py_ssize_t n, const char* rep, Py_ssize_t rl) noexcept nogil:
    return n >= rl and memcmp(s, rep, rl) == 0
