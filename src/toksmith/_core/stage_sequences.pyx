"""Stages that run other stages in order: `NormalizerSequence` and `PreTokenizerSequence`.

Hugging Face's tokenizer.json composes its normalizers and pre-tokenizers this way
(`{"type": "Sequence", ...}`); any pipeline may use them.

* NormalizerSequence: each member normalizes what the previous one produced.
* PreTokenizerSequence: each member splits every pre-token the previous one produced
  (tokenizers' PreTokenizedString::split); members may rewrite or drop text
  (PRETOK_REWRITTEN), and the sequence then returns pre-tokens of its own text.

    >>> NormalizerSequence([a, b]).normalize_text("x")      # doctest: +SKIP
    >>> PreTokenizerSequence([a, b]).split_text(b"x y")     # doctest: +SKIP
"""
from cpython.ref cimport PyObject
from libc.string cimport memcpy

from toksmith._core.buffers cimport (ByteBuf, IdBuf, bytebuf_append, bytebuf_free, idbuf_push,
                                     idbuf_reserve)
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.normalizer cimport NORMALIZED_LATE_START, TEXT_UNCHANGED, Normalizer
from toksmith._core.pretokenizer cimport (PRETOK_REWRITTEN, PreTokenizer, PreTokenizerWork,
                                          pretok_inner_work)


