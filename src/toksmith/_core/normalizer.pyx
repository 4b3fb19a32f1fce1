"""Normalizers: the `Normalizer` base (normalizer.pxd is the contract) and those of the
SentencePiece family, one class per reference's rules.

A precompiled charsmap (the XOR-compressed double array of darts-clone plus
NUL-terminated replacement strings, as sentencepiece serializes it) is applied
with longest-match replacement, then whitespace is handled: dummy prefix,
collapsing of extra whitespace, escaping of spaces to U+2581.

Example::

    >>> n = SentencePieceNormalizer(b"", add_dummy_prefix=True, remove_extra_whitespaces=True,
    ...                             escape_whitespaces=True)
    >>> n.normalize_text("  Hello   world ")
    '▁Hello▁world'
"""
from libc.stdint cimport int32_t, uint32_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

from toksmith._core.buffers cimport ByteBuf, bytebuf_append, bytebuf_free, bytebuf_push, bytebuf_reserve
from toksmith._core.errors cimport ERR_CORRUPT_CHARSMAP, ERR_NO_MEMORY
from toksmith._core.trie cimport DoubleArrayTrie, da_child
from toksmith._core.utf8 cimport REPLACEMENT_CHAR, SPACE_SYMBOL, structural_char_len, valid_char_len

from toksmith._core.errors import CharsMapError, raise_for_status


cdef inline unsigned char _bmp_kind(Py_ssize_t end_node, bint key_ends_inside) noexcept nogil:
    if end_node < 0:
        return PASS_ALWAYS          # no charsmap key starts with the character
    if key_ends_inside:
        return PASS_NEVER           # the character (or a prefix of it) is a key
    return PASS_UNLESS_KEY_MATCHES  # only longer keys (e.g. "か" + U+3099) start here


cdef class Normalizer:
    """Base of every normalizer: keeps the text unchanged.

    >>> Normalizer().normalize_text("a  b")
    'a  b'
    """

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        out.size = 0
        if bytebuf_append(out, <const char*>s, n) < 0:
            return ERR_NO_MEMORY
        return 0

    cdef Py_ssize_t carry_start(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t flagged,
                                const unsigned char* o, Py_ssize_t m) noexcept nogil:
        cdef ByteBuf part
        cdef int rc
        cdef Py_ssize_t k
        if flagged <= 0 or m == 0:
            return 0
        if flagged >= n:
            return m
        memset(&part, 0, sizeof(ByteBuf))
        rc = self.normalize(s, flagged, &part)
        k = flagged if rc == TEXT_UNCHANGED else part.size
        bytebuf_free(&part)
        if rc < 0:
            return rc
        if k > m:
            k = m
        while k < m and (o[k] & 0xC0) == 0x80:
            k += 1
        return k

    def normalize_text(self, text):
        """Normalize `text` (str or bytes) and return the result as str."""
        cdef bytes data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        cdef ByteBuf out
        cdef int rc
        out.data = NULL
        out.size = 0
        out.cap = 0
        try:
            rc = self.normalize(<const unsigned char*>(<char*>data), len(data), &out)
            raise_for_status(rc)
            if rc == TEXT_UNCHANGED:
                return data.decode("utf-8", "replace")
            return out.data[:out.size].decode("utf-8", "replace")
        finally:
            bytebuf_free(&out)


cdef class EscapeSpacesNormalizer(Normalizer):
    """Parity: llama.cpp SPM (llm_tokenizer_spm_session::tokenize): an optional U+2581
    prefix, then every ' ' becomes U+2581; all other bytes are kept raw.

    >>> EscapeSpacesNormalizer(add_prefix=True).normalize_text("a b")
    '▁a▁b'
    """

    def __cinit__(self, *, bint add_prefix=False):
        self.add_prefix = add_prefix

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef Py_ssize_t i
        out.size = 0
        if bytebuf_reserve(out, 3 * n + 3) < 0:
            return ERR_NO_MEMORY
        if self.add_prefix:
            out.data[0] = SPACE_SYMBOL[0]
            out.data[1] = SPACE_SYMBOL[1]
            out.data[2] = SPACE_SYMBOL[2]
            out.size = 3
        for i in range(n):
            if s[i] == 32:
                out.data[out.size] = SPACE_SYMBOL[0]
                out.data[out.size + 1] = SPACE_SYMBOL[1]
                out.data[out.size + 2] = SPACE_SYMBOL[2]
                out.size += 3
            else:
                out.data[out.size] = <char>s[i]
                out.size += 1
        return 0


