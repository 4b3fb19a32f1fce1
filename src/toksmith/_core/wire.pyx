"""Bounds-checked readers for binary model files: protobuf wire format and GGUF metadata;
and the writer of a .model's pieces (`encode_piece_messages`).

Every length and count is checked against the bytes that remain before
anything is allocated, so a truncated or hostile file raises `WireFormatError`
(naming the offset) instead of crashing or allocating gigabytes.

Example::

    >>> parse_message(b"\\x08\\x96\\x01")
    [(1, 0, 150)]
"""
from array import array

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy


class WireFormatError(ValueError):
    """Malformed binary data; `offset` is where reading failed, `reason` what failed.

    `needed` is set when a field runs past the end of the bytes it was read
    from: the position its last byte would need (in the same frame as `offset`).
    """

    def __init__(self, message, offset, needed=None):
        super().__init__(f"{message} (at byte offset {offset})")
        self.reason = message
        self.offset = offset
        self.needed = needed


# ---------------------------------------------------------------- protobuf

cdef enum:
    WIRE_VARINT = 0
    WIRE_FIXED64 = 1
    WIRE_LEN = 2
    WIRE_FIXED32 = 5


cdef inline uint64_t _varint(const uint8_t* p, Py_ssize_t n, Py_ssize_t* pos) except? 0xFFFFFFFFFFFFFFFF:
    cdef uint64_t result = 0
    cdef int shift = 0
    cdef Py_ssize_t start = pos[0]
    cdef uint8_t b
    while True:
        if pos[0] >= n:
            raise WireFormatError("truncated varint", start, n + 1)
        if shift >= 64:
            raise WireFormatError("varint longer than 10 bytes", start)
        b = p[pos[0]]
        pos[0] += 1
        result |= (<uint64_t>(b & 0x7F)) << shift
        if b < 0x80:
            return result
        shift += 7


cdef inline Py_ssize_t _length(const uint8_t* p, Py_ssize_t n, Py_ssize_t* pos) except -1:
    cdef Py_ssize_t start = pos[0]
    cdef uint64_t length = _varint(p, n, pos)
    if length > <uint64_t>(n - pos[0]):
        raise WireFormatError(f"field length {length} exceeds the {n - pos[0]} bytes left", start,
                              int(pos[0]) + int(length))
    return <Py_ssize_t>length


cdef inline object _field_value(const uint8_t* p, Py_ssize_t n, Py_ssize_t* pos, int wire):
    cdef Py_ssize_t start = pos[0], length
    if wire == WIRE_VARINT:
        return _varint(p, n, pos)
    if wire == WIRE_LEN:
        length = _length(p, n, pos)
        pos[0] += length
        return (<const char*>p)[pos[0] - length:pos[0]]
    if wire == WIRE_FIXED32 or wire == WIRE_FIXED64:
        length = 4 if wire == WIRE_FIXED32 else 8
        if n - pos[0] < length:
            raise WireFormatError("truncated fixed-width field", start, pos[0] + length)
        pos[0] += length
        return (<const char*>p)[pos[0] - length:pos[0]]
    raise WireFormatError(f"unsupported wire type {wire}", start)


def parse_message(const uint8_t[::1] data not None):
    """Top-level fields of one protobuf message as (field number, wire type, value).

    Varints come back as int, length-delimited and fixed-width fields as bytes.
    """
    cdef const uint8_t* p = &data[0] if data.shape[0] else NULL
    cdef Py_ssize_t n = data.shape[0], pos = 0, start
    cdef uint64_t key
    cdef list fields = []
    while pos < n:
        start = pos
        key = _varint(p, n, &pos)
        if key >> 3 == 0:
            raise WireFormatError("field number 0", start)
        fields.append((<long>(key >> 3), <int>(key & 7), _field_value(p, n, &pos, key & 7)))
    return fields


