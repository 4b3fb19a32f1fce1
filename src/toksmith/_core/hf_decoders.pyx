"""tokenizers' decoders (a tokenizer.json's `$.decoder`) as one chain of streaming stages.

Parity: tokenizers 0.23.3 `Tokenizer::decode` (tokenizer/mod.rs): every id becomes its
token text (an added token's content, or its normalized form when it is marked
`normalized`; with skip_special the special added tokens are dropped), the decoder's
`decode_chain` rewrites that list of texts, and the results are joined with "" (no
decoder: the texts are joined with " ").

Each decoder becomes one or a few `Stage`s (hf/native_decoders.py builds them). A stage is
a streaming transducer over token events: `data` (bytes appended to the current token),
`end` (the current token is complete; a token may be empty) and `finish` (no token comes
after). It passes its own output tokens on to the next stage as the same events, and
holds back only what a later token can still change:

=====================  ===============================================================
stage                  holds back
=====================  ===============================================================
ReplaceStage           the start of a match of its pattern (less what its content
                       shares with that start)
RegexReplaceStage      each token until it ends (after a Fuse: the whole text)
StripStage             trailing `content` characters (at most `stop`), and up to
                       `start` leading ones
MetaspaceStage         nothing
WordPiecePrefixStage   a token's start while it may still be the prefix
BpeSuffixStage         a token from its first suffix, until a next token says that it
                       was not the last (less what it gives either way)
ByteFallbackStage      a run of byte tokens while it is valid UTF-8 (an invalid run
                       comes out at once, U+FFFD per byte token); a token while it may
                       still be `<0xHH>`
ByteLevelStage         each token (its characters decide whether it maps to bytes), and
                       an incomplete UTF-8 character
DedupStage (CTC)       a token while it may still equal the previous one
Fuse, JoinSpaces,      nothing
DropEmpty (CTC)
=====================  ===============================================================

so `StreamDecoder` gives text as soon as no later id can change it, and its pieces always
concatenate to `decode(ids)`. Each stage decides on its own input: a stage does not look
into what an earlier one holds back, so in a chain where several replacing stages follow a
Fuse (WordPiece's or CTC's cleanup after a Fuse), or where a later stage waits on a token an
earlier one holds (WordPiece's space before a held byte run), text may come a few
characters later than the whole chain would need. Where tokenizers panics (Strip, see
StripStage) the stream raises when the token that panics is complete.

`decode_bytes` gives the bytes before the UTF-8 repair steps (ByteLevel's
`from_utf8_lossy`, ByteFallback's U+FFFD for a byte run that is not UTF-8): those steps
pass the raw bytes on when no later stage could tell them from U+FFFD; otherwise
decode_bytes is the text of `decode` as UTF-8.

>>> dec = HfDecoder.build([b"a</w>", b"b</w>"], b"\\0\\0", [BpeSuffixStage(b"</w>")])
>>> dec.decode([0, 1])
'a b'
"""
from toksmith.errors import ReferenceAbortsError, TokenIdError

from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memchr, memcmp, memcpy

from toksmith._core.buffers cimport (ByteBuf, IdBuf, bytebuf_append, bytebuf_free, bytebuf_push,
                                     bytebuf_reserve, idbuf_free)
from toksmith._core.byte_unicode cimport unmap_byte_unicode
from toksmith._core.detokenizer cimport Decoder, DecodeState, checked_ids, decode_state_free
from toksmith._core.utf8 cimport REPLACEMENT_CHAR


# What an id is to the decoder (the `kinds` byte of each piece).
cpdef enum TokenKind:
    TOKEN_TEXT = 0          # a model token or a non-special added token
    TOKEN_SPECIAL = 1       # its text is a special added token's content: skip_special drops it
    TOKEN_MISSING = 2       # no token has this id (tokenizers skips it; toksmith refuses it)


cdef struct StageState:
    ByteBuf buf             # bytes held back (each stage's own use)
    ByteBuf buf2
    Py_ssize_t index        # tokens that have ended: the index of the current token
    Py_ssize_t a            # counters, each stage's own use
    Py_ssize_t b
    Py_ssize_t c
    unsigned int flags      # 0 at the start of a stream


cdef struct ChainState:
    StageState* states      # one per stage
    Py_ssize_t n_states
    ByteBuf* out            # where the last stage's text goes
    bint raw                # decode_bytes: repair steps pass raw bytes on where they may
    bint failed             # a stage raised: the stream is unusable


cdef void _chain_free(void* p) noexcept nogil:
    cdef ChainState* cs = <ChainState*>p
    cdef Py_ssize_t i
    if cs == NULL:
        return
    if cs.states != NULL:
        for i in range(cs.n_states):
            bytebuf_free(&cs.states[i].buf)
            bytebuf_free(&cs.states[i].buf2)
        free(cs.states)
    free(cs)


# ---------------------------------------------------------------------- UTF-8 units

cdef inline Py_ssize_t _utf8_prefix(const unsigned char* s, Py_ssize_t n, Py_ssize_t* need) noexcept nogil:
    """Length of the longest start of s[:n] that begins some valid character (>= 1), and in
    `need` that character's length (0 when s[0] starts none). s[0] >= 0x80.

    Equal to `need`: a whole character; shorter: a maximal malformed subpart (one U+FFFD
    in from_utf8_lossy), or, when it reaches n, a character that may still complete."""
    cdef unsigned char c = s[0], x, lo, hi
    cdef Py_ssize_t k = 1, m
    if 0xC2 <= c <= 0xDF:
        m = 2
    elif 0xE0 <= c <= 0xEF:
        m = 3
    elif 0xF0 <= c <= 0xF4:
        m = 4
    else:
        need[0] = 0
        return 1
    need[0] = m
    while k < m and k < n:
        x = s[k]
        lo = 0x80
        hi = 0xBF
        if k == 1:
            # second-byte ranges that rule out overlongs, surrogates and > U+10FFFF
            if c == 0xE0:
                lo = 0xA0
            elif c == 0xED:
                hi = 0x9F
            elif c == 0xF0:
                lo = 0x90
            elif c == 0xF4:
                hi = 0x8F
        if x < lo or x > hi:
            break
        k += 1
    return k


