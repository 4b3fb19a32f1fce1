"""What every writer shares: how a refusal names the source.

    raise cannot_write(spec, "a tiktoken rank file", ["a Unigram model (tiktoken holds byte-level BPE only)"])
"""
from __future__ import annotations

import os

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
