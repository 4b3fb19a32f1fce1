"""llama.cpp's hybriddna session (GGUF ``tokenizer.ggml.model = "hybriddna"``): DNA regions
of a raw-text fragment become k-mer token ids before the ordinary BPE pipeline runs.

Parity: llama.cpp llm_tokenizer_hybriddna_session::tokenize. In every raw-text fragment
(what the special-token splitter leaves, after llama_escape_whitespace for the
gemma4-style pre types), each ``<dna>`` starts a region that ends at the next ``</dna>``
or at the end of the fragment. A region gives the ``<dna>`` id, then its bytes cut in
6-byte k-mers (ASCII a-z upper-cased, a short last k-mer padded with 'A'), each the id of
the token whose text is the k-mer plus the marker U+E000 or else the ``<oov>`` id, then
the ``</dna>`` id when the tag was there. Text outside regions goes through the BPE
session as usual.

`DnaRegionSplitter` is a special-token splitter stage wrapping the file's own splitter:
the engine emits its token ids as they come and encodes its raw-text ranges with the
rest of the pipeline. llama.cpp falls back to the plain BPE session when ``<dna>``,
``</dna>`` or ``<oov>`` is no token; the loader then builds no DnaRegionSplitter.

>>> splitter = DnaRegionSplitter(file_splitter, open_id, close_id, oov_id,   # doctest: +SKIP
...                              {b"ACGTAC": 50693, ...}, escape_spaces=False)
"""
from libc.stdint cimport int32_t, uint64_t
from libc.string cimport memcmp, memmove

from toksmith._core.buffers cimport IdBuf, idbuf_push3
from toksmith._core.specials cimport SpecialSplitter, SplitWork
from toksmith._core.tables cimport U64Map, u64map_free, u64map_get, u64map_init, u64map_put


# Parity: llama-vocab.cpp: k = 6, "<dna>", "</dna>".
cdef enum:
    KMER = 6
    OPEN_LEN = 5
    CLOSE_LEN = 6
cdef const char* OPEN_TAG = "<dna>"
cdef const char* CLOSE_TAG = "</dna>"
# A k-mer's 6 bytes as a map key; the 1 << 48 bit keeps every key non-zero.
cdef uint64_t KEY_BIT = (<uint64_t>1) << 48


cdef inline Py_ssize_t _find(const unsigned char* s, Py_ssize_t start, Py_ssize_t end,
                             const char* tag, Py_ssize_t length) noexcept nogil:
    """Parity: std::string::find(tag, start) within s[:end]; -1 when absent."""
    cdef Py_ssize_t p = start
    while p + length <= end:
        if s[p] == b'<' and memcmp(s + p, tag, length) == 0:
            return p
        p += 1
    return -1