cdef inline Py_ssize_t _unit_len(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Bytes of the character at s, or of the malformed subpart there (raw bytes)."""
    cdef Py_ssize_t need
    if s[0] < 0x80:
        return 1
    return _utf8_prefix(s, n, &need)


cdef inline bint _is_ascii(bytes text):
    cdef unsigned char c
    for c in text:
        if c >= 0x80:
            return False
    return True


# ---------------------------------------------------------------------- stages

cdef class Stage:
    """One step of the chain: passes every event on unchanged (subclasses transform).

    `raw_safe`: a repair step before this stage may pass raw malformed bytes through it
    (it never looks at U+FFFD or at non-ASCII bytes the way the text would show them)."""
    cdef Stage next
    cdef Py_ssize_t k               # its state: ChainState.states[k]
    cdef bint raw_safe
    cdef bint raw_ok                # repair steps: decode_bytes may pass raw bytes on

    def __cinit__(self, *args, **kwargs):
        self.k = -1
        self.raw_safe = True
        self.raw_ok = False

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        if n:
            self.next.data(cs, p, n)
        return 0

    cdef int end(self, ChainState* cs) except -1:
        return self.next.end(cs)

    cdef int finish(self, ChainState* cs) except -1:
        return self.next.finish(cs)

    cdef int emit(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        if n > 0:
            self.next.data(cs, p, n)
        return 0

    cdef int emit_fffd(self, ChainState* cs) except -1:
        return self.next.data(cs, REPLACEMENT_CHAR, 3)

    @property
    def name(self):
        return type(self).__name__


cdef class _Sink(Stage):
    """The end of the chain: tokens joined with "" (Decoder::decode)."""

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        if bytebuf_append(cs.out, p, n) < 0:
            raise MemoryError()
        return 0

    cdef int end(self, ChainState* cs) except -1:
        return 0

    cdef int finish(self, ChainState* cs) except -1:
        return 0


cdef enum:
    F_OPEN = 1              # the current token has had data
    F_DECIDED = 2
    F_FOUND = 4
    F_PENDING = 8
    F_NOT_CANDIDATE = 16
    F_RUN_INVALID = 32
    F_HAVE_PREV = 64
    F_DIFFERENT = 128
    F_LEAD_DONE = 256
    F_MIXED = 512


cdef class JoinSpacesStage(Stage):
    """No decoder: the texts joined with " " (Tokenizer::decode without a decoder).

    >>> HfDecoder.build([b"a", b"b"], b"\\0\\0", [JoinSpacesStage()]).decode([0, 1, 0])
    'a b a'
    """

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        cdef StageState* st = &cs.states[self.k]
        if n == 0:
            return 0
        if not (st.flags & F_OPEN):
            st.flags |= F_OPEN
            if st.index > 0:
                self.next.data(cs, b" ", 1)
        return self.next.data(cs, p, n)

    cdef int end(self, ChainState* cs) except -1:
        cdef StageState* st = &cs.states[self.k]
        if not (st.flags & F_OPEN) and st.index > 0:
            self.next.data(cs, b" ", 1)
        st.flags = 0
        st.index += 1
        return self.next.end(cs)


cdef class FuseStage(Stage):
    """Parity: decoders/fuse.rs: all tokens joined into one (always one, maybe empty).

    >>> HfDecoder.build([b"a", b" "], b"\\0\\0", [FuseStage(), StripStage(b" ", 0, 1)]).decode([0, 1])
    'a'
    """

    cdef int end(self, ChainState* cs) except -1:
        return 0

    cdef int finish(self, ChainState* cs) except -1:
        self.next.end(cs)
        return self.next.finish(cs)


cdef class DropEmptyStage(Stage):
    """Parity: decoders/ctc.rs: a token that came out empty is removed from the list."""

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        if n:
            cs.states[self.k].flags = F_OPEN
            self.next.data(cs, p, n)
        return 0

    cdef int end(self, ChainState* cs) except -1:
        cdef StageState* st = &cs.states[self.k]
        if st.flags & F_OPEN:
            st.flags = 0
            return self.next.end(cs)
        return 0


cdef class DedupStage(Stage):
    """Parity: decoders/ctc.rs `dedup()`: a token equal to the one before it is removed.
    A token is held while it may still be equal to the previous one."""

    def __cinit__(self, *args, **kwargs):
        self.raw_safe = False       # raw bytes differ where their U+FFFD would be equal

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        cdef StageState* st = &cs.states[self.k]
        if n == 0:
            return 0
        if not (st.flags & F_OPEN):
            st.flags |= F_OPEN
            st.buf.size = 0
            if not (st.flags & F_HAVE_PREV):
                st.flags |= F_DIFFERENT
        if bytebuf_append(&st.buf, p, n) < 0:
            raise MemoryError()
        if st.flags & F_DIFFERENT:
            return self.next.data(cs, p, n)
        # the token so far was a prefix of the previous one: do the new bytes continue it?
        if st.buf.size <= st.buf2.size and memcmp(st.buf.data + st.buf.size - n, st.buf2.data + st.buf.size - n,
                                                  n) == 0:
            return 0
        st.flags |= F_DIFFERENT
        return self.next.data(cs, st.buf.data, st.buf.size)

    cdef int end(self, ChainState* cs) except -1:
        cdef StageState* st = &cs.states[self.k]
        cdef ByteBuf swap
        if not (st.flags & F_OPEN):
            st.buf.size = 0
            if not (st.flags & F_HAVE_PREV):
                st.flags |= F_DIFFERENT
        if (st.flags & F_DIFFERENT) or st.buf.size != st.buf2.size:
            if not (st.flags & F_DIFFERENT):
                self.emit(cs, st.buf.data, st.buf.size)
            self.next.end(cs)
        # this token is the one the next is compared with
        swap = st.buf
        st.buf = st.buf2
        st.buf2 = swap
        st.flags = F_HAVE_PREV
        return 0


cdef class ReplaceStage(Stage):
    """Every match of a literal pattern in each token replaced by `content`, leftmost
    first, matches not overlapping.

    Parity: normalizers/replace.rs `impl Decoder for Replace` with a String pattern
    (onig's find_iter of the escaped pattern; `empty_token_stays_empty`: an empty token
    gives "" even for an empty pattern), and Rust's `str::replace` (decoders/ctc.rs,
    wordpiece.rs `cleanup`; an empty pattern inserts `content` around every character,
    also in an empty token).

    >>> HfDecoder.build([b"a\\xe2\\x96\\x81b"], b"\\0", [ReplaceStage("\\u2581".encode(), b" ")]).decode([0])
    'a b'
    """
    cdef bytes pattern_bytes, content_bytes
    cdef const unsigned char* pat
    cdef const char* content
    cdef Py_ssize_t plen, clen
    cdef Py_ssize_t* borders        # KMP: longest proper border of pattern[:q]
    cdef Py_ssize_t* settled        # bytes every continuation of a held pattern[:q] starts with
    cdef bint empty_token_stays_empty

    def __cinit__(self, bytes pattern, bytes content, *, bint empty_token_stays_empty=False):
        cdef Py_ssize_t q, k, m
        self.pattern_bytes = pattern
        self.content_bytes = content
        self.pat = <const unsigned char*>(<char*>self.pattern_bytes)
        self.content = <char*>self.content_bytes
        self.plen = len(pattern)
        self.clen = len(content)
        self.empty_token_stays_empty = empty_token_stays_empty
        self.raw_safe = self.plen > 0 and _is_ascii(pattern)
        self.borders = <Py_ssize_t*>malloc((self.plen + 1) * sizeof(Py_ssize_t))
        self.settled = <Py_ssize_t*>malloc((self.plen + 1) * sizeof(Py_ssize_t))
        if self.borders == NULL or self.settled == NULL:
            raise MemoryError()
        _kmp_borders(self.pat, self.plen, self.borders)
        for q in range(self.plen + 1):
            # a held pattern[:q] comes out as itself (no match) or as content (a match);
            # what they share is settled (see test_hf_decoders' brute-force check)
            m = min(q, self.clen)
            k = 0
            while k < m and self.pat[k] == <unsigned char>self.content[k]:
                k += 1
            while 0 < k < self.plen and (self.pat[k] & 0xC0) == 0x80:
                k -= 1          # never half a character
            self.settled[q] = k

    def __dealloc__(self):
        free(self.borders)
        free(self.settled)

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        cdef StageState* st = &cs.states[self.k]
        cdef Py_ssize_t i = 0, j, q, q2
        cdef const char* hit
        if n == 0:
            return 0
        if self.plen == 0:
            return self._data_empty_pattern(cs, st, p, n)
        q = st.a
        while i < n:
            if q == 0:
                hit = <const char*>memchr(p + i, self.pat[0], n - i)
                j = n if hit == NULL else hit - p
                self.emit(cs, p + i, j - i)
                if hit == NULL:
                    break
                i = j + 1
                q = 1
            elif <unsigned char>p[i] == self.pat[q]:
                q += 1
                i += 1
            else:
                q2 = self.borders[q]
                self._release(cs, st, q - q2)
                q = q2
                continue
            if q == self.plen:
                j = st.b
                st.b = 0
                self.emit(cs, self.content + j, self.clen - j)
                q = 0
        st.a = q
        if self.settled[q] > st.b:
            self.next.data(cs, <const char*>self.pat + st.b, self.settled[q] - st.b)
            st.b = self.settled[q]
        return 0

    cdef int _release(self, ChainState* cs, StageState* st, Py_ssize_t length) except -1:
        """pattern[:length] of the held text comes out as it is (less what came out early)."""
        cdef Py_ssize_t skip = min(st.b, length)
        st.b -= skip
        return self.emit(cs, <const char*>self.pat + skip, length - skip)

    cdef int _data_empty_pattern(self, ChainState* cs, StageState* st, const char* p,
                                 Py_ssize_t n) except -1:
        cdef Py_ssize_t i = 0, u
        if not (st.flags & F_OPEN):
            st.flags |= F_OPEN
            self.emit(cs, self.content, self.clen)
        while i < n:
            u = _unit_len(<const unsigned char*>p + i, n - i)
            self.next.data(cs, p + i, u)
            self.emit(cs, self.content, self.clen)
            i += u
        return 0

    cdef int end(self, ChainState* cs) except -1:
        cdef StageState* st = &cs.states[self.k]
        if self.plen == 0:
            if not (st.flags & F_OPEN) and not self.empty_token_stays_empty:
                self.emit(cs, self.content, self.clen)
            st.flags = 0
        else:
            self._release(cs, st, st.a)
            st.a = 0
            st.b = 0
        return self.next.end(cs)


cdef void _kmp_borders(const unsigned char* pat, Py_ssize_t m, Py_ssize_t* borders) noexcept:
    cdef Py_ssize_t q, k = 0
    borders[0] = 0
    if m == 0:
        return
    borders[1] = 0
    for q in range(1, m):
        while k > 0 and pat[q] != pat[k]:
            k = borders[k]
        if pat[q] == pat[k]:
            k += 1
        borders[q + 1] = k


cdef int _replace_into(ByteBuf* out, const char* s, Py_ssize_t n, const unsigned char* pat, Py_ssize_t plen,
                       const Py_ssize_t* borders, const char* content, Py_ssize_t clen) except -1:
    """out = Rust's str::replace of s[:n] (leftmost matches, not overlapping, found with the
    pattern's KMP `borders`; an empty pattern: content around every character)."""
    cdef Py_ssize_t i = 0, start = 0, q = 0, u
    out.size = 0
    if plen == 0:
        if bytebuf_append(out, content, clen) < 0:
            raise MemoryError()
        while i < n:
            u = _unit_len(<const unsigned char*>s + i, n - i)
            if bytebuf_append(out, s + i, u) < 0 or bytebuf_append(out, content, clen) < 0:
                raise MemoryError()
            i += u
        return 0
    while i < n:
        while q > 0 and <unsigned char>s[i] != pat[q]:
            q = borders[q]
        if <unsigned char>s[i] == pat[q]:
            q += 1
        i += 1
        if q == plen:
            if bytebuf_append(out, s + start, i - plen - start) < 0 or bytebuf_append(out, content, clen) < 0:
                raise MemoryError()
            start = i
            q = 0
    if bytebuf_append(out, s + start, n - start) < 0:
        raise MemoryError()
    return 0


