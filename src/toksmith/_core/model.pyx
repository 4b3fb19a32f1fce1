"""The `Model` base class: see model.pxd for the contract every model stage follows."""
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free, malloc

from toksmith._core.buffers cimport IdBuf, idbuf_free

from toksmith._core.errors import raise_for_status

cdef uint64_t _last_serial = 0


cdef uint64_t next_model_serial() noexcept nogil:
    """A number no other model instance of this process has (callers hold the GIL)."""
    global _last_serial
    _last_serial += 1
    return _last_serial


cdef void _free_header_work(void* work) noexcept nogil:
    free(work)


cdef void* new_header_work(const void* kind) noexcept nogil:
    cdef WorkHeader* w = <WorkHeader*>malloc(sizeof(WorkHeader))
    if w != NULL:
        w.free = _free_header_work
        w.kind = kind
    return w


cdef class Model:
    """Base of every segmentation model; subclasses override all three cdef methods."""

    def __cinit__(self, *args, **kwargs):
        self.serial = next_model_serial()
        self.work_kind = NULL
        self.n_pieces = 0

    cdef void* new_work(self) noexcept nogil:
        return NULL

    cdef void trim_work(self, void* work, Py_ssize_t keep_bytes) noexcept nogil:
        pass

    cdef int encode(self, const unsigned char* s, Py_ssize_t n, void* work, IdBuf* ids,
                    IdBuf* spans, Py_ssize_t base) noexcept nogil:
        return -1

    cdef int encode_pieces(self, const unsigned char* s, const int32_t* ends, Py_ssize_t count,
                           void* work, IdBuf* ids, IdBuf* spans, Py_ssize_t base) noexcept nogil:
        cdef Py_ssize_t k, start = 0
        cdef int rc
        for k in range(count):
            rc = self.encode(s + start, ends[k] - start, work, ids, spans, base + start)
            if rc < 0:
                return rc
            start = ends[k]
        return 0

    def encode_text(self, bytes text):
        """The ids of one pre-token (tests, examples and debugging; the engine calls encode)."""
        cdef IdBuf ids
        cdef int rc
        cdef void* work = self.new_work()
        if work == NULL:
            raise MemoryError()
        ids.data = NULL
        ids.size = 0
        ids.cap = 0
        try:
            rc = self.encode(<const unsigned char*>(<char*>text), len(text), work, &ids, NULL, 0)
            raise_for_status(rc)
            return [ids.data[i] for i in range(ids.size)]
        finally:
            idbuf_free(&ids)
            (<WorkHeader*>work).free(work)
