"""tiktoken rank files (``base64(token) SP rank LF`` per line), parsed and checked in C.

Each problem is reported with its line number; nothing is allocated in proportion
to a rank value before the ranks are known to be nearly dense.

    >>> parse_rank_file(b"YQ== 0\\nYg== 1\\nYWI= 2\\n")
    [b'a', b'b', b'ab']
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memchr, memcmp

# Ranks above this are refused (ids are int32 and a rank file has a few 100k lines).
cdef int64_t MAX_RANK = (<int64_t>1 << 31) - 2
# Ranks may leave gaps (p50k_base has one, where a special token goes), but at most
# this many plus 1% of the tokens: more means a broken file, not a vocabulary.
cdef int64_t MAX_MISSING_RANKS = 4096


class RankFileError(Exception):
    """A problem in a rank file: `line` (1-based, 0 for the whole file) and `detail`."""

    def __init__(self, line: int, detail: str):
        self.line = line
        self.detail = detail
        super().__init__(f"line {line}: {detail}" if line else detail)


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define TOKSMITH_PREFETCH(p) __builtin_prefetch(p)
    #else
    #define TOKSMITH_PREFETCH(p) ((void)(p))
    #endif
    """
    void _prefetch "TOKSMITH_PREFETCH"(const void* p) noexcept nogil


cdef signed char _B64[256]
cdef void _init_b64() noexcept:
    cdef int i
    cdef const char* alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    for i in range(256):
        _B64[i] = -1
    for i in range(64):
        _B64[<unsigned char>alphabet[i]] = <signed char>i
_init_b64()


cdef inline bint _is_space(unsigned char c) noexcept nogil:
    # Parity: bytes.split() with no argument splits on ASCII whitespace
    return c == 32 or c == 9 or c == 11 or c == 12


cdef Py_ssize_t _b64_decode(const unsigned char* p, Py_ssize_t n, unsigned char* out) noexcept nogil:
    """Strict base64 (standard alphabet, '=' padding to a multiple of 4): the decoded
    length, or -1 when p[:n] is not base64."""
    cdef Py_ssize_t i, k = 0, pad = 0
    cdef int a, b, c, d
    if n == 0 or n % 4 != 0:
        return -1
    if p[n - 1] == 61:
        pad = 2 if p[n - 2] == 61 else 1
    for i in range(0, n, 4):
        a = _B64[p[i]]
        b = _B64[p[i + 1]]
        c = _B64[p[i + 2]] if not (i + 4 == n and pad == 2) else 0
        d = _B64[p[i + 3]] if not (i + 4 == n and pad >= 1) else 0
        if a < 0 or b < 0 or c < 0 or d < 0:
            return -1
        out[k] = <unsigned char>((a << 2) | (b >> 4))
        k += 1
        if not (i + 4 == n and pad == 2):
            out[k] = <unsigned char>(((b & 15) << 4) | (c >> 2))
            k += 1
        if not (i + 4 == n and pad >= 1):
            out[k] = <unsigned char>(((c & 3) << 6) | d)
            k += 1
    return k


cdef inline uint64_t _hash(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = <uint64_t>0xCBF29CE484222325   # FNV-1a
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ p[i]) * <uint64_t>0x100000001B3
    return h ^ (h >> 29)