cdef class RegexReplaceStage(Stage):
    """Parity: normalizers/replace.rs `impl Decoder for Replace` with a Regex pattern: each
    token's matches (onig's find_iter, as find_matches gives them) replaced by `content`;
    an empty token stays empty. `matcher.replace(text, content)` does the matching
    (toksmith.hf.native_regex's LinearRegex). A token is held until it ends: after a Fuse
    the whole text waits for finish, since a match may reach back over any of it.
    """
    cdef object matcher
    cdef bytes content_bytes

    def __cinit__(self, matcher, bytes content):
        self.matcher = matcher
        self.content_bytes = content
        self.raw_safe = False

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        if bytebuf_append(&cs.states[self.k].buf, p, n) < 0:
            raise MemoryError()
        return 0

    cdef int end(self, ChainState* cs) except -1:
        cdef StageState* st = &cs.states[self.k]
        cdef bytes replaced
        if st.buf.size:
            replaced = self.matcher.replace(st.buf.data[:st.buf.size], self.content_bytes)
            st.buf.size = 0
            self.emit(cs, replaced, len(replaced))
        return self.next.end(cs)


cdef class BpeSuffixStage(Stage):
    """Parity: decoders/bpe.rs: the suffix becomes " " in every token but the last, ""
    in the last. A token is held from its first suffix until the next token begins.
    (After a Fuse there is one token: hf/native_decoders.py uses ReplaceStage(suffix, b"").)
    """
    cdef bytes suffix_bytes
    cdef const unsigned char* suf
    cdef Py_ssize_t slen
    cdef Py_ssize_t* borders

    def __cinit__(self, bytes suffix):
        self.suffix_bytes = suffix
        self.suf = <const unsigned char*>(<char*>self.suffix_bytes)
        self.slen = len(suffix)
        self.raw_safe = self.slen > 0 and _is_ascii(suffix)
        self.borders = <Py_ssize_t*>malloc((self.slen + 1) * sizeof(Py_ssize_t))
        if self.borders == NULL:
            raise MemoryError()
        _kmp_borders(self.suf, self.slen, self.borders)

    def __dealloc__(self):
        free(self.borders)

    cdef int _resolve(self, ChainState* cs, StageState* st, bint last) except -1:
        """The held token, now that it is known whether it was the last (st.b of its
        bytes came out at its end already)."""
        if not (st.flags & F_PENDING):
            return 0
        if last:
            _replace_into(&st.buf2, st.buf.data, st.buf.size, self.suf, self.slen, self.borders, b"", 0)
        self.emit(cs, st.buf2.data + st.b, st.buf2.size - st.b)
        st.buf.size = 0
        st.b = 0
        st.flags = 0
        return self.next.end(cs)

    cdef int _open(self, ChainState* cs, StageState* st) except -1:
        self._resolve(cs, st, False)
        st.flags = F_OPEN
        st.buf.size = 0
        if self.slen == 0:
            st.flags |= F_FOUND     # "".replace gives an insertion at every position
        return 0

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        cdef StageState* st = &cs.states[self.k]
        cdef Py_ssize_t i = 0, j, q, q2
        cdef const char* hit
        if n == 0:
            return 0
        if not (st.flags & F_OPEN):
            self._open(cs, st)
        if st.flags & F_FOUND:
            if bytebuf_append(&st.buf, p, n) < 0:
                raise MemoryError()
            return 0
        q = st.a
        while i < n:
            if q == 0:
                hit = <const char*>memchr(p + i, self.suf[0], n - i)
                j = n if hit == NULL else hit - p
                self.emit(cs, p + i, j - i)
                if hit == NULL:
                    break
                i = j + 1
                q = 1
            elif <unsigned char>p[i] == self.suf[q]:
                q += 1
                i += 1
            else:
                q2 = self.borders[q]
                self.emit(cs, <const char*>self.suf, q - q2)
                q = q2
                continue
            if q == self.slen:
                # the first suffix: hold the rest of the token
                st.flags |= F_FOUND
                st.a = 0
                if bytebuf_append(&st.buf, <const char*>self.suf, self.slen) < 0 or \
                        bytebuf_append(&st.buf, p + i, n - i) < 0:
                    raise MemoryError()
                return 0
        st.a = q
        return 0

    cdef int end(self, ChainState* cs) except -1:
        cdef StageState* st = &cs.states[self.k]
        if not (st.flags & F_OPEN):
            self._open(cs, st)
        if st.flags & F_FOUND:
            st.flags = F_PENDING
            self._pass_common_start(cs, st)
            return 0
        self.emit(cs, <const char*>self.suf, st.a)
        st.a = 0
        st.flags = 0
        return self.next.end(cs)

    cdef int _pass_common_start(self, ChainState* cs, StageState* st) except -1:
        """Pass on what the held token gives both as the last token and as another (kept
        in st.buf2: the text as another)."""
        cdef ByteBuf last
        cdef Py_ssize_t n = 0, m
        last.data = NULL; last.size = 0; last.cap = 0
        try:
            _replace_into(&st.buf2, st.buf.data, st.buf.size, self.suf, self.slen, self.borders, b" ", 1)
            _replace_into(&last, st.buf.data, st.buf.size, self.suf, self.slen, self.borders, b"", 0)
            m = min(last.size, st.buf2.size)
            while n < m and last.data[n] == st.buf2.data[n]:
                n += 1
            while 0 < n < st.buf2.size and (<unsigned char>st.buf2.data[n] & 0xC0) == 0x80:
                n -= 1
        finally:
            bytebuf_free(&last)
        st.b = n
        return self.emit(cs, st.buf2.data, n)

    cdef int finish(self, ChainState* cs) except -1:
        self._resolve(cs, &cs.states[self.k], True)
        return self.next.finish(cs)


