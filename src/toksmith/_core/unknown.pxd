# Unknown-piece handling shared by the SentencePiece-family models (Unigram, ScoreBpe).
#
# A model's segmentation gives a path: piece ids (-1 where a character is no piece)
# and their start offsets. `emit_path` turns the path into the ids the reference
# emits: byte fallback, one <unk> for a run of unknown pieces, the id of a missing
# piece. Each model fills its UnknownRules by its reference's rules at load time.
from libc.stdint cimport int32_t

from toksmith._core.buffers cimport IdBuf, idbuf_push, idbuf_reserve
from toksmith._core.errors cimport ERR_NO_MEMORY


cdef struct UnknownRules:
    int32_t unk_id              # the unknown piece, -1 when none
    int32_t missing_id          # emitted for a path entry that is no piece; -1: its byte pieces
    bint byte_fallback          # unknown pieces become their byte pieces
    bint merge_unknown_runs     # consecutive unknown pieces become one
    int32_t byte_ids[256]       # byte piece of each byte value (unk_id where none)


cdef inline int emit_path(const UnknownRules* r, const unsigned char* s, Py_ssize_t n,
                          const IdBuf* path_ids, const IdBuf* path_starts, IdBuf* out,
                          IdBuf* spans, Py_ssize_t base) noexcept nogil:
    """Append the ids of the path over s[:n] to `out` (and base-shifted byte spans to
    `spans` unless NULL). Returns 0 or ERR_NO_MEMORY."""
    cdef Py_ssize_t i, j, start, end, count = path_ids.size
    cdef int32_t pid
    cdef bint is_unk, prev_unk = False
    # Byte pieces: at most one id per byte.
    if idbuf_reserve(out, n + count + 1) < 0:
        return ERR_NO_MEMORY
    for i in range(count):
        pid = path_ids.data[i]
        if pid < 0:
            pid = r.missing_id
        start = path_starts.data[i]
        end = path_starts.data[i + 1] if i + 1 < count else n
        is_unk = pid < 0 or pid == r.unk_id   # Parity: llama.cpp UGM compares ids with token_unk()
        if pid < 0 or (is_unk and r.byte_fallback):
            # Parity: an unknown piece becomes its byte pieces (sentencepiece
            # byte fallback; llama.cpp SPM resegment).
            for j in range(start, end):
                out.data[out.size] = r.byte_ids[s[j]]
                out.size += 1
                if spans != NULL and (idbuf_push(spans, <int32_t>(base + j)) < 0
                                      or idbuf_push(spans, <int32_t>(base + j + 1)) < 0):
                    return ERR_NO_MEMORY
        elif is_unk and prev_unk and r.merge_unknown_runs:
            # Parity: a run of unknown characters is one <unk> (sentencepiece
            # PopulateSentencePieceText, llama.cpp UGM read-back).
            if spans != NULL:
                spans.data[spans.size - 1] = <int32_t>(base + end)
        else:
            out.data[out.size] = pid
            out.size += 1
            if spans != NULL and (idbuf_push(spans, <int32_t>(base + start)) < 0
                                  or idbuf_push(spans, <int32_t>(base + end)) < 0):
                return ERR_NO_MEMORY
        prev_unk = is_unk
    return 0


cdef inline int fill_unknown_rules(UnknownRules* r, int32_t unk_id, int32_t missing_id,
                                   bint byte_fallback, bint merge_unknown_runs,
                                   list byte_ids, Py_ssize_t n_pieces) except -1:
    """Fill `r` (load time); ModelDataError for ids outside the vocabulary."""
    from toksmith._core.errors import ModelDataError
    cdef int i
    if not (-1 <= unk_id < n_pieces):
        raise ModelDataError(f"unknown-piece id {unk_id} is outside the vocabulary")
    if len(byte_ids) != 256:
        raise ValueError("byte_ids must hold 256 ids")
    for i in range(256):
        if not (-1 <= byte_ids[i] < n_pieces):
            raise ModelDataError(f"byte piece id {byte_ids[i]} is outside the vocabulary")
    r.unk_id = unk_id
    r.missing_id = missing_id
    r.byte_fallback = byte_fallback
    r.merge_unknown_runs = merge_unknown_runs
    for i in range(256):
        r.byte_ids[i] = byte_ids[i] if byte_ids[i] >= 0 else unk_id
    return 0
