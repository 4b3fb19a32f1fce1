"""Ids back to text, in one call or streamed one id at a time.

`Decoder` is the base every decoder stage subclasses; two subclasses here:

* SentencePieceDecoder (SentencePieceProcessor::Decode, 0.2.x): control pieces are
  invisible, unknown pieces show the unk surface, byte pieces are joined into
  UTF-8 with one U+FFFD per malformed byte, the dummy-prefix space of the
  first piece is removed, and the denormalizer runs on the result.
* LlamaCppDecoder (llama_detokenize): each token renders as llama_token_to_piece
  does; `skip_special` means remove_special=True, unparse_special=False and
  its absence the opposite; byte tokens are raw bytes, so the text is their
  concatenation decoded with U+FFFD for malformed sequences. BPE vocabularies
  run llama.cpp's clean_spaces passes over the bytes as they come
  (_core/clean_spaces.pxd), holding back only the few bytes still open.

A `StreamDecoder` runs the same state machine, so the text it returns piece
by piece always concatenates to `decode(ids)`.

    >>> stream = tok.stream_decoder()        # doctest: +SKIP
    >>> "".join(stream.feed(i) for i in ids) + stream.finish() == tok.decode(ids)  # doctest: +SKIP
    True
"""
import codecs
from operator import index

from toksmith.errors import TokenIdError, UnsupportedFeatureError

from libc.stdint cimport int32_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from toksmith._core.buffers cimport (ByteBuf, IdBuf, bytebuf_append, bytebuf_free, bytebuf_push,
                                     bytebuf_reserve, idbuf_free, idbuf_push)
from toksmith._core.clean_spaces cimport (clean_spaces_end, clean_spaces_feed, clean_spaces_idle,
                                          clean_spaces_start)
from toksmith._core.token_types cimport TYPE_BYTE, TYPE_CONTROL, TYPE_UNKNOWN
from toksmith._core.utf8 cimport REPLACEMENT_CHAR, SPACE_SYMBOL, valid_char_len


