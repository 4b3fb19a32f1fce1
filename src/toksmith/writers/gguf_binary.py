"""The GGUF v3 key/value encoding, both ways, exact to the byte (no tensors).

A value keeps its GGUF type (and an array its element type), so a file read with
`read_values` and written back with `encode_gguf` holds the same keys, types and values.
Strings stay raw bytes, as the file stores them.

>>> data = encode_gguf([Entry("general.architecture", GgufValue.string("llama")),
...                     Entry("tokenizer.ggml.add_bos_token", GgufValue.scalar(ValueType.BOOL, True))])
>>> [(e.key, e.value.value) for e in read_values(data)]
[('general.architecture', b'llama'), ('tokenizer.ggml.add_bos_token', True)]
"""
from __future__ import annotations

import struct
import sys
from array import array
from dataclasses import dataclass

from toksmith._core.wire import GGUFType
from toksmith.errors import ModelFormatError

# Parity: gguf-py constants.py GGUF_MAGIC / GGUF_VERSION (the header gguf-py writes).
GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3


# GGUF metadata value types (gguf-py GGUFValueType, gguf.h gguf_type): the reader's enum.
ValueType = GGUFType


# struct / array code of each fixed-size type. Parity: gguf_writer.py GGUFWriter._simple_value_packing
FIXED_CODES = {
    ValueType.UINT8: "B", ValueType.INT8: "b", ValueType.UINT16: "H", ValueType.INT16: "h",
    ValueType.UINT32: "I", ValueType.INT32: "i", ValueType.FLOAT32: "f", ValueType.BOOL: "?",
    ValueType.UINT64: "Q", ValueType.INT64: "q", ValueType.FLOAT64: "d",
}
# array.array cannot hold "?": BOOL arrays travel as bytes 0/1.
ARRAY_CODES = {**FIXED_CODES, ValueType.BOOL: "B"}


@dataclass(frozen=True)
class GgufValue:
    """One metadata value: its GGUF type, the value, and (arrays) the element type.

    value: int, float or bool for a fixed-size type; bytes for STRING; for ARRAY, an
    array.array of a fixed-size element type, or a list of bytes (STRING elements) or of
    GgufValue (ARRAY elements, each an array itself).
    """

    type: ValueType
    value: object
    element_type: ValueType | None = None

    @classmethod
    def string(cls, text: str | bytes) -> GgufValue:
        return cls(ValueType.STRING, text.encode("utf-8") if isinstance(text, str) else bytes(text))

    @classmethod
    def scalar(cls, value_type: ValueType, value: object) -> GgufValue:
        return cls(value_type, value)

    @classmethod
    def strings(cls, texts) -> GgufValue:
        return cls(ValueType.ARRAY, [t.encode("utf-8") if isinstance(t, str) else bytes(t) for t in texts],
                   ValueType.STRING)

    @classmethod
    def numbers(cls, element_type: ValueType, values) -> GgufValue:
        code = ARRAY_CODES[element_type]
        if isinstance(values, (bytes, bytearray)) and code != "B":
            values = list(values)   # array(code, bytes) would read the bytes as raw memory
        return cls(ValueType.ARRAY, array(code, values), element_type)


@dataclass(frozen=True)
class Entry:
    key: str
    value: GgufValue


def encode_gguf(entries: list[Entry]) -> bytes:
    """A GGUF v3 file of `entries` and no tensors, as gguf-py's GGUFWriter writes a vocab-only
    file: header, then the key/values, no padding (write_header_to_file, write_kv_data_to_file).
    """
    keys = [e.key for e in entries]
    if len(set(keys)) != len(keys):
        raise ValueError(f"a GGUF key is given twice: {sorted(k for k in set(keys) if keys.count(k) > 1)}")
    parts = [GGUF_MAGIC, struct.pack("<IQQ", GGUF_VERSION, 0, len(entries))]
    for entry in entries:
        parts.append(_string(entry.key.encode("utf-8")))
        parts.append(struct.pack("<I", entry.value.type))
        parts.append(_payload(entry.value, entry.key))
    return b"".join(parts)