cdef class DnaRegionSplitter(SpecialSplitter):
    """The file's special-token splitter (`inner`, or None), then DNA regions cut out of
    every raw-text range it leaves."""

    cdef readonly SpecialSplitter inner
    cdef int32_t open_id, close_id, oov_id
    cdef bint escape_spaces
    cdef U64Map kmers            # 6 bytes -> id of the token "<those bytes>" + U+E000

    def __cinit__(self, *args, **kwargs):
        self.kmers.slots = NULL

    def __dealloc__(self):
        u64map_free(&self.kmers)

    def __init__(self, SpecialSplitter inner, int open_id, int close_id, int oov_id, dict kmers,
                 *, bint escape_spaces=False):
        """`kmers`: the first 6 bytes of every token whose text is 6 bytes + U+E000, to its id.
        `escape_spaces`: the fragment had ' ' made U+2581 before the session (gemma4 pre types)."""
        cdef bytes kmer
        self.inner = inner
        self.open_id = open_id
        self.close_id = close_id
        self.oov_id = oov_id
        self.escape_spaces = escape_spaces
        # The engine calls this splitter on every text (it always has DNA tags to look for).
        self.has_always = True
        if u64map_init(&self.kmers, len(kmers)) < 0:
            raise MemoryError()
        for kmer, token_id in kmers.items():
            if len(kmer) != KMER:
                raise ValueError(f"a k-mer has {KMER} bytes, not {len(kmer)}: {kmer!r}")
            if u64map_put(&self.kmers, _key(kmer), token_id) < 0:
                raise MemoryError()

    def kmer_id(self, bytes kmer):
        """The id a 6-byte k-mer gets (the <oov> id when no token has it), for tests."""
        if len(kmer) != KMER:
            raise ValueError(f"a k-mer has {KMER} bytes")
        found = u64map_get(&self.kmers, _key(kmer))
        return self.oov_id if found < 0 else found

    cdef int split(self, const unsigned char* s, Py_ssize_t n, bint parse_special,
                   SplitWork* w, IdBuf* segments) noexcept nogil:
        cdef Py_ssize_t k, m
        if self.inner is None or not (parse_special or self.inner.has_always):
            segments.size = 0
            return self._regions(s, 0, n, segments)
        if self.inner.split(s, n, parse_special, w, segments) < 0:
            return -1
        # Expand the inner triples after themselves, then move the result to the front.
        m = segments.size
        for k in range(0, m, 3):
            if segments.data[k] >= 0:
                if idbuf_push3(segments, segments.data[k], segments.data[k + 1], segments.data[k + 2]) < 0:
                    return -1
            elif self._regions(s, segments.data[k + 1], segments.data[k + 2], segments) < 0:
                return -1
        memmove(segments.data, segments.data + m, (segments.size - m) * sizeof(int32_t))
        segments.size -= m
        return 0

    cdef int _regions(self, const unsigned char* s, Py_ssize_t a, Py_ssize_t b,
                      IdBuf* segments) noexcept nogil:
        """Append the segments of the raw-text fragment s[a:b].

        Parity: llm_tokenizer_hybriddna_session::tokenize (the loop over open tags).
        """
        cdef Py_ssize_t pos = a, start, content, end
        while pos < b:
            start = _find(s, pos, b, OPEN_TAG, OPEN_LEN)
            if start < 0:
                return idbuf_push3(segments, -1, pos, b)
            if start > pos and idbuf_push3(segments, -1, pos, start) < 0:
                return -1
            if idbuf_push3(segments, self.open_id, start, start + OPEN_LEN) < 0:
                return -1
            content = start + OPEN_LEN
            end = _find(s, content, b, CLOSE_TAG, CLOSE_LEN)
            if self._kmers(s, content, b if end < 0 else end, segments) < 0:
                return -1
            if end < 0:
                return 0
            if idbuf_push3(segments, self.close_id, end, end + CLOSE_LEN) < 0:
                return -1
            pos = end + CLOSE_LEN
        return 0

    cdef int _kmers(self, const unsigned char* s, Py_ssize_t a, Py_ssize_t b,
                    IdBuf* segments) noexcept nogil:
        """Append the k-mer ids of the region content s[a:b].

        Parity: llm_tokenizer_hybriddna_session::emit_dna_kmers: bytes a-z upper-cased,
        6 bytes per k-mer, the last padded with 'A'; a k-mer no token has is <oov>.
        (With escape_spaces a ' ' counts as the 3 bytes of U+2581, as llama.cpp sees it.)
        """
        cdef unsigned char kmer[KMER]
        cdef unsigned char c
        cdef int filled = 0, j, width
        cdef Py_ssize_t i, kmer_start = a
        for i in range(a, b):
            c = s[i]
            width = 1
            if c == 32 and self.escape_spaces:
                width = 3
            for j in range(width):
                if width == 3:
                    kmer[filled] = 0xE2 if j == 0 else (0x96 if j == 1 else 0x81)
                else:
                    kmer[filled] = c - 32 if 0x61 <= c <= 0x7A else c
                filled += 1
                if filled == KMER:
                    if idbuf_push3(segments, self._lookup(kmer), kmer_start, i + 1) < 0:
                        return -1
                    filled = 0
                    kmer_start = i + 1
        if filled > 0:
            for j in range(filled, KMER):
                kmer[j] = b'A'
            if idbuf_push3(segments, self._lookup(kmer), kmer_start, b) < 0:
                return -1
        return 0

    cdef int32_t _lookup(self, const unsigned char* kmer) noexcept nogil:
        cdef uint64_t key = KEY_BIT
        cdef int32_t found
        cdef int j
        for j in range(KMER):
            key |= (<uint64_t>kmer[j]) << (8 * j)
        found = u64map_get(&self.kmers, key)
        return self.oov_id if found < 0 else found


cdef uint64_t _key(bytes kmer):
    cdef uint64_t key = KEY_BIT
    cdef int j
    for j in range(KMER):
        key |= (<uint64_t>(<unsigned char>kmer[j])) << (8 * j)
    return key
