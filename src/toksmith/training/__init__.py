"""Training new vocabularies: `train_bpe` (tokenizers' BpeTrainer, exactly, for a `like=`
pipeline; the byte-stream configuration without one).

>>> import toksmith
>>> tok = toksmith.train_bpe(iter(["low lower lowest"] * 3), 40, like="tokenizer.json")  # doctest: +SKIP
>>> tok = toksmith.train_bpe(["corpus/"], 32000)                                        # doctest: +SKIP
"""
from toksmith.training.bpe import train_bpe

__all__ = ["train_bpe"]