cdef class Decoder:
    """Base of every decoder: piece texts, and a state machine subclasses fill in.
    This base renders every piece's text as is."""

    def __cinit__(self, *args, **kwargs):
        self.piece_data = NULL
        self.piece_offsets = NULL
        self.kinds = NULL
        self.byte_values = NULL

    def __dealloc__(self):
        free(self.piece_data)
        free(self.piece_offsets)
        free(self.kinds)
        free(self.byte_values)

    cdef _set_pieces(self, list pieces, bytes kinds, list byte_values):
        """Copy the piece texts, one kind byte and one byte value (-1: none) per piece."""
        cdef Py_ssize_t n = len(pieces), i, total = 0
        cdef bytes piece
        if len(kinds) != n or len(byte_values) != n:
            raise ValueError("pieces, kinds and byte values must have equal lengths")
        self.n_pieces = n
        self.piece_offsets = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        self.kinds = <uint8_t*>malloc(max(n, 1))
        self.byte_values = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
        if self.piece_offsets == NULL or self.kinds == NULL or self.byte_values == NULL:
            raise MemoryError()
        for i in range(n):
            self.piece_offsets[i] = total
            total += len(pieces[i])
            self.kinds[i] = kinds[i]
            self.byte_values[i] = byte_values[i]
        self.piece_offsets[n] = total
        self.piece_data = <char*>malloc(total if total else 1)
        if self.piece_data == NULL:
            raise MemoryError()
        for i in range(n):
            piece = pieces[i]
            memcpy(self.piece_data + self.piece_offsets[i], <char*>piece, len(piece))

    cpdef bytes piece(self, Py_ssize_t piece_id):
        """The stored text of one piece (no range check: callers validate)."""
        return self.piece_data[self.piece_offsets[piece_id]:self.piece_offsets[piece_id + 1]]

    @property
    def streamable(self):
        """False when the decoded text is rewritten as a whole (a denormalizer)."""
        return True

    # ------------------------------------------------------------------ state machine

    cdef void _start(self, DecodeState* st) noexcept:
        st.pending.data = NULL
        st.pending.size = 0
        st.pending.cap = 0
        st.is_bos_ws = True
        st.bos_ws_seen = False
        st.any_text = False
        st.remove_space = False
        st.started = False
        st.held_eos = -1
        st.rendered.data = NULL
        st.rendered.size = 0
        st.rendered.cap = 0
        clean_spaces_start(&st.clean)
        st.chain = NULL
        st.chain_free = NULL

    cdef int _feed(self, DecodeState* st, long pid, bint skip_special, ByteBuf* out) except -1:
        if bytebuf_append(out, self.piece_data + self.piece_offsets[pid],
                          self.piece_offsets[pid + 1] - self.piece_offsets[pid]) < 0:
            raise MemoryError()
        return 0

    cdef int _flush(self, DecodeState* st, ByteBuf* out) except -1:
        """After a batch of fed ids: move what can no longer change to `out`."""
        return 0

    cdef int _check_ids(self, IdBuf* ids) except -1:
        """Raise for an id in range that the decoder refuses, before any id is fed."""
        return 0

    cdef int _finish(self, DecodeState* st, bint skip_special, ByteBuf* out) except -1:
        return 0

    cdef int _flush_pending(self, DecodeState* st, ByteBuf* out, bint complete) except -1:
        """Move pending bytes to `out`, one U+FFFD per malformed byte (sentencepiece).

        With `complete` false, bytes that may still start a valid character stay pending.
        """
        cdef Py_ssize_t off = 0, m
        cdef const unsigned char* p = <const unsigned char*>st.pending.data
        while off < st.pending.size:
            m = valid_char_len(p + off, st.pending.size - off)
            if m == 0 and not complete and _may_complete(p + off, st.pending.size - off):
                break
            if m == 0:
                if bytebuf_append(out, REPLACEMENT_CHAR, 3) < 0:
                    raise MemoryError()
                off += 1
            else:
                if bytebuf_append(out, st.pending.data + off, m) < 0:
                    raise MemoryError()
                off += m
            st.any_text = True
        if off:
            st.pending.size -= off
            if st.pending.size:
                memcpy(st.pending.data, st.pending.data + off, st.pending.size)
        return 0

    cdef bint _next_byte_is_ascii(self, DecodeState* st) noexcept:
        """True when the byte that follows the text given so far is known to be ASCII,
        so that a character still incomplete at its end is malformed already."""
        return False

    # ------------------------------------------------------------------ public

    def decode(self, ids, *, bint skip_special=False):
        """Text of `ids` (see the module docstring for the rules)."""
        return self.decode_bytes(ids, skip_special=skip_special).decode("utf-8", "replace")

    def decode_bytes(self, ids, *, bint skip_special=False):
        """Like `decode` before the final UTF-8 step (llama.cpp rules keep malformed bytes).

        Every id is checked (`checked_ids`) before any is used.
        """
        cdef DecodeState st
        cdef ByteBuf out
        cdef IdBuf checked
        cdef Py_ssize_t i
        out.data = NULL; out.size = 0; out.cap = 0
        checked.data = NULL; checked.size = 0; checked.cap = 0
        self._start(&st)
        try:
            checked_ids(ids, self.n_pieces, "ids", &checked)
            for i in range(checked.size):
                self._feed(&st, checked.data[i], skip_special, &out)
            self._finish(&st, skip_special, &out)
            return out.data[:out.size]
        finally:
            idbuf_free(&checked)
            bytebuf_free(&out)
            decode_state_free(&st)


