"""The sentences sentencepiece's trainers learn from, read and normalized natively.

`SpmSentences` holds normalized sentences (UTF-8, back to back) with their frequencies.
`add` reads corpus blocks: each line (or each given sequence) is one sentence; as
sentencepiece's TrainerInterface::LoadSentences does, empty and too long sentences and
those holding U+2585 are skipped, the rest normalized (the model's charsmap and
whitespace rules), every meta piece in the result (<unk>, <s>, user-defined symbols, ...)
and the pretokenization delimiter replaced by U+001F, and empty results dropped. Blocks
are normalized in parallel, appended in block order (the result never depends on the
thread count).

>>> from toksmith._core.normalizer import SentencePieceNormalizer
>>> from toksmith._core.trie import DoubleArrayTrie
>>> s = SpmSentences()
>>> meta = DoubleArrayTrie.build([b"<s>"], [0])
>>> s.add([b"Hello  world\\n\\n<s> hi\\n"], [None], SentencePieceNormalizer(b""), meta, b"", 4192, 1)
0
>>> s.texts()
['▁Hello▁world', '▁\\x1f▁hi']
"""
from array import array

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memchr, memcmp, memcpy, memset

from toksmith._core.buffers cimport ByteBuf, bytebuf_append, bytebuf_free, bytebuf_push, bytebuf_reserve
from toksmith._core.normalizer cimport TEXT_UNCHANGED, Normalizer
from toksmith._core.threadpool cimport parallel_for
from toksmith._core.trie cimport DoubleArrayTrie
from toksmith._core.spm_piece_rules cimport decode_char
from toksmith._core.utf8 cimport one_char_len
from toksmith._core.word_table cimport WordTable, table_add, table_free

from toksmith._core.errors import raise_for_status


cdef struct I64Buf:
    int64_t* data
    Py_ssize_t size
    Py_ssize_t cap


cdef int i64_push(I64Buf* b, int64_t v) noexcept nogil:
    cdef Py_ssize_t cap
    cdef int64_t* p
    if b.size == b.cap:
        cap = b.cap * 2 if b.cap else 256
        p = <int64_t*>realloc(b.data, cap * sizeof(int64_t))
        if p == NULL:
            return -1
        b.data = p
        b.cap = cap
    b.data[b.size] = v
    b.size += 1
    return 0


cdef struct BlockJob:
    const unsigned char** blocks
    Py_ssize_t* sizes
    const int64_t** ends        # NULL: one sentence per line ("\n" not included)
    Py_ssize_t* n_ends
    ByteBuf* outs               # per block: the kept sentences back to back
    I64Buf* lengths             # per block: their lengths
    Py_ssize_t* too_long        # per block: sentences skipped as too long
    int* status
    void* normalizer
    void* meta                  # the DoubleArrayTrie of meta pieces, or NULL
    const char* delimiter
    Py_ssize_t delimiter_size
    Py_ssize_t max_length
    bint keep_empty             # keep sentences that normalize to nothing (as empty ones)


