"""llama.cpp's whitespace session (GGUF ``tokenizer.ggml.model = "whitespace"``) as two stages.

Parity: llama.cpp llm_tokenizer_whitespace_session::tokenize. Each raw-text fragment is
decoded (unicode_cpts_from_utf8), cut at every code point whose flags say is_whitespace
(those are dropped), each segment lower-cased with unicode_tolower when
normalizer_opts.lowercase, and every segment then goes through the ordinary BPE session
(the pre type's regexes, then BPE) on its own. In toksmith's pipeline:

- `LlamaCppLowercase` (normalizer, only with lowercase): llama.cpp's UTF-8 repair of
  `LlamaCppUtf8Repair` plus unicode_tolower of every code point that is not whitespace.
  No code point lowers into whitespace (tools/gen_lowercase_table.py checks it), so the
  cut below sees the same segments llama.cpp cuts.
- `WhitespaceSegments` (model): cuts the normalized text at whitespace, drops it, and runs
  the pre type's splitter and the byte-level BPE model on each segment. It is a model, not
  a pre-tokenizer, because pre-tokenizers never drop bytes (pretokenizer.pxd).

>>> model = WhitespaceSegments(LlamaSplitter(regexes_for(PreType.WHITESPACE)), bpe)   # doctest: +SKIP
>>> LlamaCppLowercase().normalize_text("HeLLo WÖRLD".encode())
b'hello w\\xc3\\xb6rld'
"""
from libc.stdint cimport uint32_t
from libc.stdlib cimport calloc, free

from toksmith._core.buffers cimport (ByteBuf, IdBuf, bytebuf_append, bytebuf_push,
                                     idbuf_free)
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.llama_lowercase cimport llama_tolower
from toksmith._core.model cimport Model, WorkHeader
from toksmith._core.normalizer cimport TEXT_UNCHANGED, Normalizer
from toksmith._core.pretok_common cimport F_SPACE, _llama_seq, append_cpt_utf8, table_flags
from toksmith._core.pretokenizer cimport PreTokenizer, PreTokenizerWork, pretok_work_free
from toksmith._core.utf8 cimport REPLACEMENT_CHAR, SPACE_SYMBOL
from toksmith._core.utf8_repair cimport normalized_bytes

include "unicode_llama.pxi"


cdef inline bint llama_is_whitespace(uint32_t c) noexcept nogil:
    """Parity: llama.cpp unicode_cpt_flags_from_cpt(c).is_whitespace (unicode_set_whitespace)."""
    return (table_flags(LLAMA_FLAGS_INDEX, LLAMA_FLAGS_BLOCKS, c) & F_SPACE) != 0


cdef class LlamaCppLowercase(Normalizer):
    """llama.cpp's UTF-8 repair (see utf8_repair.LlamaCppUtf8Repair) and unicode_tolower of
    every code point that is not whitespace, in one pass.

    `escape_spaces`: every ' ' becomes U+2581 first (llama_escape_whitespace, which llama.cpp
    runs on the fragment before the session for the gemma4-style pre types).
    """

    cdef readonly bint escape_spaces

    def __init__(self, *, bint escape_spaces=False):
        self.escape_spaces = escape_spaces

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef Py_ssize_t i = 0
        cdef unsigned char b
        cdef uint32_t c = 0
        cdef int k
        # Most text is ASCII without capitals: nothing to rewrite.
        while i < n:
            b = s[i]
            if b >= 0x80 or 0x41 <= b <= 0x5A or (b == 32 and self.escape_spaces):
                break
            i += 1
        if i == n:
            return TEXT_UNCHANGED
        out.size = 0
        if bytebuf_append(out, <const char*>s, i) < 0:
            return ERR_NO_MEMORY
        while i < n:
            b = s[i]
            if b < 0x80:
                if b == 32 and self.escape_spaces:
                    if bytebuf_append(out, SPACE_SYMBOL, 3) < 0:
                        return ERR_NO_MEMORY
                elif bytebuf_push(out, <char>(b + 32 if 0x41 <= b <= 0x5A else b)) < 0:
                    return ERR_NO_MEMORY
                i += 1
                continue
            k = _llama_seq(s, n, i, &c)
            if k == 0:
                # Parity: unicode_cpts_from_utf8: a byte that starts no sequence is U+FFFD.
                if bytebuf_append(out, REPLACEMENT_CHAR, 3) < 0:
                    return ERR_NO_MEMORY
                i += 1
                continue
            # Parity: llm_tokenizer_whitespace_session::tokenize lowers what it keeps.
            if not llama_is_whitespace(c):
                c = llama_tolower(c)
            if append_cpt_utf8(out, c) < 0:
                return ERR_NO_MEMORY
            i += k
        return 0

    def normalize_text(self, bytes text):
        """The normalized bytes of `text` (tests)."""
        return normalized_bytes(self, text)