cdef class CharsMapNormalizer(Normalizer):
    """Charsmap + whitespace tables; SentencePieceNormalizer and LlamaUgmNormalizer
    apply them by their reference's rules."""

    def __cinit__(self, bytes charsmap=b"", *, bint add_dummy_prefix=True,
                  bint remove_extra_whitespaces=True, bint escape_whitespaces=True,
                  DoubleArrayTrie user_defined=None, bint treat_whitespace_as_suffix=False):
        self.units = NULL
        self.replacement_lengths = NULL
        self.bmp_passes = NULL
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.user_defined = user_defined
        self.has_user_defined = user_defined is not None and user_defined.num_keys > 0
        self.stop_at_nul = False
        self.structural_utf8 = False
        self._blob = charsmap
        if charsmap:
            self._load_charsmap(charsmap)
        self._compute_passthrough()

    cdef _compute_passthrough(self):
        cdef int b, c
        cdef Py_ssize_t node
        cdef bint leaf, continues_with_ascii
        cdef Py_ssize_t root = _offset(self.units[0]) if self.n_units else -1
        for b in range(256):
            self.ascii_kind[b] = PASS_NEVER
            if b == 0 or b >= 0x80:
                continue
            if self.has_user_defined and da_child(self.user_defined.nodes, 0, <unsigned char>b) >= 0:
                continue
            node = _charsmap_step(self.units, self.n_units, root, b, &leaf)
            if node < 0:
                self.ascii_kind[b] = PASS_ALWAYS
                continue
            if leaf:
                continue   # b itself is a key: it has a replacement
            continues_with_ascii = False
            for c in range(0x80):
                if _charsmap_step(self.units, self.n_units, node, c, &leaf) >= 0:
                    continues_with_ascii = True
                    break
            if not continues_with_ascii:
                self.ascii_kind[b] = PASS_BEFORE_ASCII
        self.plain_space = self.ascii_kind[0x20] == PASS_ALWAYS
        self.ascii_kind[0x20] = PASS_NEVER
        self._compute_bmp_passes()

    cdef _compute_bmp_passes(self):
        """Fill bmp_passes, walking shared byte prefixes once (lead, middle, final byte)."""
        cdef int b0, b1, b2, cp, lo1, hi1
        cdef Py_ssize_t root, n0, n1, n2
        cdef bint leaf0, leaf1, leaf2
        self.bmp_passes = <unsigned char*>calloc(0x10000, 1)
        if self.bmp_passes == NULL:
            raise MemoryError()
        root = _offset(self.units[0]) if self.n_units else -1
        for b0 in range(0xC2, 0xF0):
            if self.has_user_defined and da_child(self.user_defined.nodes, 0, <unsigned char>b0) >= 0:
                continue
            n0 = _charsmap_step(self.units, self.n_units, root, b0, &leaf0)
            # well-formed second bytes: no overlongs after E0, no surrogates after ED
            lo1 = 0xA0 if b0 == 0xE0 else 0x80
            hi1 = 0x9F if b0 == 0xED else 0xBF
            for b1 in range(lo1, hi1 + 1):
                n1 = _charsmap_step(self.units, self.n_units, n0, b1, &leaf1)
                if b0 < 0xE0:
                    self.bmp_passes[((b0 & 0x1F) << 6) | (b1 & 0x3F)] = _bmp_kind(n1, leaf0 or leaf1)
                    continue
                cp = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6)
                if n1 < 0 and not (leaf0 or leaf1):
                    memset(self.bmp_passes + cp, PASS_ALWAYS, 64)   # no key starts with these 64
                    continue
                for b2 in range(0x80, 0xC0):
                    n2 = _charsmap_step(self.units, self.n_units, n1, b2, &leaf2)
                    cp = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
                    self.bmp_passes[cp] = _bmp_kind(n2, leaf0 or leaf1 or leaf2)

    cdef Py_ssize_t _passthrough_run(self, const unsigned char* s, Py_ssize_t n) noexcept nogil:
        """Length of the run of characters at s that normalize to themselves (no spaces).

        Covers ASCII (see ascii_kind) and well-formed 2- and 3-byte characters
        (see bmp_passes); anything else ends the run.
        """
        cdef Py_ssize_t m = 0
        cdef unsigned char kind, b
        cdef unsigned int cp
        while m < n:
            b = s[m]
            if b < 0x80:
                kind = self.ascii_kind[b]
                if kind == PASS_ALWAYS or (kind == PASS_BEFORE_ASCII and (m + 1 == n or s[m + 1] < 0x80)):
                    m += 1
                    continue
                break
            if 0xC2 <= b <= 0xDF and m + 1 < n and (s[m + 1] & 0xC0) == 0x80:
                cp = ((b & 0x1F) << 6) | (s[m + 1] & 0x3F)
                if not self._bmp_char_passes(cp, s + m, n - m):
                    break
                m += 2
                continue
            if 0xE0 <= b <= 0xEF and m + 2 < n and (s[m + 1] & 0xC0) == 0x80 and (s[m + 2] & 0xC0) == 0x80:
                cp = ((b & 0x0F) << 12) | ((s[m + 1] & 0x3F) << 6) | (s[m + 2] & 0x3F)
                # bmp_passes is 0 for surrogates; cp < 0x800 is an overlong form
                if cp < 0x800 or not self._bmp_char_passes(cp, s + m, n - m):
                    break
                m += 3
                continue
            break
        return m

    cdef inline bint _bmp_char_passes(self, unsigned int cp, const unsigned char* s,
                                      Py_ssize_t n) noexcept nogil:
        cdef unsigned char kind = self.bmp_passes[cp]
        cdef uint32_t value
        if kind == PASS_ALWAYS:
            return True
        return kind == PASS_UNLESS_KEY_MATCHES and self._charsmap_match(s, n, &value) == 0

    def __dealloc__(self):
        free(self.bmp_passes)
        free(self.units)
        free(self.replacement_lengths)

    cdef _load_charsmap(self, bytes blob):
        # Layout: <uint32 LE trie size><double array units><replacement strings>
        cdef const unsigned char* p = <const unsigned char*>(<char*>blob)
        cdef Py_ssize_t size = len(blob), i
        cdef uint32_t trie_size
        cdef const unsigned char* q
        if size <= 4:
            raise CharsMapError(f"charsmap of {size} bytes is too short for its 4-byte header")
        trie_size = p[0] | (p[1] << 8) | (p[2] << 16) | (<uint32_t>p[3] << 24)
        if trie_size >= size - 4 + 1 or trie_size % 4 != 0 or trie_size == 0:
            raise CharsMapError(
                f"charsmap trie size {trie_size} does not fit a {size}-byte blob "
                f"(expected a positive multiple of 4 below {size - 4})")
        # Parity: the checks of sentencepiece's DecodePrecompiledCharsMap / Normalizer::Init.
        if trie_size % 1024 != 0:
            raise CharsMapError(f"charsmap trie size {trie_size} is not divisible by 1024")
        if size - 4 - trie_size == 0 or p[size - 1] != 0:
            raise CharsMapError("charsmap replacement strings are not NUL-terminated")
        self.n_units = trie_size // 4
        self.units = <uint32_t*>malloc(trie_size)
        if self.units == NULL:
            raise MemoryError()
        for i in range(self.n_units):
            q = p + 4 + 4 * i
            self.units[i] = q[0] | (q[1] << 8) | (q[2] << 16) | (<uint32_t>q[3] << 24)
        self.replacements = <const char*>(p + 4 + trie_size)
        self.n_replacements = size - 4 - trie_size
        # Length of the NUL-terminated replacement starting at each offset.
        self.replacement_lengths = <uint32_t*>malloc((self.n_replacements + 1) * sizeof(uint32_t))
        if self.replacement_lengths == NULL:
            raise MemoryError()
        self.replacement_lengths[self.n_replacements] = 0
        for i in range(self.n_replacements - 1, -1, -1):
            if self.replacements[i] == 0:
                self.replacement_lengths[i] = 0
            else:
                self.replacement_lengths[i] = self.replacement_lengths[i + 1] + 1
        self._check_leaves()

    cdef _check_leaves(self):
        """Every key of the charsmap must point inside the trie and the replacement strings.

        Checks each unit that carries a leaf flag (value units have bit 31 set,
        unused ones are zero), which covers every key in one linear pass.
        """
        cdef Py_ssize_t node_pos, leaf_pos
        cdef uint32_t unit
        for node_pos in range(self.n_units):
            unit = self.units[node_pos]
            if (unit >> 31) or not _has_leaf(unit):
                continue
            leaf_pos = node_pos ^ _offset(unit)
            if leaf_pos >= self.n_units:
                raise CharsMapError(f"charsmap trie node {node_pos} points outside the trie")
            if _value(self.units[leaf_pos]) >= <uint32_t>self.n_replacements:
                raise CharsMapError(
                    f"charsmap key at node {node_pos} points at replacement offset "
                    f"{_value(self.units[leaf_pos])}, past the {self.n_replacements} bytes of strings")

    cdef Py_ssize_t _charsmap_match(self, const unsigned char* s, Py_ssize_t n,
                                    uint32_t* value) noexcept nogil:
        """Longest charsmap key prefixing s[:n]; 0 if none.

        Parity: darts-clone commonPrefixSearch as sentencepiece's NormalizePrefix
        uses it; llama.cpp additionally stops at a NUL byte.
        """
        cdef Py_ssize_t node_pos, i, longest = 0
        cdef bint leaf
        cdef bint stop_at_nul = self.stop_at_nul
        node_pos = _offset(self.units[0])
        for i in range(n):
            if stop_at_nul and s[i] == 0:
                break
            node_pos = _charsmap_step(self.units, self.n_units, node_pos, s[i], &leaf)
            if node_pos < 0:
                break
            if leaf:
                longest = i + 1
                value[0] = _value(self.units[node_pos])
        return longest

    cdef Py_ssize_t _prefix(self, const unsigned char* s, Py_ssize_t n,
                                   const char** out, Py_ssize_t* out_len) noexcept nogil:
        """Normalize the next unit of s[:n]: returns bytes consumed, or a negative error."""
        cdef int32_t ud_value
        cdef uint32_t value = 0
        cdef Py_ssize_t m
        # User-defined pieces pass through unnormalized (sentencepiece PrefixMatcher).
        if self.has_user_defined:
            m = self.user_defined.longest_prefix(s, n, &ud_value)
            if m > 0:
                out[0] = <const char*>s
                out_len[0] = m
                return m
        if self.n_units:
            m = self._charsmap_match(s, n, &value)
            if m > 0:
                if value >= <uint32_t>self.n_replacements:
                    return ERR_CORRUPT_CHARSMAP
                out[0] = self.replacements + value
                out_len[0] = self.replacement_lengths[value]
                return m
        if self.structural_utf8:
            m = structural_char_len(s, n)
        else:
            m = valid_char_len(s, n)
        if m == 0:
            # Malformed UTF-8: one byte becomes U+FFFD (both references).
            out[0] = REPLACEMENT_CHAR
            out_len[0] = 3
            return 1
        out[0] = <const char*>s
        out_len[0] = m
        return m

    cdef int _append_space(self, ByteBuf* out) noexcept nogil:
        if self.escape_whitespaces:
            return bytebuf_append(out, SPACE_SYMBOL, 3)
        return bytebuf_push(out, b' ')

    cdef int _append_escaped(self, const char* r, Py_ssize_t rl, ByteBuf* out) noexcept nogil:
        cdef Py_ssize_t k
        if bytebuf_reserve(out, rl * 3) < 0:
            return ERR_NO_MEMORY
        for k in range(rl):
            if r[k] == b' ' and self.escape_whitespaces:
                out.data[out.size] = SPACE_SYMBOL[0]
                out.data[out.size + 1] = SPACE_SYMBOL[1]
                out.data[out.size + 2] = SPACE_SYMBOL[2]
                out.size += 3
            else:
                out.data[out.size] = r[k]
                out.size += 1
        return 0



