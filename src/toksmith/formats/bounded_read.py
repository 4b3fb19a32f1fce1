"""Reading a model file with a bound on what it may cost: no more bytes read, mapped or
decompressed than a real tokenizer can need, and a `ModelFormatError` that says so (with
the setting that raises the bound) instead of a MemoryError, an OSError or the kernel's
out-of-memory killer.

The bounds are one documented setting, `toksmith.read_limits`:

- `max_file_bytes` (default 256 MiB): a tokenizer.json, a SentencePiece .model, a tiktoken
  rank file, an RWKV vocabulary, the vocab/merges/config files of a model folder, and the
  output of decompressing a gzip-compressed one (train_bpe's like=). The largest real ones
  are tens of MB (Gemma 3's tokenizer.json: 33 MB); json.loads needs ~10x the file in memory.
- `max_gguf_metadata_bytes` (default 1 GiB): the part of a GGUF that is read -- its header,
  key/value metadata and tensor infos. A GGUF holds the weights too (100+ GB), which are
  never read or mapped; its tokenizer metadata is a few to tens of MB.

A tokenizer.json may number its tokens sparsely (any u32 id, as tokenizers takes): that
costs memory by the token count, not by the largest id (toksmith.hf.sparse_ids), so no
bound is needed there.

>>> import toksmith
>>> toksmith.read_limits.max_file_bytes = 2 << 30       # read a 2 GiB tokenizer.json  # doctest: +SKIP
"""
from __future__ import annotations

import os
import zlib
from dataclasses import dataclass

from toksmith.errors import ModelFormatError

MiB = 1 << 20


@dataclass
class ReadLimits:
    """The most bytes toksmith reads for one tokenizer (see the module docstring); set an
    attribute of `toksmith.read_limits` to raise or lower a bound for the process."""

    max_file_bytes: int = 256 * MiB
    max_gguf_metadata_bytes: int = 1024 * MiB

    def __setattr__(self, name: str, value: object) -> None:
        known = ("max_file_bytes", "max_gguf_metadata_bytes")
        if name not in known:
            raise AttributeError(f"read_limits has no setting {name!r} ({', '.join(known)})")
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"read_limits.{name} must be a positive int, not {value!r}")
        object.__setattr__(self, name, value)


read_limits = ReadLimits()


def size_text(n: int) -> str:
    """A byte count for a message: '300.0 MiB (314572800 bytes)'."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", MiB), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit} ({n} bytes)"
    return f"{n} bytes"


def too_big(source: str | os.PathLike, what: str, size: int | None, setting: str) -> ModelFormatError:
    """The error for something past the bound `setting` of `read_limits`."""
    limit = getattr(read_limits, setting)
    found = f"is {size_text(size)}" if size is not None else "is larger"
    return ModelFormatError(source, f"{what} {found}, more than toksmith reads ({size_text(limit)}; no real "
                                    f"tokenizer needs more): if this file is meant, raise "
                                    f"toksmith.read_limits.{setting}")


def read_model_file(path: str | os.PathLike) -> bytes:
    """The bytes of a (non-GGUF) model file, refused unread when it is larger than
    `read_limits.max_file_bytes`."""
    limit = read_limits.max_file_bytes
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise too_big(path, "the file", size, "max_file_bytes")
        # Read what fstat promised, then on until the end: the file may have grown since.
        # (f.read(n) allocates n bytes up front: never ask for the whole bound at once.)
        chunks = []
        total = 0
        want = size + 1
        while chunk := f.read(min(want, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise too_big(path, "the file", None, "max_file_bytes")
            want = MiB
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def gunzip_bounded(data: bytes, source: str | os.PathLike) -> bytes:
    """gzip-decompressed `data` (every member), refused as soon as the output passes
    `read_limits.max_file_bytes`: a gzip bomb costs at most the bound, never its full size."""
    limit = read_limits.max_file_bytes
    out = bytearray()
    rest = data
    try:
        while rest:
            member = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            chunk = member.decompress(rest, limit + 1 - len(out))
            while True:
                out += chunk
                if len(out) > limit:
                    raise too_big(source, "the decompressed file", None, "max_file_bytes")
                if member.eof or not member.unconsumed_tail:
                    break
                chunk = member.decompress(member.unconsumed_tail, limit + 1 - len(out))
            if not member.eof:
                raise ModelFormatError(source, "gzip data is truncated")
            rest = member.unused_data
    except zlib.error as exc:
        raise ModelFormatError(source, f"not valid gzip data: {exc}") from None
    return bytes(out)


GZIP_MAGIC = b"\x1f\x8b"


def read_model_file_gunzipped(path: str | os.PathLike) -> bytes:
    """`read_model_file`, decompressed (within the same bound) when it is gzip data."""
    data = read_model_file(path)
    return gunzip_bounded(data, path) if data.startswith(GZIP_MAGIC) else data
