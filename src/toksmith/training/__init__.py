"""Training new vocabularies: `train_bpe` (tokenizers' BpeTrainer, exactly).

>>> import toksmith
>>> tok = toksmith.train_bpe(iter(["low lower lowest"] * 3), 40, like="tokenizer.json")  # doctest: +SKIP
"""
from toksmith.training.bpe import train_bpe

__all__ = ["train_bpe"]
