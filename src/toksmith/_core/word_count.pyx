"""Counting the pre-tokens of a corpus with a tokenizer.json's own compiled stages.

`WordCounter(normalizer, pretokenizer, raw_splitter, normalized_splitter, byte_map)`
holds the stages toksmith.hf builds for encoding; `add(blocks, by_lines, threads)`
runs them over text blocks on the core's thread pool (each block counted into its
own table, the tables merged in block order, so the result never depends on the
thread count) and `words()` gives the distinct words, in order of first appearance,
with their counts:

>>> counter = WordCounter(None, None, None, None, None)            # doctest: +SKIP
>>> counter.add([b"a b\\na b\\n"], [None], 2); counter.words()       # doctest: +SKIP
(b'a b\\n', array('q', [0, 4]), array('Q', [2]))

Parity: tokenizers 0.23.3 tokenizer/mod.rs `train_from_files` / `train`: each sequence
(a file line with its ending, or one item of an iterator) goes through
AddedVocabulary::extract_and_normalize (added tokens split out of the raw text, the
rest normalized, `normalized` added tokens split out of that), then the pre-tokenizer;
every split, an added token's included, is one word (BpeTrainer::feed). An added
token's text stays as it was matched (whitespace its lstrip/rstrip took included); the
others' are what the pre-tokenizer made of them, mapped through GPT-2's byte->unicode
table when `byte_map` is given (the byte-level splitters leave bytes raw).
"""
from array import array

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy, memset

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

from toksmith._core.buffers cimport ByteBuf, IdBuf, bytebuf_free, idbuf_free
from toksmith._core.normalizer cimport NORMALIZED_LATE_START, TEXT_UNCHANGED, Normalizer
from toksmith._core.pretokenizer cimport PRETOK_REWRITTEN, PreTokenizer, PreTokenizerWork, pretok_work_free
from toksmith._core.specials cimport SpecialSplitter, SplitWork, split_work_free
from toksmith._core.threadpool cimport parallel_for
from toksmith._core.bpe_tables cimport _utf8_len
from toksmith._core.word_table cimport WordTable, table_add, table_free

# ------------------------------------------------------------------ one thread's pass

cdef struct Scratch:
    ByteBuf norm
    ByteBuf key
    PreTokenizerWork pretok
    IdBuf ends
    SplitWork split_raw
    IdBuf segments_raw
    SplitWork split_norm
    IdBuf segments_norm


cdef struct Job:
    const unsigned char** blocks
    Py_ssize_t* sizes
    const int64_t** ends  # per block: where its sequences end, or NULL (by lines)
    Py_ssize_t* n_ends
    WordTable* tables     # one per block
    int* status           # one per block: 0 or a negative error code
    void* counter         # the WordCounter (alive for the whole call)


cdef int _add_word(WordTable* t, Scratch* sc, char tag, const unsigned char* s, Py_ssize_t n) noexcept nogil:
    if n == 0:
        return 0
    sc.key.size = 0
    if sc.key.cap < n + 1:
        free(sc.key.data)
        sc.key.data = <char*>malloc(n + 1)
        if sc.key.data == NULL:
            sc.key.cap = 0
            return -1
        sc.key.cap = n + 1
    sc.key.data[0] = tag
    memcpy(sc.key.data + 1, s, n)
    return -1 if table_add(t, sc.key.data, n + 1, 1) < 0 else 0


