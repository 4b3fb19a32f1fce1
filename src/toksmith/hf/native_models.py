"""tokenizer.json models -> native `Model` stages.

One builder per model type of `toksmith.hf.components` (BPE, Unigram, WordPiece,
WordLevel); a model without a native stage yet is refused by name.

>>> build_model(spec, hf)                                       # doctest: +SKIP
"""
from __future__ import annotations

from typing import Callable

from toksmith._core.hf_unigram import HfUnigram
from toksmith._core.model import Model
from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec


def build_model(spec: TokenizerSpec, hf: c.HfTokenizerSpec) -> Model:
    """The native model stage of the file's model (at JSON path `$.model`)."""
    builder = MODEL_BUILDERS.get(type(hf.model))
    if builder is None:
        from toksmith.hf.pipeline import unsupported
        raise unsupported(hf, "$.model", hf.model, "no native model for this type yet")
    return builder(spec, hf, hf.model)


def _unigram(spec: TokenizerSpec, hf: c.HfTokenizerSpec, model: c.UnigramModel) -> Model:
    # Parity: tokenizers models/unigram/model.rs (encode_optimized, tokenize).
    pieces = [piece.encode("utf-8", "surrogatepass") for piece, _ in model.vocab]
    return HfUnigram(pieces, [score for _, score in model.vocab],
                     -1 if model.unk_id is None else model.unk_id, model.byte_fallback)


# type of model -> builder(spec, hf, model) -> Model
MODEL_BUILDERS: dict[type, Callable[..., Model]] = {
    c.UnigramModel: _unigram,
}