cdef inline Py_ssize_t _first_char_len(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Bytes of the first character of s[:n] (its lead byte and continuation bytes)."""
    cdef Py_ssize_t k = 1
    if n == 0:
        return 0
    while k < n and (s[k] & 0xC0) == 0x80:
        k += 1
    return k


cdef class NormalizerSequence(Normalizer):
    """Run `members` (Normalizer stages) one after the other.

    Reports TEXT_UNCHANGED when every member did, and NORMALIZED_LATE_START when any
    member dropped the leading characters of what it was given; with `track_start`, when
    no output character is aligned with the input's first character any more, followed
    through every member with carry_start (a member may make several characters of the
    first and a later one drop some of them: Metaspace's prepend_scheme "first").
    """

    cdef readonly tuple members
    cdef readonly bint track_start
    cdef PyObject** items
    cdef Py_ssize_t n

    def __cinit__(self, members, *, bint track_start=False):
        cdef Py_ssize_t i
        self.track_start = track_start
        self.members = tuple(members)
        for m in self.members:
            if not isinstance(m, Normalizer):
                raise TypeError(f"a NormalizerSequence member must be a Normalizer, not {type(m).__name__}")
        self.n = len(self.members)
        self.items = <PyObject**>PyMem_Malloc(max(self.n, 1) * sizeof(PyObject*))
        if self.items == NULL:
            raise MemoryError()
        for i in range(self.n):
            self.items[i] = <PyObject*>self.members[i]   # kept alive by self.members

    def __dealloc__(self):
        PyMem_Free(self.items)

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef ByteBuf tmp
        cdef ByteBuf* bufs[2]
        cdef const unsigned char* cur = s
        cdef Py_ssize_t cur_n = n, i
        cdef int rc, which = 0, result = TEXT_UNCHANGED
        cdef bint late = False
        cdef Py_ssize_t flagged = 0
        tmp.data = NULL
        tmp.size = 0
        tmp.cap = 0
        bufs[0] = out
        bufs[1] = &tmp
        if self.track_start:
            flagged = _first_char_len(s, n)
        for i in range(self.n):
            # write into the buffer `cur` does not live in
            rc = (<Normalizer>self.items[i]).normalize(cur, cur_n, bufs[which])
            if rc < 0:
                bytebuf_free(&tmp)
                return rc
            if rc == TEXT_UNCHANGED:
                continue
            if rc == NORMALIZED_LATE_START:
                late = True
            if self.track_start:
                flagged = (<Normalizer>self.items[i]).carry_start(
                    cur, cur_n, flagged, <const unsigned char*>bufs[which].data, bufs[which].size)
                if flagged < 0:
                    bytebuf_free(&tmp)
                    return <int>flagged
                late = flagged == 0
            cur = <const unsigned char*>bufs[which].data
            cur_n = bufs[which].size
            result = 0
            which ^= 1
        if result == TEXT_UNCHANGED:
            bytebuf_free(&tmp)
            return TEXT_UNCHANGED
        if cur != <const unsigned char*>out.data:
            # the last member wrote tmp: hand its memory to `out`
            bytebuf_free(out)
            out.data = tmp.data
            out.size = tmp.size
            out.cap = tmp.cap
        else:
            bytebuf_free(&tmp)
        return NORMALIZED_LATE_START if late else 0


cdef class PreTokenizerSequence(PreTokenizer):
    """Run `members` (PreTokenizer stages) in order, each on every pre-token of the last.

    Parity: tokenizers pre_tokenizers/sequence.rs, each member's `pre_tokenize` applied
    to every split that the members before it produced.
    """

    cdef readonly tuple members
    cdef PyObject** items
    cdef Py_ssize_t n

    def __cinit__(self, members):
        cdef Py_ssize_t i
        self.members = tuple(members)
        for m in self.members:
            if not isinstance(m, PreTokenizer):
                raise TypeError(f"a PreTokenizerSequence member must be a PreTokenizer, not {type(m).__name__}")
        self.n = len(self.members)
        self.items = <PyObject**>PyMem_Malloc(max(self.n, 1) * sizeof(PyObject*))
        if self.items == NULL:
            raise MemoryError()
        for i in range(self.n):
            self.items[i] = <PyObject*>self.members[i]

    def __dealloc__(self):
        PyMem_Free(self.items)

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        # The pre-tokens of one level are pieces of `base` ending at `cur_ends`. A level
        # whose members only cut keeps `base`; a level where a member rewrote gets a text
        # of its own (work.text / work.text2 in turn).
        cdef const unsigned char* base = s
        cdef IdBuf* cur_ends = &work.a
        cdef IdBuf* next_ends = &work.b
        cdef IdBuf* swap_ends
        cdef ByteBuf* texts[2]
        cdef ByteBuf* next_text
        cdef PreTokenizerWork* inner
        cdef Py_ssize_t i, k, j, start, end, piece_start
        cdef int rc, level_text = -1     # which of texts `base` is, -1: s
        cdef bint rewritten, first_kept = True
        if n == 0:
            return 0
        texts[0] = &work.text
        texts[1] = &work.text2
        inner = pretok_inner_work(work)
        if inner == NULL:
            return ERR_NO_MEMORY
        cur_ends.size = 0
        if idbuf_push(cur_ends, <int>n) < 0:
            return ERR_NO_MEMORY
        for i in range(self.n):
            next_ends.size = 0
            next_text = texts[1] if level_text == 0 else texts[0]
            next_text.size = 0
            rewritten = False
            start = 0
            for k in range(cur_ends.size):
                end = cur_ends.data[k]
                inner.at_input_start = work.at_input_start and first_kept and k == 0
                work.c.size = 0
                rc = (<PreTokenizer>self.items[i]).split(base + start, end - start, inner, &work.c)
                if rc < 0:
                    return rc
                if rc == PRETOK_REWRITTEN:
                    if k == 0 and inner.dropped_start:
                        first_kept = False
                    if not rewritten:
                        # first rewrite of this level: the pieces before it move into a text
                        rewritten = True
                        if bytebuf_append(next_text, <const char*>base, start) < 0:
                            return ERR_NO_MEMORY
                if rewritten:
                    piece_start = next_text.size
                    if rc == PRETOK_REWRITTEN:
                        if bytebuf_append(next_text, inner.text.data, inner.text.size) < 0:
                            return ERR_NO_MEMORY
                    elif bytebuf_append(next_text, <const char*>base + start, end - start) < 0:
                        return ERR_NO_MEMORY
                else:
                    piece_start = start
                if idbuf_reserve(next_ends, work.c.size) < 0:
                    return ERR_NO_MEMORY
                for j in range(work.c.size):
                    next_ends.data[next_ends.size] = <int>(piece_start + work.c.data[j])
                    next_ends.size += 1
                start = end
            if rewritten:
                base = <const unsigned char*>next_text.data
                level_text = 1 if next_text == texts[1] else 0
            swap_ends = cur_ends
            cur_ends = next_ends
            next_ends = swap_ends
            if cur_ends.size == 0:
                break
        if idbuf_reserve(ends, cur_ends.size) < 0:
            return ERR_NO_MEMORY
        memcpy(ends.data + ends.size, cur_ends.data, cur_ends.size * sizeof(ends.data[0]))
        ends.size += cur_ends.size
        if level_text < 0:
            return 0
        work.dropped_start = not first_kept or cur_ends.size == 0
        if level_text == 1:
            _swap_texts(&work.text, &work.text2)   # the caller reads work.text
        return PRETOK_REWRITTEN


cdef inline void _swap_texts(ByteBuf* a, ByteBuf* b) noexcept nogil:
    cdef ByteBuf t = a[0]
    a[0] = b[0]
    b[0] = t


from cpython.mem cimport PyMem_Free, PyMem_Malloc
