"""Post-processors: what `add_special=True` adds around the encoded text.

>>> BosEos(1, -1).leading_id
1
"""
from libc.stdint cimport int32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from toksmith._core.buffers cimport IdBuf, idbuf_push, idbuf_reserve
from toksmith._core.errors cimport ERR_NO_MEMORY

cdef enum:
    SEQUENCE_PIECE = -1     # TemplateLayout: the text's own ids go here


cdef inline int _push_special(IdBuf* ids, IdBuf* spans, int32_t token) noexcept nogil:
    if idbuf_push(ids, token) < 0:
        return ERR_NO_MEMORY
    if spans != NULL and (idbuf_push(spans, 0) < 0 or idbuf_push(spans, 0) < 0):
        return ERR_NO_MEMORY
    return 0


cdef class PostProcessor:
    """Base of every post-processor: adds nothing."""

    def __cinit__(self, *args, **kwargs):
        self.leading_id = -1

    cdef int begin(self, IdBuf* ids, IdBuf* spans) noexcept nogil:
        return 0

    cdef int end(self, IdBuf* ids, IdBuf* spans) noexcept nogil:
        return 0

    cdef int finish(self, IdBuf* ids, IdBuf* spans, Py_ssize_t text_start, bint add_special) noexcept nogil:
        return self.end(ids, spans) if add_special else 0


cdef class BosEos(PostProcessor):
    """BOS before and EOS after the text (an id of -1 adds nothing), as llama_tokenize's
    add_special and sentencepiece's add_bos/add_eos options do."""

    def __init__(self, int bos_id, int eos_id):
        self.bos_id = bos_id
        self.eos_id = eos_id
        self.leading_id = bos_id

    cdef int begin(self, IdBuf* ids, IdBuf* spans) noexcept nogil:
        if self.bos_id >= 0:
            return _push_special(ids, spans, self.bos_id)
        return 0

    cdef int end(self, IdBuf* ids, IdBuf* spans) noexcept nogil:
        if self.eos_id >= 0:
            return _push_special(ids, spans, self.eos_id)
        return 0


cdef class TemplateIds(PostProcessor):
    """Fixed ids before and after the text: a single-sequence template (HF
    TemplateProcessing, BertProcessing, RobertaProcessing) with its special tokens resolved.

    >>> TemplateIds([101], [102]).leading_id
    101
    """

    def __cinit__(self, *args, **kwargs):
        self.prefix = NULL
        self.suffix = NULL

    def __dealloc__(self):
        free(self.prefix)
        free(self.suffix)

    def __init__(self, prefix, suffix):
        cdef Py_ssize_t i
        prefix = [int(x) for x in prefix]
        suffix = [int(x) for x in suffix]
        self.prefix = <int32_t*>malloc(max(len(prefix), 1) * sizeof(int32_t))
        self.suffix = <int32_t*>malloc(max(len(suffix), 1) * sizeof(int32_t))
        if self.prefix == NULL or self.suffix == NULL:
            raise MemoryError()
        for i in range(len(prefix)):
            self.prefix[i] = prefix[i]
        for i in range(len(suffix)):
            self.suffix[i] = suffix[i]
        self.n_prefix = len(prefix)
        self.n_suffix = len(suffix)
        self.leading_id = prefix[0] if prefix else -1

    cdef int begin(self, IdBuf* ids, IdBuf* spans) noexcept nogil:
        cdef Py_ssize_t i
        for i in range(self.n_prefix):
            if _push_special(ids, spans, self.prefix[i]) < 0:
                return ERR_NO_MEMORY
        return 0

    cdef int end(self, IdBuf* ids, IdBuf* spans) noexcept nogil:
        cdef Py_ssize_t i
        for i in range(self.n_suffix):
            if _push_special(ids, spans, self.suffix[i]) < 0:
                return ERR_NO_MEMORY
        return 0


cdef class TemplateLayout(PostProcessor):
    """A single-text post-processor that is no prefix + text + suffix: with add_special,
    special ids and the text in any order, the text any number of times (HF
    TemplateProcessing "$A [SEP] $A", or a Sequence of processors); without, the text
    `repeats` times.

    Parity: tokenizers processors/template.rs TemplateProcessing::apply_template walks the
    template even when add_special_tokens is false (only its special tokens are left
    out), so the text is repeated with and without add_special
    (hf/post_processing.py works both layouts out).

    >>> TemplateLayout([None, 50256, None], 2).leading_id     # "$A <|endoftext|> $A"
    -1
    """

    def __cinit__(self, *args, **kwargs):
        self.pieces = NULL

    def __dealloc__(self):
        free(self.pieces)

    def __init__(self, pieces, Py_ssize_t repeats):
        """pieces: special ids, and None where the text goes (with add_special);
        repeats: how many times the text is there without add_special."""
        cdef Py_ssize_t i
        pieces = [SEQUENCE_PIECE if p is None else int(p) for p in pieces]
        if any(p < 0 and p != SEQUENCE_PIECE for p in pieces):
            raise ValueError(f"a template's special ids are not negative: {pieces}")
        if repeats < 1:
            raise ValueError(f"the text must be there at least once, not {repeats} times")
        self.pieces = <int32_t*>malloc(max(len(pieces), 1) * sizeof(int32_t))
        if self.pieces == NULL:
            raise MemoryError()
        for i in range(len(pieces)):
            self.pieces[i] = pieces[i]
        self.n_pieces = len(pieces)
        self.repeats = repeats
        self.leading_id = pieces[0] if pieces and pieces[0] != SEQUENCE_PIECE else -1

    cdef int finish(self, IdBuf* ids, IdBuf* spans, Py_ssize_t text_start, bint add_special) noexcept nogil:
        cdef Py_ssize_t n = ids.size - text_start, i
        cdef int32_t* text = <int32_t*>malloc(max(3 * n, 1) * sizeof(int32_t))   # the ids, then the spans
        cdef int rc = 0
        if text == NULL:
            return ERR_NO_MEMORY
        memcpy(text, ids.data + text_start, n * sizeof(int32_t))
        if spans != NULL:
            memcpy(text + n, spans.data + 2 * text_start, 2 * n * sizeof(int32_t))
            spans.size = 2 * text_start
        ids.size = text_start
        for i in range(self.n_pieces if add_special else self.repeats):
            if add_special and self.pieces[i] != SEQUENCE_PIECE:
                if _push_special(ids, spans, self.pieces[i]) < 0:
                    rc = ERR_NO_MEMORY
                    break
            elif idbuf_reserve(ids, n) < 0 or (spans != NULL and idbuf_reserve(spans, 2 * n) < 0):
                rc = ERR_NO_MEMORY
                break
            else:
                memcpy(ids.data + ids.size, text, n * sizeof(int32_t))
                ids.size += n
                if spans != NULL:
                    memcpy(spans.data + spans.size, text + n, 2 * n * sizeof(int32_t))
                    spans.size += 2 * n
        free(text)
        return rc