def parse_model_proto(const uint8_t[::1] data not None):
    """Split a sentencepiece ModelProto into its pieces and its other fields.

    Returns (pieces: list[bytes], scores: list[float], types: bytes,
    other_fields: list[(field, wire type, value)], unscored: list[int]). A piece
    without a type is NORMAL (1), as the .proto default says; a piece without a
    score scores 0.0 and its id is in `unscored` (older trainers wrote the meta
    pieces so; a writer keeps them so to give the file back byte for byte).
    """
    cdef const uint8_t* p = &data[0] if data.shape[0] else NULL
    cdef Py_ssize_t n = data.shape[0], pos = 0, start, end, sub, length
    cdef uint64_t key, sub_key, type_value
    cdef float score
    cdef list pieces = [], scores = [], others = [], unscored = []
    cdef bint scored
    cdef bytearray types = bytearray()
    cdef object piece
    while pos < n:
        start = pos
        key = _varint(p, n, &pos)
        if key == (1 << 3 | WIRE_LEN):
            length = _length(p, n, &pos)
            end = pos + length
            piece = None
            score = 0.0
            scored = False
            type_value = 1
            while pos < end:
                sub = pos
                sub_key = _varint(p, end, &pos)
                if sub_key == (1 << 3 | WIRE_LEN):
                    length = _length(p, end, &pos)
                    piece = (<const char*>p)[pos:pos + length]
                    pos += length
                elif sub_key == (2 << 3 | WIRE_FIXED32):
                    if end - pos < 4:
                        raise WireFormatError("truncated piece score", sub, pos + 4)
                    memcpy(&score, p + pos, 4)
                    scored = True
                    pos += 4
                elif sub_key == (3 << 3 | WIRE_VARINT):
                    type_value = _varint(p, end, &pos)
                else:
                    if sub_key >> 3 == 0:
                        raise WireFormatError("field number 0", sub)
                    _field_value(p, end, &pos, sub_key & 7)
            if piece is None:
                raise WireFormatError(f"piece {len(pieces)} has no text", start)
            if type_value > 255:
                raise WireFormatError(f"piece {len(pieces)} has type {type_value}", start)
            if not scored:
                unscored.append(len(pieces))
            pieces.append(piece)
            scores.append(score)
            types.append(<uint8_t>type_value)
        else:
            if key >> 3 == 0:
                raise WireFormatError("field number 0", start)
            others.append((<long>(key >> 3), <int>(key & 7), _field_value(p, n, &pos, key & 7)))
    return pieces, scores, bytes(types), others, unscored


# ---------------------------------------------------------------- GGUF

cpdef enum GGUFType:
    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12

# array typecode and byte size of each fixed-size GGUF type
_SCALARS = {
    GGUFType.UINT8: ("B", 1), GGUFType.INT8: ("b", 1), GGUFType.UINT16: ("H", 2),
    GGUFType.INT16: ("h", 2), GGUFType.UINT32: ("I", 4), GGUFType.INT32: ("i", 4),
    GGUFType.FLOAT32: ("f", 4), GGUFType.BOOL: ("B", 1), GGUFType.UINT64: ("Q", 8),
    GGUFType.INT64: ("q", 8), GGUFType.FLOAT64: ("d", 8),
}


