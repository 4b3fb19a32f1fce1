# The contract of a post-processor (the stage after the model): the ids that
# add_special puts around the encoded text (BOS/EOS today; templates later).
#
# `begin` runs before the text's ids are appended, `finish` after; both append to
# `ids` (and a (0, 0) span per id to `spans` unless it is NULL) and return 0 or a
# negative error code (errors.pxd). `begin` runs only when add_special is True;
# `finish` always runs, and by default calls `end` when add_special is True (a
# template that repeats the text rearranges it then whatever add_special says).
from libc.stdint cimport int32_t

from toksmith._core.buffers cimport IdBuf


cdef class PostProcessor:
    # The id `begin` adds first, -1 when none (the engine warns when the text's own
    # ids start with it too: a doubled BOS).
    cdef readonly int32_t leading_id

    cdef int begin(self, IdBuf* ids, IdBuf* spans) noexcept nogil
    cdef int end(self, IdBuf* ids, IdBuf* spans) noexcept nogil
    # ids[text_start:] (and spans[2 * text_start:]) are the text's own
    cdef int finish(self, IdBuf* ids, IdBuf* spans, Py_ssize_t text_start, bint add_special) noexcept nogil


cdef class BosEos(PostProcessor):
    cdef readonly int32_t bos_id     # -1: no BOS is added
    cdef readonly int32_t eos_id     # -1: no EOS is added


cdef class TemplateIds(PostProcessor):
    cdef int32_t* prefix
    cdef int32_t* suffix
    cdef readonly Py_ssize_t n_prefix
    cdef readonly Py_ssize_t n_suffix


cdef class TemplateLayout(PostProcessor):
    cdef int32_t* pieces             # with add_special: a special id, or SEQUENCE_PIECE where the text goes
    cdef readonly Py_ssize_t n_pieces
    cdef readonly Py_ssize_t repeats     # without add_special: the text this many times
