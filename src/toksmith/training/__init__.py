"""Training new vocabularies: `train_bpe` (tokenizers' BpeTrainer, exactly, for a `like=`
pipeline; the byte-stream configuration without one), `train_unigram` and
`train_sentencepiece_bpe` (sentencepiece's Unigram and BPE trainers).

>>> import toksmith
>>> tok = toksmith.train_bpe(texts=["low lower lowest"] * 3, vocab_size=40, like="tokenizer.json")  # doctest: +SKIP
>>> tok = toksmith.train_bpe(["corpus/"], 32000)                                        # doctest: +SKIP

Each trainer's module is imported on first use (PEP 562), so training BPE does not load
the sentencepiece trainers' tables and writers.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# name -> the module that defines it
_MODULES = {
    "train_bpe": "toksmith.training.bpe",
    "train_sentencepiece_bpe": "toksmith.training.spm_bpe",
    "NormalizationRule": "toksmith.training.spm_normalization",
    "train_unigram": "toksmith.training.unigram",
}


if TYPE_CHECKING:
    from toksmith.training.bpe import train_bpe
    from toksmith.training.spm_bpe import train_sentencepiece_bpe
    from toksmith.training.spm_normalization import NormalizationRule
    from toksmith.training.unigram import train_unigram


def __getattr__(name: str):
    if name in _MODULES:
        return getattr(importlib.import_module(_MODULES[name]), name)
    raise AttributeError(f"module 'toksmith.training' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULES))


__all__ = ["NormalizationRule", "train_bpe", "train_sentencepiece_bpe", "train_unigram"]
