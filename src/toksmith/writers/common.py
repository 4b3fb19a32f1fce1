"""What every writer shares: how a refusal names the source, and the line between what a
target cannot hold (`cannot_write`, always refused) and what it would read otherwise
(`refuse_inexact`: refused, unless the caller asked for the closest file).

    raise cannot_write(spec, "a tiktoken rank file", ["a Unigram model (tiktoken holds byte-level BPE only)"])
    refuse_inexact(spec, "a vocab-only GGUF", ["byte fallback (llama.cpp's UGM gives <unk>)"])
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from toksmith.errors import UnsupportedConversionError
from toksmith.spec import TokenizerSpec


def source_name(spec: TokenizerSpec) -> str:
    """How errors name the tokenizer being written: its algorithm, format and file.

    e.g. "the unigram tokenizer of sentencepiece file 'spiece.model'"
    """
    return (f"the {spec.algorithm.value} tokenizer of {spec.file_format.value} file "
            f"{os.path.basename(spec.source) or spec.source!r}")


def cannot_write(spec: TokenizerSpec, target: str, missing: list[str]) -> UnsupportedConversionError:
    """The error a writer raises when `target` cannot express `missing` of `spec`."""
    return UnsupportedConversionError(source_name(spec), target, missing)


# What the writers of the current `save(..., exact=False)` found inexact; None outside one.
_inexact_notes: ContextVar[list[str] | None] = ContextVar("toksmith_inexact_notes", default=None)


@contextmanager
def approximating() -> Iterator[list[str]]:
    """Within it, `refuse_inexact` notes what differs instead of refusing, and the writer
    writes its closest file; yields the list of those notes (save(..., exact=False))."""
    notes: list[str] = []
    token = _inexact_notes.set(notes)
    try:
        yield notes
    finally:
        _inexact_notes.reset(token)


def refuse_inexact(spec: TokenizerSpec, target: str, differences: list[str]) -> None:
    """Refuse (UnsupportedConversionError) a file whose reader would tokenize some text
    otherwise than `spec`, unless inside `approximating()`: then note `differences` and return,
    and the caller writes the closest file it can. Nothing happens for no differences.

    `differences` are what the target reads otherwise; what it cannot hold at all is still
    raised with `cannot_write`.
    """
    if not differences:
        return
    notes = _inexact_notes.get()
    if notes is None:
        raise cannot_write(spec, target, differences + ["(save(..., exact=False) or `toksmith convert "
                                                        "--approximate` writes the closest file and reports "
                                                        "what differs)"])
    notes.extend(differences)
