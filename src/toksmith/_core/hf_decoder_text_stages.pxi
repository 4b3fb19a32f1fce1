# Included by hf_decoders.pyx: the stages that rewrite a token's text (Replace with a
# String or Regex pattern, BPEDecoder's suffix, Strip, Metaspace, WordPiece's prefix).


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
