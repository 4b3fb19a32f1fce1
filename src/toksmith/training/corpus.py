"""Reading a training corpus: files (as UTF-8, whole lines per block) or texts.

`corpus_batches(source)` yields `CorpusBatch`es of at most ~`BATCH_BYTES` of UTF-8 each,
so a corpus of any size streams through in bounded memory:

>>> [b.blocks for b in corpus_batches(iter(["a b", "c"]))]
[[b'a bc']]

Which is which (as tokenizers has `train(files)` and `train_from_iterator(texts)`):
a `str` or `os.PathLike`, or a list/tuple of them, names files; any other iterable
gives texts (`iter(texts)`, a generator, a `datasets` column...).

Parity: tokenizers 0.23.3 `Tokenizer::train_from_files` reads each file line by line,
keeping each line's ending ("\\n", "\\r\\n"), and fails on bytes that are not UTF-8;
`train_from_iterator` takes each item as one sequence.
"""
from __future__ import annotations

import os
from array import array
from collections.abc import Iterable, Iterator
from typing import BinaryIO
from dataclasses import dataclass, field

from toksmith._core.utf8_repair import valid_utf8_prefix
from toksmith.errors import ToksmithError

BLOCK_BYTES = 1 << 20          # a counting task: whole lines, about this many bytes
BATCH_BYTES = 64 << 20         # held in memory at once


class CorpusError(ToksmithError, ValueError):
    """A corpus file that cannot be read as training text (names the file and offset)."""


@dataclass
class CorpusBatch:
    """Blocks of UTF-8 to count; `ends[i]`: where each sequence of block i ends (None:
    each line of the block, ending included, is one sequence)."""
    blocks: list[bytes] = field(default_factory=list)
    ends: list[array | None] = field(default_factory=list)
    size: int = 0


def is_file_list(source: object) -> bool:
    """`source` names files (see the module docstring)."""
    if isinstance(source, (str, bytes, os.PathLike)):
        return True
    return isinstance(source, (list, tuple)) and all(isinstance(x, (str, os.PathLike)) for x in source)


def corpus_paths(source: object) -> list[str]:
    """The files `source` names, each checked to be a readable file."""
    paths = [source] if isinstance(source, (str, bytes, os.PathLike)) else list(source)
    out = []
    for p in paths:
        path = os.fsdecode(p)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such corpus file")
        if os.path.isdir(path):
            raise CorpusError(f"{path}: is a directory, not a corpus file")
        out.append(path)
    return out


def expand_directories(paths: Iterable[str | os.PathLike]) -> list[str]:
    """`paths` with each directory replaced by the regular files under it (recursively,
    sorted by path, hidden files and folders left out); a directory with none is an error.

    >>> expand_directories([])
    []
    """
    out: list[str] = []
    for p in paths:
        path = os.fsdecode(p)
        if not os.path.isdir(path):
            out.append(path)
            continue
        found = []
        for root, dirs, files in os.walk(path):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            found += [os.path.join(root, f) for f in files
                      if not f.startswith(".") and os.path.isfile(os.path.join(root, f))]
        if not found:
            raise CorpusError(f"{path}: the directory holds no corpus file")
        out += sorted(found)
    return out


def stream_texts(stream: BinaryIO, name: str = "<stdin>") -> Iterator[str]:
    """Each line of a binary stream (its ending kept, as files are read), decoded as UTF-8;
    CorpusError naming the byte offset of anything that is not.

    >>> import io
    >>> list(stream_texts(io.BytesIO(b"a\\nb")))
    ['a\\n', 'b']
    """
    offset = 0
    for line in stream:
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorpusError(f"{name}: byte offset {offset + e.start}: not UTF-8 ({e.reason})") from None
        offset += len(line)


def corpus_batches(source: object) -> Iterator[CorpusBatch]:
    """The corpus in batches (files: by lines; texts: one sequence per text)."""
    if is_file_list(source):
        yield from _file_batches(corpus_paths(source))
    else:
        if not isinstance(source, Iterable):
            raise TypeError(f"files_or_texts must be paths or an iterable of str, not {type(source).__name__}")
        yield from _text_batches(source)


def _file_batches(paths: list[str]) -> Iterator[CorpusBatch]:
    batch = CorpusBatch()
    for path in paths:
        for block in _file_blocks(path):
            batch.blocks.append(block)
            batch.ends.append(None)
            batch.size += len(block)
            if batch.size >= BATCH_BYTES:
                yield batch
                batch = CorpusBatch()
    if batch.blocks:
        yield batch


def _file_blocks(path: str) -> Iterator[bytes]:
    """Blocks of whole lines of `path`, each checked to be UTF-8 (a line longer than a
    block is gathered in parts, never copied over and over)."""
    offset = 0
    parts: list[bytes] = []
    with open(path, "rb") as f:
        while True:
            chunk = f.read(BLOCK_BYTES)
            if not chunk:
                break
            cut = chunk.rfind(b"\n") + 1
            if cut == 0:
                parts.append(chunk)
                continue
            block = b"".join(parts + [chunk[:cut]]) if parts else chunk[:cut]
            parts = [chunk[cut:]] if cut < len(chunk) else []
            _check_utf8(path, block, offset)
            offset += len(block)
            yield block
    if parts:
        block = b"".join(parts)
        _check_utf8(path, block, offset)
        yield block


def _check_utf8(path: str, block: bytes, offset: int) -> None:
    if valid_utf8_prefix(block) == len(block):     # no str made for a block that is well-formed
        return
    try:
        block.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CorpusError(f"{path}: byte offset {offset + e.start}: not UTF-8 ({e.reason}: "
                          f"{block[e.start:e.start + 4]!r}); the trainers read files as UTF-8 "
                          f"text") from None


def _text_batches(texts: Iterable[object]) -> Iterator[CorpusBatch]:
    """Texts packed into blocks of about BLOCK_BYTES (the packing depends on the texts
    only, so the counts' order never depends on the thread count)."""
    batch = CorpusBatch()
    group: list[bytes] = []
    ends = array("q")
    size = 0
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"text {i} of the corpus is a {type(text).__name__}, not a str")
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise CorpusError(f"text {i} of the corpus: character {e.start}: a lone surrogate "
                              f"(not representable in UTF-8)") from None
        group.append(data)
        size += len(data)
        ends.append(size)
        if size >= BLOCK_BYTES:
            batch.blocks.append(b"".join(group))
            batch.ends.append(ends)
            batch.size += size
            group, ends, size = [], array("q"), 0
            if batch.size >= BATCH_BYTES:
                yield batch
                batch = CorpusBatch()
    if group:
        batch.blocks.append(b"".join(group))
        batch.ends.append(ends)
        batch.size += size
    if batch.blocks:
        yield batch
