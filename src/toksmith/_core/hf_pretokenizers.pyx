"""tokenizer.json's simple pre-tokenizers: Digits, CharDelimiterSplit, FixedLength,
UnicodeScripts and ByteLevel (tokenizers 0.23.3 pre_tokenizers/*.rs), as native
`PreTokenizer` stages.

The character tables (Rust's char::is_numeric and UnicodeScripts' script classes) are
read from tokenizers itself by tools/gen_hf_pretokenizer_tables.py.

    >>> HfDigits(False).split_text(b"ab12c")
    [b'ab', b'12', b'c']
    >>> HfCharDelimiterSplit("x").split_text(b"axxb")
    [b'a', b'b']
    >>> HfFixedLength(2).split_text(b"abcde")
    [b'ab', b'cd', b'e']
    >>> HfUnicodeScripts().split_text(" どこYes".encode())
    [b'\\xe3\\x81\\xa9\\xe3\\x81\\x93', b'Yes']
"""
from cpython.bytes cimport PyBytes_AS_STRING
from libc.stdint cimport uint32_t
from libc.string cimport memchr, memcmp, memcpy

from toksmith._core.buffers cimport ByteBuf, IdBuf, bytebuf_append, bytebuf_reserve, idbuf_push
from toksmith._core.byte_unicode cimport cpt_of_byte
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.hf_chars cimport decode_one
from toksmith._core.pretokenizer cimport PRETOK_REWRITTEN, PreTokenizer, PreTokenizerWork, pretok_inner_work

include "unicode_hf_pretok.pxi"


cdef inline bint _in_ranges(uint32_t cp, const unsigned int* ranges, Py_ssize_t count,
                            Py_ssize_t width) noexcept nogil:
    """Whether cp lies in one of `count` sorted (first, last, ...) rows of `width` values."""
    cdef Py_ssize_t lo = 0, hi = count, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if cp < ranges[width * mid]:
            hi = mid
        elif cp > ranges[width * mid + 1]:
            lo = mid + 1
        else:
            return True
    return False


cdef inline bint _is_numeric(uint32_t cp) noexcept nogil:
    """Parity: Rust's char::is_numeric (Nd, Nl, No)."""
    if cp < 0x80:
        return 48 <= cp <= 57
    return _in_ranges(cp, HF_NUMERIC_RANGES, HF_NUMERIC_RANGES_COUNT, 2)


# Script class of each BMP code point (0: Any); the rest is searched in HF_SCRIPT_RANGES.
cdef unsigned char _BMP_SCRIPT[65536]


cdef void _fill_bmp_scripts():
    cdef Py_ssize_t r
    cdef uint32_t cp
    for r in range(HF_SCRIPT_RANGES_COUNT):
        cp = HF_SCRIPT_RANGES[3 * r]
        while cp <= HF_SCRIPT_RANGES[3 * r + 1] and cp < 65536:
            _BMP_SCRIPT[cp] = <unsigned char>HF_SCRIPT_RANGES[3 * r + 2]
            cp += 1


if HF_SCRIPT_CLASSES > 255:
    raise ImportError("unicode_hf_pretok.pxi: more script classes than a byte holds")
_fill_bmp_scripts()


cdef inline uint32_t _script(uint32_t cp) noexcept nogil:
    """Parity: unicode_scripts/pre_tokenizer.rs fixed_script, as a class number (0: Any)."""
    cdef Py_ssize_t lo = 0, hi = HF_SCRIPT_RANGES_COUNT, mid
    if cp < 65536:
        return _BMP_SCRIPT[cp]
    while lo < hi:
        mid = (lo + hi) >> 1
        if cp < HF_SCRIPT_RANGES[3 * mid]:
            hi = mid
        elif cp > HF_SCRIPT_RANGES[3 * mid + 1]:
            lo = mid + 1
        else:
            return HF_SCRIPT_RANGES[3 * mid + 2]
    return 0