cdef class WordCounter:
    """See the module docstring."""
    cdef Normalizer normalizer
    cdef PreTokenizer pretokenizer
    cdef SpecialSplitter raw_splitter
    cdef SpecialSplitter normalized_splitter
    cdef char byte_map[256][4]      # GPT-2's character of each byte, UTF-8 (length in [3])
    cdef bint map_bytes
    cdef WordTable total
    cdef readonly Py_ssize_t bytes_seen

    def __init__(self, Normalizer normalizer, PreTokenizer pretokenizer, SpecialSplitter raw_splitter,
                 SpecialSplitter normalized_splitter, list byte_map):
        cdef int b
        self.normalizer = normalizer
        self.pretokenizer = pretokenizer
        self.raw_splitter = raw_splitter
        self.normalized_splitter = normalized_splitter
        self.map_bytes = byte_map is not None
        if byte_map is not None:
            for b in range(256):
                text = byte_map[b]
                memcpy(self.byte_map[b], <const char*>text, len(text))
                self.byte_map[b][3] = len(text)

    def __dealloc__(self):
        table_free(&self.total)

    cdef int _pretokenized(self, WordTable* t, Scratch* sc, const unsigned char* s, Py_ssize_t n,
                           bint at_start) noexcept nogil:
        cdef Py_ssize_t k, prev = 0
        cdef int rc
        if self.pretokenizer is None:
            return _add_word(t, sc, 0, s, n)
        sc.ends.size = 0
        sc.pretok.at_input_start = at_start
        rc = self.pretokenizer.split(s, n, &sc.pretok, &sc.ends)
        if rc < 0:
            return rc
        if rc == PRETOK_REWRITTEN:
            s = <const unsigned char*>sc.pretok.text.data
        for k in range(sc.ends.size):
            if _add_word(t, sc, 0, s + prev, sc.ends.data[k] - prev) < 0:
                return -1
            prev = sc.ends.data[k]
        return 0

    cdef int _fragment(self, WordTable* t, Scratch* sc, const unsigned char* s, Py_ssize_t n,
                       bint at_start) noexcept nogil:
        """Normalize raw text (no added token in it), split out the normalized added
        tokens, pre-tokenize the rest."""
        cdef int rc
        cdef Py_ssize_t k, a, b
        cdef const unsigned char* norm = s
        cdef Py_ssize_t size = n
        if n == 0:
            return 0
        if self.normalizer is not None:
            rc = self.normalizer.normalize(s, n, &sc.norm)
            if rc < 0:
                return rc
            if rc != TEXT_UNCHANGED:
                norm = <const unsigned char*>sc.norm.data
                size = sc.norm.size
                if rc == NORMALIZED_LATE_START:
                    at_start = False
        if size == 0:
            return 0
        if self.normalized_splitter is None:
            return self._pretokenized(t, sc, norm, size, at_start)
        if self.normalized_splitter.split(norm, size, True, &sc.split_norm, &sc.segments_norm) < 0:
            return -1
        for k in range(0, sc.segments_norm.size, 3):
            a = sc.segments_norm.data[k + 1]
            b = sc.segments_norm.data[k + 2]
            if sc.segments_norm.data[k] >= 0:
                rc = _add_word(t, sc, 1, norm + a, b - a)
            else:
                rc = self._pretokenized(t, sc, norm + a, b - a, at_start and a == 0)
            if rc < 0:
                return rc
        return 0

    cdef int _sequence(self, WordTable* t, Scratch* sc, const unsigned char* s, Py_ssize_t n) noexcept nogil:
        cdef Py_ssize_t k, a, b
        cdef int rc
        if self.raw_splitter is None:
            return self._fragment(t, sc, s, n, True)
        if self.raw_splitter.split(s, n, True, &sc.split_raw, &sc.segments_raw) < 0:
            return -1
        for k in range(0, sc.segments_raw.size, 3):
            a = sc.segments_raw.data[k + 1]
            b = sc.segments_raw.data[k + 2]
            if sc.segments_raw.data[k] >= 0:
                rc = _add_word(t, sc, 1, s + a, b - a)
            else:
                rc = self._fragment(t, sc, s + a, b - a, a == 0)
            if rc < 0:
                return rc
        return 0

    cdef int _block(self, WordTable* t, Scratch* sc, const unsigned char* s, Py_ssize_t n,
                    const int64_t* ends, Py_ssize_t n_ends) noexcept nogil:
        """Count one block: sequences ending at `ends`, or (ends NULL) one per line, ending kept."""
        cdef const unsigned char* nl
        cdef Py_ssize_t i = 0, end, k
        cdef int rc
        if ends != NULL:
            for k in range(n_ends):
                rc = self._sequence(t, sc, s + i, ends[k] - i)
                if rc < 0:
                    return rc
                i = ends[k]
            return 0
        while i < n:
            nl = <const unsigned char*>memchr(s + i, 10, n - i)
            end = (nl - s) + 1 if nl != NULL else n
            rc = self._sequence(t, sc, s + i, end - i)
            if rc < 0:
                return rc
            i = end
        return 0

    def add(self, list blocks, list ends, int threads):
        """Count the words of `blocks` (UTF-8 bytes); `ends[i]`: array('q') of where the
        sequences of block i end, or None (its lines are the sequences)."""
        cdef Py_ssize_t n = len(blocks), i, k
        cdef Job job
        cdef int rc = 0
        cdef const unsigned char* key
        if n == 0:
            return
        job.blocks = <const unsigned char**>calloc(n, sizeof(char*))
        job.sizes = <Py_ssize_t*>calloc(n, sizeof(Py_ssize_t))
        job.tables = <WordTable*>calloc(n, sizeof(WordTable))
        job.status = <int*>calloc(n, sizeof(int))
        job.ends = <const int64_t**>calloc(n, sizeof(int64_t*))
        job.n_ends = <Py_ssize_t*>calloc(n, sizeof(Py_ssize_t))
        cdef const int64_t[::1] view
        keep = []
        job.counter = <void*>self
        try:
            if (job.blocks == NULL or job.sizes == NULL or job.tables == NULL or job.status == NULL
                    or job.ends == NULL or job.n_ends == NULL):
                raise MemoryError()
            for i in range(n):
                if ends[i] is not None:
                    view = ends[i]
                    keep.append(view)
                    job.n_ends[i] = view.shape[0]
                    job.ends[i] = &view[0] if view.shape[0] else NULL
                    if view.shape[0] and view[view.shape[0] - 1] != len(<bytes>blocks[i]):
                        raise ValueError("sequence ends do not cover the block")
                job.blocks[i] = <const unsigned char*>(<bytes>blocks[i])
                job.sizes[i] = len(<bytes>blocks[i])
                self.bytes_seen += job.sizes[i]
            with nogil:
                parallel_for(n, 1, threads, _count_range, &job)
                for i in range(n):
                    if job.status[i] < 0:
                        rc = job.status[i]
                        break
                    for k in range(job.tables[i].n):
                        if table_add(&self.total, job.tables[i].data + job.tables[i].starts[k],
                                     job.tables[i].starts[k + 1] - job.tables[i].starts[k],
                                     job.tables[i].counts[k]) < 0:
                            rc = -1
                            break
                    table_free(&job.tables[i])
                    if rc < 0:
                        break
            if rc < 0:
                from toksmith._core.errors import raise_for_status
                raise_for_status(rc)
        finally:
            if job.tables != NULL:
                for i in range(n):
                    table_free(&job.tables[i])
            free(job.blocks)
            free(job.sizes)
            free(job.tables)
            free(job.status)
            free(job.ends)
            free(job.n_ends)

    def words(self):
        """(UTF-8 of every distinct word back to back, offsets array('q'), counts array('Q')),
        in order of first appearance; words that come out equal (an added token's text
        and a mapped pre-token) are one word."""
        cdef Py_ssize_t i, j, length, size = 0, n = self.total.n
        cdef bint pretokens = False, added = False
        cdef const unsigned char* key
        for i in range(n):              # the kinds of key, and the output's size
            key = <const unsigned char*>self.total.data + self.total.starts[i]
            length = self.total.starts[i + 1] - self.total.starts[i]
            if key[0] == 0:
                pretokens = True
            else:
                added = True
            if key[0] == 0 and self.map_bytes:
                for j in range(1, length):
                    size += self.byte_map[key[j]][3]
            else:
                size += length - 1
        if pretokens and added:
            return self._merged_words()
        # No two keys can come out equal (all are pre-tokens, byte_map is one-to-one, or all
        # are added tokens): written straight out.
        blob = PyBytes_FromStringAndSize(NULL, size)
        offsets = array("q", [0]) * (n + 1)
        counts = array("Q", [0]) * n
        cdef char* out = PyBytes_AS_STRING(blob)
        cdef int64_t[::1] offset_view = offsets
        cdef uint64_t[::1] count_view = counts
        cdef Py_ssize_t at = 0
        with nogil:
            for i in range(n):
                key = <const unsigned char*>self.total.data + self.total.starts[i]
                length = self.total.starts[i + 1] - self.total.starts[i]
                if key[0] == 0 and self.map_bytes:
                    for j in range(1, length):
                        memcpy(out + at, self.byte_map[key[j]], self.byte_map[key[j]][3])
                        at += self.byte_map[key[j]][3]
                else:
                    memcpy(out + at, key + 1, length - 1)
                    at += length - 1
                offset_view[i + 1] = at
                count_view[i] = self.total.counts[i]
        return blob, offsets, counts

    def _merged_words(self):
        """`words()` where a mapped pre-token may equal an added token's text: the words
        re-counted in a table of their own (the first appearance keeps the place)."""
        cdef WordTable final
        cdef ByteBuf buf
        cdef Py_ssize_t i, j, size
        cdef const unsigned char* key
        cdef int rc = 0
        cdef int64_t[::1] offset_view
        cdef uint64_t[::1] count_view
        memset(&final, 0, sizeof(WordTable))
        memset(&buf, 0, sizeof(ByteBuf))
        try:
            with nogil:
                for i in range(self.total.n):
                    key = <const unsigned char*>self.total.data + self.total.starts[i]
                    size = self.total.starts[i + 1] - self.total.starts[i]
                    if key[0] == 0 and self.map_bytes:
                        if buf.cap < 4 * size:
                            free(buf.data)
                            buf.data = <char*>malloc(4 * size)
                            if buf.data == NULL:
                                buf.cap = 0
                                rc = -1
                                break
                            buf.cap = 4 * size
                        buf.size = 0
                        for j in range(1, size):
                            memcpy(buf.data + buf.size, self.byte_map[key[j]], self.byte_map[key[j]][3])
                            buf.size += self.byte_map[key[j]][3]
                        rc = table_add(&final, buf.data, buf.size, self.total.counts[i])
                    else:
                        rc = table_add(&final, <const char*>key + 1, size - 1, self.total.counts[i])
                    if rc < 0:
                        break
            if rc < 0:
                raise MemoryError()
            offsets = array("q", [0]) * (final.n + 1)
            counts = array("Q", [0]) * final.n
            offset_view = offsets
            count_view = counts
            for i in range(final.n):
                offset_view[i + 1] = final.starts[i + 1]
                count_view[i] = final.counts[i]
            return (final.data[:final.size] if final.n else b""), offsets, counts
        finally:
            table_free(&final)
            bytebuf_free(&buf)

    @property
    def n_words(self):
        return self.total.n


