# The contract of a decoder (ids back to text), and the SentencePiece-family decoders.
#
# A decoder is a state machine over ids: `_start` a DecodeState, `_feed` each id
# (appending bytes to `out`), `_flush` after a batch of ids (bytes that are now
# final), `_finish` at the end. decode(), decode_bytes() and StreamDecoder all
# run it, so streamed text always concatenates to decode(ids).
from libc.stdint cimport int32_t, uint8_t

from toksmith._core.buffers cimport ByteBuf, IdBuf, bytebuf_free
from toksmith._core.clean_spaces cimport CleanSpaces
from toksmith._core.normalizer cimport Normalizer


# How a token renders under llama.cpp's rules (llama_vocab::impl::token_to_piece).
cpdef enum Render:
    RENDER_NOTHING = 0       # UNUSED / UNDEFINED attributes
    RENDER_SPECIAL = 1       # CONTROL or UNKNOWN: its text only when unparse_special
    RENDER_TEXT = 2          # USER_DEFINED: its text as is
    RENDER_UNESCAPED = 3     # NORMAL: its text with U+2581 turned into spaces
    RENDER_BYTE = 4          # BYTE: the byte it stands for
    RENDER_INVALID = 5       # an id no token has (a gap in a rank file): decode refuses it


cdef struct DecodeState:
    ByteBuf pending          # bytes that may still join later ones into a character
    bint is_bos_ws           # sentencepiece: still at the beginning of the text
    bint bos_ws_seen
    bint any_text
    bint remove_space        # llama.cpp: the next token loses one leading space
    bint started             # llama.cpp: the first token has been seen
    int32_t held_eos         # llama.cpp: a trailing EOS that remove_special may drop
    ByteBuf rendered         # llama.cpp with clean_spaces: one id's text before the passes
    CleanSpaces clean        # llama.cpp with clean_spaces: the bytes the passes still hold
    void* chain              # a decoder's own per-stream state (hf_decoders: one state per stage)
    void (*chain_free)(void*) noexcept nogil   # frees `chain`


cdef inline void decode_state_free(DecodeState* st) noexcept nogil:
    bytebuf_free(&st.pending)
    bytebuf_free(&st.rendered)
    if st.chain != NULL and st.chain_free != NULL:
        st.chain_free(st.chain)
    st.chain = NULL


cdef class Decoder:
    cdef readonly Py_ssize_t n_pieces
    cdef char* piece_data
    cdef Py_ssize_t* piece_offsets
    cdef uint8_t* kinds            # one byte per piece; its meaning is the subclass's
    cdef int32_t* byte_values      # the byte a byte piece stands for, -1 for the others

    cdef _set_pieces(self, list pieces, bytes kinds, list byte_values)
    cpdef bytes piece(self, Py_ssize_t piece_id)
    cdef void _start(self, DecodeState* st) noexcept
    cdef int _feed(self, DecodeState* st, long pid, bint skip_special, ByteBuf* out) except -1
    cdef int _flush(self, DecodeState* st, ByteBuf* out) except -1
    cdef int _check_ids(self, IdBuf* ids) except -1
    cdef int _finish(self, DecodeState* st, bint skip_special, ByteBuf* out) except -1
    cdef int _flush_pending(self, DecodeState* st, ByteBuf* out, bint complete) except -1
    cdef bint _next_byte_is_ascii(self, DecodeState* st) noexcept


cdef class SentencePieceDecoder(Decoder):
    cdef bytes unk_surface
    cdef bint strip_leading_space
    cdef bint strip_all_leading_spaces
    cdef Normalizer denormalizer


cdef class LlamaCppDecoder(Decoder):
    cdef bint add_space_prefix
    cdef bint clean_spaces
    cdef bint add_bos
    cdef bint add_eos
    cdef int32_t bos_id
    cdef int32_t eos_id

    cdef int _feed_rendered(self, DecodeState* st, long pid, bint skip_special,
                            ByteBuf* out) except -1
    cdef int _render(self, DecodeState* st, long pid, bint unparse_special,
                     ByteBuf* out) except -1


cdef class StreamDecoder:
    cdef Decoder decoder
    cdef DecodeState state
    cdef bint skip_special
    cdef object utf8
    cdef bint finished


# Every id of `ids` appended to `out`, each checked (detokenizer.pyx): the one path that
# every entry point taking ids uses.
cdef int checked_ids(object ids, Py_ssize_t n_pieces, str name, IdBuf* out) except -1
