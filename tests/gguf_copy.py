"""Copies of real GGUF vocabularies with some keys changed, written with the `gguf` package.

The parity tests use them to run llama.cpp and toksmith on one real vocabulary under
every pre-tokenizer name (``tokenizer.ggml.pre``) or tokenizer model llama.cpp accepts.

Example::

    copy_gguf(fixtures / "gguf/ggml-vocab-gpt-2.gguf", tmp / "x.gguf",
              {"tokenizer.ggml.pre": "qwen2"})
"""
from __future__ import annotations

import os

import gguf


def copy_gguf(source: str | os.PathLike, target: str | os.PathLike,
              changes: dict[str, object]) -> str:
    """Write `source` to `target` with each key of `changes` set to a string, int or bool
    value (None removes the key); returns the target path."""
    reader = gguf.GGUFReader(os.fspath(source))
    arch = changes.get("general.architecture") or reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(os.fspath(target), arch)
    done = set()
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        if key in changes:
            done.add(key)
            _add(writer, key, changes[key])
            continue
        vtype = field.types[0]
        sub_type = field.types[1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, field.contents(), vtype, sub_type)
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