cdef class SentencePieceDecoder(Decoder):
    """Parity: sentencepiece SentencePieceProcessor::Decode (0.2.x).

    >>> dec = SentencePieceDecoder.build(pieces, types, byte_values)   # doctest: +SKIP
    """

    @staticmethod
    def build(list pieces, bytes types, list byte_values, *, bytes unk_surface=b"",
              bint add_dummy_prefix=False, bint remove_extra_whitespaces=False,
              Normalizer denormalizer=None):
        """`types`: one token type per piece; `byte_values`: the byte of each byte piece, -1
        for the others; `denormalizer` rewrites the decoded text (sentencepiece's
        denormalizer_spec)."""
        cdef SentencePieceDecoder self = SentencePieceDecoder()
        self._set_pieces(pieces, types, byte_values)
        self.unk_surface = unk_surface
        self.strip_leading_space = add_dummy_prefix or remove_extra_whitespaces
        self.strip_all_leading_spaces = remove_extra_whitespaces
        self.denormalizer = denormalizer
        return self

    @property
    def streamable(self):
        return self.denormalizer is None

    cdef int _feed(self, DecodeState* st, long pid, bint skip_special, ByteBuf* out) except -1:
        cdef uint8_t t = self.kinds[pid]
        cdef const char* piece
        cdef Py_ssize_t plen
        cdef bint has_bos_ws
        if t == TYPE_BYTE:
            if bytebuf_push(&st.pending, <char>self.byte_values[pid]) < 0:
                raise MemoryError()
            return 0
        self._flush_pending(st, out, True)
        if st.bos_ws_seen or st.any_text:
            st.is_bos_ws = False
        has_bos_ws = False
        if t == TYPE_CONTROL:
            pass
        elif t == TYPE_UNKNOWN:
            if len(self.unk_surface):
                st.any_text = True
            if bytebuf_append(out, <char*>self.unk_surface, len(self.unk_surface)) < 0:
                raise MemoryError()
        else:
            piece = self.piece_data + self.piece_offsets[pid]
            plen = self.piece_offsets[pid + 1] - self.piece_offsets[pid]
            if st.is_bos_ws and self.strip_leading_space and _starts_with_space_symbol(piece, plen):
                piece += 3
                plen -= 3
                has_bos_ws = not self.strip_all_leading_spaces
            if plen:
                st.any_text = True
            if _append_unescaped(out, piece, plen) < 0:
                raise MemoryError()
        st.bos_ws_seen = has_bos_ws
        return 0

    cdef int _flush(self, DecodeState* st, ByteBuf* out) except -1:
        return self._flush_pending(st, out, False)

    cdef int _finish(self, DecodeState* st, bint skip_special, ByteBuf* out) except -1:
        return self._flush_pending(st, out, True)

    def decode(self, ids, *, bint skip_special=False):
        """Text of `ids`: control pieces are always invisible; the denormalizer runs last."""
        text = self.decode_bytes(ids, skip_special=skip_special)
        if self.denormalizer is not None:
            return self.denormalizer.normalize_text(text)
        return text.decode("utf-8", "replace")


