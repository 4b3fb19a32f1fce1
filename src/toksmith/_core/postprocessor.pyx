"""Post-processors: what `add_special=True` adds around the encoded text.

>>> BosEos(1, -1).leading_id
1
"""
from libc.stdint cimport int32_t
from libc.stdlib cimport free, malloc

from toksmith._core.buffers cimport IdBuf, idbuf_push
from toksmith._core.errors cimport ERR_NO_MEMORY


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
