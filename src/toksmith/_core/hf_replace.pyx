"""HF tokenizers' Replace normalizer for the patterns that need no regex engine: a literal
string, or a run of one literal character repeated at least m times (`" {2,}"`, `"x+"`).

Parity: tokenizers normalizers/replace.rs (NormalizedString::replace with the pattern's
leftmost, non-overlapping matches; a String pattern is the escaped regex of its text).
A greedy `c{m,}` matches exactly the maximal runs of c that are m or more long.

    >>> LiteralReplace(b" ", b"_", 2).normalize_text("a  b c")
    'a_b c'
"""
from libc.stdint cimport uint64_t
from libc.string cimport memchr, memcmp, memcpy, memset

from toksmith._core.buffers cimport ByteBuf, IdBuf, bytebuf_append, idbuf_free, idbuf_push
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.normalizer cimport NORMALIZED_LATE_START, TEXT_UNCHANGED, Normalizer, replace_carry_start
from toksmith._core.swar cimport first_marked_byte, spread_byte, zero_bytes



cdef inline bint _spans_several_chars(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Whether the UTF-8 text s[0:n] holds more than one character (a second lead byte)."""
    cdef Py_ssize_t i
    for i in range(1, n):
        if (s[i] & 0xC0) != 0x80:
            return True
    return False

cdef class LiteralReplace(Normalizer):
    """Replace each match of `pattern` (min_run 0), or each run of min_run or more
    `pattern`s (one character), by `content`."""

    cdef bytes pattern
    cdef bytes content
    cdef const char* p           # the bytes of pattern and content (kept alive by them)
    cdef const char* c
    cdef Py_ssize_t pl, cl
    cdef readonly Py_ssize_t min_run

    def __cinit__(self, bytes pattern, bytes content, Py_ssize_t min_run=0):
        if not pattern:
            raise ValueError("an empty pattern matches between characters: not a literal replace")
        if min_run < 0:
            raise ValueError("min_run must be 0 (literal) or a run length")
        if min_run and len(pattern.decode("utf-8")) != 1:
            raise ValueError("a run pattern is one character")
        self.pattern = pattern
        self.content = content
        self.p = self.pattern
        self.c = self.content
        self.pl = len(pattern)
        self.cl = len(content)
        self.min_run = min_run

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        if self.pl == 1:
            return self._normalize_byte(s, n, out)
        return self._normalize_string(s, n, out)

    cdef Py_ssize_t carry_start(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t flagged,
                                const unsigned char* o, Py_ssize_t m) noexcept nogil:
        """The matches as normalize finds them (a plain scan), then replace_carry_start.
        Matches that start past the first `flagged` bytes change nothing: the scan stops there."""
        cdef IdBuf pairs
        cdef Py_ssize_t pos = 0, run_end, count, k, pl = self.pl
        memset(&pairs, 0, sizeof(IdBuf))
        while pos + pl <= n and pos < flagged:
            if memcmp(s + pos, self.p, pl) != 0:
                pos += 1
                continue
            run_end = pos + pl
            count = 1
            if self.min_run:
                while run_end + pl <= n and memcmp(s + run_end, self.p, pl) == 0:
                    run_end += pl
                    count += 1
                if count < self.min_run:
                    pos = run_end
                    continue
            if idbuf_push(&pairs, <int>pos) < 0 or idbuf_push(&pairs, <int>run_end) < 0:
                idbuf_free(&pairs)
                return ERR_NO_MEMORY
            pos = run_end
        k = replace_carry_start(pairs.data, pairs.size // 2, n, self.cl, flagged)
        idbuf_free(&pairs)
        return min(k, m)

    cdef int _normalize_byte(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        """A one-byte pattern: 8 bytes at a time past text without a match (a run of
        min_run needs two of the byte side by side when min_run > 1)."""
        cdef unsigned char p0 = <unsigned char>self.p[0]
        cdef uint64_t spread = spread_byte(p0), w, hits
        cdef Py_ssize_t i = 0, j, k, copied = 0
        cdef Py_ssize_t step = 7 if self.min_run > 1 else 8
        cdef bint changed = False, late = False
        out.size = 0
        while i < n:
            # to the next byte of the pattern (8 bytes at a time past text without one, or
            # without two side by side when a run needs two)
            while i + 8 <= n:
                memcpy(&w, s + i, 8)
                hits = zero_bytes(w ^ spread)
                if hits and (step == 8 or hits & (hits >> 8)):
                    i += first_marked_byte(hits)
                    break
                i += step
            if i >= n:
                break
            if s[i] != p0:
                i += 1
                continue
            j = i + 1
            while j < n and s[j] == p0:
                j += 1
            if j - i >= self.min_run:
                # Parity: tokenizers' NormalizedString::replace aligns inserted content with
                # the match's last character, so a first match that removes everything or
                # spans several characters starts the text after the input's first character.
                if i == 0 and (self.cl == 0 or (self.min_run and j - i > 1)):
                    late = True
                if bytebuf_append(out, <const char*>s + copied, i - copied) < 0:
                    return ERR_NO_MEMORY
                # a run is one match; a literal byte matches once per byte
                for k in range(1 if self.min_run else j - i):
                    if bytebuf_append(out, self.c, self.cl) < 0:
                        return ERR_NO_MEMORY
                changed = True
                copied = j
            i = j
        if not changed:
            return TEXT_UNCHANGED
        if bytebuf_append(out, <const char*>s + copied, n - copied) < 0:
            return ERR_NO_MEMORY
        return NORMALIZED_LATE_START if late else 0

    cdef int _normalize_string(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef const char* p = self.p
        cdef const char* c = self.c
        cdef Py_ssize_t pl = self.pl, cl = self.cl
        cdef Py_ssize_t pos = 0, copied = 0, at, run_end, count
        cdef const unsigned char* hit
        cdef bint changed = False, late = False
        out.size = 0
        while pos + pl <= n:
            hit = <const unsigned char*>memchr(s + pos, p[0], n - pos - pl + 1)
            if hit == NULL:
                break
            at = hit - s
            if memcmp(hit, p, pl) != 0:
                pos = at + 1
                continue
            run_end = at + pl
            count = 1
            if self.min_run:
                while run_end + pl <= n and memcmp(s + run_end, p, pl) == 0:
                    run_end += pl
                    count += 1
                if count < self.min_run:
                    pos = run_end
                    continue
            # Parity: as in _normalize_byte (content aligned with the match's last character)
            if at == 0 and (cl == 0 or _spans_several_chars(s, run_end)):
                late = True
            if bytebuf_append(out, <const char*>s + copied, at - copied) < 0 or \
                    bytebuf_append(out, c, cl) < 0:
                return ERR_NO_MEMORY
            changed = True
            copied = run_end
            pos = run_end
        if not changed:
            return TEXT_UNCHANGED
        if bytebuf_append(out, <const char*>s + copied, n - copied) < 0:
            return ERR_NO_MEMORY
        return NORMALIZED_LATE_START if late else 0
