"""Write small GGUF vocabularies for tests, with `struct` (independent of toksmith).

Layout: magic, u32 version, u64 tensor count, u64 kv count, then key/type/value.
Values are given with their GGUF type so the file says exactly what llama.cpp reads.

Example::

    write_gguf(path, [str_kv("tokenizer.ggml.model", "llama"), u32_kv("tokenizer.ggml.bos_token_id", 1)])
"""
from __future__ import annotations

import struct

U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9


def _str(value: str | bytes) -> bytes:
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return struct.pack("<Q", len(raw)) + raw


def str_kv(key: str, value: str | bytes) -> bytes:
    return _str(key) + struct.pack("<I", STRING) + _str(value)


def u32_kv(key: str, value: int) -> bytes:
    return _str(key) + struct.pack("<II", U32, value)


def bool_kv(key: str, value: bool) -> bytes:
    return _str(key) + struct.pack("<I?", BOOL, value)


def strings_kv(key: str, values) -> bytes:
    values = list(values)
    return _str(key) + struct.pack("<IIQ", ARRAY, STRING, len(values)) + b"".join(_str(v) for v in values)


def f32s_kv(key: str, values) -> bytes:
    values = list(values)
    return _str(key) + struct.pack("<IIQ", ARRAY, F32, len(values)) + struct.pack(f"<{len(values)}f", *values)


def i32s_kv(key: str, values) -> bytes:
    values = list(values)
    return _str(key) + struct.pack("<IIQ", ARRAY, I32, len(values)) + struct.pack(f"<{len(values)}i", *values)


def write_gguf(path, kvs: list[bytes]):
    with open(path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs))
    return path


def vocab_kvs(model: str, tokens, scores, types, *, architecture: str = "llama", name: str = "tiny",
              **ids: int) -> list[bytes]:
    """A vocab-only GGUF's keys: `ids` are e.g. bos_token_id=1 (tokenizer.ggml.<key>)."""
    kvs = [str_kv("general.architecture", architecture), str_kv("general.name", name),
           str_kv("tokenizer.ggml.model", model), strings_kv("tokenizer.ggml.tokens", tokens),
           f32s_kv("tokenizer.ggml.scores", scores), i32s_kv("tokenizer.ggml.token_type", types)]
    for key, value in ids.items():
        if isinstance(value, bool):
            kvs.append(bool_kv(f"tokenizer.ggml.{key}", value))
        else:
            kvs.append(u32_kv(f"tokenizer.ggml.{key}", value))
    return kvs
