"""GGUF -> GGUF: the file's own key/values written again.

Every key keeps its place, GGUF type and value (strings as raw bytes), so the written
file holds the same metadata as the original; only the tensors are left out (a
vocab-only file). A tokenizer loaded with pre= is written with that tokenizer.ggml.pre,
so it loads back tokenizing the same way.

>>> entries = own_entries(toksmith.load("ggml-vocab-gpt-2.gguf").spec)   # doctest: +SKIP
"""
from __future__ import annotations

from array import array

from toksmith.spec import TokenizerSpec
from toksmith.writers.common import cannot_write
from toksmith.writers.gguf_binary import ARRAY_CODES, Entry, GgufValue, ValueType, read_values

PRE_KEY = "tokenizer.ggml.pre"


def own_entries(spec: TokenizerSpec) -> list[Entry]:
    """The key/values of the GGUF `spec` was read from, with a load-time pre= applied."""
    if spec.source_data is not None:
        entries = read_values(spec.source_data, spec.source)
    elif spec.file_fields is not None and spec.file_fields.gguf_metadata:
        entries = [Entry(key, _typed(key, kind, value))
                   for key, (kind, value) in spec.file_fields.gguf_metadata.items()]
    else:
        raise cannot_write(spec, "a vocab-only GGUF", ["the GGUF metadata it was read from (a spec built in memory)"])
    pre = spec.load_options.pre
    if pre is not None:
        replaced = Entry(PRE_KEY, GgufValue.string(pre))
        if any(e.key == PRE_KEY for e in entries):
            entries = [replaced if e.key == PRE_KEY else e for e in entries]
        else:
            entries.append(replaced)
    return entries


def _typed(key: str, kind: int, value: object) -> GgufValue:
    """A GgufValue of a value as formats.gguf's parser returns it (strings decoded, arrays
    as array.array or lists of bytes); BOOL and UINT8 arrays both come back as typecode "B"
    and are written as UINT8."""
    kind = ValueType(kind)
    if kind == ValueType.STRING:
        return GgufValue.string(value)
    if kind != ValueType.ARRAY:
        return GgufValue(kind, value)
    if isinstance(value, array):
        element = next(t for t, code in ARRAY_CODES.items() if code == value.typecode)
        return GgufValue(kind, value, element)
    if all(isinstance(v, bytes) for v in value):
        return GgufValue(kind, list(value), ValueType.STRING)
    raise ValueError(f"{key}: nested arrays cannot be written from decoded metadata")