cdef class _GGUFReader:
    cdef const uint8_t* p
    cdef Py_ssize_t n
    cdef Py_ssize_t pos

    cdef inline _need(self, Py_ssize_t size, what):
        if size < 0 or self.n - self.pos < size:
            raise WireFormatError(
                f"truncated GGUF: {what} needs {size} bytes, {self.n - self.pos} left", self.pos)

    cdef uint64_t u64(self, what) except? 0xFFFFFFFFFFFFFFFF:
        cdef uint64_t v
        self._need(8, what)
        memcpy(&v, self.p + self.pos, 8)
        self.pos += 8
        return v

    cdef uint32_t u32(self, what) except? 0xFFFFFFFF:
        cdef uint32_t v
        self._need(4, what)
        memcpy(&v, self.p + self.pos, 4)
        self.pos += 4
        return v

    cdef bytes raw_string(self, what):
        cdef Py_ssize_t start = self.pos
        cdef uint64_t length = self.u64(what)
        if length > <uint64_t>(self.n - self.pos):
            raise WireFormatError(
                f"{what}: string length {length} exceeds the {self.n - self.pos} bytes left", start)
        self.pos += <Py_ssize_t>length
        return (<const char*>self.p)[self.pos - length:self.pos]

    cdef object value(self, uint32_t vtype, what, int depth):
        cdef Py_ssize_t start = self.pos
        cdef uint64_t count
        cdef uint32_t etype
        cdef Py_ssize_t size, i
        if vtype == GGUFType.STRING:
            return self.raw_string(what).decode("utf-8", "replace")
        if vtype == GGUFType.ARRAY:
            if depth > 4:
                raise WireFormatError(f"{what}: arrays nested deeper than 4", start)
            etype = self.u32(what)
            count = self.u64(what)
            if etype in _SCALARS:
                code, size = _SCALARS[etype]
                if count > <uint64_t>((self.n - self.pos) // size):
                    raise WireFormatError(
                        f"{what}: array of {count} elements exceeds the {self.n - self.pos} bytes left",
                        start)
                arr = array(code)
                arr.frombytes((<const char*>self.p)[self.pos:self.pos + count * size])
                self.pos += count * size
                return arr
            if etype == GGUFType.STRING:
                # each string takes at least its 8-byte length
                if count > <uint64_t>((self.n - self.pos) // 8):
                    raise WireFormatError(
                        f"{what}: array of {count} strings exceeds the {self.n - self.pos} bytes left",
                        start)
                return [self.raw_string(what) for i in range(<Py_ssize_t>count)]
            if etype == GGUFType.ARRAY:
                # Parity: gguf.cpp gguf_init_from_file_impl: "has invalid GGUF type".
                raise WireFormatError(f"{what}: arrays of arrays are not valid GGUF", start)
            raise WireFormatError(f"{what}: unknown array element type {etype}", start)
        if vtype in _SCALARS:
            code, size = _SCALARS[vtype]
            self._need(size, what)
            arr = array(code)
            arr.frombytes((<const char*>self.p)[self.pos:self.pos + size])
            self.pos += size
            return bool(arr[0]) if vtype == GGUFType.BOOL else arr[0]
        raise WireFormatError(f"{what}: unknown value type {vtype}", start)


def parse_gguf_metadata(const uint8_t[::1] data not None):
    """Read a GGUF header and its key/value metadata; tensor data is never touched.

    Returns (version, tensor_count, {key: value}, {key: GGUFType}, metadata_end).
    String arrays come back as lists of raw bytes, numeric arrays as
    array.array. `metadata_end` is where the key/value section ends (tensor
    infos follow): data[:metadata_end] with the tensor count set to 0 is a GGUF
    of its own that holds the tokenizer and no tensors.
    """
    cdef _GGUFReader r = _GGUFReader()
    cdef uint32_t version, vtype, n_dims
    cdef uint64_t n_tensors, n_kv, i
    cdef dict values = {}, types = {}
    cdef Py_ssize_t start
    r.n = data.shape[0]
    r.p = &data[0] if r.n else NULL
    r.pos = 0
    r._need(4, "magic")
    if (<const char*>r.p)[:4] != b"GGUF":
        raise WireFormatError(f"not a GGUF file: magic {(<const char*>r.p)[:4]!r}, expected b'GGUF'", 0)
    r.pos = 4
    version = r.u32("version")
    if version not in (2, 3):
        if version in (0x02000000, 0x03000000):
            raise WireFormatError("big-endian GGUF is not supported", 4)
        raise WireFormatError(f"GGUF version {version} is not supported (expected 2 or 3)", 4)
    n_tensors = r.u64("tensor count")
    n_kv = r.u64("metadata count")
    if n_kv > <uint64_t>(r.n // 12):
        raise WireFormatError(f"metadata count {n_kv} exceeds the file size", 16)
    for i in range(n_kv):
        start = r.pos
        key = r.raw_string("metadata key").decode("utf-8", "replace")
        if key in values:
            raise WireFormatError(f"duplicate metadata key {key!r}", start)   # ggml rejects these too
        vtype = r.u32(f"type of {key!r}")
        types[key] = vtype
        values[key] = r.value(vtype, f"value of {key!r}", 0)
    metadata_end = r.pos
    # Parity: gguf.cpp gguf_init_from_file_impl reads every tensor info (name, n_dims
    # <= GGML_MAX_DIMS, dims, type, offset) after the metadata and fails where the
    # file ends first; a tensor count that promises infos the file lacks is refused.
    if n_tensors > <uint64_t>((r.n - r.pos) // 24):
        raise WireFormatError(f"tensor count {n_tensors} exceeds the file size", 8)
    for i in range(n_tensors):
        r.raw_string(f"name of tensor {i}")
        start = r.pos
        n_dims = r.u32(f"n_dims of tensor {i}")
        if n_dims > 4:
            raise WireFormatError(f"tensor {i} has {n_dims} dimensions, at most 4", start)
        for _ in range(n_dims):
            r.u64(f"a dimension of tensor {i}")
        r.u32(f"type of tensor {i}")
        r.u64(f"offset of tensor {i}")
    return version, n_tensors, values, types, metadata_end


# ---------------------------------------------------------------- protobuf writing

cdef extern from "Python.h":
    # struct.pack("<f", x)'s own conversion (OverflowError past float's range)
    int PyFloat_Pack4(double x, char* p, int le) except -1


cdef inline Py_ssize_t _put_varint(unsigned char* out, uint64_t value) noexcept:
    cdef Py_ssize_t n = 0
    while value >= 0x80:
        out[n] = <unsigned char>((value & 0x7F) | 0x80)
        value >>= 7
        n += 1
    out[n] = <unsigned char>value
    return n + 1


cdef enum:
    PIECE_FIELD_TAG = 0x0A      # ModelProto.pieces (1, length-delimited)
    PIECE_TEXT_TAG = 0x0A       # SentencePiece.piece (1, length-delimited)
    PIECE_SCORE_TAG = 0x15      # SentencePiece.score (2, fixed32)
    PIECE_TYPE_TAG = 0x18       # SentencePiece.type (3, varint)
    NORMAL_TYPE = 1             # SentencePiece.Type.NORMAL, the default: not written


def encode_piece_messages(list pieces, list scores, const uint8_t[::1] types not None, omitted=None):
    """The `pieces` fields of a ModelProto: for each piece its text, its score (a float, or
    its 4 raw bytes) unless its index is in `omitted`, and its type unless NORMAL, each
    message as `writers.protobuf_wire` writes it, natively (a .model holds up to
    hundreds of thousands of pieces).

    >>> encode_piece_messages([b"a"], [-1.0], b"\\x01").hex()
    '0a080a016115000080bf'
    """
    cdef Py_ssize_t n = len(pieces), i, k, size, total = 0, length
    cdef bytes piece
    cdef object score
    cdef unsigned char head[32]
    cdef unsigned char tail[16]
    cdef Py_ssize_t n_tail, body
    cdef bint check_omitted = bool(omitted)
    if len(scores) != n or types.shape[0] != n:
        raise ValueError(f"{n} pieces, {len(scores)} scores and {types.shape[0]} types")
    for i in range(n):
        piece = pieces[i]           # (a TypeError for anything but bytes)
        total += len(piece) + 40    # + the tags, lengths, score and type: at most 28
    out = bytearray(total)
    cdef unsigned char* o = out
    size = 0
    for i in range(n):
        piece = pieces[i]
        length = len(piece)
        n_tail = 0
        if not (check_omitted and i in omitted):
            score = scores[i]
            tail[0] = PIECE_SCORE_TAG
            if isinstance(score, bytes):
                if len(<bytes>score) != 4:
                    raise ValueError(f"a float field holds 4 bytes, not {len(<bytes>score)}")
                memcpy(&tail[1], <const char*>(<bytes>score), 4)
            else:
                PyFloat_Pack4(score, <char*>&tail[1], 1)
            n_tail = 5
        if types[i] != NORMAL_TYPE:
            tail[n_tail] = PIECE_TYPE_TAG
            n_tail += 1 + _put_varint(&tail[n_tail + 1], types[i])
        # the message: text field, then the score and type fields
        k = 0
        head[k] = PIECE_TEXT_TAG
        k += 1
        k += _put_varint(&head[k], <uint64_t>length)
        body = k + length + n_tail
        o[size] = PIECE_FIELD_TAG
        size += 1
        size += _put_varint(&o[size], <uint64_t>body)
        memcpy(&o[size], head, k)
        size += k
        memcpy(&o[size], <const char*>piece, length)
        size += length
        memcpy(&o[size], tail, n_tail)
        size += n_tail
    del out[size:]
    return bytes(out)