cdef class LlamaCppDecoder(Decoder):
    """Parity: llama_detokenize for SPM/UGM vocabularies: `skip_special` means
    remove_special=True, unparse_special=False, and its absence the opposite.

    >>> dec = LlamaCppDecoder.build(pieces, renders, byte_values)   # doctest: +SKIP
    """

    @staticmethod
    def build(list pieces, bytes renders, list byte_values, *, bint add_space_prefix=False,
              bint add_bos=False, bint add_eos=False, int bos_id=-1, int eos_id=-1,
              bint clean_spaces=False):
        """`renders`: one `Render` per piece; `byte_values`: the byte of each byte piece,
        -1 for the others; `clean_spaces`: llama_detokenize's clean-up passes (BPE vocabularies)."""
        cdef LlamaCppDecoder self = LlamaCppDecoder()
        self._set_pieces(pieces, renders, byte_values)
        self.add_space_prefix = add_space_prefix
        self.clean_spaces = clean_spaces
        self.add_bos = add_bos and 0 <= bos_id < self.n_pieces
        self.add_eos = add_eos and 0 <= eos_id < self.n_pieces
        self.bos_id = bos_id
        self.eos_id = eos_id
        return self

    cdef void _start(self, DecodeState* st) noexcept:
        Decoder._start(self, st)
        st.remove_space = self.add_space_prefix

    cdef int _feed(self, DecodeState* st, long pid, bint skip_special, ByteBuf* out) except -1:
        if not self.clean_spaces:
            return self._feed_rendered(st, pid, skip_special, out)
        # Parity: llama_detokenize's clean_spaces passes, over the bytes as they come
        st.rendered.size = 0
        self._feed_rendered(st, pid, skip_special, &st.rendered)
        if clean_spaces_feed(&st.clean, st.rendered.data, st.rendered.size, out) < 0:
            raise MemoryError()
        return 0

    cdef int _feed_rendered(self, DecodeState* st, long pid, bint skip_special,
                            ByteBuf* out) except -1:
        """Append the text of `pid` as llama_detokenize renders it, before clean_spaces."""
        if skip_special:
            # Parity: llama_detokenize with remove_special drops one leading BOS
            # and one trailing EOS when the model adds them.
            if not st.started and self.add_bos and pid == self.bos_id:
                st.started = True
                st.remove_space = False
                return 0
            st.started = True
            if st.held_eos >= 0:
                self._render(st, st.held_eos, False, out)
                st.held_eos = -1
            if self.add_eos and pid == self.eos_id:
                st.held_eos = <int32_t>pid
                return 0
        st.started = True
        return self._render(st, pid, not skip_special, out)

    cdef bint _next_byte_is_ascii(self, DecodeState* st) noexcept:
        # the bytes clean_spaces holds back, and what replaces a removed space, are ASCII
        return self.clean_spaces and not clean_spaces_idle(&st.clean)

    cdef int _finish(self, DecodeState* st, bint skip_special, ByteBuf* out) except -1:
        # a held trailing EOS is dropped (remove_special)
        st.held_eos = -1
        if self.clean_spaces and clean_spaces_end(&st.clean, out) < 0:
            raise MemoryError()
        return 0

    cdef int _render(self, DecodeState* st, long pid, bint unparse_special,
                     ByteBuf* out) except -1:
        """Parity: llama_vocab::impl::token_to_piece for SPM/UGM vocabularies."""
        cdef uint8_t kind = self.kinds[pid]
        cdef const char* text = self.piece_data + self.piece_offsets[pid]
        cdef Py_ssize_t size = self.piece_offsets[pid + 1] - self.piece_offsets[pid]
        cdef bint strip = st.remove_space
        st.remove_space = False
        if kind == RENDER_NOTHING or (kind == RENDER_SPECIAL and not unparse_special):
            return 0
        if kind == RENDER_INVALID:
            raise TokenIdError(f"token id {pid} is no token of this vocabulary (a gap in its ids)")
        if kind == RENDER_BYTE:
            if strip and self.byte_values[pid] == 32:
                return 0
            if bytebuf_push(out, <char>self.byte_values[pid]) < 0:
                raise MemoryError()
            return 0
        if kind == RENDER_UNESCAPED:
            if strip and _starts_with_space_symbol(text, size):
                text += 3
                size -= 3
            elif strip and size >= 1 and text[0] == b' ':
                text += 1
                size -= 1
            if _append_unescaped(out, text, size) < 0:
                raise MemoryError()
            return 0
        if strip and size >= 1 and text[0] == b' ':
            text += 1
            size -= 1
        if bytebuf_append(out, text, size) < 0:
            raise MemoryError()
        return 0