cdef class HfDigits(PreTokenizer):
    """Parity: pre_tokenizers/digits.rs: numeric characters (char::is_numeric) split from
    the rest, each alone (individual_digits) or as runs (SplitDelimiterBehavior::Contiguous)."""

    cdef readonly bint individual_digits

    def __cinit__(self, bint individual_digits):
        self.individual_digits = individual_digits

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef Py_ssize_t i = 0, k
        cdef uint32_t cp
        cdef int kind = -1, last = -1      # 1: numeric, 0: not; -1: nothing yet
        while i < n:
            if s[i] < 0x80:
                kind = 48 <= s[i] <= 57
                k = 1
            else:
                k = decode_one(s + i, n - i, &cp)
                kind = _is_numeric(cp)
            if last >= 0 and (kind != last or (kind and self.individual_digits)):
                if idbuf_push(ends, <int>i) < 0:
                    return ERR_NO_MEMORY
            last = kind
            i += k
        if n > 0 and idbuf_push(ends, <int>n) < 0:
            return ERR_NO_MEMORY
        return 0


cdef class HfCharDelimiterSplit(PreTokenizer):
    """Parity: pre_tokenizers/delimiter.rs: split on the delimiter character, which is
    dropped (SplitDelimiterBehavior::Removed; no empty pre-token)."""

    cdef readonly bytes delimiter
    cdef const unsigned char* delimiter_p
    cdef Py_ssize_t delimiter_len

    def __cinit__(self, delimiter):
        self.delimiter = delimiter.encode("utf-8") if isinstance(delimiter, str) else bytes(delimiter)
        if len(self.delimiter.decode("utf-8")) != 1:
            raise ValueError("the delimiter is one character")
        self.delimiter_p = <const unsigned char*>PyBytes_AS_STRING(self.delimiter)
        self.delimiter_len = len(self.delimiter)

    cdef Py_ssize_t _find(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
        """Where the next delimiter in s[i:n] starts, or n (UTF-8: a match of the whole
        character's bytes is that character)."""
        cdef const unsigned char* d = self.delimiter_p
        cdef Py_ssize_t dlen = self.delimiter_len
        cdef const void* p
        while i < n:
            p = memchr(s + i, d[0], n - i)
            if p == NULL:
                return n
            i = <const unsigned char*>p - s
            if i + dlen <= n and memcmp(s + i, d, dlen) == 0:
                return i
            i += 1
        return n

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef Py_ssize_t dlen = self.delimiter_len, start = 0, hit
        if n == 0:
            return 0
        hit = self._find(s, n, 0)
        if hit == n:
            return 0 if idbuf_push(ends, <int>n) == 0 else ERR_NO_MEMORY
        work.text.size = 0
        work.dropped_start = hit == 0
        while True:
            if hit > start and (bytebuf_append(&work.text, <const char*>s + start, hit - start) < 0
                                or idbuf_push(ends, <int>work.text.size) < 0):
                return ERR_NO_MEMORY
            if hit == n:
                break
            start = hit + dlen
            hit = self._find(s, n, start)
        work.dropped_start = work.dropped_start or work.text.size == 0
        return PRETOK_REWRITTEN


cdef class HfFixedLength(PreTokenizer):
    """Parity: pre_tokenizers/fixed_length.rs: pieces of `length` characters (the last one
    shorter)."""

    cdef readonly Py_ssize_t length

    def __cinit__(self, Py_ssize_t length):
        if length < 1:
            raise ValueError("FixedLength needs a length of at least 1")
        self.length = length

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef Py_ssize_t i = 0, count = 0
        cdef uint32_t cp
        while i < n:
            i += decode_one(s + i, n - i, &cp)
            count += 1
            if count == self.length or i >= n:
                if idbuf_push(ends, <int>i) < 0:
                    return ERR_NO_MEMORY
                count = 0
        return 0


cdef class HfUnicodeScripts(PreTokenizer):
    """Parity: unicode_scripts/pre_tokenizer.rs: a cut where the script class changes
    between two characters that are not "Any" (' ' and unlisted code points); Any
    characters stay with the piece before them, and those at the start are dropped."""

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef Py_ssize_t i = 0, k, first = -1
        cdef uint32_t cp, script, last = 0
        while i < n:
            if s[i] < 0x80:
                script = _BMP_SCRIPT[s[i]]
                k = 1
            else:
                k = decode_one(s + i, n - i, &cp)
                script = _script(cp)
            if script != 0:
                if first < 0:
                    first = i
                elif script != last and idbuf_push(ends, <int>(i - first)) < 0:
                    return ERR_NO_MEMORY
                last = script
            i += k
        if first == 0:
            return 0 if idbuf_push(ends, <int>n) == 0 else ERR_NO_MEMORY
        # leading Any characters (or nothing but them) are dropped
        work.text.size = 0
        work.dropped_start = True
        if first > 0:
            if bytebuf_append(&work.text, <const char*>s + first, n - first) < 0 \
                    or idbuf_push(ends, <int>(n - first)) < 0:
                return ERR_NO_MEMORY
        return PRETOK_REWRITTEN


cdef class HfByteLevel(PreTokenizer):
    """Parity: pre_tokenizers/byte_level.rs ByteLevel::pre_tokenize: a ' ' before a piece
    that does not start with one (add_prefix_space), GPT-2's regex (use_regex: the native
    splitter given), then every byte as its GPT-2 byte<->unicode character (map_bytes;
    False leaves that to a byte-level model that maps its vocabulary instead)."""

    cdef readonly bint add_prefix_space
    cdef readonly bint map_bytes
    cdef readonly PreTokenizer splitter      # None: no regex

    def __cinit__(self, *, bint add_prefix_space, PreTokenizer splitter=None, bint map_bytes=True):
        self.add_prefix_space = add_prefix_space
        self.splitter = splitter
        self.map_bytes = map_bytes

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef const unsigned char* src = s
        cdef Py_ssize_t src_n = n, first = ends.size, k, at, e
        cdef ByteBuf* spaced = &work.text2 if self.map_bytes else &work.text
        cdef PreTokenizerWork* inner = NULL
        cdef int rc = 0
        cdef int cp
        cdef unsigned char* o
        if n == 0:
            return 0
        if self.add_prefix_space and s[0] != 32:
            spaced.size = 0
            if bytebuf_reserve(spaced, n + 1) < 0:
                return ERR_NO_MEMORY
            spaced.data[0] = 32
            memcpy(spaced.data + 1, s, n)
            spaced.size = n + 1
            src = <const unsigned char*>spaced.data
            src_n = n + 1
        if self.splitter is not None:
            inner = pretok_inner_work(work)
            if inner == NULL:
                return ERR_NO_MEMORY
            inner.at_input_start = work.at_input_start
            rc = self.splitter.split(src, src_n, inner, ends)
            if rc < 0:
                return rc
            if rc == PRETOK_REWRITTEN:
                src = <const unsigned char*>inner.text.data
                src_n = inner.text.size
        elif idbuf_push(ends, <int>src_n) < 0:
            return ERR_NO_MEMORY
        if not self.map_bytes:
            if src == s:
                return 0
            if src != <const unsigned char*>work.text.data:
                work.text.size = 0
                if bytebuf_append(&work.text, <const char*>src, src_n) < 0:
                    return ERR_NO_MEMORY
            work.dropped_start = rc == PRETOK_REWRITTEN and inner.dropped_start
            return PRETOK_REWRITTEN
        # every byte becomes one or two bytes: rewrite the text and move the ends along
        work.text.size = 0
        if bytebuf_reserve(&work.text, 2 * src_n) < 0:
            return ERR_NO_MEMORY
        o = <unsigned char*>work.text.data
        at = 0
        k = first
        for e in range(src_n):
            while k < ends.size and ends.data[k] == e:
                ends.data[k] = <int>at
                k += 1
            cp = cpt_of_byte(src[e])
            if cp < 0x80:
                o[at] = <unsigned char>cp
                at += 1
            else:
                o[at] = <unsigned char>(0xC0 | (cp >> 6))
                o[at + 1] = <unsigned char>(0x80 | (cp & 0x3F))
                at += 2
        while k < ends.size:
            ends.data[k] = <int>at
            k += 1
        work.text.size = at
        work.dropped_start = rc == PRETOK_REWRITTEN and inner.dropped_start
        return PRETOK_REWRITTEN
