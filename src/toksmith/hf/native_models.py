"""tokenizer.json models -> native `Model` stages.

One builder per model type of `toksmith.hf.components` (BPE, Unigram, WordPiece,
WordLevel); a model without a native stage yet is refused by name.

>>> build_model(spec, hf)                                       # doctest: +SKIP
"""
from __future__ import annotations

from typing import Callable

from toksmith._core.model import Model
from toksmith._core.wordpiece import WordLevel, WordPiece
from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec


def build_model(spec: TokenizerSpec, hf: c.HfTokenizerSpec) -> Model:
    """The native model stage of the file's model (at JSON path `$.model`)."""
    builder = MODEL_BUILDERS.get(type(hf.model))
    if builder is None:
        from toksmith.hf.pipeline import unsupported
        raise unsupported(hf, "$.model", hf.model, "no native model for this type yet")
    return builder(spec, hf, hf.model)


def _keys_and_ids(vocab: dict[str, int]) -> tuple[list[bytes], list[int]]:
    """The tokens as UTF-8 (a lone surrogate from the JSON kept as is) and their ids."""
    try:
        keys = list(map(str.encode, vocab))      # 5x faster than an encode with an error handler
    except UnicodeEncodeError:
        keys = [k.encode("utf-8", "surrogatepass") for k in vocab]
    return keys, list(vocab.values())


def _wordpiece(spec: TokenizerSpec, hf: c.HfTokenizerSpec, model: c.WordPieceModel) -> Model:
    # Parity: tokenizers models/wordpiece: the unk token is looked up in the model's own vocabulary
    keys, ids = _keys_and_ids(model.vocab)
    return WordPiece(keys, ids, unk_id=model.vocab.get(model.unk_token, -1),
                     prefix=model.continuing_subword_prefix.encode("utf-8", "surrogatepass"),
                     max_input_chars_per_word=model.max_input_chars_per_word)


def _wordlevel(spec: TokenizerSpec, hf: c.HfTokenizerSpec, model: c.WordLevelModel) -> Model:
    keys, ids = _keys_and_ids(model.vocab)
    return WordLevel(keys, ids, unk_id=model.vocab.get(model.unk_token, -1))


# type of model -> builder(spec, hf, model) -> Model
MODEL_BUILDERS: dict[type, Callable[..., Model]] = {
    c.WordPieceModel: _wordpiece,
    c.WordLevelModel: _wordlevel,
}
