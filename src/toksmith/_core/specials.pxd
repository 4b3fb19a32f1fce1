# Splitting special-token texts out of raw input before normalization.
from libc.stdint cimport int32_t

from toksmith._core.buffers cimport ByteBuf, IdBuf
from toksmith._core.trie cimport DoubleArrayTrie

# Flags of one special token.
cdef enum:
    SPLIT_ALWAYS = 1     # split out even when parse_special is false (llama.cpp: user-defined)
    STRIP_LEFT = 2       # whitespace before the token is dropped (llama.cpp LSTRIP)
    STRIP_RIGHT = 4      # whitespace after the token is dropped (llama.cpp RSTRIP)


cdef struct SplitWork:
    ByteBuf claimed      # per input byte: 0 free, 1 taken by a token or stripped
    IdBuf found          # (rank, position) of every occurrence
    IdBuf accepted       # (position, rank) of the occurrences kept


cdef void split_work_free(SplitWork* w) noexcept nogil


cdef class SpecialSplitter:
    cdef DoubleArrayTrie trie          # token text -> rank
    cdef int32_t* token_ids            # by rank
    cdef int32_t* lengths              # by rank
    cdef unsigned char* flags          # by rank
    cdef Py_ssize_t n
    cdef unsigned char starts_any[256]     # a special text starts with this byte
    cdef unsigned char starts_always[256]  # an always-split text starts with this byte
    cdef readonly bint has_always

    cdef int split(self, const unsigned char* s, Py_ssize_t n, bint parse_special,
                   SplitWork* w, IdBuf* segments) noexcept nogil
