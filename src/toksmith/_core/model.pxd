# The contract of a segmentation model (the "model" stage of the pipeline).
#
# A model turns one pre-token of normalized text (UTF-8 bytes, or raw bytes for
# byte-level models) into its final token ids. The engine knows no model by name:
# it calls these methods on whatever Model subclass the loader chose.
#
# Working memory: each thread keeps the works it made in its scratch, keyed by
# `work_kind`. A work must start with a `WorkHeader` so that the scratch can free it
# without the model that made it (the model may be gone by then), and it must not
# rely on pointers into one model instance unless it checks `serial` first.
from libc.stdint cimport int32_t, uint64_t

from toksmith._core.buffers cimport IdBuf


ctypedef void (*free_work_fn)(void* work) noexcept nogil


cdef struct WorkHeader:
    free_work_fn free       # frees the whole work, header included
    const void* kind        # == Model.work_kind of every model that may use this work


cdef class Model:
    cdef readonly Py_ssize_t n_pieces
    cdef uint64_t serial            # unique per model instance (see next_model_serial)
    cdef const void* work_kind      # address of a static: models sharing it share works

    # A new working memory (starting with a WorkHeader), or NULL when out of memory.
    cdef void* new_work(self) noexcept nogil
    # Give back memory past `keep_bytes` held by `work` after a call (it stays usable).
    cdef void trim_work(self, void* work, Py_ssize_t keep_bytes) noexcept nogil
    # Append the ids of s[:n] to `ids`. When `spans` is not NULL, also append
    # (base + start, base + end) byte offsets of each id's text in s (tokenize()).
    # Returns 0, or a negative error code (ERR_NO_MEMORY, ...).
    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil
    # encode() on each pre-token s[ends[k - 1]:ends[k]] in turn (the first starts at s[0]),
    # offsets in `spans` from base. A model may override it to keep its state in registers
    # across pre-tokens; the default calls encode() on each.
    cdef int encode_pieces(self, const unsigned char* s, const int32_t* ends, Py_ssize_t count,
                           void* work, IdBuf* ids, IdBuf* spans, Py_ssize_t base) noexcept nogil


cdef uint64_t next_model_serial() noexcept nogil
# A work that is a bare WorkHeader of `kind` (for models that need no working memory);
# NULL when out of memory.
cdef void* new_header_work(const void* kind) noexcept nogil
