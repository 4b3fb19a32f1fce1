"""The exceptions toksmith raises.

Every error a user can cause (a bad file, a bad id, a feature not there yet)
is a `ToksmithError`, and also the builtin exception it resembles, so
``except ValueError`` keeps working for callers who don't know toksmith.

>>> try:
...     raise ModelFormatError("m.model", "truncated varint (at byte offset 3)")
... except ValueError as e:
...     print(e)
m.model: truncated varint (at byte offset 3)
"""
from __future__ import annotations

import os


class ToksmithError(Exception):
    """Base class of every toksmith error."""


class ModelFormatError(ToksmithError, ValueError):
    """A model file is truncated, corrupted or not of the format it claims.

    `path` is the file; the message says what was expected and what was found.
    """

    def __init__(self, path: str | os.PathLike, message: str):
        self.path = os.fspath(path)
        self.detail = message
        super().__init__(f"{self.path}: {message}")


class UnsupportedModelError(ModelFormatError):
    """A well-formed model file uses a tokenizer type toksmith does not support yet."""


class ReferenceAbortsError(ToksmithError, ValueError):
    """The file's reference implementation aborts the process on this text (llama.cpp's
    GGML_ASSERT), so there is no result to match: toksmith refuses the text instead."""


class UnsupportedFeatureError(ToksmithError, NotImplementedError):
    """An option that this tokenizer does not support yet."""


class TokenIdError(ToksmithError, IndexError):
    """A token id outside the vocabulary."""


class UnsupportedConversionError(ToksmithError, ValueError):
    """The target format cannot express the tokenizer: writing it would give a file that
    loads and tokenizes differently, so nothing is written.

    `source` and `target` name the formats; `missing` lists what the target cannot hold.
    """

    def __init__(self, source: str, target: str, missing: list[str] | tuple[str, ...]):
        self.source = source
        self.target = target
        self.missing = tuple(missing)
        super().__init__(f"{source} cannot be written as {target}: " + "; ".join(self.missing))


class InexactConversionWarning(UserWarning):
    """`save(..., exact=False)` wrote a file whose reader tokenizes some text otherwise than
    the source; the message says what and how much, on a built-in multilingual sample.

    `report` is the `toksmith.writers.approximation.DifferenceReport` behind the message.
    """

    def __init__(self, report):
        self.report = report
        super().__init__(str(report))