cdef void _count_range(void* ctx, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    cdef Job* job = <Job*>ctx
    cdef Scratch sc
    cdef Py_ssize_t i
    memset(&sc, 0, sizeof(Scratch))
    for i in range(start, end):
        job.status[i] = (<WordCounter>job.counter)._block(&job.tables[i], &sc, job.blocks[i], job.sizes[i],
                                                          job.ends[i], job.n_ends[i])
    bytebuf_free(&sc.norm)
    bytebuf_free(&sc.key)
    pretok_work_free(&sc.pretok)
    idbuf_free(&sc.ends)
    split_work_free(&sc.split_raw)
    idbuf_free(&sc.segments_raw)
    split_work_free(&sc.split_norm)
    idbuf_free(&sc.segments_norm)


def char_counts(const unsigned char[::1] words, const int64_t[::1] offsets, const uint64_t[::1] counts):
    """{code point: how often it occurs} in the words of `words()`, each word counted
    `counts[i]` times. Parity: trainer.rs `compute_alphabet` (the alphabet of the words).

    >>> char_counts(b"abca", array("q", [0, 3, 4]), array("Q", [2, 1]))   # doctest: +SKIP
    {97: 3, 98: 2, 99: 2}"""
    cdef Py_ssize_t n_words = offsets.shape[0] - 1, w, i, end, clen
    cdef uint64_t* totals = <uint64_t*>calloc(0x110000, sizeof(uint64_t))
    cdef uint32_t cp
    cdef const unsigned char* s = &words[0] if words.shape[0] else NULL
    if totals == NULL:
        raise MemoryError()
    try:
        with nogil:
            for w in range(n_words):
                i = offsets[w]
                end = offsets[w + 1]
                while i < end:
                    clen = _utf8_len(s[i])
                    if i + clen > end:      # never past the word (words are valid UTF-8)
                        break
                    if clen == 1:
                        cp = s[i]
                    elif clen == 2:
                        cp = ((s[i] & 0x1F) << 6) | (s[i + 1] & 0x3F)
                    elif clen == 3:
                        cp = ((s[i] & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
                    else:
                        cp = (((s[i] & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6)
                              | (s[i + 3] & 0x3F))
                    totals[cp] += counts[w]
                    i += clen
        return {<int>c: totals[c] for c in range(0x110000) if totals[c]}
    finally:
        free(totals)
