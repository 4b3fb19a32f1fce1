# Included by hf_decoders.pyx: the stages that turn tokens into bytes and bytes into text
# (ByteFallback's <0xHH> tokens, ByteLevel's GPT-2 byte map and from_utf8_lossy).


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