cdef class StreamDecoder:
    """Text from ids fed one at a time, as soon as it is complete UTF-8 and no later id can
    change it (with llama.cpp's clean_spaces, the " '" of "it '" waits for the next bytes,
    which decide whether the space stays; at most 6 bytes wait).

    >>> stream = tok.stream_decoder()              # doctest: +SKIP
    >>> stream.feed(ids[0]); stream.feed(ids[1:])  # doctest: +SKIP
    >>> stream.finish()                            # doctest: +SKIP
    """

    def __cinit__(self, Decoder decoder, *, bint skip_special=False):
        if not decoder.streamable:
            raise UnsupportedFeatureError(
                "streaming decode is not supported for this tokenizer: its decoder rewrites the "
                "decoded text as a whole (a sentencepiece denormalizer); use decode()")
        self.decoder = decoder
        decoder._start(&self.state)
        self.skip_special = skip_special
        self.utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self.finished = False

    def __dealloc__(self):
        decode_state_free(&self.state)

    def __repr__(self):
        state = "finished" if self.finished else f"{self.state.pending.size} bytes pending"
        return (f"<toksmith.StreamDecoder skip_special={bool(self.skip_special)}, "
                f"{self.decoder.n_pieces} pieces, {state}>")

    def feed(self, ids):
        """Text completed by one id or an iterable of ids ('' while a character is partial).

        An id is an int or a numpy integer; an iterable may be a list, a tuple
        or a numpy integer array. Every id is checked before any is used, so a
        bad id changes nothing.

        >>> stream.feed(15043), stream.feed([3186, 29991])   # doctest: +SKIP
        ('Hello', ' world!')
        """
        cdef ByteBuf out
        cdef IdBuf checked
        cdef Py_ssize_t i
        if self.finished:
            raise ValueError("this StreamDecoder is finished; create a new one")
        out.data = NULL; out.size = 0; out.cap = 0
        checked.data = NULL; checked.size = 0; checked.cap = 0
        try:
            if type(ids) is int or _is_single_id(ids):
                if idbuf_push(&checked, <int32_t>checked_id(ids, self.decoder.n_pieces,
                                                              "ids")) < 0:
                    raise MemoryError()
            else:
                checked_ids(ids, self.decoder.n_pieces, "ids", &checked)
            self.decoder._check_ids(&checked)
            for i in range(checked.size):
                self.decoder._feed(&self.state, checked.data[i], self.skip_special, &out)
            self.decoder._flush(&self.state, &out)
            # a character cut short by held-back ASCII is U+FFFD now, as decode will have it
            return self.utf8.decode(out.data[:out.size], self.decoder._next_byte_is_ascii(&self.state))
        finally:
            idbuf_free(&checked)
            bytebuf_free(&out)

    def finish(self):
        """The rest of the text: pending bytes are flushed (malformed ones as U+FFFD), and
        bytes held back by clean_spaces come out as the end of the text leaves them."""
        cdef ByteBuf out
        if self.finished:
            return ""
        out.data = NULL; out.size = 0; out.cap = 0
        try:
            self.decoder._finish(&self.state, self.skip_special, &out)
            self.finished = True
            return self.utf8.decode(out.data[:out.size], True)
        finally:
            bytebuf_free(&out)


# ------------------------------------------------------------------ token ids

cdef extern from "Python.h":
    long PyLong_AsLongAndOverflow(object obj, int* overflow) except? -1
    bint PyObject_CheckBuffer(object obj)

# memoryview formats of native integers, whose tolist() gives Python ints
_INTEGER_FORMATS = frozenset(prefix + code for prefix in ("", "@") for code in "bBhHiIlLqQnN")


cdef bint _is_single_id(object ids):
    """`ids` is one id (int, numpy integer, 0-d array, or anything not iterable)."""
    if isinstance(ids, int):
        return True
    if getattr(ids, "ndim", None) == 0:
        return True
    return not hasattr(ids, "__iter__") and not PyObject_CheckBuffer(ids)


cdef str _where(str name, Py_ssize_t position):
    return name if position < 0 else f"{name}[{position}]"


cpdef long checked_id(object obj, Py_ssize_t n_pieces, str name="token_id",
                      Py_ssize_t position=-1) except -1:
    """`obj` as a token id in range(n_pieces): an int or anything with __index__
    (numpy integers), never a bool, float or str.

    Raises TypeError or `TokenIdError` (an IndexError) naming `name[position]`.

    >>> checked_id(5, 8000)
    5
    """
    cdef int overflow = 0
    cdef long value
    if type(obj) is not int:
        if isinstance(obj, bool):
            raise TypeError(f"{_where(name, position)}: token ids are integers, not bool ({obj!r})")
        try:
            obj = index(obj)
        except TypeError:
            text = repr(obj)
            if len(text) > 40:
                text = text[:37] + "..."
            raise TypeError(f"{_where(name, position)}: token ids are integers, not "
                            f"{type(obj).__name__} ({text})") from None
    value = PyLong_AsLongAndOverflow(obj, &overflow)
    if overflow or value < 0 or value >= n_pieces:
        raise TokenIdError(f"{_where(name, position)}: token id {obj} is out of range for a "
                           f"vocabulary of {n_pieces} (valid ids: 0 to {n_pieces - 1})")
    return value