cdef bint _has_unk_char(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """s holds U+2585 (E2 96 85), sentencepiece's kUNKStr."""
    cdef Py_ssize_t i
    for i in range(n - 2):
        if s[i] == 0xE2 and s[i + 1] == 0x96 and s[i + 2] == 0x85:
            return True
    return False


cdef int _replace_meta(const BlockJob* job, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
    """Append s[:n] to out with every meta piece (longest match first, at character
    starts) and every delimiter replaced by U+001F. Parity: normalizer.cc
    PrefixMatcher::GlobalReplace with kPretokenizationBoundaryStr, then (trainer_interface.cc
    LoadSentences) absl::StrReplaceAll of pretokenization_delimiter."""
    cdef Py_ssize_t i = 0, m, start = out.size, j, k
    cdef int32_t value
    if bytebuf_reserve(out, n) < 0:
        return -1
    while i < n:
        m = 0
        if job.meta != NULL:
            m = (<DoubleArrayTrie>job.meta).longest_prefix(s + i, n - i, &value)
        if m > 0:
            out.data[out.size] = 0x1F
            out.size += 1
            i += m
            continue
        m = one_char_len(s[i])
        if m > n - i:
            m = n - i
        memcpy(out.data + out.size, s + i, m)
        out.size += m
        i += m
    if job.delimiter_size == 0 or out.size - start < job.delimiter_size:
        return 0
    # Replace the delimiter left to right, non-overlapping, in place (it only shrinks).
    j = start
    k = start
    while j < out.size:
        if j + job.delimiter_size <= out.size and \
                memcmp(out.data + j, job.delimiter, job.delimiter_size) == 0:
            out.data[k] = 0x1F
            k += 1
            j += job.delimiter_size
        else:
            out.data[k] = out.data[j]
            k += 1
            j += 1
    out.size = k
    return 0


cdef int _sentence(const BlockJob* job, Py_ssize_t b, ByteBuf* norm, const unsigned char* s,
                   Py_ssize_t n) noexcept nogil:
    cdef int rc
    cdef Py_ssize_t before
    cdef const unsigned char* text = s
    cdef Py_ssize_t size = n
    if n == 0:
        return 0
    if n > job.max_length:
        job.too_long[b] += 1
        return 0
    if _has_unk_char(s, n):
        return 0
    rc = (<Normalizer>job.normalizer).normalize(s, n, norm)
    if rc < 0:
        return rc
    if rc != TEXT_UNCHANGED:
        text = <const unsigned char*>norm.data
        size = norm.size
    before = job.outs[b].size
    if size > 0 and _replace_meta(job, text, size, &job.outs[b]) < 0:
        return -1
    if job.outs[b].size == before and not job.keep_empty:
        return 0
    return i64_push(&job.lengths[b], job.outs[b].size - before)


cdef void _normalize_blocks(void* ctx, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    cdef BlockJob* job = <BlockJob*>ctx
    cdef ByteBuf norm
    cdef Py_ssize_t b, i, e, k
    cdef const unsigned char* s
    cdef const unsigned char* nl
    cdef int rc
    memset(&norm, 0, sizeof(ByteBuf))
    for b in range(start, end):
        s = job.blocks[b]
        rc = 0
        i = 0
        if job.ends[b] != NULL:
            for k in range(job.n_ends[b]):
                rc = _sentence(job, b, &norm, s + i, job.ends[b][k] - i)
                if rc < 0:
                    break
                i = job.ends[b][k]
        else:
            while i < job.sizes[b]:
                nl = <const unsigned char*>memchr(s + i, 10, job.sizes[b] - i)
                e = (nl - s) if nl != NULL else job.sizes[b]
                # Parity: std::getline: the line without its "\n" ("\r" stays)
                rc = _sentence(job, b, &norm, s + i, e - i)
                if rc < 0:
                    break
                i = e + 1
        job.status[b] = rc
    bytebuf_free(&norm)


cdef struct WordSort:
    const char* blob
    const int64_t* offsets
    const int64_t* freqs


cdef WordSort* _sort_ctx = NULL     # qsort has no context argument; guarded by the GIL


cdef int _by_freq_then_text(const void* a, const void* b) noexcept nogil:
    """Parity: util.h Sorted(): frequency descending, then the text ascending (bytes)."""
    cdef int64_t i = (<const int64_t*>a)[0], j = (<const int64_t*>b)[0]
    cdef const WordSort* c = _sort_ctx
    cdef int64_t fi = c.freqs[i], fj = c.freqs[j]
    cdef Py_ssize_t li, lj, m
    cdef int r
    if fi != fj:
        return -1 if fi > fj else 1
    li = c.offsets[i + 1] - c.offsets[i]
    lj = c.offsets[j + 1] - c.offsets[j]
    m = li if li < lj else lj
    r = memcmp(c.blob + c.offsets[i], c.blob + c.offsets[j], m)
    if r != 0:
        return r
    return (li > lj) - (li < lj)


cdef class SpmSentences:
    """Sentences (or words) with frequencies; see the module docstring."""

    def __cinit__(self):
        self.blob = NULL
        self.size = self.cap = 0
        self.offsets = <int64_t*>malloc(sizeof(int64_t))
        if self.offsets == NULL:
            raise MemoryError()
        self.offsets[0] = 0
        self.freqs = NULL
        self.n = self.n_cap = 0

    def __dealloc__(self):
        free(self.blob)
        free(self.offsets)
        free(self.freqs)

    def __len__(self):
        return self.n

    @property
    def total_bytes(self):
        """Bytes of all sentences, each counted as often as it occurs."""
        cdef int64_t total = 0
        cdef Py_ssize_t i
        for i in range(self.n):
            total += (self.offsets[i + 1] - self.offsets[i]) * self.freqs[i]
        return total

    @property
    def blob_bytes(self):
        return self.size

    cdef int _append(self, const char* s, Py_ssize_t length, int64_t freq) except -1:
        cdef Py_ssize_t cap
        cdef char* p
        cdef int64_t* q
        if self.size + length > self.cap:
            cap = self.cap * 2 if self.cap else 1 << 16
            while cap < self.size + length:
                cap *= 2
            p = <char*>realloc(self.blob, cap)
            if p == NULL:
                raise MemoryError()
            self.blob = p
            self.cap = cap
        if self.n == self.n_cap:
            cap = self.n_cap * 2 if self.n_cap else 1024
            q = <int64_t*>realloc(self.offsets, (cap + 1) * sizeof(int64_t))
            if q == NULL:
                raise MemoryError()
            self.offsets = q
            q = <int64_t*>realloc(self.freqs, cap * sizeof(int64_t))
            if q == NULL:
                raise MemoryError()
            self.freqs = q
            self.n_cap = cap
        memcpy(self.blob + self.size, s, length)
        self.size += length
        self.freqs[self.n] = freq
        self.n += 1
        self.offsets[self.n] = self.size
        return 0

    def append(self, bytes text, int64_t freq=1):
        """Add one sentence as it is (no normalization)."""
        self._append(<const char*>text, len(text), freq)

    def add(self, list blocks, list ends, Normalizer normalizer, DoubleArrayTrie meta, bytes delimiter,
            Py_ssize_t max_length, int threads, bint keep_empty=False):
        """Read, normalize and keep the sentences of `blocks` (see the module docstring);
        `ends[i]`: array('q') of where the sequences of block i end, or None (its lines);
        `keep_empty`: a sentence that normalizes to nothing is kept (empty) rather than
        dropped. Returns how many sentences were skipped as longer than `max_length` bytes."""
        cdef Py_ssize_t n = len(blocks), i, k, pos
        cdef BlockJob job
        cdef const int64_t[::1] view
        cdef Py_ssize_t skipped = 0
        if n == 0:
            return 0
        memset(&job, 0, sizeof(BlockJob))
        keep = []
        try:
            job.blocks = <const unsigned char**>calloc(n, sizeof(char*))
            job.sizes = <Py_ssize_t*>calloc(n, sizeof(Py_ssize_t))
            job.ends = <const int64_t**>calloc(n, sizeof(int64_t*))
            job.n_ends = <Py_ssize_t*>calloc(n, sizeof(Py_ssize_t))
            job.outs = <ByteBuf*>calloc(n, sizeof(ByteBuf))
            job.lengths = <I64Buf*>calloc(n, sizeof(I64Buf))
            job.too_long = <Py_ssize_t*>calloc(n, sizeof(Py_ssize_t))
            job.status = <int*>calloc(n, sizeof(int))
            if (job.blocks == NULL or job.sizes == NULL or job.ends == NULL or job.n_ends == NULL
                    or job.outs == NULL or job.lengths == NULL or job.too_long == NULL or job.status == NULL):
                raise MemoryError()
            for i in range(n):
                job.blocks[i] = <const unsigned char*>(<bytes>blocks[i])
                job.sizes[i] = len(<bytes>blocks[i])
                if ends[i] is not None:
                    view = ends[i]
                    keep.append(view)
                    job.n_ends[i] = view.shape[0]
                    job.ends[i] = &view[0] if view.shape[0] else NULL
            job.normalizer = <void*>normalizer
            job.meta = <void*>meta if meta is not None and meta.num_keys else NULL
            job.delimiter = <const char*>delimiter
            job.delimiter_size = len(delimiter)
            job.max_length = max_length
            job.keep_empty = keep_empty
            with nogil:
                parallel_for(n, 1, threads, _normalize_blocks, &job)
            for i in range(n):
                raise_for_status(job.status[i])
                if job.status[i] < 0:
                    raise MemoryError()
                skipped += job.too_long[i]
                pos = 0
                for k in range(job.lengths[i].size):
                    self._append(job.outs[i].data + pos, job.lengths[i].data[k], 1)
                    pos += job.lengths[i].data[k]
            return skipped
        finally:
            if job.outs != NULL:
                for i in range(n):
                    bytebuf_free(&job.outs[i])
            if job.lengths != NULL:
                for i in range(n):
                    free(job.lengths[i].data)
            free(job.blocks)
            free(job.sizes)
            free(job.ends)
            free(job.n_ends)
            free(job.outs)
            free(job.lengths)
            free(job.too_long)
            free(job.status)

    def char_counts(self):
        """{code point: occurrences} over every sentence (weighted by frequency), valid
        code points other than NUL only. Parity: trainer_interface.cc LoadSentences
        (chars_count; a space in a normalized sentence is an error there and here)."""
        cdef uint64_t* totals = <uint64_t*>calloc(0x110000, sizeof(uint64_t))
        cdef Py_ssize_t w, i, end
        cdef uint32_t c
        cdef int length
        cdef bint space = False
        if totals == NULL:
            raise MemoryError()
        try:
            with nogil:
                for w in range(self.n):
                    i = self.offsets[w]
                    end = self.offsets[w + 1]
                    while i < end:
                        c = decode_char(<const unsigned char*>self.blob + i, end - i, &length)
                        i += length
                        if c == 0 or c >= 0x110000 or (0xD800 <= c < 0xE000):
                            continue
                        if c == 0x20:
                            space = True
                            continue
                        totals[c] += self.freqs[w]
            if space:
                raise ValueError("space must not be included in normalized string "
                                 "(sentencepiece's trainer needs escape_whitespaces)")
            return {<int>c: totals[c] for c in range(0x110000) if totals[c]}
        finally:
            free(totals)

    def replace_rare(self, bytes allowed):
        """Replace every character whose bit is not set in `allowed` (a bitmap of 0x110000
        bits) with U+2585. Parity: trainer_interface.cc LoadSentences (characters not in
        required_chars_ become kUNKChar)."""
        cdef const unsigned char* bits = <const unsigned char*>allowed
        cdef char* out
        cdef Py_ssize_t w, i, end, o = 0, start
        cdef uint32_t c
        cdef int length
        if len(allowed) * 8 < 0x110000:
            raise ValueError("allowed must hold 0x110000 bits")
        cdef Py_ssize_t alloc = self.size * 3 + 1   # 1-byte characters may become 3 bytes
        out = <char*>malloc(alloc)
        if out == NULL:
            raise MemoryError()
        with nogil:
            for w in range(self.n):
                i = self.offsets[w]
                end = self.offsets[w + 1]
                start = o
                while i < end:
                    c = decode_char(<const unsigned char*>self.blob + i, end - i, &length)
                    if c < 0x110000 and (bits[c >> 3] >> (c & 7)) & 1:
                        memcpy(out + o, self.blob + i, length)
                        o += length
                    else:
                        out[o] = <char>0xE2
                        out[o + 1] = <char>0x96
                        out[o + 2] = <char>0x85
                        o += 3
                    i += length
                self.offsets[w] = start
            self.offsets[self.n] = o
        free(self.blob)
        self.blob = out
        self.size = o
        self.cap = alloc

    def split_words(self, bint treat_whitespace_as_suffix, bint allow_whitespace_only_pieces):
        """A new SpmSentences of the distinct words (with summed frequencies), ordered by
        frequency descending then text. Parity: trainer_interface.cc
        SplitSentencesByWhitespace (model_interface.cc SplitIntoWords, util.h Sorted)."""
        cdef WordTable table
        cdef Py_ssize_t w, i, end, start, k
        cdef int rc = 0
        cdef SpmSentences words = SpmSentences()
        cdef int64_t* order
        cdef int64_t* offs
        cdef int64_t* fr
        cdef WordSort ctx
        global _sort_ctx
        memset(&table, 0, sizeof(WordTable))
        try:
            with nogil:
                for w in range(self.n):
                    rc = _split_sentence(&table, <const unsigned char*>self.blob + self.offsets[w],
                                         self.offsets[w + 1] - self.offsets[w], self.freqs[w],
                                         treat_whitespace_as_suffix, allow_whitespace_only_pieces)
                    if rc < 0:
                        break
            if rc < 0:
                raise MemoryError()
            offs = <int64_t*>malloc((table.n + 1) * sizeof(int64_t))
            fr = <int64_t*>malloc((table.n + 1) * sizeof(int64_t))
            order = <int64_t*>malloc((table.n + 1) * sizeof(int64_t))
            if offs == NULL or fr == NULL or order == NULL:
                free(offs)
                free(fr)
                free(order)
                raise MemoryError()
            try:
                for k in range(table.n):
                    offs[k] = table.starts[k]
                    fr[k] = <int64_t>table.counts[k]
                    order[k] = k
                offs[table.n] = table.starts[table.n] if table.n else 0
                ctx.blob = table.data
                ctx.offsets = offs
                ctx.freqs = fr
                _sort_ctx = &ctx
                qsort(order, table.n, sizeof(int64_t), _by_freq_then_text)
                _sort_ctx = NULL
                for k in range(table.n):
                    i = order[k]
                    words._append(table.data + offs[i], offs[i + 1] - offs[i], fr[i])
            finally:
                free(offs)
                free(fr)
                free(order)
            return words
        finally:
            table_free(&table)

    def chunk(self, Py_ssize_t start, Py_ssize_t max_bytes):
        """(text, next): sentences start, start+1, ... each repeated by its frequency and
        followed by a NUL, until the text reaches max_bytes (the last sentence may pass it,
        as its repeats stop there); `next` is the first sentence not taken.
        Parity: unigram_model_trainer.cc MakeSeedSentencePiecesFromCorpus (the chunk loop)."""
        cdef Py_ssize_t i = start, size = 0, length
        cdef int64_t k
        cdef bytes out
        cdef char* p
        while i < self.n and size < max_bytes:
            length = self.offsets[i + 1] - self.offsets[i] + 1
            k = 0
            while k < self.freqs[i] and size < max_bytes:
                size += length
                k += 1
            i += 1
        out = PyBytes_FromStringAndSize(NULL, size)
        p = PyBytes_AS_STRING(out)
        i = start
        size = 0
        with nogil:
            while i < self.n and size < max_bytes:
                length = self.offsets[i + 1] - self.offsets[i]
                k = 0
                while k < self.freqs[i] and size < max_bytes:
                    memcpy(p + size, self.blob + self.offsets[i], length)
                    p[size + length] = 0
                    size += length + 1
                    k += 1
                i += 1
        return out, i

    def get(self, Py_ssize_t i):
        """Sentence i as bytes."""
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.blob[self.offsets[i]:self.offsets[i + 1]]

    def texts(self):
        """The sentences as str (for tests and inspection)."""
        return [self.blob[self.offsets[i]:self.offsets[i + 1]].decode("utf-8", "surrogateescape")
                for i in range(self.n)]

    def frequencies(self):
        return [self.freqs[i] for i in range(self.n)]


cdef int _split_sentence(WordTable* table, const unsigned char* s, Py_ssize_t n, int64_t freq,
                         bint suffix, bint allow_ws_only) noexcept nogil:
    """Count the words of s[:n]. Parity: model_interface.cc SplitIntoWords."""
    cdef Py_ssize_t i = 0, start = 0, m
    cdef bint is_ws, in_ws = False
    if n == 0:
        return 0
    if suffix:
        while i < n:
            m = one_char_len(s[i])
            if m > n - i:
                m = n - i
            is_ws = m == 3 and s[i] == 0xE2 and s[i + 1] == 0x96 and s[i + 2] == 0x81
            if is_ws:
                in_ws = True
            elif in_ws:
                if allow_ws_only:
                    if i > start and table_add(table, <const char*>s + start, i - start, freq) < 0:
                        return -1
                    start = i
                in_ws = False
            i += m
            if i < n and is_ws and not allow_ws_only:
                if table_add(table, <const char*>s + start, i - start, freq) < 0:
                    return -1
                start = i
        if n > start:
            return -1 if table_add(table, <const char*>s + start, n - start, freq) < 0 else 0
        return 0
    while i < n:
        m = one_char_len(s[i])
        if m > n - i:
            m = n - i
        is_ws = m == 3 and s[i] == 0xE2 and s[i + 1] == 0x96 and s[i + 2] == 0x81
        if i == 0 or (is_ws and (not in_ws or not allow_ws_only)):
            if i > start:
                if table_add(table, <const char*>s + start, i - start, freq) < 0:
                    return -1
            start = i
            in_ws = True
        if in_ws and not is_ws:
            in_ws = False
        i += m
    if n > start:
        return -1 if table_add(table, <const char*>s + start, n - start, freq) < 0 else 0
    return 0
