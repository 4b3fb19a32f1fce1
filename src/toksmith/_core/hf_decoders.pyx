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


include "hf_decoder_text_stages.pxi"
include "hf_decoder_byte_stages.pxi"


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