cdef char _WORK_KIND = 0     # its address tells WhitespaceSegments works apart


cdef struct SegmentsWork:
    WorkHeader header
    void* inner              # the inner model's work (its own WorkHeader first), or NULL
    PreTokenizerWork pretok  # the splitter's work
    IdBuf ends               # the splitter's pre-token ends in one segment


cdef void _free_inner(SegmentsWork* w) noexcept nogil:
    if w.inner != NULL:
        (<WorkHeader*>w.inner).free(w.inner)
        w.inner = NULL


cdef void _free_work(void* work) noexcept nogil:
    cdef SegmentsWork* w = <SegmentsWork*>work
    if w == NULL:
        return
    _free_inner(w)
    pretok_work_free(&w.pretok)
    idbuf_free(&w.ends)
    free(w)


cdef class WhitespaceSegments(Model):
    """Cut the text at llama.cpp's whitespace code points (dropped) and encode each segment
    with `splitter` then `inner`: the model stage of llama.cpp's whitespace session.

    Parity: llm_tokenizer_whitespace_session::tokenize: flush() hands every non-empty
    segment to llm_tokenizer_bpe_session::tokenize on its own.
    """

    cdef readonly PreTokenizer splitter
    cdef readonly Model inner

    def __init__(self, PreTokenizer splitter not None, Model inner not None):
        self.splitter = splitter
        self.inner = inner
        self.n_pieces = inner.n_pieces
        self.work_kind = &_WORK_KIND

    cdef void* new_work(self) noexcept nogil:
        cdef SegmentsWork* w = <SegmentsWork*>calloc(1, sizeof(SegmentsWork))
        if w != NULL:
            w.header.free = _free_work
            w.header.kind = &_WORK_KIND
        return w

    cdef void trim_work(self, void* work, Py_ssize_t keep_bytes) noexcept nogil:
        cdef SegmentsWork* w = <SegmentsWork*>work
        if w.inner != NULL and (<WorkHeader*>w.inner).kind == self.inner.work_kind:
            self.inner.trim_work(w.inner, keep_bytes)
        if (w.pretok.a.cap + w.pretok.b.cap + w.pretok.c.cap + w.ends.cap) * 4 > keep_bytes:
            pretok_work_free(&w.pretok)
            idbuf_free(&w.ends)

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        cdef SegmentsWork* w = <SegmentsWork*>work
        cdef Py_ssize_t i = 0, start
        cdef uint32_t c = 0
        cdef int k, rc
        # The work may outlive the model that made its inner work (the thread keeps it):
        # a work of another kind is replaced; one of the same kind checks its own model.
        if w.inner != NULL and (<WorkHeader*>w.inner).kind != self.inner.work_kind:
            _free_inner(w)
        if w.inner == NULL:
            w.inner = self.inner.new_work()
            if w.inner == NULL:
                return ERR_NO_MEMORY
        while i < n:
            start = i
            while i < n:
                k = _llama_seq(s, n, i, &c)
                if k == 0:
                    k = 1      # not reached after the repair: one byte, not whitespace
                elif llama_is_whitespace(c):
                    break
                i += k
            if i > start:
                rc = self._segment(s + start, i - start, w, ids, spans, base + start)
                if rc < 0:
                    return rc
            # drop the whitespace
            while i < n:
                k = _llama_seq(s, n, i, &c)
                if k == 0 or not llama_is_whitespace(c):
                    break
                i += k
        return 0

    cdef int _segment(self, const unsigned char* s, Py_ssize_t n, SegmentsWork* w, IdBuf* ids,
                      IdBuf* spans, Py_ssize_t base) noexcept nogil:
        """Parity: llm_tokenizer_bpe_session::tokenize of one segment."""
        cdef Py_ssize_t k, start = 0, end
        cdef int rc
        w.ends.size = 0
        rc = self.splitter.split(s, n, &w.pretok, &w.ends)
        if rc < 0:
            return rc
        for k in range(w.ends.size):
            end = w.ends.data[k]
            rc = self.inner.encode(s + start, end - start, w.inner, ids, spans, base + start)
            if rc < 0:
                return rc
            start = end
        return 0
