# Ids back to text (see detokenizer.pyx).
from libc.stdint cimport int32_t, uint8_t

from toksmith._core.buffers cimport ByteBuf
from toksmith._core.normalizer cimport Normalizer


cpdef enum DecodeRules:
    DECODE_SENTENCEPIECE = 0
    DECODE_LLAMA_CPP = 1


# How a token renders under llama.cpp's rules (llama_vocab::impl::token_to_piece).
cpdef enum Render:
    RENDER_NOTHING = 0       # UNUSED / UNDEFINED attributes
    RENDER_SPECIAL = 1       # CONTROL or UNKNOWN: its text only when unparse_special
    RENDER_TEXT = 2          # USER_DEFINED: its text as is
    RENDER_UNESCAPED = 3     # NORMAL: its text with U+2581 turned into spaces
    RENDER_BYTE = 4          # BYTE: the byte it stands for


# sentencepiece's piece types (ModelProto.SentencePiece.Type).
cdef enum:
    TYPE_UNKNOWN = 2
    TYPE_CONTROL = 3
    TYPE_BYTE = 6


cdef struct DecodeState:
    ByteBuf pending          # bytes of consecutive byte pieces (sentencepiece)
    bint is_bos_ws           # sentencepiece: still at the beginning of the text
    bint bos_ws_seen
    bint any_text
    bint remove_space        # llama.cpp: the next token loses one leading space
    bint started             # llama.cpp: the first token has been seen
    int32_t held_eos         # llama.cpp: a trailing EOS that remove_special may drop


cdef class Detokenizer:
    cdef DecodeRules rules
    cdef Py_ssize_t n_pieces
    cdef char* piece_data
    cdef Py_ssize_t* piece_offsets
    cdef uint8_t* kinds            # sentencepiece: piece type; llama.cpp: Render
    cdef int32_t* byte_values
    # sentencepiece
    cdef bytes unk_surface
    cdef bint strip_leading_space
    cdef bint strip_all_leading_spaces
    cdef Normalizer denormalizer
    # llama.cpp
    cdef bint add_space_prefix
    cdef bint add_bos
    cdef bint add_eos
    cdef int32_t bos_id
    cdef int32_t eos_id

    cpdef bytes piece(self, Py_ssize_t piece_id)
    cdef void _start(self, DecodeState* st) noexcept
    cdef int _feed(self, DecodeState* st, long pid, bint skip_special, ByteBuf* out) except -1
    cdef int _render_llama(self, DecodeState* st, long pid, bint unparse_special,
                           ByteBuf* out) except -1
    cdef int _feed_sentencepiece(self, DecodeState* st, long pid, ByteBuf* out) except -1
    cdef int _flush_pending(self, DecodeState* st, ByteBuf* out, bint complete) except -1
    cdef int _finish(self, DecodeState* st, bint skip_special, ByteBuf* out) except -1


cdef class StreamDecoder:
    cdef Detokenizer detokenizer
    cdef DecodeState state
    cdef bint skip_special
    cdef object utf8
    cdef bint finished
