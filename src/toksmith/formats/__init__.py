"""File formats: detect what a path holds and read it into a `TokenizerSpec`.

>>> detect_format(b"GGUF\\x03\\x00\\x00\\x00", "x.bin")
<FileFormat.GGUF: 'gguf'>
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from toksmith.errors import ModelFormatError, UnsupportedModelError
from toksmith.formats.bounded_read import GZIP_MAGIC, read_model_file
from toksmith.spec import FileFormat, LoadOptions, TokenizerSpec

# Files looked for, in this order, when `load` is given a folder (a tokenizer.json first,
# as transformers prefers the fast tokenizer).
FOLDER_CANDIDATES = ("tokenizer.json", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model")


def detect_format(head: bytes, path: str) -> FileFormat:
    """Guess the format from the first bytes of a file, then from its name."""
    if head.startswith(b"GGUF"):
        return FileFormat.GGUF
    name = os.path.basename(path).lower()
    stripped = head.lstrip()
    if name.endswith(".json") or stripped.startswith(b"{"):
        return FileFormat.HF_JSON
    if name.endswith(".gguf"):
        return FileFormat.GGUF   # wrong magic: the GGUF reader says so
    from toksmith.formats.rwkv import looks_like_rwkv_vocab
    if looks_like_rwkv_vocab(head, name):
        return FileFormat.RWKV_VOCAB
    # By content: Llama 3's original tokenizer.model is a rank file, not a protobuf.
    from toksmith.formats.tiktoken import looks_like_rank_file
    if name.endswith(".tiktoken") or looks_like_rank_file(head):
        return FileFormat.TIKTOKEN
    return FileFormat.SENTENCEPIECE


LFS_POINTER = b"version https://git-lfs.github.com/spec/"


def resolve_path(path: str | os.PathLike) -> Path:
    """The model file `path` names: itself, or the one tokenizer file inside a folder.

    Only regular files are read: a FIFO, a device (/dev/zero) or a socket is
    refused before it is opened, since reading one may block or never end.
    """
    p = Path(path)
    if p.is_dir():
        for candidate in FOLDER_CANDIDATES:
            if (p / candidate).is_file():
                return p / candidate
        ggufs = sorted(p.glob("*.gguf"))
        if len(ggufs) > 1:
            raise ModelFormatError(p, f"the folder holds {len(ggufs)} GGUF files, give one of them: "
                                      f"{', '.join(g.name for g in ggufs)}")
        if ggufs:
            return _regular_file(ggufs[0])
        raise FileNotFoundError(
            f"{p}: no tokenizer file in this folder (looked for {', '.join(FOLDER_CANDIDATES)}, *.gguf, "
            f"vocab.json + merges.txt, vocab.txt)")
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    return _regular_file(p)


def _regular_file(p: Path) -> Path:
    mode = p.stat().st_mode
    if not stat.S_ISREG(mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
                else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "not a regular file")
        raise ModelFormatError(p, f"is {kind}, not a model file: only regular files are read")
    return p


def describe_foreign_file(head: bytes) -> str | None:
    """What a file people mistake for a model is, from its first bytes; None if not recognised.

    >>> describe_foreign_file(b"\\x1f\\x8b\\x08")
    'is gzip-compressed: decompress it first'
    """
    if head.startswith(GZIP_MAGIC):
        return "is gzip-compressed: decompress it first"
    if head.startswith(LFS_POINTER):
        return "is a Git LFS pointer, not the model: fetch the LFS object (git lfs pull)"
    lowered = head.lstrip().lower()
    if lowered.startswith((b"<!doctype html", b"<html", b"<head", b"<?xml")) or b"<html" in lowered[:512]:
        return "is an HTML page, not a model file (a download that saved an error page?)"
    if head.startswith((b"PK\x03\x04", b"BZh", b"\xfd7zXZ", b"\x28\xb5\x2f\xfd")):
        return "is a compressed archive (zip/bzip2/xz/zstd): extract it first"
    sample = head[:512]
    if sample and b"\0" not in sample:
        try:
            sample.decode("utf-8")
        except UnicodeDecodeError as e:
            if e.start < len(sample) - 3:
                return None
        if all(c in b"\t\n\r" or 32 <= c for c in sample):
            return "is a text file, not a model file (SentencePiece .model and GGUF are binary)"
    return None


def read_spec(path: str | os.PathLike, options: LoadOptions = LoadOptions()) -> TokenizerSpec:
    """Read any supported tokenizer file into a `TokenizerSpec` (`options`: see `toksmith.load`)."""
    folder_spec = _hf_folder_spec(path)
    if folder_spec is not None:
        options.check_applies_to(FileFormat.HF_JSON, str(path))
        return folder_spec
    p = resolve_path(path)
    with open(p, "rb") as f:
        head = f.read(1024)
    if not head:
        raise ModelFormatError(p, "file is empty")
    fmt = detect_format(head, str(p))
    options.check_applies_to(fmt, str(p))
    if fmt is FileFormat.GGUF:
        from toksmith.formats.gguf import read_gguf
        return read_gguf(p, pre=options.pre)
    if fmt is FileFormat.TIKTOKEN:
        return _tiktoken_spec(read_model_file(p), str(p), options)
    if fmt is FileFormat.HF_JSON:
        return _hf_json_spec(read_model_file(p), str(p), _folder_special_texts(path))
    if fmt is FileFormat.RWKV_VOCAB:
        from toksmith.formats.rwkv import read_rwkv_vocab
        return read_rwkv_vocab(p)
    from toksmith.formats.sentencepiece import read_sentencepiece
    try:
        return read_sentencepiece(p)
    except ModelFormatError as e:
        foreign = describe_foreign_file(head)
        if foreign is not None and not isinstance(e, UnsupportedModelError):
            raise ModelFormatError(p, foreign) from None
        raise


def spec_from_bytes(data: bytes, file_format: FileFormat, source: str = "<bytes>",
                    options: LoadOptions = LoadOptions()) -> TokenizerSpec:
    """Read a tokenizer from the bytes of a file (`source` names it in errors and repr).

    >>> spec_from_bytes(open("spiece.model", "rb").read(), FileFormat.SENTENCEPIECE)  # doctest: +SKIP
    """
    options.check_applies_to(file_format, source)
    if file_format is FileFormat.GGUF:
        from toksmith.formats.gguf import parse_gguf
        return parse_gguf(data, source, pre=options.pre)
    if file_format is FileFormat.TIKTOKEN:
        return _tiktoken_spec(data, source, options)
    if file_format is FileFormat.HF_JSON:
        return _hf_json_spec(data, source)
    if file_format is FileFormat.RWKV_VOCAB:
        from toksmith.formats.rwkv import parse_rwkv_vocab
        return parse_rwkv_vocab(data, source)
    from toksmith.formats.sentencepiece import parse_sentencepiece
    return parse_sentencepiece(data, source)


def _tiktoken_spec(data: bytes, source: str, options: LoadOptions) -> TokenizerSpec:
    from toksmith.formats.tiktoken import parse_tiktoken
    from toksmith.models.byte_level import tokenizer_spec_of_byte_level
    byte_level = parse_tiktoken(data, source, encoding=options.encoding, pattern=options.pattern,
                                special_tokens=options.special_token_dict())
    return tokenizer_spec_of_byte_level(byte_level, options)


def _hf_json_spec(data: bytes, source: str, named_specials: dict[str, str] | None = None) -> TokenizerSpec:
    from toksmith.hf.pipeline import hf_tokenizer_spec
    from toksmith.hf.reader import read_hf_json
    return hf_tokenizer_spec(read_hf_json(data, source), data, named_specials)


def _folder_special_texts(path: str | os.PathLike) -> dict[str, str] | None:
    """The special tokens a model folder's config files name (as transformers'
    AutoTokenizer reads them), when `path` is a folder; None for a file."""
    if not Path(path).is_dir():
        return None
    from toksmith.hf.special_roles import folder_special_texts
    return folder_special_texts(Path(path))


def _hf_folder_spec(path: str | os.PathLike) -> TokenizerSpec | None:
    """The spec of a Hugging Face folder without a tokenizer file: GPT-2's vocab.json +
    merges.txt, or BERT's vocab.txt, built as transformers builds their fast tokenizers
    (toksmith.hf.folder); None for anything else (resolve_path takes it from there)."""
    p = Path(path)
    if not p.is_dir() or any((p / name).is_file() for name in FOLDER_CANDIDATES) or any(p.glob("*.gguf")):
        return None
    from toksmith.hf.folder import FolderKind, read_folder, resolve_folder
    from toksmith.hf.pipeline import hf_tokenizer_spec
    try:
        kind, _ = resolve_folder(p)
    except ModelFormatError:
        return None
    if kind not in (FolderKind.GPT2, FolderKind.BERT):
        return None
    return hf_tokenizer_spec(read_folder(p), named_specials=_folder_special_texts(p))
