"""A small protobuf wire-format encoder (the reader is `toksmith._core.wire`).

Fields are written one by one in the order given, as protobuf's C++ serializer
writes a message whose fields were set in field-number order.

>>> varint(300).hex()
'ac02'
>>> (string_field(1, b"hi") + float_field(2, -1.5)).hex()
'0a026869150000c0bf'
>>> int32_field(7, -1).hex()   # negative int32: ten bytes, as protobuf writes them
'38ffffffffffffffffff01'
"""
from __future__ import annotations

import functools
import struct

WIRE_VARINT, WIRE_FIXED64, WIRE_LEN, WIRE_FIXED32 = 0, 1, 2, 5

# Speed: a .model holds tens of thousands of pieces, each a few short fields; most
# varints are one byte and there are only a few distinct tags.
_ONE_BYTE_VARINTS = tuple(bytes((i,)) for i in range(0x80))
_pack_float = struct.Struct("<f").pack


def varint(value: int) -> bytes:
    """An unsigned base-128 varint; a negative value as its 64-bit two's complement.

    Parity: protobuf CodedOutputStream::WriteVarint64 (int32 fields sign-extend to 64 bits).
    """
    if 0 <= value < 0x80:
        return _ONE_BYTE_VARINTS[value]
    if value < 0:
        value += 1 << 64
    if not 0 <= value < 1 << 64:
        raise ValueError(f"{value} does not fit a 64-bit varint")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@functools.lru_cache(maxsize=256)
def key(field: int, wire: int) -> bytes:
    """The tag of a field: (field number << 3) | wire type."""
    if field < 1 or wire not in (WIRE_VARINT, WIRE_FIXED64, WIRE_LEN, WIRE_FIXED32):
        raise ValueError(f"field {field} with wire type {wire} cannot be written")
    return varint(field << 3 | wire)


def string_field(field: int, value: bytes) -> bytes:
    """A length-delimited field (string, bytes or an encoded sub-message)."""
    return key(field, WIRE_LEN) + varint(len(value)) + value


def int32_field(field: int, value: int) -> bytes:
    """An int32/enum/bool field (a varint)."""
    return key(field, WIRE_VARINT) + varint(int(value))


def float_field(field: int, value: float | bytes) -> bytes:
    """A float field: fixed32 little-endian. `value` as 4 raw bytes is written as is,
    so a float read from a file goes back bit-exactly (NaN payloads included)."""
    raw = value if isinstance(value, bytes) else _pack_float(value)
    if len(raw) != 4:
        raise ValueError(f"a float field holds 4 bytes, not {len(raw)}")
    return key(field, WIRE_FIXED32) + raw


def raw_field(field: int, wire: int, value: int | bytes) -> bytes:
    """A field as `toksmith._core.wire.parse_message` returns it: (number, wire type, value),
    the value an int for varints and the raw bytes for the other wire types."""
    if wire == WIRE_VARINT:
        return key(field, wire) + varint(value)
    if wire == WIRE_LEN:
        return string_field(field, value)
    expected = 4 if wire == WIRE_FIXED32 else 8
    if not isinstance(value, bytes) or len(value) != expected:
        raise ValueError(f"field {field}: wire type {wire} holds {expected} raw bytes, not {value!r}")
    return key(field, wire) + value
