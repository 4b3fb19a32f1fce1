"""toksmith: exact, fast tokenizers for language models.

>>> import toksmith
>>> tok = toksmith.load_embedded()           # or toksmith.load("spiece.model")
>>> ids = tok.encode("Hello, world")
>>> tok.decode(ids)
'Hello, world'
"""
from __future__ import annotations

import os
from importlib import resources

from toksmith.errors import (ModelFormatError, TokenIdError, ToksmithError, UnsupportedFeatureError,
                             UnsupportedModelError)
from toksmith.spec import ReferenceRules
from toksmith.tokenizer import Tokenizer
from toksmith.vocab import SpecialIds, TokenType, Vocab

__version__ = "0.1.0"

EMBEDDED_MODEL = "embedded.model"


def load(path: str | os.PathLike[str], *, rules: ReferenceRules | str | None = None) -> Tokenizer:
    """Load a tokenizer from a SentencePiece .model, a GGUF file, or a folder holding one.

    `rules` picks whose behaviour to reproduce where references differ: a
    `ReferenceRules` member or its value ("sentencepiece", "llama.cpp"); by
    default the format's own reference (sentencepiece for .model, llama.cpp
    for GGUF). Example: ``toksmith.load("t5.gguf", rules=ReferenceRules.SENTENCEPIECE)``.
    """
    return Tokenizer.from_file(path, rules=rules)


def embedded_model_path() -> str:
    """Path of the SentencePiece model that ships inside the package."""
    return str(resources.files("toksmith").joinpath("data", EMBEDDED_MODEL))


def load_embedded() -> Tokenizer:
    """The tokenizer embedded in the package (works with no model file)."""
    return load(embedded_model_path())


__all__ = [
    "ModelFormatError", "ReferenceRules", "SpecialIds", "TokenIdError", "TokenType", "Tokenizer", "ToksmithError",
    "UnsupportedFeatureError", "UnsupportedModelError", "Vocab", "embedded_model_path", "load",
    "load_embedded", "__version__",
]
