"""Copies of real GGUF vocabularies with some keys changed, written with the `gguf` package.

The parity tests use them to run llama.cpp and toksmith on one real vocabulary under
every pre-tokenizer name (``tokenizer.ggml.pre``) or tokenizer model llama.cpp accepts.

Example::

    copy_gguf(fixtures / "gguf/ggml-vocab-gpt-2.gguf", tmp / "x.gguf",
              {"tokenizer.ggml.pre": "qwen2"})
"""
from __future__ import annotations

import functools
import os

import gguf


def copy_gguf(source: str | os.PathLike, target: str | os.PathLike,
              changes: dict[str, object]) -> str:
    """Write `source` to `target` with each key of `changes` set to a string, int or bool
    value (None removes the key); returns the target path."""
    return _copy(source, target, changes, {})


def copy_gguf_with_tokens(source: str | os.PathLike, target: str | os.PathLike, tokens: list[str],
                          token_types: list[int], changes: dict[str, object]) -> str:
    """`copy_gguf`, with `tokens` (of GGUF `token_types`) appended to the vocabulary after
    the file's own (scores, when the file has them, get 0.0 for the new tokens)."""
    return _copy(source, target, changes, {"tokenizer.ggml.tokens": list(tokens),
                                           "tokenizer.ggml.token_type": list(token_types),
                                           "tokenizer.ggml.scores": [0.0] * len(tokens)})


@functools.lru_cache(maxsize=4)
def _fields(source: str) -> tuple[str, tuple[tuple[str, object, gguf.GGUFValueType, gguf.GGUFValueType | None], ...]]:
    """(architecture, (key, value, type, array item type) of every other key), read once per
    source: GGUFReader's contents() of a 50,000-string array takes seconds."""
    reader = gguf.GGUFReader(source)
    fields = []
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        vtype = field.types[0]
        sub_type = field.types[1] if vtype == gguf.GGUFValueType.ARRAY else None
        fields.append((key, field.contents(), vtype, sub_type))
    return reader.fields["general.architecture"].contents(), tuple(fields)


def _copy(source, target, changes: dict[str, object], appended: dict[str, list]) -> str:
    architecture, fields = _fields(os.path.realpath(source))
    writer = gguf.GGUFWriter(os.fspath(target), changes.get("general.architecture") or architecture)
    done = set()
    for key, value, vtype, sub_type in fields:
        if key in changes:
            done.add(key)
            _add(writer, key, changes[key])
            continue
        if key in appended:
            value = value + appended[key]
        writer.add_key_value(key, value, vtype, sub_type)
    for key, value in changes.items():
        if key not in done and key != "general.architecture":
            _add(writer, key, value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return os.fspath(target)


def _add(writer, key: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool):
        writer.add_bool(key, value)
    elif isinstance(value, int):
        writer.add_uint32(key, value)
    elif isinstance(value, str):
        writer.add_string(key, value)
    else:
        raise TypeError(f"unsupported value for {key}: {value!r}")
