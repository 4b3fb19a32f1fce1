"""toksmith: exact, fast tokenizers for language models.

>>> import toksmith
>>> tok = toksmith.load("o200k_base")       # GPT-4o's encoding, shipped; or a .gguf/.model/.tiktoken path
>>> ids = tok.encode("Hello, world")
>>> tok.decode(ids)
'Hello, world'
"""
from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING

from toksmith.errors import (ModelFormatError, ReferenceAbortsError, TokenIdError, ToksmithError,
                             UnsupportedConversionError, UnsupportedFeatureError, UnsupportedModelError)
from toksmith import embedded
from toksmith.formats.bounded_read import ReadLimits, read_limits
from toksmith.spec import FileFormat, ReferenceRules, SplitPattern
from toksmith.tokenizer import Tokenizer
from toksmith.vocab import SpecialIds, TokenType, Vocab

__version__ = "0.1.0"

def load(path: str | os.PathLike[str], *, rules: ReferenceRules | str | None = None,
         pre: str | None = None, encoding: str | None = None, pattern: SplitPattern | str | None = None,
         special_tokens: dict[str, int] | None = None) -> Tokenizer:
    """Load a tokenizer: a GGUF file, a SentencePiece .model, a tiktoken rank file, a folder
    holding one, or the name of an embedded tokenizer ("o200k_base", "cl100k_base").

    - `rules`: whose behaviour to reproduce where references differ (a `ReferenceRules`
      member or its value); by default the format's own reference.
    - `pre`: a GGUF BPE vocabulary's pre-tokenizer, instead of its tokenizer.ggml.pre
      (``toksmith.load("ggml-vocab-qwen2.gguf", pre="qwen35")``).
    - `encoding`, `pattern`, `special_tokens`: what a rank file holds. Files of OpenAI's
      encodings are recognised by content or name; give ``encoding="p50k_edit"`` to pick one,
      or ``pattern=SplitPattern.CL100K, special_tokens={"<|end|>": 100257}`` for another file.

    A bare embedded name (a str such as "o200k_base") always means the embedded tokenizer;
    a file of that name is loaded when written as a path ("./o200k_base") or given as a
    `pathlib.Path` (when both exist, a warning says the embedded one was taken).
    """
    if isinstance(path, str) and path in embedded.FILES:
        if (rules, pre, encoding, pattern, special_tokens) != (None,) * 5:
            raise ValueError(f"{path!r} is an embedded tokenizer: load options do not apply "
                             f"(to load a file of that name, write it as a path: './{path}')")
        if os.path.exists(path):
            warnings.warn(f"{path!r} loads the embedded tokenizer, not the file {os.path.abspath(path)}: "
                          f"write './{path}' to load the file", UserWarning, stacklevel=2)
        return embedded.load_embedded(path)
    if isinstance(path, str) and "/" not in path and os.sep not in path and not os.path.exists(path):
        hint = embedded.suggestion_for(path)      # a bare name that is no file: what was meant?
        if hint is not None:
            raise FileNotFoundError(f"{path}: no such file or folder; {hint}")
    return Tokenizer.from_file(path, rules=rules, pre=pre, encoding=encoding, pattern=pattern,
                               special_tokens=special_tokens)


def embedded_model_path(name: str = "sentencepiece-demo") -> str:
    """Path of the file an embedded tokenizer is read from (default: the SentencePiece demo)."""
    return embedded.path_of(name)


def load_embedded(name: str = embedded.DEFAULT) -> Tokenizer:
    """An embedded tokenizer: "o200k_base" (GPT-4o, the default), "cl100k_base" (GPT-4) or
    "sentencepiece-demo" (an 8,000-piece Unigram model). Works with no file and no network."""
    return embedded.load_embedded(name)


# The trainers are imported on first use (PEP 562): `import toksmith` stays quick for
# encoding, and a trainer loads only its own modules. (Type checkers see them imported.)
if TYPE_CHECKING:
    from toksmith.training import NormalizationRule, train_bpe, train_sentencepiece_bpe, train_unigram

_TRAINING_NAMES = ("NormalizationRule", "train_bpe", "train_sentencepiece_bpe", "train_unigram")


def __getattr__(name: str):
    if name in _TRAINING_NAMES:
        import toksmith.training
        return getattr(toksmith.training, name)
    raise AttributeError(f"module 'toksmith' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_TRAINING_NAMES))


__all__ = [
    "FileFormat", "ModelFormatError", "NormalizationRule", "ReferenceAbortsError", "ReferenceRules", "SpecialIds", "SplitPattern", "TokenIdError", "TokenType", "Tokenizer", "ToksmithError",
    "UnsupportedConversionError", "UnsupportedFeatureError", "UnsupportedModelError", "Vocab", "embedded_model_path", "load",
    "ReadLimits", "read_limits",
    "load_embedded", "train_bpe", "train_sentencepiece_bpe", "train_unigram", "__version__",
]
