"""The big sections of a tokenizer.json -- `model.vocab` and `model.merges` -- read natively
from the file's bytes (the reader's fast path, toksmith.hf.reader).

`scan_tokenizer_json(data)` checks that the whole document is strict JSON and returns it
with those two values replaced by `null`, plus the tables read from them:

- TokenTable: a vocab object {token: id} (BPE, WordPiece, WordLevel); a read-only
  mapping str -> int, in the file's order.
- PieceTable: a Unigram vocab [[piece, score], ...]; a read-only sequence of
  (piece, score) tuples, the scores read as serde_json reads them (json_numbers.py).
- MergeTable: BPE merges, "left right" strings or [left, right] pairs; a read-only
  sequence of (left, right) tuples, checked against the vocab by `resolve`.

Anything the plain reader (json.loads, then the checks of hf/read_models.py) would refuse
or read differently -- a syntax error, a repeated or escaped key at the top or model level,
a lone surrogate in a token, a duplicate token or id, an id that is no u32, a merge without
exactly one space, "#version" lines, nesting past 200 levels -- makes it return None
instead, and the reader reads the file the plain way, which gives the exact result or
error. The tables hold the texts as UTF-8 in one buffer; Python strings, tuples and dicts
are made only when someone iterates them (`as_dict`, `as_tuple`), never on the load path.

>>> rest, vocab, merges = scan_tokenizer_json(b'{"model": {"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}')
>>> rest, vocab["ab"], merges.resolve(vocab, 0), merges[0]
(b'{"model": {"vocab": null, "merges": null}}', 2, True, ('a', 'b'))
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.math cimport isinf
from libc.string cimport memchr, memcmp, memcpy

from toksmith._core.buffers cimport ByteBuf, bytebuf_append, bytebuf_free, bytebuf_push, bytebuf_reserve
from toksmith._core.byte_keys cimport hash_bytes, prefetch
from toksmith._core.json_escape cimport json_pair_into
from toksmith._core.pretok_common cimport append_cpt_utf8
from toksmith._core.swar cimport first_marked_byte, spread_byte, zero_bytes
from toksmith._core.utf8 cimport valid_char_len

from toksmith._core.pieces import untrack_flat_list


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL


# Parity: serde_json 1.0 Deserializer's recursion limit (remaining_depth 128): tokenizers
# refuses a document with 128 nested arrays/objects. The scanner declines from there on;
# the reader refuses such a file first (`first_too_deep`).
SERDE_JSON_MAX_NESTING = 128
cdef int MAX_DEPTH = SERDE_JSON_MAX_NESTING - 1
DEF RESOLVE_BATCH = 16
cdef uint64_t TAG_MASK = <uint64_t>0xFFFFFFFF00000000ULL
cdef uint64_t LOW32 = <uint64_t>0xFFFFFFFFULL

# serde_json's POW10 (1e0 .. 1e308), the same doubles Python's float() gives.
cdef double POW10[309]
for _k in range(309):
    POW10[_k] = float(f"1e{_k}")


# ---------------------------------------------------------------------- JSON grammar

cdef inline Py_ssize_t _ws(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n) noexcept nogil:
    # JSON whitespace (Python's json: the same four characters)
    while pos < n and (s[pos] == 32 or s[pos] == 10 or s[pos] == 13 or s[pos] == 9):
        pos += 1
    return pos


cdef inline int _hex(unsigned char c) noexcept nogil:
    if 48 <= c <= 57:
        return c - 48
    if 97 <= c <= 102:
        return c - 87
    if 65 <= c <= 70:
        return c - 55
    return -1


cdef inline int _hex4(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n) noexcept nogil:
    """The code unit of the 4 hex digits at s[pos:pos+4], or -1."""
    cdef int a, b, c, d
    if pos + 4 > n:
        return -1
    a = _hex(s[pos])
    b = _hex(s[pos + 1])
    c = _hex(s[pos + 2])
    d = _hex(s[pos + 3])
    if a < 0 or b < 0 or c < 0 or d < 0:
        return -1
    return (a << 12) | (b << 8) | (c << 4) | d


cdef inline uint64_t _plain_bytes_end(uint64_t w) noexcept nogil:
    """The high bit of each byte of w that ends a run of plain string bytes: a quote, a
    backslash, a control character (< 0x20) or a non-ASCII byte."""
    cdef uint64_t high = w & <uint64_t>0x8080808080808080
    cdef uint64_t control = ~(((w & <uint64_t>0x7F7F7F7F7F7F7F7F) + <uint64_t>0x6060606060606060) | w) \
        & <uint64_t>0x8080808080808080
    return high | control | zero_bytes(w ^ spread_byte(34)) | zero_bytes(w ^ spread_byte(92))


cdef Py_ssize_t _string(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n, ByteBuf* out) noexcept nogil:
    """s[pos] is '"': the position after the string's closing quote, or -1 where it is not
    strict JSON. With `out`, its text is appended unescaped (UTF-8), and a lone surrogate
    (which Python keeps in a str that has no UTF-8) gives -1 too.

    Parity: Python's json scanstring: escapes \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX, a high
    surrogate escape followed by a low one is one character; control characters refused."""
    cdef Py_ssize_t run
    cdef uint64_t w, mask
    cdef unsigned char c
    cdef int k, unit, low
    pos += 1
    while True:
        run = pos
        while pos + 8 <= n:
            memcpy(&w, s + pos, 8)
            mask = _plain_bytes_end(w)
            if mask:
                pos += first_marked_byte(mask)
                break
            pos += 8
        else:
            while pos < n and 0x20 <= s[pos] < 0x80 and s[pos] != 34 and s[pos] != 92:
                pos += 1
        if out != NULL and pos > run and bytebuf_append(out, <const char*>(s + run), pos - run) < 0:
            return -1
        if pos >= n:
            return -1
        c = s[pos]
        if c == 34:
            return pos + 1
        if c >= 0x80:
            k = valid_char_len(s + pos, n - pos)
            if k == 0:
                return -1
            if out != NULL and bytebuf_append(out, <const char*>(s + pos), k) < 0:
                return -1
            pos += k
            continue
        if c != 92:
            return -1                       # a control character
        if pos + 1 >= n:
            return -1
        c = s[pos + 1]
        pos += 2
        if c == 117:                        # \uXXXX
            unit = _hex4(s, pos, n)
            if unit < 0:
                return -1
            pos += 4
            if 0xD800 <= unit <= 0xDBFF and pos + 1 < n and s[pos] == 92 and s[pos + 1] == 117:
                low = _hex4(s, pos + 2, n)
                if low < 0:
                    return -1
                if 0xDC00 <= low <= 0xDFFF:
                    unit = 0x10000 + (((unit - 0xD800) << 10) | (low - 0xDC00))
                    pos += 6
            if out != NULL:
                if 0xD800 <= unit <= 0xDFFF:
                    return -1               # a lone surrogate
                if append_cpt_utf8(out, <uint32_t>unit) < 0:
                    return -1
            continue
        if c == 34 or c == 92 or c == 47:
            pass
        elif c == 98:
            c = 8
        elif c == 102:
            c = 12
        elif c == 110:
            c = 10
        elif c == 114:
            c = 13
        elif c == 116:
            c = 9
        else:
            return -1
        if out != NULL and bytebuf_push(out, <char>c) < 0:
            return -1


cdef inline bint _digit(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n) noexcept nogil:
    return pos < n and 48 <= s[pos] <= 57


cdef Py_ssize_t _number(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n) noexcept nogil:
    """The position after the JSON number at s[pos], or -1 (NaN and Infinity are refused)."""
    if pos < n and s[pos] == 45:
        pos += 1
    if not _digit(s, pos, n):
        return -1
    if s[pos] == 48:
        pos += 1
    else:
        while _digit(s, pos, n):
            pos += 1
    if pos < n and s[pos] == 46:
        pos += 1
        if not _digit(s, pos, n):
            return -1
        while _digit(s, pos, n):
            pos += 1
    if pos < n and (s[pos] == 101 or s[pos] == 69):
        pos += 1
        if pos < n and (s[pos] == 43 or s[pos] == 45):
            pos += 1
        if not _digit(s, pos, n):
            return -1
        while _digit(s, pos, n):
            pos += 1
    return pos


cdef inline Py_ssize_t _literal(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n,
                                const char* word, Py_ssize_t length) noexcept nogil:
    if pos + length <= n and memcmp(s + pos, word, length) == 0:
        return pos + length
    return -1


cdef Py_ssize_t _value(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n, int depth) noexcept nogil:
    """The position after the JSON value at s[pos] (no whitespace before it), or -1."""
    cdef unsigned char c
    if pos >= n:
        return -1
    c = s[pos]
    if c == 34:
        return _string(s, pos, n, NULL)
    if c == 123 or c == 91:
        if depth >= MAX_DEPTH:
            return -1
        return _container(s, pos, n, depth + 1)
    if c == 116:
        return _literal(s, pos, n, b"true", 4)
    if c == 102:
        return _literal(s, pos, n, b"false", 5)
    if c == 110:
        return _literal(s, pos, n, b"null", 4)
    return _number(s, pos, n)


cdef Py_ssize_t _container(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n, int depth) noexcept nogil:
    """An object or array at s[pos]: the position after it, or -1."""
    cdef bint is_object = s[pos] == 123
    cdef unsigned char close = 125 if is_object else 93
    pos = _ws(s, pos + 1, n)
    if pos < n and s[pos] == close:
        return pos + 1
    while True:
        if is_object:
            if pos >= n or s[pos] != 34:
                return -1
            pos = _string(s, pos, n, NULL)
            if pos < 0:
                return -1
            pos = _ws(s, pos, n)
            if pos >= n or s[pos] != 58:
                return -1
            pos = _ws(s, pos + 1, n)
        pos = _value(s, pos, n, depth)
        if pos < 0:
            return -1
        pos = _ws(s, pos, n)
        if pos >= n:
            return -1
        if s[pos] == close:
            return pos + 1
        if s[pos] != 44:
            return -1
        pos = _ws(s, pos + 1, n)


cdef inline Py_ssize_t _after(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n, unsigned char c) noexcept nogil:
    """Past whitespace, the character c, and whitespace; -1 when c is not there."""
    pos = _ws(s, pos, n)
    if pos >= n or s[pos] != c:
        return -1
    return _ws(s, pos + 1, n)


cdef Py_ssize_t _first_too_deep(const unsigned char* s, Py_ssize_t n, int limit) noexcept nogil:
    cdef Py_ssize_t pos = 0
    cdef const unsigned char* quote
    cdef int depth = 0
    cdef unsigned char c
    while pos < n:
        c = s[pos]
        if c == 34:                         # a string: to its closing quote (escapes skipped)
            pos += 1
            while True:
                quote = <const unsigned char*>memchr(s + pos, 34, n - pos)
                if quote == NULL:
                    return -1               # unterminated: the JSON parser says so
                while pos < quote - s:
                    pos += 2 if s[pos] == 92 else 1
                if pos == quote - s:
                    break                   # the quote is not escaped
        elif c == 91 or c == 123:
            depth += 1
            if depth >= limit:
                return pos
        elif c == 93 or c == 125:
            depth -= 1
        pos += 1
    return -1


def first_too_deep(const unsigned char[::1] data, int limit=SERDE_JSON_MAX_NESTING):
    """The byte offset of the first '[' or '{' that opens the `limit`-th nested container
    of the JSON text `data` (UTF-8), or -1 when none does. Strings are skipped; the text
    is not otherwise checked (a malformed one is the parser's to refuse).

    >>> first_too_deep(b'{"a": "[[[", "b": [[1]]}', 3), first_too_deep(b'[[1]]', 3)
    (19, -1)
    """
    cdef Py_ssize_t at
    with nogil:
        at = _first_too_deep(&data[0], data.shape[0], limit) if data.shape[0] else -1
    return at


# ---------------------------------------------------------------------- numbers as serde_json reads them

cdef Py_ssize_t _score(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n, double* out) noexcept nogil:
    """The JSON number at s[pos] as the Unigram reader takes it: an integer converted to a
    float (Python float(int)), a fraction or exponent as serde_json parses it
    (json_numbers.serde_json_f64). The position after it, or -1 (refused, or a case left to
    the plain reader: an integer of 19+ digits, "number out of range")."""
    cdef Py_ssize_t start = pos, end = _number(s, pos, n), i, int_end, frac_start = -1, frac_end = -1
    cdef bint negative = s[pos] == 45, exp_negative = False, overflowed = False, is_float = False
    cdef uint64_t significand = 0, digit
    cdef int64_t exponent = 0, exp = 0, magnitude
    cdef double f
    if end < 0:
        return -1
    if negative:
        pos += 1
    i = pos
    while i < end and 48 <= s[i] <= 57:
        i += 1
    int_end = i
    if i < end and s[i] == 46:
        is_float = True
        frac_start = i + 1
        i += 1
        while i < end and 48 <= s[i] <= 57:
            i += 1
        frac_end = i
    if i < end:                                     # an exponent
        is_float = True
        i += 1
        if s[i] == 45 or s[i] == 43:
            exp_negative = s[i] == 45
            i += 1
        while i < end:
            if exp <= 0x7FFFFFFF:
                exp = exp * 10 + (s[i] - 48)
            i += 1
    if not is_float:
        # Parity: read_models._integer_score: float(int) for a u64 / i64 (19+ digits: plain reader)
        if int_end - pos > 18:
            return -1
        for i in range(pos, int_end):
            significand = significand * 10 + (s[i] - 48)
        out[0] = <double>(-<int64_t>significand if negative else <int64_t>significand)
        return end
    # Parity: json_numbers.serde_json_f64 (serde_json de.rs parse_integer .. f64_from_parts)
    for i in range(pos, int_end):
        digit = s[i] - 48
        if not overflowed:
            if significand <= (<uint64_t>0xFFFFFFFFFFFFFFFF - digit) // 10:
                significand = significand * 10 + digit
                continue
            overflowed = True                       # the rest only move the exponent
        exponent += 1
    if frac_start >= 0:
        for i in range(frac_start, frac_end):
            digit = s[i] - 48
            if significand > (<uint64_t>0xFFFFFFFFFFFFFFFF - digit) // 10:
                break                               # the rest are ignored
            significand = significand * 10 + digit
            exponent -= 1
    if exp > 0x7FFFFFFF:
        if significand != 0 and not exp_negative:
            return -1                               # number out of range
        out[0] = -0.0 if negative else 0.0
        return end
    exponent = exponent - exp if exp_negative else exponent + exp
    if exponent > 0x7FFFFFFF:
        exponent = 0x7FFFFFFF
    elif exponent < -0x80000000:
        exponent = -0x80000000
    f = <double>significand
    while True:
        magnitude = -exponent if exponent < 0 else exponent
        if magnitude <= 308:
            if exponent >= 0:
                f *= POW10[magnitude]
                if isinf(f):
                    return -1                       # number out of range
            else:
                f /= POW10[magnitude]
            break
        if f == 0.0:
            break
        if exponent >= 0:
            return -1
        f /= 1e308
        exponent += 308
    out[0] = -f if negative else f
    return end


# ---------------------------------------------------------------------- tables of texts

cdef class TextTable:
    """Distinct UTF-8 texts in one buffer, in the file's order, found again by hash."""

    cdef ByteBuf blob
    cdef Py_ssize_t* offsets        # n + 1
    cdef Py_ssize_t n
    cdef Py_ssize_t cap
    cdef uint64_t* slots            # hash high half << 32 | entry + 1; 0: empty
    cdef uint64_t mask
    cdef list _texts                # the entries as bytes objects, once asked for

    def __cinit__(self, *args, **kwargs):
        self.blob.data = NULL
        self.blob.size = 0
        self.blob.cap = 0
        self.n = 0
        self.cap = 0
        self.offsets = NULL
        self.slots = NULL
        self.mask = 0

    def __dealloc__(self):
        bytebuf_free(&self.blob)
        free(self.offsets)
        free(self.slots)

    cdef int _reserve(self, Py_ssize_t entries) noexcept nogil:
        cdef Py_ssize_t cap = self.cap if self.cap else 1024, slot_cap, i
        cdef Py_ssize_t* grown
        cdef uint64_t* old = self.slots
        cdef uint64_t old_cap = self.mask + 1 if old != NULL else 0, v, slot
        cdef Py_ssize_t entry
        if entries + 1 > self.cap:
            while cap < entries + 1:
                cap *= 2
            grown = <Py_ssize_t*>realloc(self.offsets, (cap + 1) * sizeof(Py_ssize_t))
            if grown == NULL:
                return -1
            self.offsets = grown
            if self.cap == 0:
                self.offsets[0] = 0
            self.cap = cap
        if old == NULL or 2 * entries > <Py_ssize_t>old_cap:
            slot_cap = 64
            while slot_cap < 2 * entries:
                slot_cap *= 2
            self.slots = <uint64_t*>calloc(slot_cap, sizeof(uint64_t))
            if self.slots == NULL:
                self.slots = old
                return -1
            self.mask = <uint64_t>(slot_cap - 1)
            for i in range(<Py_ssize_t>old_cap):
                v = old[i]
                if v != 0:
                    entry = <Py_ssize_t>(v & LOW32) - 1
                    slot = self._hash(entry) & self.mask
                    while self.slots[slot] != 0:
                        slot = (slot + 1) & self.mask
                    self.slots[slot] = v
            free(old)
        return 0

    cdef inline uint64_t _hash(self, Py_ssize_t entry) noexcept nogil:
        return hash_bytes(<const unsigned char*>self.blob.data + self.offsets[entry],
                          self.offsets[entry + 1] - self.offsets[entry])

    cdef inline Py_ssize_t _find(self, const unsigned char* p, Py_ssize_t length, uint64_t h) noexcept nogil:
        """The entry with text p[:length], or -1."""
        cdef uint64_t slot = h & self.mask, tag = h & TAG_MASK, v
        cdef Py_ssize_t entry
        if self.slots == NULL:
            return -1
        while True:
            v = self.slots[slot]
            if v == 0:
                return -1
            if (v & TAG_MASK) == tag:
                entry = <Py_ssize_t>(v & LOW32) - 1
                if self.offsets[entry + 1] - self.offsets[entry] == length and \
                        memcmp(self.blob.data + self.offsets[entry], p, length) == 0:
                    return entry
            slot = (slot + 1) & self.mask

    cdef int _index_last(self) noexcept nogil:
        """Index entry n, whose text blob[offsets[n]:blob.size] was just appended; -1 when
        that text is an entry already (or memory ran out)."""
        cdef Py_ssize_t entry = self.n
        cdef uint64_t h, slot
        if (entry + 2 > self.cap or self.slots == NULL or 2 * (entry + 1) > <Py_ssize_t>self.mask + 1) \
                and self._reserve(entry + 1) < 0:
            return -1
        self.offsets[entry + 1] = self.blob.size
        h = self._hash(entry)
        if self._find(<const unsigned char*>self.blob.data + self.offsets[entry],
                      self.offsets[entry + 1] - self.offsets[entry], h) >= 0:
            return -1
        slot = h & self.mask
        while self.slots[slot] != 0:
            slot = (slot + 1) & self.mask
        self.slots[slot] = (h & TAG_MASK) | <uint64_t>(entry + 1)
        self.n += 1
        return 0

    cdef Py_ssize_t _entry_of(self, object text) except -2:
        """The entry of a str key, or -1 (not a str, not UTF-8, or absent)."""
        cdef const char* p
        cdef Py_ssize_t length
        if type(text) is not str:
            if not isinstance(text, str):
                hash(text)                  # an unhashable key raises TypeError, as a dict does
                return -1
        try:
            p = PyUnicode_AsUTF8AndSize(text, &length)
        except UnicodeEncodeError:
            return -1                       # a lone surrogate: no entry has one
        return self._find(<const unsigned char*>p, length, hash_bytes(<const unsigned char*>p, length))

    cdef Py_ssize_t _entry_of_bytes(self, bytes text) noexcept:
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(text)
        cdef Py_ssize_t length = PyBytes_GET_SIZE(text)
        return self._find(p, length, hash_bytes(p, length))

    cdef inline object _str(self, Py_ssize_t entry):
        return PyUnicode_DecodeUTF8(self.blob.data + self.offsets[entry],
                                    self.offsets[entry + 1] - self.offsets[entry], NULL)

    cpdef list texts(self):
        """The texts (UTF-8 bytes) in the file's order; made once, then shared."""
        cdef Py_ssize_t i
        cdef list out
        if self._texts is None:
            out = [None] * self.n
            for i in range(self.n):
                out[i] = PyBytes_FromStringAndSize(self.blob.data + self.offsets[i],
                                                   self.offsets[i + 1] - self.offsets[i])
            # Only bytes: no reference cycle can go through it, and the cyclic GC would
            # otherwise walk its entries (128k for Llama 3) in the collections of the
            # first encode calls after the load.
            untrack_flat_list(out)
            self._texts = out
        return self._texts

    def __len__(self):
        return self.n

    @property
    def memory_bytes(self):
        return self.blob.cap + (self.cap + 1) * sizeof(Py_ssize_t) + (self.mask + 1) * sizeof(uint64_t)


cdef class TokenTable(TextTable):
    """A vocab object {token: id}: a read-only mapping str -> int in the file's order
    (registered as a collections.abc.Mapping; equal to the dict json.loads gives).

    >>> t = scan_tokenizer_json(b'{"model": {"vocab": {"a": 0, "b": 5}}}')[1]
    >>> t["b"], "c" in t, t.max_id, t == {"a": 0, "b": 5}
    (5, False, 5, True)
    """

    cdef uint32_t* ids
    cdef Py_ssize_t ids_cap
    cdef readonly int64_t max_id           # -1 when empty
    cdef uint8_t* id_present               # max_id + 1 flags, when ids are dense enough; else NULL
    cdef uint32_t* sorted_ids              # else the ids sorted
    cdef dict _dict

    def __cinit__(self, *args, **kwargs):
        self.ids = NULL
        self.ids_cap = 0
        self.max_id = -1
        self.id_present = NULL
        self.sorted_ids = NULL

    def __dealloc__(self):
        free(self.ids)
        free(self.id_present)
        free(self.sorted_ids)

    cdef int _add_id(self, uint32_t token_id) noexcept nogil:
        cdef uint32_t* grown
        cdef Py_ssize_t cap
        if self.n >= self.ids_cap:
            cap = 2 * self.ids_cap if self.ids_cap else 1024
            grown = <uint32_t*>realloc(self.ids, cap * sizeof(uint32_t))
            if grown == NULL:
                return -1
            self.ids = grown
            self.ids_cap = cap
        self.ids[self.n] = token_id
        if <int64_t>token_id > self.max_id:
            self.max_id = token_id
        return 0

    cdef int _check_ids_unique(self) noexcept nogil:
        """-1 when two tokens share an id (read_vocab_map refuses that)."""
        cdef Py_ssize_t i
        if self.max_id < 4 * self.n + 1024:
            self.id_present = <uint8_t*>calloc(self.max_id + 2, 1)
            if self.id_present == NULL:
                return -1
            for i in range(self.n):
                if self.id_present[self.ids[i]]:
                    return -1
                self.id_present[self.ids[i]] = 1
            return 0
        self.sorted_ids = <uint32_t*>malloc(max(self.n, 1) * sizeof(uint32_t))
        if self.sorted_ids == NULL:
            return -1
        memcpy(self.sorted_ids, self.ids, self.n * sizeof(uint32_t))
        qsort(self.sorted_ids, self.n, sizeof(uint32_t), _compare_u32)
        for i in range(1, self.n):
            if self.sorted_ids[i] == self.sorted_ids[i - 1]:
                return -1
        return 0

    cpdef bint has_id(self, int64_t token_id):
        """Whether some token has this id."""
        cdef Py_ssize_t lo = 0, hi = self.n, mid
        if token_id < 0 or token_id > self.max_id:
            return False
        if self.id_present != NULL:
            return self.id_present[token_id] != 0
        while lo < hi:
            mid = (lo + hi) // 2
            if self.sorted_ids[mid] < token_id:
                lo = mid + 1
            else:
                hi = mid
        return lo < self.n and self.sorted_ids[lo] == token_id

    cdef inline int64_t id_at(self, Py_ssize_t entry) noexcept nogil:
        return self.ids[entry]

    # ------------------------------------------------------------------ Mapping

    def __getitem__(self, key):
        cdef Py_ssize_t entry = self._entry_of(key)
        if entry < 0:
            raise KeyError(key)
        return self.ids[entry]

    def __contains__(self, key):
        return self._entry_of(key) >= 0

    def get(self, key, default=None):
        cdef Py_ssize_t entry = self._entry_of(key)
        return default if entry < 0 else self.ids[entry]

    def id_of_bytes(self, bytes text):
        """The id of the token whose UTF-8 text is `text`, or None."""
        cdef Py_ssize_t entry = self._entry_of_bytes(text)
        return None if entry < 0 else self.ids[entry]

    cpdef dict as_dict(self):
        """The plain dict (made once)."""
        cdef Py_ssize_t i
        cdef dict out
        if self._dict is None:
            out = {}
            for i in range(self.n):
                out[self._str(i)] = self.ids[i]
            self._dict = out
        return self._dict

    def __iter__(self):
        return iter(self.as_dict())

    def keys(self):
        return self.as_dict().keys()

    def values(self):
        return self.as_dict().values()

    def items(self):
        return self.as_dict().items()

    def __eq__(self, other):
        if isinstance(other, TokenTable):
            return self.as_dict() == (<TokenTable>other).as_dict()
        if isinstance(other, dict):
            return self.as_dict() == other
        return NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = None

    def __repr__(self):
        return repr(self.as_dict())

    def __reduce__(self):
        return (dict, (list(self.as_dict().items()),))

    # ------------------------------------------------------------------ for the builders

    def id_list(self):
        """The ids in the file's order (keys: `texts()`)."""
        return [self.ids[i] for i in range(self.n)]

    def texts_by_id(self):
        """Each id's text (bytes), None for an id no token has; length max_id + 1."""
        cdef list texts = self.texts()
        cdef list out = [None] * (self.max_id + 1)
        cdef Py_ssize_t i
        for i in range(self.n):
            out[self.ids[i]] = texts[i]
        return out

    def pieces_by_id(self, Py_ssize_t size):
        """(pieces, present): each id's text below `size` (b"" for a gap) and a bytearray
        with 1 where a token has that id."""
        cdef list texts = self.texts()
        cdef list out = [b""] * size
        cdef bytearray present = bytearray(size)
        cdef unsigned char* flags = present
        cdef Py_ssize_t i
        for i in range(self.n):
            if self.ids[i] < size:
                out[self.ids[i]] = texts[i]
                flags[self.ids[i]] = 1
        return out, present


cdef int _compare_u32(const void* a, const void* b) noexcept nogil:
    cdef uint32_t x = (<const uint32_t*>a)[0], y = (<const uint32_t*>b)[0]
    return (x > y) - (x < y)


cdef class PieceTable(TextTable):
    """A Unigram vocab [[piece, score], ...]: a read-only sequence of (piece, score)
    tuples, the id of a piece its position (equal to the tuple the plain reader makes).

    >>> t = scan_tokenizer_json(b'{"model": {"vocab": [["a", -1.5], ["b", 2]]}}')[1]
    >>> t[1], t.id_of("a"), t == (("a", -1.5), ("b", 2.0))
    (('b', 2.0), 0, True)
    """

    cdef double* scores
    cdef Py_ssize_t scores_cap
    cdef tuple _tuple

    def __cinit__(self, *args, **kwargs):
        self.scores = NULL
        self.scores_cap = 0

    def __dealloc__(self):
        free(self.scores)

    cdef int _add_score(self, double score) noexcept nogil:
        cdef double* grown
        cdef Py_ssize_t cap
        if self.n >= self.scores_cap:
            cap = 2 * self.scores_cap if self.scores_cap else 1024
            grown = <double*>realloc(self.scores, cap * sizeof(double))
            if grown == NULL:
                return -1
            self.scores = grown
            self.scores_cap = cap
        self.scores[self.n] = score
        return 0

    def id_of(self, text):
        """The id (position) of piece `text`, or None."""
        cdef Py_ssize_t entry = self._entry_of(text)
        return None if entry < 0 else entry

    def id_of_bytes(self, bytes text):
        cdef Py_ssize_t entry = self._entry_of_bytes(text)
        return None if entry < 0 else entry

    def score_list(self):
        """The scores by id."""
        return [self.scores[i] for i in range(self.n)]

    cpdef tuple as_tuple(self):
        """The plain tuple of (piece, score) (made once)."""
        cdef Py_ssize_t i
        cdef list out
        if self._tuple is None:
            out = [None] * self.n
            for i in range(self.n):
                out[i] = (self._str(i), self.scores[i])
            self._tuple = tuple(out)
        return self._tuple

    def __getitem__(self, index):
        cdef Py_ssize_t i
        if isinstance(index, slice):
            return self.as_tuple()[index]
        i = index
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError("piece index out of range")
        return (self._str(i), self.scores[i])

    def __iter__(self):
        return iter(self.as_tuple())

    def __contains__(self, item):
        return item in self.as_tuple()

    def index(self, *args):
        return self.as_tuple().index(*args)

    def count(self, item):
        return self.as_tuple().count(item)

    def __eq__(self, other):
        if isinstance(other, PieceTable):
            return self.as_tuple() == (<PieceTable>other).as_tuple()
        if isinstance(other, tuple):
            return self.as_tuple() == other
        return NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = None

    def __repr__(self):
        return repr(self.as_tuple())

    def __reduce__(self):
        return (tuple, (self.as_tuple(),))


cdef class MergeTable:
    """BPE merges, stored as "left right" texts with the length of the left side; a
    read-only sequence of (left, right) tuples (equal to the tuple the plain reader makes).
    `resolve` checks them against the vocab as the plain reader does and keeps the ids.

    >>> m = scan_tokenizer_json(b'{"model": {"vocab": {}, "merges": [["a", "b c"]]}}')[2]
    >>> m[0], m.byte_level_lines()
    (('a', 'b c'), [b'a b c'])
    """

    cdef ByteBuf blob
    cdef Py_ssize_t* offsets        # n + 1
    cdef uint32_t* left_lengths
    cdef readonly Py_ssize_t n
    cdef Py_ssize_t cap
    cdef int32_t* lefts             # after resolve: the ids of both sides and of the merged token
    cdef int32_t* rights
    cdef int32_t* mergeds
    cdef readonly Py_ssize_t resolved_prefix_length   # -1 until resolved
    cdef tuple _tuple

    def __cinit__(self, *args, **kwargs):
        self.blob.data = NULL
        self.blob.size = 0
        self.blob.cap = 0
        self.offsets = NULL
        self.left_lengths = NULL
        self.n = 0
        self.cap = 0
        self.lefts = NULL
        self.rights = NULL
        self.mergeds = NULL
        self.resolved_prefix_length = -1

    def __dealloc__(self):
        bytebuf_free(&self.blob)
        free(self.offsets)
        free(self.left_lengths)
        free(self.lefts)
        free(self.rights)
        free(self.mergeds)

    cdef int _add(self, Py_ssize_t start, Py_ssize_t left_length) noexcept nogil:
        """Entry n: blob[start:blob.size] is "left right" with left_length bytes on the left."""
        cdef Py_ssize_t cap
        cdef Py_ssize_t* offsets
        cdef uint32_t* lengths
        if self.n + 1 >= self.cap:
            cap = 2 * self.cap if self.cap else 1024
            offsets = <Py_ssize_t*>realloc(self.offsets, (cap + 1) * sizeof(Py_ssize_t))
            if offsets == NULL:
                return -1
            self.offsets = offsets
            lengths = <uint32_t*>realloc(self.left_lengths, cap * sizeof(uint32_t))
            if lengths == NULL:
                return -1
            self.left_lengths = lengths
            self.cap = cap
        if left_length > <Py_ssize_t>LOW32 - 16:
            return -1
        self.offsets[self.n] = start
        self.offsets[self.n + 1] = self.blob.size
        self.left_lengths[self.n] = <uint32_t>left_length
        self.n += 1
        return 0

    cdef inline const unsigned char* _left(self, Py_ssize_t i) noexcept nogil:
        return <const unsigned char*>self.blob.data + self.offsets[i]

    cdef inline const unsigned char* _right(self, Py_ssize_t i, Py_ssize_t* length) noexcept nogil:
        cdef Py_ssize_t at = self.offsets[i] + self.left_lengths[i] + 1
        length[0] = self.offsets[i + 1] - at
        return <const unsigned char*>self.blob.data + at

    def resolve(self, TokenTable vocab, Py_ssize_t prefix_length):
        """Check every merge as read_models._merges does -- both sides are tokens, and so is
        left + right without its first `prefix_length` bytes (continuing_subword_prefix;
        cut on a character boundary) -- and keep the ids. False at the first that fails
        (the plain reader then explains it)."""
        cdef bint ok
        if self.lefts == NULL:
            self.lefts = <int32_t*>malloc(max(self.n, 1) * sizeof(int32_t))
            self.rights = <int32_t*>malloc(max(self.n, 1) * sizeof(int32_t))
            self.mergeds = <int32_t*>malloc(max(self.n, 1) * sizeof(int32_t))
            if self.lefts == NULL or self.rights == NULL or self.mergeds == NULL:
                raise MemoryError()
        with nogil:
            ok = self._resolve(vocab, prefix_length)
        self.resolved_prefix_length = prefix_length if ok else -1
        return ok

    cdef bint _resolve(self, TokenTable vocab, Py_ssize_t prefix_length) noexcept nogil:
        """resolve's loop, RESOLVE_BATCH merges at a time: the hash slots of a batch's three
        texts are prefetched before any is probed, so the memory latency of one lookup
        overlaps the others' (random reads into the vocab dominate)."""
        cdef Py_ssize_t first, j, i, count, llen, rlen, k, at, scratch_cap = 4096
        cdef const unsigned char* right
        cdef unsigned char* scratch = <unsigned char*>malloc(scratch_cap)
        cdef unsigned char* grown
        cdef uint64_t left_hash[RESOLVE_BATCH]
        cdef uint64_t right_hash[RESOLVE_BATCH]
        cdef uint64_t merged_hash[RESOLVE_BATCH]
        cdef Py_ssize_t merged_at[RESOLVE_BATCH]
        cdef Py_ssize_t merged_length[RESOLVE_BATCH]
        cdef int64_t left_entry, right_entry, merged_entry
        cdef bint ok = scratch != NULL
        first = 0
        while ok and first < self.n:
            count = min(RESOLVE_BATCH, self.n - first)
            at = 0
            for j in range(count):
                i = first + j
                llen = self.left_lengths[i]
                right = self._right(i, &rlen)
                # Parity: read_models.merged_token (tokenizers BpeBuilder::build): the
                # prefix's length in BYTES off the right side, which must then decode.
                if rlen < prefix_length or (prefix_length < rlen and (right[prefix_length] & 0xC0) == 0x80):
                    ok = False
                    break
                k = llen + rlen - prefix_length
                if at + k > scratch_cap:
                    scratch_cap = 2 * (at + k)
                    grown = <unsigned char*>realloc(scratch, scratch_cap)
                    if grown == NULL:
                        ok = False
                        break
                    scratch = grown
                memcpy(scratch + at, self._left(i), llen)
                memcpy(scratch + at + llen, right + prefix_length, rlen - prefix_length)
                merged_at[j] = at
                merged_length[j] = k
                at += k
                left_hash[j] = hash_bytes(self._left(i), llen)
                right_hash[j] = hash_bytes(right, rlen)
                merged_hash[j] = hash_bytes(scratch + merged_at[j], k)
                prefetch(&vocab.slots[left_hash[j] & vocab.mask])
                prefetch(&vocab.slots[right_hash[j] & vocab.mask])
                prefetch(&vocab.slots[merged_hash[j] & vocab.mask])
            if not ok:
                break
            for j in range(count):
                i = first + j
                right = self._right(i, &rlen)
                left_entry = vocab._find(self._left(i), self.left_lengths[i], left_hash[j])
                right_entry = vocab._find(right, rlen, right_hash[j])
                merged_entry = vocab._find(scratch + merged_at[j], merged_length[j], merged_hash[j])
                if left_entry < 0 or right_entry < 0 or merged_entry < 0:
                    ok = False
                    break
                self.lefts[i] = <int32_t>vocab.ids[left_entry]
                self.rights[i] = <int32_t>vocab.ids[right_entry]
                self.mergeds[i] = <int32_t>vocab.ids[merged_entry]
            first += count
        free(scratch)
        return ok

    def _resolved(self):
        if self.resolved_prefix_length < 0:
            raise ValueError("the merges are not resolved against a vocab")

    def left_ids(self):
        """The ids of the left sides, in rank order (after resolve)."""
        self._resolved()
        return [self.lefts[i] for i in range(self.n)]

    def right_ids(self):
        self._resolved()
        return [self.rights[i] for i in range(self.n)]

    def merged_ids(self):
        self._resolved()
        return [self.mergeds[i] for i in range(self.n)]

    def byte_level_lines(self):
        """The merges as "left right" UTF-8 lines, as pipeline._build_byte_level made them:
        joined by newlines, then split at every newline (a token with a newline in it
        splits its merge, as before)."""
        cdef list out = [None] * self.n
        cdef Py_ssize_t i
        if memchr(self.blob.data, 10, self.blob.size) != NULL:
            return b"\n".join([PyBytes_FromStringAndSize(self.blob.data + self.offsets[i],
                                                         self.offsets[i + 1] - self.offsets[i])
                               for i in range(self.n)]).split(b"\n") if self.n else []
        for i in range(self.n):
            out[i] = PyBytes_FromStringAndSize(self.blob.data + self.offsets[i],
                                               self.offsets[i + 1] - self.offsets[i])
        return out

    def byte_level_blob(self):
        """The merges as "left right" UTF-8 lines joined by b"\\n" in one bytes object
        (ByteLevelBpe.build reads its lines: the same as byte_level_lines, with no object
        per merge); b"" when there are none."""
        cdef Py_ssize_t i, at = 0, length
        cdef bytes out
        cdef char* q
        if self.n == 0:
            return b""
        out = PyBytes_FromStringAndSize(NULL, self.offsets[self.n] - self.offsets[0] + self.n - 1)
        q = PyBytes_AS_STRING(out)
        for i in range(self.n):
            length = self.offsets[i + 1] - self.offsets[i]
            memcpy(q + at, self.blob.data + self.offsets[i], length)
            at += length
            if i + 1 < self.n:
                q[at] = 10
                at += 1
        return out

    def json_text(self):
        """The merges as tokenizers' to_str() writes them: '[["left","right"],...]'.

        >>> scan_tokenizer_json(b'{"model": {"vocab": {}, "merges": [["d e", "f"], ["a", "b"]]}}')[2].json_text()
        b'[["d e","f"],["a","b"]]'
        """
        cdef ByteBuf out
        cdef Py_ssize_t i, rlen
        cdef const unsigned char* right
        out.data = NULL
        out.size = 0
        out.cap = 0
        try:
            if bytebuf_push(&out, b'[') < 0:
                raise MemoryError()
            for i in range(self.n):
                right = self._right(i, &rlen)
                if json_pair_into(&out, i == 0, self._left(i), self.left_lengths[i], right, rlen) < 0:
                    raise MemoryError()
            if bytebuf_push(&out, b']') < 0:
                raise MemoryError()
            return PyBytes_FromStringAndSize(out.data, out.size)
        finally:
            bytebuf_free(&out)

    def any_right_at_most(self, Py_ssize_t length):
        """Whether some merge's right side has at most `length` bytes."""
        cdef Py_ssize_t i, rlen
        for i in range(self.n):
            self._right(i, &rlen)
            if rlen <= length:
                return True
        return False

    def any_joins_before(self, bytes char):
        """Whether some merge's right side starts with `char` (UTF-8) while its left side
        does not end with it (native_models._cut_characters)."""
        cdef Py_ssize_t i, rlen, llen, k = len(char)
        cdef const unsigned char* c = <const unsigned char*>PyBytes_AS_STRING(char)
        cdef const unsigned char* right
        for i in range(self.n):
            right = self._right(i, &rlen)
            llen = self.left_lengths[i]
            if rlen >= k and memcmp(right, c, k) == 0 and \
                    not (llen >= k and memcmp(self._left(i) + llen - k, c, k) == 0):
                return True
        return False

    cdef tuple _pair(self, Py_ssize_t i):
        cdef Py_ssize_t rlen
        cdef const unsigned char* right = self._right(i, &rlen)
        return (PyUnicode_DecodeUTF8(<const char*>self._left(i), self.left_lengths[i], NULL),
                PyUnicode_DecodeUTF8(<const char*>right, rlen, NULL))

    cpdef tuple as_tuple(self):
        """The plain tuple of (left, right) (made once)."""
        cdef Py_ssize_t i
        cdef list out
        if self._tuple is None:
            out = [None] * self.n
            for i in range(self.n):
                out[i] = self._pair(i)
            self._tuple = tuple(out)
        return self._tuple

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        cdef Py_ssize_t i
        if isinstance(index, slice):
            return self.as_tuple()[index]
        i = index
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError("merge index out of range")
        return self._pair(i)

    def __iter__(self):
        return iter(self.as_tuple())

    def __contains__(self, item):
        return item in self.as_tuple()

    def index(self, *args):
        return self.as_tuple().index(*args)

    def count(self, item):
        return self.as_tuple().count(item)

    def __eq__(self, other):
        if isinstance(other, MergeTable):
            return self.as_tuple() == (<MergeTable>other).as_tuple()
        if isinstance(other, tuple):
            return self.as_tuple() == other
        return NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = None

    def __repr__(self):
        return repr(self.as_tuple())

    def __reduce__(self):
        return (tuple, (self.as_tuple(),))

    @property
    def memory_bytes(self):
        return self.blob.cap + (self.cap + 1) * sizeof(Py_ssize_t) + self.cap * sizeof(uint32_t) \
            + (3 * self.n * sizeof(int32_t) if self.lefts != NULL else 0)


# ---------------------------------------------------------------------- the sections

cdef Py_ssize_t _vocab_object(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n, TokenTable t) noexcept nogil:
    """{"token": id, ...} at s[pos] into t: the position after it, or -1.

    Parity: read_models.read_vocab_map refuses an id that is no integer in 0..2**32-1 and a
    repeated id; a repeated token (json.loads keeps its last id) is left to it too."""
    cdef uint64_t value
    pos = _ws(s, pos + 1, n)
    if pos < n and s[pos] == 125:
        return pos + 1
    while True:
        if pos >= n or s[pos] != 34:
            return -1
        pos = _string(s, pos, n, &t.blob)
        if pos < 0:
            return -1
        pos = _after(s, pos, n, 58)
        if pos < 0 or not _digit(s, pos, n):
            return -1
        value = 0
        if s[pos] == 48:
            pos += 1
        else:
            while _digit(s, pos, n):
                value = value * 10 + (s[pos] - 48)
                if value > LOW32:
                    return -1
                pos += 1
        if pos < n and (s[pos] == 46 or s[pos] == 101 or s[pos] == 69):
            return -1                       # a float: read_vocab_map refuses it
        if t._add_id(<uint32_t>value) < 0 or t._index_last() < 0:
            return -1
        pos = _ws(s, pos, n)
        if pos >= n:
            return -1
        if s[pos] == 125:
            break
        if s[pos] != 44:
            return -1
        pos = _ws(s, pos + 1, n)
    if t._check_ids_unique() < 0:
        return -1
    return pos + 1


cdef Py_ssize_t _piece_list(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n, PieceTable t) noexcept nogil:
    """[["piece", score], ...] at s[pos] into t: the position after it, or -1.

    Parity: read_models._unigram: pairs of a string and a number; a repeated piece refused."""
    cdef double score
    pos = _ws(s, pos + 1, n)
    if pos < n and s[pos] == 93:
        return pos + 1
    while True:
        if pos >= n or s[pos] != 91:
            return -1
        pos = _ws(s, pos + 1, n)
        if pos >= n or s[pos] != 34:
            return -1
        pos = _string(s, pos, n, &t.blob)
        if pos < 0:
            return -1
        pos = _after(s, pos, n, 44)
        if pos < 0:
            return -1
        pos = _score(s, pos, n, &score)
        if pos < 0:
            return -1
        pos = _ws(s, pos, n)
        if pos >= n or s[pos] != 93:
            return -1
        if t._add_score(score) < 0 or t._index_last() < 0:
            return -1
        pos = _ws(s, pos + 1, n)
        if pos >= n:
            return -1
        if s[pos] == 93:
            return pos + 1
        if s[pos] != 44:
            return -1
        pos = _ws(s, pos + 1, n)


cdef Py_ssize_t _merge_list(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n, MergeTable t) noexcept nogil:
    """["left right", ...] or [["left", "right"], ...] at s[pos] into t: the position after
    it, or -1.

    Parity: read_models._merges / _split_legacy_merges: one form throughout; a string has
    exactly one space and no NUL; "#version" lines (skipped only when the first line is one)
    are left to the plain reader."""
    cdef bint strings
    cdef Py_ssize_t start, left_length, i
    cdef const unsigned char* text
    cdef const void* space
    pos = _ws(s, pos + 1, n)
    if pos < n and s[pos] == 93:
        return pos + 1
    if pos >= n or (s[pos] != 34 and s[pos] != 91):
        return -1
    strings = s[pos] == 34
    while True:
        start = t.blob.size
        if strings:
            if pos >= n or s[pos] != 34:
                return -1
            pos = _string(s, pos, n, &t.blob)
            if pos < 0:
                return -1
            text = <const unsigned char*>t.blob.data + start
            space = memchr(text, 32, t.blob.size - start)
            if space == NULL:
                return -1
            left_length = <const unsigned char*>space - text
            if memchr(text + left_length + 1, 32, t.blob.size - start - left_length - 1) != NULL \
                    or memchr(text, 0, t.blob.size - start) != NULL:
                return -1
            if t.blob.size - start >= 8 and memcmp(text, b"#version", 8) == 0:
                return -1
        else:
            if pos >= n or s[pos] != 91:
                return -1
            pos = _ws(s, pos + 1, n)
            if pos >= n or s[pos] != 34:
                return -1
            pos = _string(s, pos, n, &t.blob)
            if pos < 0:
                return -1
            left_length = t.blob.size - start
            if bytebuf_push(&t.blob, 32) < 0:
                return -1
            pos = _after(s, pos, n, 44)
            if pos < 0 or pos >= n or s[pos] != 34:
                return -1
            pos = _string(s, pos, n, &t.blob)
            if pos < 0:
                return -1
            pos = _ws(s, pos, n)
            if pos >= n or s[pos] != 93:
                return -1
            pos += 1
        if t._add(start, left_length) < 0:
            return -1
        pos = _ws(s, pos, n)
        if pos >= n:
            return -1
        if s[pos] == 93:
            return pos + 1
        if s[pos] != 44:
            return -1
        pos = _ws(s, pos + 1, n)


cdef inline bint _key_is(const unsigned char* s, Py_ssize_t start, Py_ssize_t end, const char* name,
                         Py_ssize_t length) noexcept nogil:
    """s[start:end] (a key with its quotes) is "name"."""
    return end - start == length + 2 and memcmp(s + start + 1, name, length) == 0


cdef inline bint _escaped(const unsigned char* s, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    return memchr(s + start, 92, end - start) != NULL


cdef struct Spans:
    Py_ssize_t vocab_start
    Py_ssize_t vocab_end
    Py_ssize_t merges_start
    Py_ssize_t merges_end


cdef Py_ssize_t _model(const unsigned char* s, Py_ssize_t pos, Py_ssize_t n, Spans* spans,
                       TokenTable tokens, PieceTable pieces, MergeTable merges, bint read_merges) noexcept nogil:
    """The model object at s[pos]: its vocab and merges read into the tables (the merges
    only checked as JSON unless `read_merges`) and their spans noted, the rest checked;
    the position after it, or -1."""
    cdef Py_ssize_t key_start, key_end
    pos = _ws(s, pos + 1, n)
    if pos < n and s[pos] == 125:
        return pos + 1
    while True:
        if pos >= n or s[pos] != 34:
            return -1
        key_start = pos
        key_end = _string(s, pos, n, NULL)
        if key_end < 0 or _escaped(s, key_start, key_end):
            return -1
        pos = _after(s, key_end, n, 58)
        if pos < 0 or pos >= n:
            return -1
        if _key_is(s, key_start, key_end, b"vocab", 5):
            if spans.vocab_start >= 0:
                return -1
            spans.vocab_start = pos
            if s[pos] == 123:
                pos = _vocab_object(s, pos, n, tokens)
            elif s[pos] == 91:
                pos = _piece_list(s, pos, n, pieces)
            else:
                return -1
            spans.vocab_end = pos
        elif _key_is(s, key_start, key_end, b"merges", 6):
            if spans.merges_start >= 0 or s[pos] != 91:
                return -1
            spans.merges_start = pos
            pos = _merge_list(s, pos, n, merges) if read_merges else _value(s, pos, n, 2)
            spans.merges_end = pos
        else:
            pos = _value(s, pos, n, 2)
        if pos < 0:
            return -1
        pos = _ws(s, pos, n)
        if pos >= n:
            return -1
        if s[pos] == 125:
            return pos + 1
        if s[pos] != 44:
            return -1
        pos = _ws(s, pos + 1, n)


cdef Py_ssize_t _document(const unsigned char* s, Py_ssize_t n, Spans* spans, TokenTable tokens,
                          PieceTable pieces, MergeTable merges, bint read_merges) noexcept nogil:
    """The whole document (an object with one "model" object); n, or -1."""
    cdef Py_ssize_t pos = _ws(s, 0, n), key_start, key_end
    cdef bint model_seen = False
    if pos >= n or s[pos] != 123:
        return -1
    pos = _ws(s, pos + 1, n)
    if pos < n and s[pos] == 125:
        return -1
    while True:
        if pos >= n or s[pos] != 34:
            return -1
        key_start = pos
        key_end = _string(s, pos, n, NULL)
        if key_end < 0 or _escaped(s, key_start, key_end):
            return -1
        pos = _after(s, key_end, n, 58)
        if pos < 0:
            return -1
        if _key_is(s, key_start, key_end, b"model", 5):
            if model_seen or pos >= n or s[pos] != 123:
                return -1
            model_seen = True
            pos = _model(s, pos, n, spans, tokens, pieces, merges, read_merges)
        else:
            pos = _value(s, pos, n, 1)
        if pos < 0:
            return -1
        pos = _ws(s, pos, n)
        if pos >= n:
            return -1
        if s[pos] == 125:
            break
        if s[pos] != 44:
            return -1
        pos = _ws(s, pos + 1, n)
    if _ws(s, pos + 1, n) != n:
        return -1
    return n


def scan_tokenizer_json(data, *, bint read_merges=True):
    """(rest, vocab, merges) for the bytes of a tokenizer.json: `rest` is the document with
    `$.model.vocab` and `$.model.merges` replaced by null, `vocab` a TokenTable or
    PieceTable (None: no vocab), `merges` a MergeTable (None: no merges). None when the
    file is not strictly JSON, has no model.vocab, or holds anything the plain reader
    should judge (see the module docstring).

    read_merges=False: the merges are only checked to be a JSON list, and the MergeTable
    comes back empty (a trainer replaces them: train_bpe's like=)."""
    cdef const unsigned char* s
    cdef Py_ssize_t n
    cdef Spans spans
    cdef TokenTable tokens = TokenTable()
    cdef PieceTable pieces = PieceTable()
    cdef MergeTable merges = MergeTable()
    cdef Py_ssize_t result
    if type(data) is not bytes:
        return None
    s = <const unsigned char*>PyBytes_AS_STRING(data)
    n = PyBytes_GET_SIZE(data)
    spans.vocab_start = spans.vocab_end = spans.merges_start = spans.merges_end = -1
    with nogil:
        result = _document(s, n, &spans, tokens, pieces, merges, read_merges)
    if result < 0 or spans.vocab_start < 0:
        return None
    vocab = tokens if s[spans.vocab_start] == 123 else pieces
    cuts = sorted([(spans.vocab_start, spans.vocab_end)]
                  + ([(spans.merges_start, spans.merges_end)] if spans.merges_start >= 0 else []))
    parts = []
    at = 0
    for start, end in cuts:
        parts.append(data[at:start])
        parts.append(b"null")
        at = end
    parts.append(data[at:])
    return b"".join(parts), vocab, (merges if spans.merges_start >= 0 else None)


try:
    from collections.abc import Mapping, Sequence
    Mapping.register(TokenTable)
    Sequence.register(PieceTable)
    Sequence.register(MergeTable)
finally:
    pass
