"""HF tokenizers' Precompiled normalizer: a sentencepiece charsmap applied grapheme by
grapheme, which is not sentencepiece's own longest-match rule.

Parity: tokenizers normalizers/precompiled.rs with spm_precompiled 0.1.4's `transform`.
The text is cut into extended grapheme clusters (unicode-segmentation, see graphemes.pxd);
a cluster shorter than 6 bytes is replaced whole by the replacement of the SHORTEST charsmap
key that prefixes it (common_prefix_search()[0], the walk stopping at a NUL byte), so
"a" + U+0301 becomes what "a" maps to when "a" is a key. Other clusters, and clusters no
key prefixes, go character by character the same way.

    >>> HfPrecompiledNormalizer(charsmap).normalize_text("ｱ")        # doctest: +SKIP
    'ア'
"""
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from toksmith._core.buffers cimport ByteBuf, bytebuf_append, bytebuf_free
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.graphemes cimport (GB_ANY, GB_CATEGORY_MASK, GB_EXTEND, GB_SPACING_MARK, GB_ZWJ,
                                       GraphemeCursor, GraphemeTables,
                                       decode_char, grapheme_breaks, grapheme_cursor_init, grapheme_props,
                                       grapheme_tables, grapheme_take)
from toksmith._core.normalizer cimport (TEXT_UNCHANGED, CharsMapNormalizer, _charsmap_step, _offset,
                                        _value)
from toksmith._core.swar cimport zero_bytes
from toksmith._core.utf8 cimport valid_char_len
from toksmith._core.utf8_repair cimport PythonUtf8Repair

from toksmith._core.errors import CharsMapError


# What the charsmap does with a character (low bits of bmp_info[cp] for the BMP,
# computed for the rest).
cdef enum:
    KIND_PASS = 0      # no key prefixes it, none continues past it: it stays as it is
    KIND_LEAF = 1      # a key ends inside its bytes: the shortest one replaces it (and its cluster)
    KIND_CONT = 2      # no key ends inside it, longer keys start with it
    KIND_MASK = 3
    INFO_FAST = 4      # not KIND_LEAF, grapheme props 0: a cluster alone it stays (only a joiner can join it)
    INFO_JOINS = 8     # Extend, ZWJ or SpacingMark: never starts a cluster after a props-0 character

# A cluster this long or longer is never looked up whole (precompiled.rs `grapheme.len() < 6`).
cdef Py_ssize_t WHOLE_CLUSTER_BELOW = 6
cdef int INVALID_UTF8 = -1000


cdef struct CarryCount:
    Py_ssize_t want      # characters in the input's flagged prefix
    Py_ssize_t zeros     # output characters so far that each took the next input character's alignment
    Py_ssize_t bytes     # output bytes aligned with the flagged prefix (carry_start's answer)


cdef inline void _count_copied(CarryCount* cc, const unsigned char* p, Py_ssize_t size) noexcept nogil:
    """Characters copied unchanged: each takes the alignment of the next input character."""
    cdef Py_ssize_t i = 0, k
    while i < size and cc.zeros < cc.want:
        k = i + 1
        while k < size and (p[k] & 0xC0) == 0x80:
            k += 1
        cc.bytes += k - i
        cc.zeros += 1
        i = k


cdef inline void _count_replacement(CarryCount* cc, Py_ssize_t size) noexcept nogil:
    """A replacement: its first character takes the next input character's alignment, the
    others that of the character before them; an empty one takes none."""
    if size > 0 and cc.zeros < cc.want:
        cc.bytes += size
        cc.zeros += 1