cdef class SentencePieceNormalizer(CharsMapNormalizer):
    """Charsmap and whitespace rules as sentencepiece applies them.

    >>> SentencePieceNormalizer(b"").normalize_text("  Hello   world ")
    '▁Hello▁world'
    """

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        # Parity: sentencepiece normalizer.cc Normalizer::Normalize.
        cdef const char* r
        cdef Py_ssize_t rl, m
        cdef bint is_prev_space
        cdef const char* space
        cdef Py_ssize_t space_len
        out.size = 0
        if n == 0:
            return 0
        if bytebuf_reserve(out, n * 3 + 3) < 0:
            return ERR_NO_MEMORY
        if self.remove_extra_whitespaces:
            # Heading units that normalize to exactly " " are dropped.
            while n > 0:
                m = self._prefix(s, n, &r, &rl)
                if m < 0:
                    return <int>m
                if not (rl == 1 and r[0] == b' '):
                    break
                s += m
                n -= m
            if n == 0:
                return 0
        if self.add_dummy_prefix and not self.treat_whitespace_as_suffix:
            if self._append_space(out) < 0:
                return ERR_NO_MEMORY
        is_prev_space = self.remove_extra_whitespaces
        while n > 0:
            m = self._passthrough_run(s, n)
            if m > 0:
                if bytebuf_append(out, <const char*>s, m) < 0:
                    return ERR_NO_MEMORY
                is_prev_space = False
                s += m
                n -= m
                continue
            if s[0] == b' ' and self.plain_space:
                if not is_prev_space:
                    if self._append_space(out) < 0:
                        return ERR_NO_MEMORY
                is_prev_space = self.remove_extra_whitespaces
                s += 1
                n -= 1
                continue
            m = self._prefix(s, n, &r, &rl)
            if m < 0:
                return <int>m
            while is_prev_space and rl > 0 and r[0] == b' ':
                r += 1
                rl -= 1
            if rl > 0:
                if self._append_escaped(r, rl, out) < 0:
                    return ERR_NO_MEMORY
                is_prev_space = r[rl - 1] == b' '
            s += m
            n -= m
            if not self.remove_extra_whitespaces:
                is_prev_space = False
        if self.remove_extra_whitespaces:
            space = SPACE_SYMBOL
            space_len = 3 if self.escape_whitespaces else 1
            while out.size >= space_len and (
                    (space_len == 1 and out.data[out.size - 1] == b' ')
                    or (space_len == 3 and out.data[out.size - 3] == space[0]
                        and out.data[out.size - 2] == space[1]
                        and out.data[out.size - 1] == space[2])):
                out.size -= space_len
        # Parity: normalizer.cc Normalizer::Normalize: the dummy space as a suffix
        # (treat_whitespace_as_suffix), after the trailing spaces are removed.
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            if self._append_space(out) < 0:
                return ERR_NO_MEMORY
        return 0



