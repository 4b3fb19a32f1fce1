"""llama.cpp's PLaMo-2 tokenizer (llm_tokenizer_plamo2), natively.

Every token but the BYTE ones, and every code-point suffix of one, is a key; the keys
sorted by their reversed bytes give llama.cpp's suffix table: for each key, one row per
key that is a prefix of it (longest first, with the token's score as
``round(score * 1e4)``, or INVALID where the key is no token) and a sentinel row (the
unknown character). Encoding walks the text's code points from the end, keeping the
row group of the longest key that starts at the current position (one hash lookup of
``(code point, key id)`` per row tried), and relaxes a best-score path over the rows of
that group: the lowest total cost wins, a tie keeps the row met first (the longer
piece), and the sentinel row costs 1e7 and falls back to the byte tokens of the code
point's UTF-8 bytes. The table is llama.cpp's, row for row, so its quirks hold too (a
token scored exactly -1000 ends a row group like the sentinel, in the walk as in the DP;
a token scored -2000 or less is never used): it is built string by string as llama.cpp
builds it when a token text is not in shortest UTF-8 form, and otherwise from integer key
ids, each key's group from that of the key one code point shorter (the same table, three
times faster). Time is linear in the text times the longest token; memory is 20 bytes per
code point of the call's text.

    >>> texts = [b"x"] + [b"<0x%02X>" % b for b in range(256)] + [b"ab", b"a", b"b"]
    >>> m = Plamo2(texts, bytes([1] + [6] * 256 + [1, 1, 1]), [0.0] * 257 + [-1.0, -1.5, -1.5])
    >>> m.encode_text(b"abc")     # "ab", then "c" as its byte token <0x63>
    [257, 100]
"""
import gc

from libc.math cimport isfinite, round as c_round
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc

from toksmith._core.buffers cimport IdBuf, idbuf_free, idbuf_push
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.model cimport Model, WorkHeader
from toksmith._core.tables cimport U64Map, u64map_free, u64map_get, u64map_init, u64map_put
from toksmith._core.token_types cimport TYPE_BYTE
from toksmith._core.utf8 cimport structural_char_len

from toksmith._core.errors import ModelDataError

# Parity: llm_tokenizer_plamo2's score constants.
cdef int32_t INVALID_SCORE = -20000000
cdef int32_t UNKNOWN_SCORE = -10000000
cdef int64_t UNREACHED = (<int64_t>1) << 60
HEX_DIGITS = b"0123456789abcdefABCDEF"

cdef char PLAMO2_WORK_KIND = 0


cdef struct Row:
    int32_t length      # code points of the row's piece
    int32_t token_id    # -1: no token (a suffix only, or the sentinel)
    int32_t score       # round(score * 1e4), INVALID_SCORE, or UNKNOWN_SCORE (sentinel)
    int32_t piece_id    # the key id of the row's piece (0 for the sentinel: the empty key)


cdef struct Plamo2Work:
    WorkHeader header
    uint32_t* cpts
    int64_t* scores
    int32_t* path_id        # token id, -1: the code point's byte tokens
    int32_t* path_len       # code points the path step covers
    Py_ssize_t cap          # entries of each array


cdef void _free_work(void* p) noexcept nogil:
    cdef Plamo2Work* w = <Plamo2Work*>p
    if w == NULL:
        return
    free(w.cpts)
    free(w.scores)
    free(w.path_id)
    free(w.path_len)
    free(w)


cdef int _reserve(Plamo2Work* w, Py_ssize_t need) noexcept nogil:
    cdef void* p
    if need <= w.cap:
        return 0
    if need < 256:
        need = 256
    p = realloc(w.cpts, need * sizeof(uint32_t))
    if p == NULL:
        return -1
    w.cpts = <uint32_t*>p
    p = realloc(w.scores, need * sizeof(int64_t))
    if p == NULL:
        return -1
    w.scores = <int64_t*>p
    p = realloc(w.path_id, need * sizeof(int32_t))
    if p == NULL:
        return -1
    w.path_id = <int32_t*>p
    p = realloc(w.path_len, need * sizeof(int32_t))
    if p == NULL:
        return -1
    w.path_len = <int32_t*>p
    w.cap = need
    return 0


