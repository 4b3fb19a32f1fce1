"""File formats: detect what a path holds and read it into a `TokenizerSpec`.

>>> detect_format(b"GGUF\\x03\\x00\\x00\\x00", "x.bin")
<FileFormat.GGUF: 'gguf'>
"""
from __future__ import annotations

import os
from pathlib import Path

from toksmith.errors import ModelFormatError, UnsupportedModelError
from toksmith.spec import FileFormat, TokenizerSpec

# Files looked for, in this order, when `load` is given a folder.
FOLDER_CANDIDATES = ("tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "tokenizer.json")


def detect_format(head: bytes, path: str) -> FileFormat:
    """Guess the format from the first bytes of a file, then from its name."""
    if head.startswith(b"GGUF"):
        return FileFormat.GGUF
    name = os.path.basename(path).lower()
    stripped = head.lstrip()
    if name.endswith(".json") or stripped.startswith(b"{"):
        raise UnsupportedModelError(path, "looks like JSON (a tokenizer.json?): tokenizer.json files "
                                          "are not supported yet (supported: SentencePiece .model, GGUF)")
    if name.endswith(".tiktoken"):
        raise UnsupportedModelError(path, "tiktoken files are not supported yet "
                                          "(supported: SentencePiece .model, GGUF)")
    if name.endswith(".gguf"):
        return FileFormat.GGUF   # wrong magic: the GGUF reader says so
    return FileFormat.SENTENCEPIECE


def resolve_path(path: str | os.PathLike) -> Path:
    """The model file `path` names: itself, or the tokenizer file inside a folder."""
    p = Path(path)
    if p.is_dir():
        for candidate in FOLDER_CANDIDATES:
            if (p / candidate).is_file():
                return p / candidate
        ggufs = sorted(p.glob("*.gguf"))
        if ggufs:
            return ggufs[0]
        raise FileNotFoundError(
            f"{p}: no tokenizer file in this folder (looked for {', '.join(FOLDER_CANDIDATES)}, *.gguf)")
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    return p


def read_spec(path: str | os.PathLike) -> TokenizerSpec:
    """Read any supported tokenizer file into a `TokenizerSpec`."""
    p = resolve_path(path)
    with open(p, "rb") as f:
        head = f.read(64)
    if not head:
        raise ModelFormatError(p, "file is empty")
    fmt = detect_format(head, str(p))
    if fmt is FileFormat.GGUF:
        from toksmith.formats.gguf import read_gguf
        return read_gguf(p)
    from toksmith.formats.sentencepiece import read_sentencepiece
    return read_sentencepiece(p)


def source_bytes(spec: TokenizerSpec) -> bytes:
    """The bytes a pickled tokenizer carries to rebuild `spec` anywhere (see `spec_from_bytes`).

    A `.model` file whole; of a GGUF only the header and metadata (no tensors).
    """
    if spec.file_format is FileFormat.GGUF:
        from toksmith.formats.gguf import gguf_without_tensors
        return gguf_without_tensors(spec.source)
    with open(spec.source, "rb") as f:
        return f.read()


def spec_from_bytes(data: bytes, file_format: FileFormat, source: str = "<bytes>") -> TokenizerSpec:
    """Read a tokenizer from the bytes of a file (`source` names it in errors and repr).

    >>> spec_from_bytes(open("spiece.model", "rb").read(), FileFormat.SENTENCEPIECE)  # doctest: +SKIP
    """
    if file_format is FileFormat.GGUF:
        from toksmith.formats.gguf import parse_gguf
        return parse_gguf(data, source)
    from toksmith.formats.sentencepiece import parse_sentencepiece
    return parse_sentencepiece(data, source)