cdef class StripStage(Stage):
    """Parity: decoders/strip.rs: up to `start` leading and up to `stop` trailing
    `content` characters removed from each token. tokenizers panics on a token made only
    of `content` characters, fewer than start + stop, when stop > 0 (an index out of
    bounds); toksmith raises ReferenceAbortsError there.

    >>> HfDecoder.build([b"  a "], b"\\0", [StripStage(b" ", 1, 0)]).decode([0])
    ' a '
    """
    cdef bytes content_bytes
    cdef const char* content
    cdef Py_ssize_t clen, start, stop

    def __cinit__(self, bytes content, Py_ssize_t start, Py_ssize_t stop):
        if len(content.decode("utf-8")) != 1:
            raise ValueError("Strip's content is one character")
        if start < 0 or stop < 0:
            raise ValueError("Strip's start and stop are counts")
        self.content_bytes = content
        self.content = <char*>self.content_bytes
        self.clen = len(content)
        self.start = start
        self.stop = stop
        self.raw_safe = content != "\ufffd".encode()

    cdef inline bint _content_at(self, const char* p, Py_ssize_t i, Py_ssize_t n) noexcept:
        return p[i] == self.content[0] and i + self.clen <= n and memcmp(p + i, self.content, self.clen) == 0

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        cdef StageState* st = &cs.states[self.k]
        cdef Py_ssize_t i = 0, j, limit = self.start + self.stop, trailing = 0
        # st.a: leading content characters removed; st.b: trailing ones held;
        # st.c: characters of the token while they are all content (up to start + stop)
        while not (st.flags & F_LEAD_DONE) and i < n:
            if st.a < self.start and self._content_at(p, i, n):
                st.a += 1
                if st.c < limit:
                    st.c += 1
                i += self.clen
                continue
            st.flags |= F_LEAD_DONE
        if i == n:
            return 0
        if self.stop == 0:
            return self.next.data(cs, p + i, n - i)
        # the trailing content characters of this data are held, the rest passed on
        j = n
        while j - self.clen >= i and memcmp(p + j - self.clen, self.content, self.clen) == 0:
            j -= self.clen
            trailing += 1
        if j > i:
            if not (st.flags & F_MIXED):
                # are the characters before the trailing ones all content too?
                while i < j and self._content_at(p, i, n):
                    st.b += 1
                    if st.c < limit:
                        st.c += 1
                    i += self.clen
                if i < j:
                    st.flags |= F_MIXED
            if i < j:
                while st.b > 0:
                    self.next.data(cs, self.content, self.clen)
                    st.b -= 1
                self.next.data(cs, p + i, j - i)
        elif not (st.flags & F_MIXED):
            st.c = min(limit, st.c + trailing)
        st.b += trailing
        while st.b > self.stop:
            self.next.data(cs, self.content, self.clen)
            st.b -= 1
        return 0

    cdef int end(self, ChainState* cs) except -1:
        cdef StageState* st = &cs.states[self.k]
        cdef Py_ssize_t count = st.c
        cdef bint only_content = not (st.flags & F_MIXED)
        st.a = st.b = st.c = 0
        st.flags = 0
        if only_content and self.stop > 0 and count < self.start + self.stop:
            raise ReferenceAbortsError(
                f"tokenizers panics in its Strip decoder (content {self.content_bytes.decode()!r}, "
                f"start {self.start}, stop {self.stop}) on a token made of {count} such characters only "
                f"(fewer than start + stop): decode has no result to match for these ids")
        return self.next.end(cs)


