"""Writers: save a loaded tokenizer as a tokenizer.json, a sentencepiece .model, a
vocab-only GGUF or a tiktoken rank file, whichever can express its pipeline.

One module per target format; each turns a `TokenizerSpec` into the bytes of a file
that the format's own reference (tokenizers, sentencepiece, llama.cpp, tiktoken) loads
and tokenizes exactly as the source does, or raises `UnsupportedConversionError`
naming what the target cannot hold. `save` picks the format from the suffix and
writes through a temporary file, so an existing file is never left half-written.

>>> import toksmith, tempfile, os
>>> tok = toksmith.load_embedded("sentencepiece-demo")
>>> path = tok.save(os.path.join(tempfile.mkdtemp(), "demo.model"))   # doctest: +SKIP
>>> toksmith.load(path).encode("Hello") == tok.encode("Hello")          # doctest: +SKIP
True
"""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from toksmith.gc_pause import paused_gc
from toksmith.spec import FileFormat, TokenizerSpec
from toksmith.writers.atomic import check_destination, write_atomically
from toksmith.writers.common import approximating

# The format each file suffix means (`save` without `format=`).
SUFFIX_FORMATS: dict[str, FileFormat] = {
    ".json": FileFormat.HF_JSON,
    ".model": FileFormat.SENTENCEPIECE,
    ".gguf": FileFormat.GGUF,
    ".tiktoken": FileFormat.TIKTOKEN,
}


# Each writer module is imported when a file of its format is first written: together
# they are most of `import toksmith`'s time, and a trainer saving a tokenizer.json needs one.
def write_tokenizer_json(spec: TokenizerSpec) -> bytes:
    from toksmith.writers.tokenizer_json import write_tokenizer_json as write
    return write(spec)


def write_sentencepiece_model(spec: TokenizerSpec) -> bytes:
    from toksmith.writers.sentencepiece_model import write_sentencepiece_model as write
    return write(spec)


def write_gguf(spec: TokenizerSpec) -> bytes:
    from toksmith.writers.gguf_file import write_gguf as write
    return write(spec)


def write_tiktoken(spec: TokenizerSpec) -> bytes:
    from toksmith.writers.tiktoken_file import write_tiktoken as write
    return write(spec)


# The writer of each target format: spec -> the file's bytes.
WRITERS: dict[FileFormat, Callable[[TokenizerSpec], bytes]] = {
    FileFormat.HF_JSON: write_tokenizer_json,
    FileFormat.SENTENCEPIECE: write_sentencepiece_model,
    FileFormat.GGUF: write_gguf,
    FileFormat.TIKTOKEN: write_tiktoken,
}


def target_format(path: str | os.PathLike[str], file_format: FileFormat | str | None) -> FileFormat:
    """The format to write `path` in: `file_format` (a FileFormat or its value), else the suffix.

    >>> target_format("out/tokenizer.json", None)
    <FileFormat.HF_JSON: 'tokenizer.json'>
    >>> target_format("vocab.bin", "gguf")
    <FileFormat.GGUF: 'gguf'>
    """
    writable = ", ".join(repr(f.value) for f in WRITERS)
    if file_format is None:
        suffix = Path(path).suffix.lower()
        if suffix not in SUFFIX_FORMATS:
            raise ValueError(f"{os.fspath(path)}: the suffix {suffix or '(none)'!r} names no format: use one of "
                             f"{', '.join(SUFFIX_FORMATS)} or give format= (one of {writable})")
        return SUFFIX_FORMATS[suffix]
    if isinstance(file_format, str):
        try:
            file_format = FileFormat(file_format)
        except ValueError:
            raise ValueError(f"format={file_format!r} is not one of {writable}") from None
    if not isinstance(file_format, FileFormat):
        raise TypeError(f"format must be a FileFormat, its value or None, not {type(file_format).__name__}")
    if file_format not in WRITERS:
        raise ValueError(f"{file_format.value} files are read but not written; write one of {writable}")
    return file_format


# What each format is called in an UnsupportedConversionError.
TARGET_NAMES: dict[FileFormat, str] = {
    FileFormat.HF_JSON: "a tokenizer.json",
    FileFormat.SENTENCEPIECE: "a sentencepiece .model",
    FileFormat.GGUF: "a vocab-only GGUF",
    FileFormat.TIKTOKEN: "a tiktoken rank file",
}


def to_bytes(spec: TokenizerSpec, file_format: FileFormat) -> bytes:
    """The bytes of `spec` written as a `file_format` file (raises UnsupportedConversionError)."""
    if spec.sparse_ids is not None and file_format is not FileFormat.HF_JSON:
        # GGUF, .model and tiktoken files number their tokens by position: a tokenizer.json's
        # ids that are not 0..n-1 are written by the file's ids, each gap filled as the
        # format's converter fills it, where the gaps are few (toksmith.hf.sparse_ids)
        if not spec.sparse_ids.gaps_are_few():
            from toksmith.writers.common import cannot_write
            raise cannot_write(spec, TARGET_NAMES[file_format], [spec.sparse_ids.gap_description()])
        from toksmith.hf.pipeline import spec_by_file_ids
        spec = spec_by_file_ids(spec)
    return WRITERS[file_format](spec)


def save(spec: TokenizerSpec, path: str | os.PathLike[str], file_format: FileFormat | str | None = None, *,
         exact: bool = True) -> Path:
    """Write `spec` to `path` in `file_format` (default: from the suffix); returns the path.

    The file is written to a temporary file beside `path` and renamed over it, so `path`
    holds either its old content or the whole new file, never a part. With `exact` false, a
    target that would read some text otherwise is written anyway, as close as it can be, and an
    `InexactConversionWarning` reports what differs on the built-in sample (approximation.py).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    if not isinstance(exact, bool):
        raise TypeError(f"exact must be a bool, not {type(exact).__name__}")
    target = target_format(path, file_format)
    check_destination(Path(path))
    inexact: list[str] = []
    with paused_gc():       # a writer builds a container per token, none in a cycle
        if exact:
            data = to_bytes(spec, target)
        else:
            with approximating() as inexact:
                data = to_bytes(spec, target)
    written = write_atomically(Path(path), data)
    if inexact:
        warn_differences(spec, written, inexact)
    return written


def warn_differences(spec: TokenizerSpec, written: Path, reasons: list[str]) -> None:
    """An InexactConversionWarning with what `written` encodes otherwise than `spec` on the sample."""
    import warnings

    from toksmith import load
    from toksmith.tokenizer import Tokenizer
    from toksmith.writers.approximation import InexactConversionWarning, difference_report
    report = difference_report(reasons, Tokenizer(spec), load(written))
    warnings.warn(InexactConversionWarning(report), stacklevel=4)