cdef inline uint32_t _cpt_at(const unsigned char* s, Py_ssize_t n, Py_ssize_t* size) noexcept nogil:
    """The code point at s[0] and its byte length in *size.

    Parity: unicode.cpp unicode_cpts_from_utf8: a sequence is read by its lead and trail
    bit patterns only (overlong forms and surrogates are code points, F4-F7 leads reach
    0x1FFFFF); a byte that starts no complete sequence is one U+FFFD."""
    cdef int k = structural_char_len(s, n)
    size[0] = 1 if k == 0 else k
    if k == 1:
        return s[0]
    if k == 2:
        return ((s[0] & 0x1F) << 6) | (s[1] & 0x3F)
    if k == 3:
        return ((s[0] & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
    if k == 4:
        return ((s[0] & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F)
    return 0xFFFD


def _code_points(bytes text):
    """The code points of `text` as unicode_cpts_from_utf8 reads them."""
    cdef const unsigned char* s = text
    cdef Py_ssize_t n = len(text), off = 0, size
    cdef list out = []
    while off < n:
        out.append(_cpt_at(s + off, n - off, &size))
        off += size
    return out


def _canonical(list cpts):
    """(UTF-8 of `cpts` as unicode_cpt_to_utf8 writes it, byte offset of each code point
    and of the end); None when a code point is past U+10FFFF (unicode_cpt_to_utf8 throws)."""
    cdef list offsets = [0]
    cdef bytearray out = bytearray()
    cdef uint32_t c
    for c in cpts:
        if c > 0x10FFFF:
            return None
        out += chr(c).encode("utf-8", "surrogatepass")
        offsets.append(len(out))
    return bytes(out), offsets


cdef object _canonical_form(bytes text):
    """`_canonical(_code_points(text))`, without building either list when `text` is already
    in the form unicode_cpt_to_utf8 writes (shortest sequences, nothing past U+10FFFF)."""
    cdef const unsigned char* s = text
    cdef Py_ssize_t n = len(text), off = 0, size
    cdef uint32_t c
    cdef list offsets = [0]
    while off < n:
        c = _cpt_at(s + off, n - off, &size)
        if (structural_char_len(s + off, n - off) == 0 or (size == 2 and c < 0x80)
                or (size == 3 and c < 0x800) or (size == 4 and (c < 0x10000 or c > 0x10FFFF))):
            return _canonical(_code_points(text))
        off += size
        offsets.append(off)
    return text, offsets


cdef class Plamo2(Model):
    """The suffix table of a PLaMo-2 vocabulary and its byte tokens.

    Plamo2(texts, types, scores): token texts (bytes, as llama.cpp holds them), GGUF token
    types (BYTE tokens "<0xXX>" give the byte fallback; every other token is a piece),
    float32 scores. Raises ModelDataError as llama.cpp refuses the vocabulary.
    """

    cdef Row* rows
    cdef readonly Py_ssize_t n_rows
    cdef U64Map to_suffix        # (code point << 32 | key id) + 1 -> first row of the key's group
    cdef int32_t byte_ids[256]
    cdef readonly Py_ssize_t n_keys

    def __cinit__(self, *args, **kwargs):
        self.rows = NULL
        self.to_suffix.slots = NULL

    def __dealloc__(self):
        free(self.rows)
        u64map_free(&self.to_suffix)

    def __init__(self, list texts, bytes types, list scores, *, bint literal=False):
        """`literal`: build the table string by string as llama.cpp does even when every
        token text is in shortest UTF-8 form (where the faster build gives the same table)."""
        cdef Py_ssize_t n = len(texts), i, k
        cdef dict suffix_score = {}, token_to_id = {}
        cdef list byte_ids = [0] * 256, offsets, keys
        cdef bytes text, canon
        cdef object canonical
        cdef bint all_canonical = True
        if len(types) != n or len(scores) != n:
            raise ValueError("texts, types and scores must have equal lengths")
        nan = float("nan")
        collecting = gc.isenabled()
        gc.disable()   # a million small objects that hold no references: nothing to collect
        try:
            # Parity: llm_tokenizer_plamo2::build, first loop.
            for i in range(n):
                text = texts[i]
                token_to_id[text] = i
                if types[i] == TYPE_BYTE:
                    if (len(text) == 6 and text.startswith(b"<0x") and text.endswith(b">")
                            and text[3] in HEX_DIGITS and text[4] in HEX_DIGITS):
                        byte_ids[int(text[3:5], 16)] = i
                    continue
                suffix_score[text] = scores[i]
                canonical = _canonical_form(text)
                if canonical is None:
                    raise ModelDataError(f"token {i} {text!r} holds a code point past U+10FFFF "
                                         f"(llama.cpp's unicode_cpt_to_utf8 throws: 'invalid codepoint')")
                canon, offsets = canonical
                if canon is not text:
                    all_canonical = False
                for k in range(1, len(offsets) - 1):
                    suffix_score.setdefault(canon[offsets[k]:], nan)
            for k in range(256):
                if byte_ids[k] == 0:
                    # Parity: "Byte token for <0x..> is not set" (a byte token with id 0 counts as unset)
                    raise ModelDataError(
                        f"no BYTE token <0x{k:02X}> (llama.cpp: 'Byte token for <0x{k}> is not set'"
                        f"{'; token 0 counts as unset' if texts[0] == b'<0x%02X>' % k else ''})")
            keys = list(suffix_score)
            keys.append(b"")
            keys.sort(key=_reversed)
            if all_canonical and not literal:
                self._build_by_groups(keys, suffix_score, token_to_id)
            else:
                self._build_literal(keys, suffix_score, token_to_id)
        finally:
            if collecting:
                gc.enable()
        for k in range(256):
            self.byte_ids[k] = byte_ids[k]
        self.n_keys = len(keys)
        self.n_pieces = n
        self.work_kind = &PLAMO2_WORK_KIND

    def _build_literal(self, list keys, dict suffix_score, dict token_to_id):
        """Parity: build's second and third loops, string by string: each key's group holds
        the prefixes of its code points (re-encoded) that are keys, longest first."""
        cdef Py_ssize_t row = 0, length, size
        cdef uint32_t first
        cdef dict suffix_id = {}, to_suffix = {}
        cdef list groups = [], offsets, pieces
        cdef bytes canon, piece
        for key in keys:
            suffix_id[key] = row
            if not key:
                groups.append([])
                row += 1
                continue
            canon, offsets = _canonical_form(key)
            first = _cpt_at(canon, len(canon), &size)
            # operator[] on a missing key inserts 0: get(..., 0) reads the same
            to_suffix[(<uint64_t>first << 32) | <uint64_t>suffix_id.get(canon[offsets[1]:], 0)] = row
            pieces = []
            for length in range(len(offsets) - 1, 0, -1):
                piece = canon[:offsets[length]]
                if piece in suffix_score:
                    pieces.append((length, piece))
            groups.append(pieces)
            row += len(pieces) + 1
        self._alloc_rows(row)
        row = 0
        for pieces in groups:
            for length, piece in pieces:
                self._set_row(row, length, token_to_id.get(piece, -1),
                              _score(suffix_score[piece], piece, token_to_id), suffix_id[piece])
                row += 1
            self._set_row(row, 1, -1, UNKNOWN_SCORE, 0)
            row += 1
        if u64map_init(&self.to_suffix, len(to_suffix)) < 0:
            raise MemoryError()
        for code, first_row in to_suffix.items():
            if u64map_put(&self.to_suffix, <uint64_t>code + 1, <int32_t>first_row) < 0:
                raise MemoryError()

    def _build_by_groups(self, list keys, dict suffix_score, dict token_to_id):
        """The table of `_build_literal` when every key is in shortest UTF-8 form, from key
        indices: the group of key c+R (c its first code point) is c+Q for each Q of R's group
        (R comes earlier in the order), then c alone, kept where c+Q is a key, that is
        where (c, Q) is in the map of (first code point, rest) -> key."""
        cdef Py_ssize_t n_keys = len(keys), i, j, q, size, row, start, count
        cdef dict index = {key: i for i, key in enumerate(keys)}
        cdef U64Map by_rest
        cdef IdBuf members
        cdef int32_t found
        cdef uint32_t c
        cdef bytes key
        cdef int32_t* first_cpt = <int32_t*>malloc(max(n_keys, 1) * sizeof(int32_t))
        cdef int32_t* rest = <int32_t*>malloc(max(n_keys, 1) * sizeof(int32_t))
        cdef int32_t* length = <int32_t*>malloc(max(n_keys, 1) * sizeof(int32_t))
        cdef int32_t* score = <int32_t*>malloc(max(n_keys, 1) * sizeof(int32_t))
        cdef int32_t* token = <int32_t*>malloc(max(n_keys, 1) * sizeof(int32_t))
        cdef int32_t* group_start = <int32_t*>malloc(max(n_keys, 1) * sizeof(int32_t))
        cdef int32_t* group_size = <int32_t*>malloc(max(n_keys, 1) * sizeof(int32_t))
        cdef int32_t* first_row = <int32_t*>malloc(max(n_keys, 1) * sizeof(int32_t))
        members.data = NULL
        members.size = 0
        members.cap = 0
        by_rest.slots = NULL
        try:
            if (first_cpt == NULL or rest == NULL or length == NULL or score == NULL or token == NULL
                    or group_start == NULL or group_size == NULL or first_row == NULL
                    or u64map_init(&by_rest, n_keys) < 0):
                raise MemoryError()
            # keys[0] is the empty key: no code point, an empty group
            length[0] = 0
            rest[0] = 0
            first_cpt[0] = 0
            score[0] = INVALID_SCORE
            token[0] = -1
            for i in range(1, n_keys):
                key = keys[i]
                c = _cpt_at(key, len(key), &size)
                first_cpt[i] = <int32_t>c
                j = index[key[size:]]   # a suffix of the key sorts before it
                rest[i] = <int32_t>j
                length[i] = length[j] + 1
                score[i] = _score(suffix_score[key], key, token_to_id)
                token[i] = token_to_id.get(key, -1)
                if u64map_put(&by_rest, ((<uint64_t>c << 32) | <uint32_t>j) + 1, <int32_t>i) < 0:
                    raise MemoryError()
            group_start[0] = 0
            group_size[0] = 0
            for i in range(1, n_keys):
                c = <uint32_t>first_cpt[i]
                j = rest[i]
                group_start[i] = <int32_t>members.size
                start = group_start[j]
                count = group_size[j]
                for q in range(start, start + count + 1):
                    found = u64map_get(&by_rest, ((<uint64_t>c << 32)
                                                  | <uint32_t>(members.data[q] if q < start + count else 0)) + 1)
                    if found >= 0 and idbuf_push(&members, found) < 0:
                        raise MemoryError()
                group_size[i] = <int32_t>(members.size - group_start[i])
            row = 0
            for i in range(n_keys):
                first_row[i] = <int32_t>row
                row += group_size[i] + 1
            self._alloc_rows(row)
            row = 0
            for i in range(n_keys):
                for q in range(group_start[i], group_start[i] + group_size[i]):
                    j = members.data[q]
                    self._set_row(row, length[j], token[j], score[j], first_row[j])
                    row += 1
                self._set_row(row, 1, -1, UNKNOWN_SCORE, 0)
                row += 1
            if u64map_init(&self.to_suffix, n_keys) < 0:
                raise MemoryError()
            for i in range(1, n_keys):
                if u64map_put(&self.to_suffix, ((<uint64_t>first_cpt[i] << 32)
                                                | <uint32_t>first_row[rest[i]]) + 1, first_row[i]) < 0:
                    raise MemoryError()
        finally:
            free(first_cpt)
            free(rest)
            free(length)
            free(score)
            free(token)
            free(group_start)
            free(group_size)
            free(first_row)
            idbuf_free(&members)
            u64map_free(&by_rest)

    cdef _alloc_rows(self, Py_ssize_t n_rows):
        free(self.rows)
        self.rows = <Row*>malloc(max(n_rows, 1) * sizeof(Row))
        if self.rows == NULL:
            raise MemoryError()
        self.n_rows = n_rows

    cdef inline void _set_row(self, Py_ssize_t row, Py_ssize_t length, Py_ssize_t token_id, int32_t score,
                              Py_ssize_t piece_id) noexcept:
        self.rows[row].length = <int32_t>length
        self.rows[row].token_id = <int32_t>token_id
        self.rows[row].score = score
        self.rows[row].piece_id = <int32_t>piece_id

    def table(self):
        """(rows as (length, token id, score, key id) tuples, {(code point, key id): key id}),
        for tests that compare builds."""
        cdef Py_ssize_t i
        rows = [(self.rows[i].length, self.rows[i].token_id, self.rows[i].score, self.rows[i].piece_id)
                for i in range(self.n_rows)]
        codes = {}
        for i in range(<Py_ssize_t>self.to_suffix.mask + 1):
            if self.to_suffix.slots[i].key != 0:
                code = self.to_suffix.slots[i].key - 1
                codes[(code >> 32, code & 0xFFFFFFFF)] = self.to_suffix.slots[i].value
        return rows, codes

    cdef void* new_work(self) noexcept nogil:
        cdef Plamo2Work* w = <Plamo2Work*>calloc(1, sizeof(Plamo2Work))
        if w != NULL:
            w.header.free = _free_work
            w.header.kind = &PLAMO2_WORK_KIND
        return w

    cdef void trim_work(self, void* work, Py_ssize_t keep_bytes) noexcept nogil:
        cdef Plamo2Work* w = <Plamo2Work*>work
        if w.cap * 20 > keep_bytes:
            free(w.cpts)
            free(w.scores)
            free(w.path_id)
            free(w.path_len)
            w.cpts = NULL
            w.scores = NULL
            w.path_id = NULL
            w.path_len = NULL
            w.cap = 0

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        # Parity: llm_tokenizer_plamo2::encode.
        cdef Plamo2Work* w = <Plamo2Work*>work
        cdef Py_ssize_t m = 0, off = 0, size, start = 0, i, p, length, k, nb
        cdef uint32_t c
        cdef int64_t cost
        cdef int32_t score, suffix, found
        cdef const Row* rows = self.rows
        cdef const U64Map* to_suffix = &self.to_suffix
        cdef unsigned char b
        # one pass to count the code points, so the arrays hold m + 1 entries, not n + 1
        while off < n:
            _cpt_at(s + off, n - off, &size)
            off += size
            m += 1
        if _reserve(w, m + 1) < 0:
            return ERR_NO_MEMORY
        off = 0
        m = 0
        while off < n:
            w.cpts[m] = _cpt_at(s + off, n - off, &size)
            off += size
            m += 1
        # a leading BOM is skipped (each raw-text fragment is encoded on its own)
        cpts = w.cpts
        if m > 0 and cpts[0] == 0xFEFF:
            _cpt_at(s, n, &size)
            start = size
            cpts += 1
            m -= 1
        if m == 0:
            return 0
        scores = w.scores
        path_id = w.path_id
        path_len = w.path_len
        for i in range(m):
            scores[i] = UNREACHED
        scores[m] = 0
        suffix = 0
        for i in range(m - 1, -1, -1):
            c = cpts[i]
            # the row group of the longest key starting at i (0: the empty key's)
            p = suffix
            while p < self.n_rows:
                found = u64map_get(to_suffix, ((<uint64_t>c << 32) | <uint32_t>rows[p].piece_id) + 1)
                suffix = found if found > 0 else 0
                if suffix > 0 or rows[p].score == UNKNOWN_SCORE:
                    break
                p += 1
            p = suffix
            while p < self.n_rows:
                score = rows[p].score
                if score > INVALID_SCORE:
                    length = rows[p].length
                    if i + length <= m:
                        cost = scores[i + length] - score
                        if cost < scores[i]:
                            scores[i] = cost
                            path_len[i] = <int32_t>length
                            path_id[i] = rows[p].token_id
                if score == UNKNOWN_SCORE:
                    break
                p += 1
            if scores[i] == UNREACHED:
                # never happens (every group ends in a usable row); keeps the read-back finite
                scores[i] = scores[i + 1] - UNKNOWN_SCORE
                path_len[i] = 1
                path_id[i] = -1
        # the best path, from the start; byte offsets re-read alongside for spans
        i = 0
        off = start
        while i < m:
            length = path_len[i]
            if spans != NULL:
                size = off
                for k in range(length):
                    _cpt_at(s + size, n - size, &nb)
                    size += nb
            if path_id[i] >= 0:
                if idbuf_push(ids, path_id[i]) < 0:
                    return ERR_NO_MEMORY
                if spans != NULL and (idbuf_push(spans, <int32_t>(base + off)) < 0
                                      or idbuf_push(spans, <int32_t>(base + size)) < 0):
                    return ERR_NO_MEMORY
            else:
                c = cpts[i]
                nb = 1 + (c >= 0x80) + (c >= 0x800) + (c >= 0x10000)
                for k in range(nb):
                    if nb == 1:
                        b = <unsigned char>c
                    elif k == 0:
                        b = <unsigned char>((0xF00 >> nb) & 0xFF)
                    else:
                        b = 0x80
                    if idbuf_push(ids, self.byte_ids[b | ((c >> ((nb - k - 1) * 6)) & 0x3F)]) < 0:
                        return ERR_NO_MEMORY
                    if spans != NULL and (idbuf_push(spans, <int32_t>(base + off)) < 0
                                          or idbuf_push(spans, <int32_t>(base + size)) < 0):
                        return ERR_NO_MEMORY
            if spans != NULL:
                off = size
            i += length
        return 0

    @property
    def memory_bytes(self):
        """Bytes of the suffix table and its hash map."""
        return self.n_rows * sizeof(Row) + (<Py_ssize_t>self.to_suffix.mask + 1) * 16


def _reversed(bytes key):
    return key[::-1]


cdef int32_t _score(object score, bytes piece, dict token_to_id) except? -1:
    """Parity: build: std::isfinite(score) ? (int32_t)std::round(score * 1e4) : INVALID_SCORE."""
    cdef double value = score
    if not isfinite(value):
        return INVALID_SCORE
    value = c_round(value * 1e4)
    if not (-2147483648.0 <= value <= 2147483647.0):
        raise ModelDataError(f"token {token_to_id.get(piece)} {piece!r} has score {score!r}: times 1e4 it "
                             f"is outside int32, where llama.cpp's conversion is undefined")
    return <int32_t>value