cdef class MetaspaceStage(Stage):
    """Parity: pre_tokenizers/metaspace.rs `impl Decoder for Metaspace`: the replacement
    character becomes a space; in the first token, unless prepend_scheme is "never",
    every one of them is removed.

    >>> d = HfDecoder.build(["\\u2581a\\u2581".encode(), "\\u2581b".encode()], b"\\0\\0",
    ...                     [MetaspaceStage("\\u2581".encode(), True)])
    >>> d.decode([0, 1])
    'a b'
    """
    cdef bytes replacement_bytes
    cdef const char* rep
    cdef Py_ssize_t rlen
    cdef bint drop_in_first

    def __cinit__(self, bytes replacement, bint drop_in_first):
        if len(replacement.decode("utf-8")) != 1:
            raise ValueError("Metaspace's replacement is one character")
        self.replacement_bytes = replacement
        self.rep = <char*>self.replacement_bytes
        self.rlen = len(replacement)
        self.drop_in_first = drop_in_first
        self.raw_safe = replacement != "\ufffd".encode()

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        cdef StageState* st = &cs.states[self.k]
        cdef bint drop = self.drop_in_first and st.index == 0
        cdef Py_ssize_t i = 0, j
        cdef const char* hit
        while i < n:
            hit = <const char*>memchr(p + i, self.rep[0], n - i)
            if hit == NULL:
                break
            j = hit - p
            if j + self.rlen <= n and memcmp(hit, self.rep, self.rlen) == 0:
                self.emit(cs, p + i, j - i)
                if not drop:
                    self.next.data(cs, b" ", 1)
                i = j + self.rlen
            else:
                self.emit(cs, p + i, j + 1 - i)
                i = j + 1
        return self.emit(cs, p + i, n - i)

    cdef int end(self, ChainState* cs) except -1:
        cs.states[self.k].index += 1
        return self.next.end(cs)


