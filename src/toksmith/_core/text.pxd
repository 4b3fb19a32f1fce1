# Zero-copy access to the text of a Python str (PEP 393) and UTF-8 conversion
# without the GIL, so batch workers convert their own texts in parallel.
from toksmith._core.buffers cimport ByteBuf


cdef struct TextRef:
    const void* data      # PEP 393 code units, or UTF-8 bytes when kind == 0
    Py_ssize_t length     # code units (bytes when kind == 0)
    int kind              # 0: UTF-8 bytes; 1, 2, 4: PEP 393 unit size
    bint from_str         # a str: its UTF-8 (utf8_of refuses surrogates) is well formed


cdef int text_ref(object text, TextRef* ref) except -1
cdef int utf8_of(const TextRef* ref, ByteBuf* scratch, const unsigned char** out,
                 Py_ssize_t* out_len, bint join_surrogates=*) noexcept nogil