cdef class LlamaUgmNormalizer(CharsMapNormalizer):
    """Charsmap and whitespace rules as llama.cpp's UGM tokenizer applies them: a charsmap
    match stops at NUL, characters are cut by their lead byte only.

    >>> LlamaUgmNormalizer(b"").normalize_text("  Hello   world ")
    '▁Hello▁world'
    """

    def __cinit__(self, *args, **kwargs):
        self.stop_at_nul = True
        self.structural_utf8 = True

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        # Parity: llama.cpp llm_tokenizer_ugm_session::normalize.
        cdef const char* r
        cdef Py_ssize_t rl, m, k
        cdef bint is_space_prepended = False
        cdef bint in_word = False
        out.size = 0
        if n == 0:
            return 0
        if bytebuf_reserve(out, n * 3 + 3) < 0:
            return ERR_NO_MEMORY
        while n > 0:
            m = self._passthrough_run(s, n)
            if m > 0:
                if self._word_start(&in_word, &is_space_prepended, out) < 0 or \
                        bytebuf_append(out, <const char*>s, m) < 0:
                    return ERR_NO_MEMORY
                s += m
                n -= m
                continue
            m = self._prefix(s, n, &r, &rl)
            if m < 0:
                return <int>m
            for k in range(rl):
                if r[k] != b' ':
                    if self._word_start(&in_word, &is_space_prepended, out) < 0 or \
                            bytebuf_push(out, r[k]) < 0:
                        return ERR_NO_MEMORY
                else:
                    in_word = False
                    if not self.remove_extra_whitespaces and self._append_space(out) < 0:
                        return ERR_NO_MEMORY
            s += m
            n -= m
        return 0

    cdef int _word_start(self, bint* in_word, bint* is_space_prepended, ByteBuf* out) noexcept nogil:
        """Before a non-space byte: the space llama.cpp puts in front of a word, if any."""
        if in_word[0]:
            return 0
        in_word[0] = True
        if (self.add_dummy_prefix and not is_space_prepended[0]) or self.remove_extra_whitespaces:
            is_space_prepended[0] = True
            return self._append_space(out)
        return 0