cdef class WordPiecePrefixStage(Stage):
    """Parity: decoders/wordpiece.rs: every token but the first loses the continuation
    prefix, or gets a space before it when it has none (`cleanup` is ReplaceStages after).

    >>> HfDecoder.build([b"un", b"##able", b"x"], b"\\0\\0\\0", [WordPiecePrefixStage(b"##")]).decode([0, 1, 2])
    'unable x'
    """
    cdef bytes prefix_bytes
    cdef const char* prefix
    cdef Py_ssize_t plen

    def __cinit__(self, bytes prefix):
        self.prefix_bytes = prefix
        self.prefix = <char*>self.prefix_bytes
        self.plen = len(prefix)
        self.raw_safe = _is_ascii(prefix)

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        cdef StageState* st = &cs.states[self.k]
        cdef Py_ssize_t m
        if n == 0:
            return 0
        if not (st.flags & F_OPEN):
            st.flags = F_OPEN
            st.buf.size = 0
            if st.index == 0 or self.plen == 0:
                st.flags |= F_DECIDED
        if st.flags & F_DECIDED:
            return self.next.data(cs, p, n)
        if bytebuf_append(&st.buf, p, n) < 0:
            raise MemoryError()
        m = min(st.buf.size, self.plen)
        if memcmp(st.buf.data, self.prefix, m) != 0:
            st.flags |= F_DECIDED
            self.next.data(cs, b" ", 1)
            self.next.data(cs, st.buf.data, st.buf.size)
        elif st.buf.size >= self.plen:
            st.flags |= F_DECIDED
            self.emit(cs, st.buf.data + self.plen, st.buf.size - self.plen)
        return 0

    cdef int end(self, ChainState* cs) except -1:
        cdef StageState* st = &cs.states[self.k]
        if not (st.flags & F_OPEN):
            if st.index != 0 and self.plen > 0:
                self.next.data(cs, b" ", 1)
        elif not (st.flags & F_DECIDED):
            # shorter than the prefix: not stripped
            self.next.data(cs, b" ", 1)
            self.emit(cs, st.buf.data, st.buf.size)
        st.buf.size = 0
        st.flags = 0
        st.index += 1
        return self.next.end(cs)


cdef inline int _hex_value(unsigned char c) noexcept nogil:
    if 48 <= c <= 57:
        return c - 48
    if 65 <= c <= 70:
        return c - 55
    if 97 <= c <= 102:
        return c - 87
    return -1


