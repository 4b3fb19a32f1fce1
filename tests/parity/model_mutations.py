"""Mutations of model files for the differential loader test (test_mutated_models.py).

Raw mutations work on bytes and know where the length fields are (protobuf
varint lengths; GGUF string lengths, array counts and header counts), found by
small walkers written here, independent of toksmith's readers. Semantic
mutations edit one field of a parsed model (sentencepiece's own protobuf
classes for .model; a key/value list written with the `gguf` package for GGUF).

Every generator takes a `random.Random` and yields ``(label, bytes)``.

Example::

    rng = random.Random(7)
    for label, data in raw_mutations(model_bytes, protobuf_length_fields(model_bytes), rng, 10):
        ...
"""
from __future__ import annotations

import math
import random
import struct
from dataclasses import dataclass

import gguf
from sentencepiece import sentencepiece_model_pb2 as pb

# ---------------------------------------------------------------- length fields


@dataclass(frozen=True)
class LengthField:
    """A length or count stored at `offset` in `size` bytes; `varint` for protobuf."""

    offset: int
    size: int
    value: int
    varint: bool


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def protobuf_length_fields(data: bytes, start: int = 0, end: int | None = None,
                           nested: frozenset = frozenset({1, 2, 3})) -> list[LengthField]:
    """Every length-delimited field's length, walking into top-level fields in `nested`
    (ModelProto: 1 pieces, 2 trainer_spec, 3 normalizer_spec) one level down."""
    end = len(data) if end is None else end
    found = []
    pos = start
    while pos < end:
        key, pos = _varint(data, pos)
        wire = key & 7
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length_at = pos
            length, pos = _varint(data, pos)
            found.append(LengthField(length_at, pos - length_at, length, True))
            if start == 0 and (key >> 3) in nested:
                found.extend(protobuf_length_fields(data, pos, pos + length, frozenset()))
            pos += length
        else:
            raise ValueError(f"wire type {wire}")
    return found