cdef class HfPrecompiledNormalizer(CharsMapNormalizer):
    """The charsmap tables of CharsMapNormalizer, applied by tokenizers' rules."""

    # Invalid UTF-8 is decoded as Python's bytes.decode("utf-8", "replace") does first:
    # a pipeline needs no PythonUtf8Repair stage in front of this one.
    repairs_invalid_utf8 = True

    cdef uint8_t* bmp_info               # KIND_* | INFO_* of every BMP code point
    cdef uint8_t ascii_simple[128]       # ASCII byte that stays as it is when it is a cluster alone
    cdef uint8_t ascii_category[128]
    cdef bint printable_simple           # every character of 0x20..0x7E is ascii_simple
    cdef const GraphemeTables* tables
    cdef PythonUtf8Repair repair
    cdef Py_ssize_t root

    def __cinit__(self, bytes charsmap=b"", **kwargs):
        cdef uint32_t cp
        cdef unsigned char utf8[4]
        cdef Py_ssize_t m
        cdef uint32_t value
        cdef uint8_t kind, props, cat
        self.bmp_info = NULL
        self.tables = grapheme_tables()
        self.repair = PythonUtf8Repair()
        self.root = _offset(self.units[0]) if self.n_units else -1
        self._check_replacements()
        self.bmp_info = <uint8_t*>malloc(0x10000)
        if self.bmp_info == NULL:
            raise MemoryError()
        for cp in range(0x10000):
            m = _encode(cp, utf8)
            kind = self._kind(utf8, m, &value)
            props = grapheme_props(self.tables, cp)
            cat = props & GB_CATEGORY_MASK
            self.bmp_info[cp] = kind | (INFO_FAST if kind != KIND_LEAF and props == 0 else 0) \
                | (INFO_JOINS if cat == GB_EXTEND or cat == GB_ZWJ or cat == GB_SPACING_MARK else 0)
        for cp in range(128):
            self.ascii_category[cp] = grapheme_props(self.tables, cp)
            self.ascii_simple[cp] = (self.bmp_info[cp] & KIND_MASK) != KIND_LEAF and cp != 13   # CR may join LF
        self.printable_simple = all(self.ascii_simple[cp] for cp in range(0x20, 0x7F))

    def __dealloc__(self):
        free(self.bmp_info)

    cdef _check_replacements(self):
        """What tokenizers refuses or panics on: strings that are not UTF-8
        (Precompiled::from), a key whose replacement starts inside a character."""
        cdef Py_ssize_t node_pos, leaf_pos
        cdef uint32_t unit, value
        if self.n_units == 0:
            return
        try:
            (<const char*>self.replacements)[:self.n_replacements].decode("utf-8")
        except UnicodeDecodeError as e:
            raise CharsMapError(f"charsmap replacement strings are not UTF-8 ({e.reason} at byte {e.start})") from None
        for node_pos in range(self.n_units):
            unit = self.units[node_pos]
            if (unit >> 31) or not ((unit >> 8) & 1):
                continue
            leaf_pos = node_pos ^ _offset(unit)
            value = _value(self.units[leaf_pos])
            if (<unsigned char>self.replacements[value] & 0xC0) == 0x80:
                raise CharsMapError(f"charsmap key at node {node_pos} points inside a character of the "
                                    f"replacement strings (offset {value})")

    cdef inline uint8_t _kind(self, const unsigned char* s, Py_ssize_t m, uint32_t* value) noexcept nogil:
        """KIND_* of the m-byte character at s; *value is its replacement when KIND_LEAF."""
        cdef Py_ssize_t node = self.root, i
        cdef bint leaf
        for i in range(m):
            if s[i] == 0:
                return KIND_PASS          # spm_precompiled's walk stops at NUL
            node = _charsmap_step(self.units, self.n_units, node, s[i], &leaf)
            if node < 0:
                return KIND_PASS
            if leaf:
                value[0] = _value(self.units[node])
                return KIND_LEAF
        return KIND_CONT

    cdef inline bint _first_key(self, const unsigned char* s, Py_ssize_t n, uint32_t* value) noexcept nogil:
        """The shortest key prefixing s[:n] (spm_precompiled common_prefix_search()[0])."""
        cdef Py_ssize_t node = self.root, i
        cdef bint leaf
        for i in range(n):
            if s[i] == 0:
                return False
            node = _charsmap_step(self.units, self.n_units, node, s[i], &leaf)
            if node < 0:
                return False
            if leaf:
                value[0] = _value(self.units[node])
                return True
        return False

    cdef inline uint8_t _char_kind(self, const unsigned char* s, Py_ssize_t m, uint32_t cp,
                                   uint32_t* value) noexcept nogil:
        cdef uint8_t kind
        if cp < 0x10000:
            kind = self.bmp_info[cp] & KIND_MASK
            if kind == KIND_LEAF:
                self._kind(s, m, value)
            return kind
        return self._kind(s, m, value)

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef ByteBuf repaired
        cdef int rc = self._normalize_valid(s, n, out, NULL)
        if rc != INVALID_UTF8:
            return rc
        # Parity: tokenizers takes str; bytes are decoded as Python's
        # bytes.decode("utf-8", "replace") does first (the pipeline repairs before this
        # stage; this is for the stage used alone).
        repaired.data = NULL
        repaired.size = 0
        repaired.cap = 0
        rc = self.repair.normalize(s, n, &repaired)
        if rc >= 0:
            rc = self._normalize_valid(<const unsigned char*>repaired.data, repaired.size, out, NULL)
            if rc == TEXT_UNCHANGED:
                out.size = 0
                rc = 0 if bytebuf_append(out, repaired.data, repaired.size) == 0 else ERR_NO_MEMORY
        bytebuf_free(&repaired)
        return rc

    cdef int _normalize_valid(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out,
                              CarryCount* cc) noexcept nogil:
        # Parity: tokenizers normalizers/precompiled.rs Precompiled::normalize. The output
        # is built lazily: s[copied:] is not in `out` yet; nothing replaced -> TEXT_UNCHANGED.
        # cc (or NULL) counts the output's alignments for carry_start.
        cdef Py_ssize_t pos = 0, copied = 0, end, m, first_len = 0, k, next_len = 0
        cdef GraphemeCursor cursor
        cdef uint8_t props, kind, cat, skipped_cat
        cdef uint32_t cp = 0, next_cp = 0, value
        cdef bint replaced = False, skipped
        cdef uint64_t w
        if self.n_units == 0 or n == 0:
            return TEXT_UNCHANGED
        out.size = 0
        grapheme_cursor_init(&cursor)
        while pos < n:
            # pos starts a cluster; next_len > 0: its first character is decoded already.
            # First a run of characters that are clusters alone and stay as they are
            # (most text): ASCII ones and the BMP ones of INFO_FAST.
            skipped = False
            if next_len == 0 and self.printable_simple:
                # 8 printable ASCII characters at a time (each a cluster alone: the
                # character after them is ASCII too)
                while pos + 9 <= n:
                    memcpy(&w, s + pos, 8)
                    if (w & HIGH_BITS) or ((w + ADD_0x60) & HIGH_BITS) != HIGH_BITS \
                            or zero_bytes(w ^ ALL_0x7F) or s[pos + 8] >= 0x80:
                        break
                    pos += 8
                    skipped = True
                    skipped_cat = GB_ANY
            while pos < n:
                if next_len:
                    cp = next_cp
                    first_len = next_len
                    next_len = 0
                elif s[pos] < 0x80:
                    cp = s[pos]
                    first_len = 1
                else:
                    first_len = valid_char_len(s + pos, n - pos)
                    if first_len == 0:
                        return INVALID_UTF8
                    cp = decode_char(s + pos, first_len)
                if cp < 0x80:
                    if not self.ascii_simple[cp]:
                        break
                    cat = self.ascii_category[cp]
                elif cp < 0x10000 and self.bmp_info[cp] & INFO_FAST:
                    cat = GB_ANY
                else:
                    break
                end = pos + first_len
                if end < n and s[end] >= 0x80:
                    m = valid_char_len(s + end, n - end)
                    if m == 0:
                        return INVALID_UTF8
                    next_cp = decode_char(s + end, m)
                    if cat == GB_ANY and self._joins(next_cp):
                        break       # a mark follows: the general way below
                    next_len = m
                # (an ASCII character after this one, or the end: a boundary; CR is not simple)
                pos = end
                skipped = True
                skipped_cat = cat
            if skipped:
                _reset_cursor(&cursor, skipped_cat)
            if pos >= n:
                break
            # The general way: the character at pos (cp, first_len) starts a cluster.
            if cp < 0x80:
                props = self.ascii_category[cp]
            elif cp < 0x10000 and self.bmp_info[cp] & INFO_FAST:
                props = 0
            else:
                props = grapheme_props(self.tables, cp)
            grapheme_take(&cursor, props)
            # The rest of the cluster; the character after it is kept for the next round.
            next_len = 0
            end = pos + first_len
            while end < n:
                if s[end] < 0x80:
                    props = self.ascii_category[s[end]]
                    if grapheme_breaks(&cursor, props):
                        break
                    grapheme_take(&cursor, props)
                    end += 1
                    continue
                m = valid_char_len(s + end, n - end)
                if m == 0:
                    return INVALID_UTF8
                next_cp = decode_char(s + end, m)
                props = grapheme_props(self.tables, next_cp)
                if grapheme_breaks(&cursor, props):
                    next_len = m
                    break
                grapheme_take(&cursor, props)
                end += m
            # The cluster s[pos:end] whole, when short.
            kind = self._char_kind(s + pos, first_len, cp, &value)
            if end - pos == first_len:
                # one character
                if kind == KIND_LEAF:
                    if self._replace(s, &copied, pos, end, value, out, cc) < 0:
                        return ERR_NO_MEMORY
                    replaced = True
                pos = end
                continue
            if end - pos < WHOLE_CLUSTER_BELOW:
                if kind == KIND_LEAF or (kind == KIND_CONT and self._first_key(s + pos, end - pos, &value)):
                    if self._replace(s, &copied, pos, end, value, out, cc) < 0:
                        return ERR_NO_MEMORY
                    replaced = True
                    pos = end
                    continue
            elif kind == KIND_LEAF:
                if self._replace(s, &copied, pos, pos + first_len, value, out, cc) < 0:
                    return ERR_NO_MEMORY
                replaced = True
            # Then character by character (the first one is done).
            k = pos + first_len
            while k < end:
                m = valid_char_len(s + k, end - k)
                if self._char_kind(s + k, m, decode_char(s + k, m), &value) == KIND_LEAF:
                    if self._replace(s, &copied, k, k + m, value, out, cc) < 0:
                        return ERR_NO_MEMORY
                    replaced = True
                k += m
            pos = end
        if not replaced:
            return TEXT_UNCHANGED
        if cc != NULL:
            _count_copied(cc, s + copied, n - copied)
        if bytebuf_append(out, <const char*>s + copied, n - copied) < 0:
            return ERR_NO_MEMORY
        return 0

    cdef Py_ssize_t carry_start(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t flagged,
                                const unsigned char* o, Py_ssize_t m) noexcept nogil:
        """Parity: tokenizers Precompiled::normalize hands NormalizedString::transform one
        (char, 0) per output character copied or first of a replacement, (char, 1) for a
        replacement's other characters and nothing for an empty one, so the k-th (char, 0)
        takes the alignment of the k-th input character whatever replaced it: after a
        dropped first character (ESC in nmt_nfkc) the next one is aligned with the input's
        start."""
        cdef CarryCount cc
        cdef ByteBuf part
        cdef Py_ssize_t i
        cdef int rc
        if flagged <= 0 or m == 0:
            return 0
        if flagged >= n:
            return m
        cc.want = 0
        cc.zeros = 0
        cc.bytes = 0
        for i in range(flagged):
            if (s[i] & 0xC0) != 0x80:
                cc.want += 1
        memset(&part, 0, sizeof(ByteBuf))
        rc = self._normalize_valid(s, n, &part, &cc)
        bytebuf_free(&part)
        if rc == INVALID_UTF8:
            return CharsMapNormalizer.carry_start(self, s, n, flagged, o, m)
        if rc < 0:
            return rc
        if rc == TEXT_UNCHANGED:
            return min(flagged, m)
        return min(cc.bytes, m)

    cdef inline bint _joins(self, uint32_t cp) noexcept nogil:
        """A character that never starts a cluster after a props-0 one."""
        cdef uint8_t cat
        if cp < 0x10000:
            return self.bmp_info[cp] & INFO_JOINS
        cat = grapheme_props(self.tables, cp) & GB_CATEGORY_MASK
        return cat == GB_EXTEND or cat == GB_ZWJ or cat == GB_SPACING_MARK

    cdef inline int _replace(self, const unsigned char* s, Py_ssize_t* copied, Py_ssize_t start,
                             Py_ssize_t end, uint32_t value, ByteBuf* out, CarryCount* cc) noexcept nogil:
        """Put s[copied:start] then the replacement at `value` in `out`; s[start:end] is done."""
        if cc != NULL:
            _count_copied(cc, s + copied[0], start - copied[0])
            _count_replacement(cc, self.replacement_lengths[value])
        if bytebuf_append(out, <const char*>s + copied[0], start - copied[0]) < 0:
            return -1
        if bytebuf_append(out, self.replacements + value, self.replacement_lengths[value]) < 0:
            return -1
        copied[0] = end
        return 0


cdef uint64_t HIGH_BITS = 0x8080808080808080
cdef uint64_t ADD_0x60 = 0x6060606060606060     # a byte below 0x80 gets its high bit iff >= 0x20
cdef uint64_t ALL_0x7F = 0x7F7F7F7F7F7F7F7F


cdef inline void _reset_cursor(GraphemeCursor* c, uint8_t category) noexcept nogil:
    """The cursor after a character of props `category` alone (ASCII, or props 0):
    what grapheme_take leaves there."""
    grapheme_cursor_init(c)
    c.prev = category


cdef inline Py_ssize_t _encode(uint32_t cp, unsigned char* out) noexcept nogil:
    if cp < 0x80:
        out[0] = cp
        return 1
    if cp < 0x800:
        out[0] = 0xC0 | (cp >> 6)
        out[1] = 0x80 | (cp & 0x3F)
        return 2
    out[0] = 0xE0 | (cp >> 12)
    out[1] = 0x80 | ((cp >> 6) & 0x3F)
    out[2] = 0x80 | (cp & 0x3F)
    return 3