cdef bint _byte_token_start(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """s[:n] may still be a whole byte token: `<0x` + two hex digits (or `+` and one,
    which Rust's u8::from_str_radix also reads) + `>`, six bytes."""
    cdef Py_ssize_t i
    if n > 6:
        return False
    for i in range(n):
        if i == 0 and s[i] != b'<' or i == 1 and s[i] != b'0' or i == 2 and s[i] != b'x':
            return False
        if i == 3 and s[i] != b'+' and _hex_value(s[i]) < 0:
            return False
        if i == 4 and _hex_value(s[i]) < 0:
            return False
        if i == 5 and s[i] != b'>':
            return False
    return True


cdef class ByteFallbackStage(Stage):
    """Parity: decoders/byte_fallback.rs: a run of tokens `<0xHH>` becomes one token of
    those bytes when they are UTF-8, else one U+FFFD token per byte token.

    >>> d = HfDecoder.build([b"<0xE3>", b"<0x81>", b"<0x82>", b"a"], b"\\0\\0\\0\\0", [ByteFallbackStage()])
    >>> d.decode([0, 1, 2, 3]), d.decode([0, 1, 3])
    ('\\u3042a', '\\ufffd\\ufffda')
    """
    # st.buf: the token's start while it may be a byte token; st.buf2: the run's bytes
    # while they are UTF-8; st.a: byte tokens in the run; st.b: where its last,
    # incomplete, character starts

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        cdef StageState* st = &cs.states[self.k]
        if n == 0:
            return 0
        if not (st.flags & F_OPEN):
            st.flags = (st.flags & F_RUN_INVALID) | F_OPEN
            st.buf.size = 0
            if p[0] != b'<':
                # not a byte token (most tokens): no copy
                st.flags |= F_NOT_CANDIDATE
                self._end_run(cs, st)
        if not (st.flags & F_NOT_CANDIDATE):
            if bytebuf_append(&st.buf, p, n) < 0:
                raise MemoryError()
            if _byte_token_start(<const unsigned char*>st.buf.data, st.buf.size):
                return 0
            st.flags |= F_NOT_CANDIDATE
            self._end_run(cs, st)
            self.next.data(cs, st.buf.data, st.buf.size)
            st.buf.size = 0
            return 0
        return self.next.data(cs, p, n)

    cdef int end(self, ChainState* cs) except -1:
        cdef StageState* st = &cs.states[self.k]
        cdef const unsigned char* s = <const unsigned char*>st.buf.data
        cdef int value
        if (st.flags & F_OPEN) and not (st.flags & F_NOT_CANDIDATE) and st.buf.size == 6:
            value = _hex_value(s[4]) if s[3] == b'+' else _hex_value(s[3]) * 16 + _hex_value(s[4])
            st.buf.size = 0
            st.flags &= F_RUN_INVALID
            return self._add_to_run(cs, st, <unsigned char>value)
        self._end_run(cs, st)
        if st.flags & F_OPEN:
            self.emit(cs, st.buf.data, st.buf.size)
        st.buf.size = 0
        st.flags = 0
        return self.next.end(cs)

    cdef int finish(self, ChainState* cs) except -1:
        self._end_run(cs, &cs.states[self.k])
        return self.next.finish(cs)

    cdef int _bad_byte(self, ChainState* cs, unsigned char value) except -1:
        """One byte token of a run that is not UTF-8: a U+FFFD token (raw: the byte)."""
        cdef char c = <char>value
        if cs.raw and self.raw_ok:
            self.next.data(cs, &c, 1)
        else:
            self.emit_fffd(cs)
        return self.next.end(cs)

    cdef int _add_to_run(self, ChainState* cs, StageState* st, unsigned char value) except -1:
        cdef Py_ssize_t k, need, i, tail
        st.a += 1
        if st.flags & F_RUN_INVALID:
            return self._bad_byte(cs, value)
        if bytebuf_push(&st.buf2, <char>value) < 0:
            raise MemoryError()
        tail = st.buf2.size - st.b
        if (<unsigned char>st.buf2.data[st.b]) < 0x80:
            st.b = st.buf2.size
            return 0
        k = _utf8_prefix(<const unsigned char*>st.buf2.data + st.b, tail, &need)
        if k == need:
            st.b = st.buf2.size
        elif k < tail or need == 0:
            # no longer UTF-8 whatever follows: every byte token of the run is U+FFFD
            st.flags |= F_RUN_INVALID
            for i in range(st.buf2.size):
                self._bad_byte(cs, <unsigned char>st.buf2.data[i])
            st.buf2.size = 0
            st.b = 0
        return 0

    cdef int _end_run(self, ChainState* cs, StageState* st) except -1:
        cdef Py_ssize_t i
        if st.a == 0:
            return 0
        if not (st.flags & F_RUN_INVALID):
            if st.b == st.buf2.size:
                self.next.data(cs, st.buf2.data, st.buf2.size)
                self.next.end(cs)
            else:
                for i in range(st.buf2.size):      # ends inside a character
                    self._bad_byte(cs, <unsigned char>st.buf2.data[i])
        st.a = 0
        st.b = 0
        st.buf2.size = 0
        st.flags &= ~F_RUN_INVALID
        return 0


cdef class ByteLevelStage(Stage):
    """Parity: pre_tokenizers/byte_level.rs `impl Decoder for ByteLevel`: each token's
    characters mapped back to bytes through GPT-2's map (a token with a character outside
    the map keeps its UTF-8), all joined into one token, `String::from_utf8_lossy`.

    >>> HfDecoder.build(["\\u0120hi".encode()], b"\\0", [ByteLevelStage()]).decode([0, 0])
    ' hi hi'
    """
    # st.buf: the current token; st.buf2: bytes not yet passed on (an incomplete character)

    def __cinit__(self, *args, **kwargs):
        self.raw_safe = False

    cdef int data(self, ChainState* cs, const char* p, Py_ssize_t n) except -1:
        if bytebuf_append(&cs.states[self.k].buf, p, n) < 0:
            raise MemoryError()
        return 0

    cdef int end(self, ChainState* cs) except -1:
        cdef StageState* st = &cs.states[self.k]
        cdef Py_ssize_t got
        if bytebuf_reserve(&st.buf2, st.buf.size) < 0:
            raise MemoryError()
        got = unmap_byte_unicode(<const unsigned char*>st.buf.data, st.buf.size,
                                 <unsigned char*>st.buf2.data + st.buf2.size)
        if got < 0:
            memcpy(st.buf2.data + st.buf2.size, st.buf.data, st.buf.size)
            got = st.buf.size
        st.buf2.size += got
        st.buf.size = 0
        return self._lossy(cs, st, False)

    cdef int finish(self, ChainState* cs) except -1:
        self._lossy(cs, &cs.states[self.k], True)
        self.next.end(cs)
        return self.next.finish(cs)

    cdef int _lossy(self, ChainState* cs, StageState* st, bint final) except -1:
        """Pass on the held bytes as from_utf8_lossy reads them (one U+FFFD per maximal
        malformed subpart), keeping a character that may still complete."""
        cdef const unsigned char* s = <const unsigned char*>st.buf2.data
        cdef Py_ssize_t n = st.buf2.size, i = 0, start = 0, k, need
        cdef bint raw = cs.raw and self.raw_ok
        while i < n:
            if s[i] < 0x80:
                i += 1
                continue
            k = _utf8_prefix(s + i, n - i, &need)
            if k == need:
                i += k
                continue
            if k == n - i and need > 0 and not final:
                break
            self.emit(cs, <const char*>s + start, i - start)
            if raw:
                self.next.data(cs, <const char*>s + i, k)
            else:
                self.emit_fffd(cs)
            i += k
            start = i
        self.emit(cs, <const char*>s + start, i - start)
        if i < n:
            memcpy(st.buf2.data, st.buf2.data + i, n - i)
        st.buf2.size = n - i
        return 0


# ---------------------------------------------------------------------- the decoder

cdef int _raise_missing(long pid) except -1:
    raise TokenIdError(f"token id {pid} is no token of this tokenizer.json (neither the model nor "
                       f"the added tokens have it)")


cdef class HfDecoder(Decoder):
    """A tokenizer.json's decoder: the token text of every id run through a chain of stages.

    `texts`: each id's token text as tokenizers' decode sees it; `kinds`: one TokenKind
    per id; `stages`: fresh Stage objects, in order; `pieces`: what `piece(i)` returns
    (tokenize's pieces; the texts when None).

    >>> HfDecoder.build([b"a", b"b"], b"\\0\\1", [JoinSpacesStage()]).decode([0, 1, 0], skip_special=True)
    'a a'
    """
    cdef Stage first
    cdef readonly tuple stages
    cdef list pieces

    @staticmethod
    def build(list texts, bytes kinds, list stages, list pieces=None):
        cdef HfDecoder self = HfDecoder()
        cdef Stage stage
        cdef Py_ssize_t i, j
        self._set_pieces(texts, kinds, [-1] * len(texts))
        chain = list(stages) + [_Sink()]
        for i in range(len(chain)):
            stage = chain[i]
            if stage.k >= 0:
                raise ValueError("a Stage belongs to one decoder: build fresh ones")
            stage.k = i
            stage.next = chain[i + 1] if i + 1 < len(chain) else None
            stage.raw_ok = all([(<Stage>chain[j]).raw_safe for j in range(i + 1, len(chain))])
        self.first = chain[0]
        self.stages = tuple(stages)
        self.pieces = pieces
        return self

    cpdef bytes piece(self, Py_ssize_t piece_id):
        if self.pieces is not None:
            return self.pieces[piece_id]
        return Decoder.piece(self, piece_id)

    @property
    def stage_names(self):
        """The chain, by stage type (for inspection and tests)."""
        return [s.name for s in self.stages]

    cdef void _start(self, DecodeState* st) noexcept:
        cdef ChainState* cs
        Decoder._start(self, st)
        cs = <ChainState*>calloc(1, sizeof(ChainState))
        if cs == NULL:
            return
        cs.n_states = len(self.stages) + 1
        cs.states = <StageState*>calloc(cs.n_states, sizeof(StageState))
        st.chain = cs
        st.chain_free = _chain_free
        if cs.states == NULL:
            cs.failed = True

    cdef int _check_ids(self, IdBuf* ids) except -1:
        cdef Py_ssize_t i
        for i in range(ids.size):
            if self.kinds[ids.data[i]] == TOKEN_MISSING:
                _raise_missing(ids.data[i])
        return 0

    cdef int _feed(self, DecodeState* st, long pid, bint skip_special, ByteBuf* out) except -1:
        cdef ChainState* cs = <ChainState*>st.chain
        cdef unsigned char kind = self.kinds[pid]
        cdef Py_ssize_t a, n
        if cs == NULL or cs.failed:
            raise MemoryError() if cs == NULL or cs.states == NULL else \
                ValueError("this decode stream failed earlier; create a new one")
        if kind == TOKEN_MISSING:
            _raise_missing(pid)
        if kind == TOKEN_SPECIAL and skip_special:
            return 0
        cs.out = out
        a = self.piece_offsets[pid]
        n = self.piece_offsets[pid + 1] - a
        try:
            if n:
                self.first.data(cs, self.piece_data + a, n)
            self.first.end(cs)
        except BaseException:
            cs.failed = True
            raise
        return 0

    cdef int _finish(self, DecodeState* st, bint skip_special, ByteBuf* out) except -1:
        cdef ChainState* cs = <ChainState*>st.chain
        if cs == NULL or cs.states == NULL:
            raise MemoryError()
        if cs.failed:
            raise ValueError("this decode stream failed earlier; create a new one")
        cs.out = out
        try:
            self.first.finish(cs)
        except BaseException:
            cs.failed = True
            raise
        return 0

    cdef bytes _run(self, object ids, bint skip_special, bint raw):
        cdef DecodeState st
        cdef ByteBuf out
        cdef IdBuf checked
        cdef Py_ssize_t i
        out.data = NULL; out.size = 0; out.cap = 0
        checked.data = NULL; checked.size = 0; checked.cap = 0
        self._start(&st)
        try:
            checked_ids(ids, self.n_pieces, "ids", &checked)
            self._check_ids(&checked)
            if st.chain != NULL:
                (<ChainState*>st.chain).raw = raw
            for i in range(checked.size):
                self._feed(&st, checked.data[i], skip_special, &out)
            self._finish(&st, skip_special, &out)
            return out.data[:out.size]
        finally:
            idbuf_free(&checked)
            bytebuf_free(&out)
            decode_state_free(&st)

    def decode(self, ids, *, bint skip_special=False):
        """Text of `ids`, as tokenizers' Tokenizer.decode gives it (see the module docstring)."""
        return self._run(ids, skip_special, False).decode("utf-8", "replace")

    def decode_bytes(self, ids, *, bint skip_special=False):
        """Like `decode`, before the UTF-8 repair steps where no later stage looks at them."""
        return self._run(ids, skip_special, True)
