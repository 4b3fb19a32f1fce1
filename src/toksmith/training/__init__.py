"""Training new vocabularies: `train_bpe` (tokenizers' BpeTrainer, exactly, for a `like=`
pipeline; the byte-stream configuration without one) and `train_unigram` (sentencepiece's
Unigram trainer).

>>> import toksmith
>>> tok = toksmith.train_bpe(iter(["low lower lowest"] * 3), 40, like="tokenizer.json")  # doctest: +SKIP
>>> tok = toksmith.train_bpe(["corpus/"], 32000)                                        # doctest: +SKIP
"""
from toksmith.training.bpe import train_bpe
from toksmith.training.spm_normalization import NormalizationRule
from toksmith.training.unigram import train_unigram

__all__ = ["NormalizationRule", "train_bpe", "train_unigram"]