def _string(raw: bytes) -> bytes:
    return struct.pack("<Q", len(raw)) + raw


def _payload(value: GgufValue, key: str) -> bytes:
    kind = value.type
    if kind in FIXED_CODES:
        return struct.pack("<" + FIXED_CODES[kind], value.value)
    if kind == ValueType.STRING:
        return _string(value.value)
    if kind != ValueType.ARRAY or value.element_type is None:
        raise ValueError(f"{key}: GGUF type {kind!r} needs an element type")
    items = value.value
    head = struct.pack("<IQ", value.element_type, len(items))
    element = value.element_type
    if element in ARRAY_CODES:
        numbers = items if isinstance(items, array) else array(ARRAY_CODES[element], items)
        if numbers.typecode != ARRAY_CODES[element]:
            numbers = array(ARRAY_CODES[element], numbers)
        if sys.byteorder == "big":
            numbers = array(numbers.typecode, numbers)
            numbers.byteswap()
        return head + numbers.tobytes()
    if element == ValueType.STRING:
        lengths = array("Q", [len(s) for s in items])
        if sys.byteorder == "big":
            lengths.byteswap()
        raw_lengths = lengths.tobytes()
        return head + b"".join(raw_lengths[8 * i:8 * i + 8] + s for i, s in enumerate(items))
    return head + b"".join(_payload(v, key) for v in items)


def read_values(data: bytes, source: str = "<bytes>") -> list[Entry]:
    """Every key/value of GGUF bytes in file order, types and raw strings kept (tensors not read).

    >>> read_values(encode_gguf([]))
    []
    """
    reader = _Reader(memoryview(data), source)
    if bytes(reader.take(4, "magic")) != GGUF_MAGIC:
        raise ModelFormatError(source, "not a GGUF file (no GGUF magic)")
    version, _tensors, count = struct.unpack("<IQQ", reader.take(20, "header"))
    if version not in (2, 3):
        raise ModelFormatError(source, f"GGUF version {version}; only versions 2 and 3 are read")
    entries = []
    for _ in range(count):
        key = bytes(reader.string("a key")).decode("utf-8", "surrogateescape")
        kind = ValueType(reader.u32(key))
        entries.append(Entry(key, reader.value(kind, key)))
    return entries


class _Reader:
    def __init__(self, data: memoryview, source: str):
        self.data, self.pos, self.source = data, 0, source

    def take(self, size: int, what: str) -> memoryview:
        if self.pos + size > len(self.data):
            raise ModelFormatError(self.source, f"truncated GGUF at byte {self.pos}: {what}")
        chunk = self.data[self.pos:self.pos + size]
        self.pos += size
        return chunk

    def u32(self, what: str) -> int:
        return struct.unpack("<I", self.take(4, what))[0]

    def value_type(self, key: str) -> ValueType:
        code = self.u32(key)
        try:
            return ValueType(code)
        except ValueError:
            raise ModelFormatError(self.source, f"{key}: unknown GGUF value type {code}") from None

    def string(self, what: str) -> memoryview:
        (size,) = struct.unpack("<Q", self.take(8, what))
        return self.take(size, what)

    def value(self, kind: ValueType, key: str) -> GgufValue:
        if kind in FIXED_CODES:
            code = "<" + FIXED_CODES[kind]
            return GgufValue(kind, struct.unpack(code, self.take(struct.calcsize(code), key))[0])
        if kind == ValueType.STRING:
            return GgufValue(kind, bytes(self.string(key)))
        element = self.value_type(key)
        (count,) = struct.unpack("<Q", self.take(8, key))
        if element in ARRAY_CODES:
            numbers = array(ARRAY_CODES[element])
            numbers.frombytes(self.take(count * numbers.itemsize, key))
            if sys.byteorder == "big":
                numbers.byteswap()
            return GgufValue(kind, numbers, element)
        if element == ValueType.STRING:
            return GgufValue(kind, [bytes(self.string(key)) for _ in range(count)], element)
        return GgufValue(kind, [self.value(element, key) for _ in range(count)], element)
