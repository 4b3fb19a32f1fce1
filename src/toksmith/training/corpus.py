"""Reading a training corpus: files (as UTF-8, whole lines per block) or texts.

`corpus_batches(source)` yields `CorpusBatch`es of at most ~`BATCH_BYTES` of UTF-8 each,
so a corpus of any size streams through in bounded memory:

>>> [b.blocks for b in corpus_batches(iter(["a b", "c"]))]
[[b'a bc']]

Which is which (as tokenizers has `train(files)` and `train_from_iterator(texts)`): the
trainers take `files` (a `str` or `os.PathLike`, or a list/tuple of them) and `texts=`
(any iterable of str, read as it goes), `corpus_source(files, texts)` checks which one
was given. A str that names no file is refused with a hint to pass it as `texts=`. (An
iterator or generator given as `files` is still read as texts, as before `texts=`.)

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
            raise FileNotFoundError(f"{_shown(path)}: no such corpus file (files= names corpus files; "
                                    f"to train on strings of text, pass them as texts=[...])")
        if os.path.isdir(path):
            raise CorpusError(f"{path}: is a directory, not a corpus file")
        out.append(path)
    return out


class TextCorpus:
    """The `texts=` of a trainer: an iterable of str, each one sequence, read once as it
    goes (never a file list, whatever its type: a list of str given as texts= is texts)."""

    def __init__(self, texts: Iterable[object]) -> None:
        self.texts = texts

    def __iter__(self) -> Iterator[object]:
        return iter(self.texts)


def corpus_source(files: object, texts: object) -> object:
    """The corpus a trainer was given: `files` as it is, or `texts` as a `TextCorpus`;
    exactly one of them (TypeError/ValueError naming what is wrong otherwise).

    >>> [b.blocks for b in corpus_batches(corpus_source(None, ["a b", "c"]))]
    [[b'a bc']]
    """
    if texts is None:
        if files is None:
            raise TypeError("no corpus: give files (a path or a list of paths) or texts= (an iterable of str)")
        return files
    if files is not None:
        raise ValueError("give files or texts=, not both (one corpus per training)")
    if isinstance(texts, (str, bytes, bytearray)):
        raise TypeError(f"texts must be an iterable of str (one sequence each), not a single "
                        f"{type(texts).__name__}: pass texts=[text]")
    if isinstance(texts, os.PathLike):
        raise TypeError("texts must be an iterable of str, not a path: pass files as the first argument")
    if not isinstance(texts, Iterable):
        raise TypeError(f"texts must be an iterable of str, not {type(texts).__name__}")
    return TextCorpus(texts)


def _shown(path: str, limit: int = 4096) -> str:
    """`path` for an error message, whole up to PATH_MAX (4096) characters on one line; a
    longer one, or one with a line break, is no path but text passed as one (a book), cut."""
    if len(path) <= limit and "\n" not in path:
        return path
    return f"{path[:80]!r}... ({len(path)} characters)"


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
            raise TypeError(f"files must be a path or a list of paths (texts=: an iterable of str), "
                            f"not {type(source).__name__}")
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
        if isinstance(text, os.PathLike):
            raise TypeError(f"text {i} of the corpus is a path ({os.fspath(text)!r}), not a str: give files "
                            f"as a list or tuple (files=list(paths))")
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