def gguf_length_fields(data: bytes) -> list[LengthField]:
    """Header counts, key/string lengths and array counts of a GGUF file (8 bytes each)."""
    found = [LengthField(8, 8, struct.unpack_from("<Q", data, 8)[0], False),
             LengthField(16, 8, struct.unpack_from("<Q", data, 16)[0], False)]
    n_kv = found[1].value
    pos = 24
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def string() -> None:
        nonlocal pos
        (length,) = struct.unpack_from("<Q", data, pos)
        found.append(LengthField(pos, 8, length, False))
        pos += 8 + length

    for _ in range(n_kv):
        string()
        (vtype,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if vtype == 8:
            string()
        elif vtype == 9:
            (etype, count) = struct.unpack_from("<IQ", data, pos)
            found.append(LengthField(pos + 4, 8, count, False))
            pos += 12
            if etype == 8:
                for _ in range(count):
                    string()
            else:
                pos += sizes[etype] * count
        else:
            pos += sizes[vtype]
    return found


def _new_length(rng: random.Random, value: int) -> int:
    return rng.choice([0, 1, max(value - 1, 0), value + 1, value + rng.randint(2, 300),
                       value // 2, value * 2 + 1, 2 ** 31 - 1, 2 ** 32 + value, 2 ** 63 - 1, 2 ** 64 - 1])


class Regions:
    """Byte ranges that byte flips leave alone: ``pos in Regions(range(0, 4), None)``."""

    def __init__(self, *ranges: range | None) -> None:
        self.ranges = [r for r in ranges if r is not None]

    def __contains__(self, pos: int) -> bool:
        return any(pos in r for r in self.ranges)


def gguf_architecture_value(data: bytes) -> range | None:
    """Byte range of the general.architecture string's text in a GGUF file.

    Byte flips stay out of it: llama.cpp refuses an architecture name it does not
    know, toksmith does not check names against llama.cpp's list (a tokenizer does
    not depend on the architecture), a deliberate difference.
    """
    key = b"general.architecture"
    at = data.find(key)
    if at < 0 or data[at + len(key):at + len(key) + 4] != struct.pack("<I", 8):
        return None
    (length,) = struct.unpack_from("<Q", data, at + len(key) + 4)
    start = at + len(key) + 12
    return range(start, start + length)


def raw_mutations(data: bytes, fields: list[LengthField], rng: random.Random, count: int,
                  avoid: range | Regions | None = None):
    """`count` byte flips, truncations and length-field edits of `data`.

    Byte flips skip `avoid` (regions the reference reads without bounds checks).
    """
    for _ in range(count):
        kind = rng.random()
        if kind < 0.4:
            out = bytearray(data)
            flips = rng.choice([1, 1, 1, 2, 4])
            for _ in range(flips):
                pos = rng.randrange(len(out))
                while avoid is not None and pos in avoid:
                    pos = rng.randrange(len(out))
                out[pos] ^= 1 << rng.randrange(8) if rng.random() < 0.7 else rng.randrange(1, 256)
            yield f"flip{flips}", bytes(out)
        elif kind < 0.6:
            cut = rng.choice([rng.randrange(len(data)), rng.randrange(min(len(data), 64)),
                              len(data) - rng.randint(1, 16)])
            yield f"truncate@{cut}", data[:max(cut, 0)]
        else:
            field = rng.choice(fields)
            value = _new_length(rng, field.value)
            if field.varint:
                value &= (1 << 64) - 1
                encoded = encode_varint(value)
            else:
                encoded = struct.pack("<Q", value & ((1 << 64) - 1))
            yield (f"length@{field.offset}:{field.value}->{value}",
                   data[:field.offset] + encoded + data[field.offset + field.size:])


# ---------------------------------------------------------------- .model semantic edits

SPECIAL_SCORES = (math.nan, math.inf, -math.inf, 0.0, 1e30, -1e30, 5.0)


def model_semantic_mutations(data: bytes, rng: random.Random, count: int):
    """`count` single-field edits of a serialized sentencepiece ModelProto."""
    base = pb.ModelProto()
    base.ParseFromString(data)
    n = len(base.pieces)
    types = [p.type for p in base.pieces]
    by_type = {t: [i for i, x in enumerate(types) if x == t] for t in range(7)}
    edits = [
        "duplicate", "duplicate_reserved", "type", "score", "byte_fallback", "drop_byte",
        "nul", "empty", "bad_utf8", "special_piece", "model_type", "normalizer_flag",
        "unk_type", "second_unk", "long_piece", "null_unused", "swap",
    ]
    for _ in range(count):
        m = pb.ModelProto()
        m.CopyFrom(base)
        edit = rng.choice(edits)
        i, j = rng.randrange(n), rng.randrange(n)
        if edit == "duplicate":
            m.pieces[i].piece = m.pieces[j].piece
        elif edit == "duplicate_reserved":
            reserved = by_type[2] + by_type[3] + by_type[6]
            m.pieces[i].piece = m.pieces[rng.choice(reserved)].piece
        elif edit == "type":
            m.pieces[i].type = rng.choice([1, 2, 3, 4, 5, 6])
        elif edit == "score":
            m.pieces[i].score = rng.choice(SPECIAL_SCORES)
        elif edit == "byte_fallback":
            m.trainer_spec.byte_fallback = not m.trainer_spec.byte_fallback
        elif edit == "drop_byte":
            if by_type[6]:
                k = rng.choice(by_type[6])
                m.pieces[k].type = 1
            else:
                m.trainer_spec.byte_fallback = True
        elif edit == "nul":
            text = m.pieces[i].piece
            cut = rng.randrange(len(text) + 1)
            m.pieces[i].piece = text[:cut] + "\0" + text[cut:]
        elif edit == "empty":
            m.pieces[i].piece = ""
        elif edit == "bad_utf8":
            # sentencepiece's .proto declares piece as `string`: a serialized invalid
            # UTF-8 piece is made by patching bytes, see _invalid_utf8_piece.
            yield edit, _invalid_utf8_piece(m, i)
            continue
        elif edit == "special_piece":
            field = rng.choice(["unk_piece", "bos_piece", "eos_piece", "pad_piece"])
            setattr(m.trainer_spec, field, m.pieces[j].piece)
        elif edit == "model_type":
            m.trainer_spec.model_type = rng.choice([1, 2, 3, 4])
        elif edit == "normalizer_flag":
            flag = rng.choice(["add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"])
            setattr(m.normalizer_spec, flag, not getattr(m.normalizer_spec, flag))
        elif edit == "unk_type":
            m.pieces[by_type[2][0]].type = rng.choice([1, 3, 4, 5])
        elif edit == "second_unk":
            m.pieces[i].type = 2
        elif edit == "long_piece":
            m.pieces[i].piece = "x" * rng.choice([7999, 8000, 9000]) + str(i)
        elif edit == "null_unused":
            m.pieces[i].piece = "\0"
            m.pieces[i].type = rng.choice([5, 5, 1, 3])
        elif edit == "swap":
            a, b = m.pieces[i].piece, m.pieces[j].piece
            m.pieces[i].piece, m.pieces[j].piece = b, a
        yield edit, m.SerializeToString()


def _invalid_utf8_piece(m: pb.ModelProto, i: int) -> bytes:
    marker = "\u00ff" * 3
    m.pieces[i].piece = marker + m.pieces[i].piece
    data = m.SerializeToString()
    return data.replace(marker.encode("utf-8"), b"\xff\xfe\xc3\xff\xfe\xc3", 1)   # same length


# ---------------------------------------------------------------- GGUF vocabularies

T = gguf.GGUFValueType


@dataclass
class KV:
    key: str
    value: object
    vtype: T
    sub_type: T | None = None


def gguf_from_model(data: bytes, tokenizer_model: str, *, with_charsmap: bool) -> list[KV]:
    """The key/value list of a vocab-only GGUF made from a sentencepiece model's pieces."""
    m = pb.ModelProto()
    m.ParseFromString(data)
    kvs = [KV("general.architecture", "llama" if tokenizer_model == "llama" else "t5", T.STRING),
           KV("general.name", "mutant", T.STRING),
           KV("tokenizer.ggml.model", tokenizer_model, T.STRING),
           KV("tokenizer.ggml.tokens", [p.piece.encode() for p in m.pieces], T.ARRAY, T.STRING),
           KV("tokenizer.ggml.scores", [p.score for p in m.pieces], T.ARRAY, T.FLOAT32),
           KV("tokenizer.ggml.token_type", [p.type for p in m.pieces], T.ARRAY, T.INT32)]
    if tokenizer_model == "llama":
        kvs += [KV("tokenizer.ggml.bos_token_id", 1, T.UINT32), KV("tokenizer.ggml.eos_token_id", 2, T.UINT32),
                KV("tokenizer.ggml.unknown_token_id", 0, T.UINT32),
                KV("tokenizer.ggml.add_bos_token", True, T.BOOL)]
    else:
        kvs += [KV("tokenizer.ggml.eos_token_id", 2, T.UINT32), KV("tokenizer.ggml.unknown_token_id", 0, T.UINT32),
                KV("tokenizer.ggml.padding_token_id", 1, T.UINT32),
                KV("tokenizer.ggml.add_space_prefix", True, T.BOOL)]
    if with_charsmap:
        # bytes, not a list: mutations copy every list value, and this one is ~240 KB.
        kvs.append(KV("tokenizer.ggml.precompiled_charsmap", bytes(m.normalizer_spec.precompiled_charsmap),
                      T.ARRAY, T.UINT8))
    return kvs


def write_gguf_bytes(kvs: list[KV], path) -> bytes:
    """Serialize `kvs` as a GGUF v3 file with no tensors, write it to `path`, return the bytes.

    Packed with `struct` (the gguf package's writer takes ~30 ms for a 1000-token
    vocabulary); `write_gguf_bytes_with_gguf` writes the same bytes with the gguf
    package, and the test checks the two agree on each base model.
    """
    out = [b"GGUF", struct.pack("<IQQ", 3, 0, len(kvs))]
    for kv in kvs:
        out.append(_pack_string(kv.key.encode()))
        out.append(struct.pack("<I", kv.vtype))
        if kv.vtype == T.ARRAY:
            out.append(struct.pack("<IQ", kv.sub_type, len(kv.value)))
            if kv.sub_type == T.ARRAY:
                for inner in kv.value:   # arrays of arrays: u8 elements (the "nested" edit)
                    out.append(struct.pack("<IQ", T.UINT8, len(inner)) + bytes(inner))
            elif kv.sub_type == T.STRING:
                out.extend(_pack_string(v) for v in kv.value)
            elif kv.sub_type in (T.UINT8, T.INT8) and not isinstance(kv.value, list):
                out.append(bytes(kv.value))
            else:
                out.append(struct.pack(f"<{len(kv.value)}{_FORMATS[kv.sub_type]}", *kv.value))
        elif kv.vtype == T.STRING:
            out.append(_pack_string(kv.value))
        else:
            out.append(struct.pack("<" + _FORMATS[kv.vtype], kv.value))
    data = b"".join(out)
    with open(path, "wb") as f:
        f.write(data)
    return data


_FORMATS = {T.UINT8: "B", T.INT8: "b", T.UINT16: "H", T.INT16: "h", T.UINT32: "I", T.INT32: "i",
            T.FLOAT32: "f", T.BOOL: "?", T.UINT64: "Q", T.INT64: "q", T.FLOAT64: "d"}


def _pack_string(value: str | bytes) -> bytes:
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return struct.pack("<Q", len(raw)) + raw


def write_gguf_bytes_with_gguf(kvs: list[KV], path) -> bytes:
    """The same file as `write_gguf_bytes`, written by the gguf package (slow; a cross-check)."""
    return _write(kvs[0].value, kvs[1:], path)


def _write(architecture: str, kvs: list[KV], path) -> bytes:
    writer = gguf.GGUFWriter(str(path), arch=architecture)
    for kv in kvs:
        value = list(kv.value) if isinstance(kv.value, bytes) else kv.value
        writer.add_key_value(kv.key, value, kv.vtype, sub_type=kv.sub_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    with open(path, "rb") as f:
        return f.read()


SPECIAL_ID_KEYS = ("bos_token_id", "eos_token_id", "unknown_token_id", "padding_token_id",
                   "seperator_token_id", "mask_token_id", "eot_token_id")
FLAG_KEYS = ("add_bos_token", "add_eos_token", "add_space_prefix", "remove_extra_whitespaces")


def gguf_semantic_mutations(kvs: list[KV], rng: random.Random, count: int):
    """`count` single-field edits of a GGUF key/value list; yields (label, kvs)."""
    tokens = next(kv for kv in kvs if kv.key == "tokenizer.ggml.tokens").value
    n = len(tokens)
    edits = ["special_id", "special_type", "score", "scores_length", "scores_type", "token_type",
             "types_length", "types_elem", "nul", "empty", "duplicate", "bad_utf8", "flag",
             "flag_type", "model", "charsmap", "alignment", "drop_key", "nested", "unk_type"]
    for _ in range(count):
        new = [KV(kv.key, list(kv.value) if isinstance(kv.value, list) else kv.value, kv.vtype, kv.sub_type)
               for kv in kvs]
        get = {kv.key: kv for kv in new}
        edit = rng.choice(edits)
        i, j = rng.randrange(n), rng.randrange(n)
        if edit == "special_id":
            key = "tokenizer.ggml." + rng.choice(SPECIAL_ID_KEYS)
            value = rng.choice([n, n + 3, 2 ** 32 - 1, 2 ** 31, i])
            _set(new, get, key, value, T.UINT32)
        elif edit == "special_type":
            key = "tokenizer.ggml." + rng.choice(SPECIAL_ID_KEYS)
            vtype, value = rng.choice([(T.INT32, 1), (T.UINT64, 1), (T.STRING, "1"), (T.FLOAT32, 1.0),
                                       (T.INT32, -1), (T.UINT16, 2)])
            _set(new, get, key, value, vtype)
        elif edit == "score":
            get["tokenizer.ggml.scores"].value[i] = rng.choice(SPECIAL_SCORES)
        elif edit == "scores_length":
            scores = get["tokenizer.ggml.scores"].value
            get["tokenizer.ggml.scores"].value = scores[:-rng.randint(1, 3)] if rng.random() < 0.5 \
                else scores + [0.0] * rng.randint(1, 3)
        elif edit == "scores_type":
            kv = get["tokenizer.ggml.scores"]
            kv.sub_type = rng.choice([T.INT32, T.FLOAT64, T.UINT32])
            if kv.sub_type in (T.INT32, T.UINT32):
                kv.value = [abs(int(s)) if kv.sub_type == T.UINT32 else int(s) for s in kv.value]
        elif edit == "token_type":
            get["tokenizer.ggml.token_type"].value[i] = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 100, -1])
        elif edit == "types_length":
            types = get["tokenizer.ggml.token_type"].value
            get["tokenizer.ggml.token_type"].value = types[:-1] if rng.random() < 0.5 else types + [1]
        elif edit == "types_elem":
            kv = get["tokenizer.ggml.token_type"]
            kv.sub_type = rng.choice([T.UINT8, T.UINT32, T.INT64])
        elif edit == "nul":
            text = tokens[i]
            cut = rng.randrange(len(text) + 1)
            get["tokenizer.ggml.tokens"].value[i] = text[:cut] + b"\0" + text[cut:]
        elif edit == "empty":
            get["tokenizer.ggml.tokens"].value[i] = b""
        elif edit == "duplicate":
            get["tokenizer.ggml.tokens"].value[i] = tokens[j]
        elif edit == "bad_utf8":
            get["tokenizer.ggml.tokens"].value[i] = b"\xff" + tokens[i]
        elif edit == "flag":
            key = "tokenizer.ggml." + rng.choice(FLAG_KEYS)
            _set(new, get, key, rng.random() < 0.5, T.BOOL)
        elif edit == "flag_type":
            key = "tokenizer.ggml." + rng.choice(FLAG_KEYS)
            _set(new, get, key, 1, rng.choice([T.UINT8, T.INT32, T.UINT32]))
        elif edit == "model":
            get["tokenizer.ggml.model"].value = rng.choice(["llama", "t5", "gpt2", "bogus", ""])
        elif edit == "charsmap":
            kv = get.get("tokenizer.ggml.precompiled_charsmap")
            choice = rng.random()
            if kv is None or choice < 0.3:
                _set(new, get, "tokenizer.ggml.precompiled_charsmap", [1, 2], T.ARRAY, T.UINT8)
            elif choice < 0.6:
                kv.value = kv.value[:rng.choice([3, 4, 8, len(kv.value) // 2])]
            else:
                kv.sub_type = T.INT32
        elif edit == "alignment":
            _set(new, get, "general.alignment", *rng.choice([(0, T.UINT32), (3, T.UINT32), (64, T.UINT32),
                                                            (32, T.UINT64), (32, T.INT32)]))
        elif edit == "drop_key":
            victim = rng.choice(new[1:])
            new.remove(victim)
        elif edit == "nested":
            _set(new, get, "tokenizer.ggml.extra", [[1, 2], [3]], T.ARRAY, T.ARRAY)
        elif edit == "unk_type":
            get["tokenizer.ggml.token_type"].value[rng.choice([0, 1, 2])] = rng.choice([1, 2, 3, 6])
        yield edit, new


def _set(new: list[KV], get: dict[str, KV], key: str, value, vtype: T, sub_type: T | None = None) -> None:
    if key in get:
        get[key].value, get[key].vtype, get[key].sub_type = value, vtype, sub_type
    else:
        kv = KV(key, value, vtype, sub_type)
        new.append(kv)
        get[key] = kv


def gguf_kvs(data: bytes) -> list[KV]:
    """The key/value list of a GGUF file without tensors (a real fixture), for the semantic
    edits above: strings stay bytes, a u8 array stays bytes (a charsmap), other arrays lists."""
    _version, n_tensors, n_kv = struct.unpack_from("<IQQ", data, 4)
    assert data[:4] == b"GGUF" and n_tensors == 0, "a vocab-only GGUF"
    pos = 24
    formats = {T(k): v for k, v in {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?",
                                    10: "Q", 11: "q", 12: "d"}.items()}

    def string() -> bytes:
        nonlocal pos
        (length,) = struct.unpack_from("<Q", data, pos)
        pos += 8 + length
        return data[pos - length:pos]

    kvs = []
    for _ in range(n_kv):
        key = string().decode()
        vtype = T(struct.unpack_from("<I", data, pos)[0])
        pos += 4
        sub_type = None
        if vtype == T.STRING:
            value = string()
        elif vtype == T.ARRAY:
            sub_type, count = struct.unpack_from("<IQ", data, pos)
            sub_type = T(sub_type)
            pos += 12
            if sub_type == T.STRING:
                value = [string() for _ in range(count)]
            elif sub_type == T.UINT8:
                value, pos = data[pos:pos + count], pos + count
            else:
                fmt = f"<{count}{formats[sub_type]}"
                value, pos = list(struct.unpack_from(fmt, data, pos)), pos + struct.calcsize(fmt)
        else:
            (value,) = struct.unpack_from("<" + formats[vtype], data, pos)
            pos += struct.calcsize("<" + formats[vtype])
        kvs.append(KV(key, value, vtype, sub_type))
    return kvs