def parse_rank_file(bytes data):
    """Tokens by rank (None for a rank no line gives) of a rank file's bytes.

    Raises RankFileError naming the line for: a line that is not two fields, a token
    that is not strict base64, a rank that is not a decimal number or above MAX_RANK,
    a token or a rank given twice; and for an empty file or ranks with too many gaps.
    """
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = len(data), pos = 0, end, a, b, c, d, line = 0, count = 0, i, k
    cdef Py_ssize_t cap = n // 4 + 16
    cdef unsigned char* blob = <unsigned char*>malloc(max(n, 1))
    cdef int64_t* tok_at = <int64_t*>malloc(cap * sizeof(int64_t))
    cdef int32_t* tok_len = <int32_t*>malloc(cap * sizeof(int32_t))
    cdef int64_t* ranks = <int64_t*>malloc(cap * sizeof(int64_t))
    cdef int32_t* lines = <int32_t*>malloc(cap * sizeof(int32_t))
    cdef int32_t* by_rank = NULL
    cdef int32_t* slots = NULL
    cdef Py_ssize_t used = 0, decoded, mask, slot
    cdef int64_t rank, max_rank = -1
    cdef list out
    cdef bint has_cr
    cdef const unsigned char* found
    cdef uint64_t* hashes = NULL
    try:
        if blob == NULL or tok_at == NULL or tok_len == NULL or ranks == NULL or lines == NULL:
            raise MemoryError()
        has_cr = memchr(s, 13, n) != NULL
        while pos < n:
            # Parity: tiktoken load_tiktoken_bpe: contents.splitlines(), empty lines skipped
            if has_cr:
                end = pos
                while end < n and s[end] != 10 and s[end] != 13:
                    end += 1
            else:
                found = <const unsigned char*>memchr(s + pos, 10, n - pos)
                end = found - s if found != NULL else n
            line += 1
            a = pos
            while a < end and _is_space(s[a]):
                a += 1
            if a < end:
                b = a
                while b < end and not _is_space(s[b]):
                    b += 1
                c = b
                while c < end and _is_space(s[c]):
                    c += 1
                d = c
                while d < end and not _is_space(s[d]):
                    d += 1
                k = d
                while k < end and _is_space(s[k]):
                    k += 1
                if c == end or k != end:
                    raise RankFileError(line, f"expected 'base64 rank', found {data[pos:min(end, pos + 80)]!r}")
                decoded = _b64_decode(s + a, b - a, blob + used)
                if decoded < 0:
                    raise RankFileError(line, f"the token {data[a:min(b, a + 80)]!r} is not base64")
                rank = 0
                for i in range(c, d):
                    if not 48 <= s[i] <= 57 or rank > MAX_RANK:
                        break
                    rank = rank * 10 + (s[i] - 48)
                else:
                    i = d
                if i != d or rank > MAX_RANK:
                    raise RankFileError(line, f"the rank {data[c:min(d, c + 40)]!r} is not a number "
                                              f"from 0 to {MAX_RANK}")
                if count >= cap:
                    raise RankFileError(line, "more lines than the file's size allows")  # unreachable
                tok_at[count] = used
                tok_len[count] = <int32_t>decoded
                ranks[count] = rank
                lines[count] = <int32_t>line
                used += decoded
                count += 1
                if rank > max_rank:
                    max_rank = rank
            pos = end + 1
            if end + 1 < n and s[end] == 13 and s[end + 1] == 10:
                pos += 1
        if count == 0:
            raise RankFileError(0, "no 'base64 rank' line: the file is empty")
        if max_rank + 1 - count > MAX_MISSING_RANKS + count // 100:
            raise RankFileError(0, f"{count} tokens but ranks up to {max_rank}: "
                                   f"{max_rank + 1 - count} ranks are missing (too many for a rank file)")
        by_rank = <int32_t*>malloc((max_rank + 1) * sizeof(int32_t))
        if by_rank == NULL:
            raise MemoryError()
        for i in range(max_rank + 1):
            by_rank[i] = -1
        for i in range(count):
            if by_rank[ranks[i]] >= 0:
                raise RankFileError(lines[i], f"rank {ranks[i]} is given twice "
                                              f"(first on line {lines[by_rank[ranks[i]]]})")
            by_rank[ranks[i]] = <int32_t>i
        mask = 64
        while mask < 2 * count:
            mask *= 2
        slots = <int32_t*>malloc(mask * sizeof(int32_t))
        if slots == NULL:
            raise MemoryError()
        for i in range(mask):
            slots[i] = -1
        mask -= 1
        hashes = <uint64_t*>malloc(count * sizeof(uint64_t))
        if hashes == NULL:
            raise MemoryError()
        for i in range(count):
            hashes[i] = _hash(blob + tok_at[i], tok_len[i])
        for i in range(count):
            if i + 8 < count:
                _prefetch(&slots[hashes[i + 8] & <uint64_t>mask])
            slot = <Py_ssize_t>(hashes[i] & <uint64_t>mask)
            while slots[slot] >= 0:
                k = slots[slot]
                if tok_len[k] == tok_len[i] and memcmp(blob + tok_at[k], blob + tok_at[i], tok_len[i]) == 0:
                    raise RankFileError(lines[i], f"the token {(<char*>blob)[tok_at[i]:tok_at[i] + min(tok_len[i], 40)]!r} "
                                                  f"is given twice (first on line {lines[k]})")
                slot = (slot + 1) & mask
            slots[slot] = <int32_t>i
        out = [None] * (max_rank + 1)
        for i in range(max_rank + 1):
            k = by_rank[i]
            if k >= 0:
                out[i] = PyBytes_FromStringAndSize(<char*>blob + tok_at[k], tok_len[k])
        return out
    finally:
        free(blob)
        free(tok_at)
        free(tok_len)
        free(ranks)
        free(lines)
        free(by_rank)
        free(slots)
        free(hashes)


def missing_ranks(list texts):
    """The ranks of `texts` (parse_rank_file's list) that no line gives: its None items,
    found by identity in C (list.index/count compare every bytes item with None).

    >>> missing_ranks([b"a", None, b"c", None])
    [1, 3]
    """
    cdef Py_ssize_t i, n = len(texts)
    cdef list out = []
    for i in range(n):
        if texts[i] is None:
            out.append(i)
    return out


def missing_single_bytes(list texts):
    """The byte values (0-255) that no item of `texts` (parse_rank_file's list) holds as a
    one-byte token, in order.

    >>> missing_single_bytes([b"a", None, b"ab"])[:3]
    [0, 1, 2]
    """
    cdef bint present[256]
    cdef Py_ssize_t i, n = len(texts)
    cdef object text
    for i in range(256):
        present[i] = False
    for i in range(n):
        text = texts[i]
        if text is not None and len(<bytes>text) == 1:
            present[(<bytes>text)[0]] = True
    return [i for i in range(256) if not present[i]]