cdef int checked_ids(object ids, Py_ssize_t n_pieces, str name, IdBuf* out) except -1:
    """Append every id of `ids` to `out`, each checked by `checked_id`; the one path
    every entry point that takes ids uses.

    `ids`: an iterable of ids, or a one-dimensional buffer of integers (a
    numpy array of any integer dtype). str, bytes and bytearray are refused:
    their items are characters or bytes, not token ids.
    """
    cdef Py_ssize_t i = 0
    if isinstance(ids, (str, bytes, bytearray)):
        raise TypeError(f"{name} must be a sequence of integer token ids, not "
                        f"{type(ids).__name__}")
    values = ids
    if not isinstance(ids, (list, tuple)) and PyObject_CheckBuffer(ids):
        view = memoryview(ids)
        if view.ndim != 1:
            raise TypeError(f"{name} must be one-dimensional, not a {view.ndim}-dimensional array")
        code = view.format.lstrip("@=<>!")
        if view.format in _INTEGER_FORMATS:
            values = view.tolist()
        elif len(code) != 1 or code not in "bBhHiIlLqQnN":
            kind = {"?": "bool", "e": "float", "f": "float", "d": "float"}.get(code)
            raise TypeError(f"{name}: token ids are integers, not "
                            f"{kind or 'buffer items of format ' + repr(view.format)}")
        # else integers in another byte order: iterate, the items have __index__
    try:
        iterator = iter(values)
    except TypeError:
        raise TypeError(f"{name} must be an iterable of integer token ids, not "
                        f"{type(ids).__name__}") from None
    for obj in iterator:
        if idbuf_push(out, <int32_t>checked_id(obj, n_pieces, name, i)) < 0:
            raise MemoryError()
        i += 1
    return 0


cdef bint _may_complete(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """s[:n] is a proper prefix of some character valid_char_len accepts."""
    cdef unsigned char c = s[0]
    cdef Py_ssize_t need, i
    if 0xC2 <= c <= 0xDF:
        need = 2
    elif 0xE0 <= c <= 0xEF:
        need = 3
    elif 0xF0 <= c <= 0xF4:
        need = 4
    else:
        return False
    if n >= need:
        return False
    for i in range(1, n):
        if (s[i] & 0xC0) != 0x80:
            return False
    if n >= 2:
        # second-byte ranges that rule out overlongs, surrogates and > U+10FFFF
        if c == 0xE0 and s[1] < 0xA0:
            return False
        if c == 0xED and s[1] >= 0xA0:
            return False
        if c == 0xF0 and s[1] < 0x90:
            return False
        if c == 0xF4 and s[1] >= 0x90:
            return False
    return True


cdef inline bint _starts_with_space_symbol(const char* text, Py_ssize_t size) noexcept nogil:
    return size >= 3 and text[0] == SPACE_SYMBOL[0] and text[1] == SPACE_SYMBOL[1] \
        and text[2] == SPACE_SYMBOL[2]


cdef int _append_unescaped(ByteBuf* text, const char* piece, Py_ssize_t plen) noexcept nogil:
    """Append `piece` with every U+2581 turned back into a space."""
    cdef Py_ssize_t k = 0
    if bytebuf_reserve(text, plen) < 0:
        return -1
    while k < plen:
        if _starts_with_space_symbol(piece + k, plen - k):
            text.data[text.size] = b' '
            k += 3
        else:
            text.data[text.size] = piece[k]
            k += 1
        text.size += 1
    return 0
