"""Compile a Unigram `TokenizerSpec` into the engine's tables.

>>> tok = toksmith.load("spiece.model")     # doctest: +SKIP  (calls configure_unigram)
"""
from __future__ import annotations

from toksmith._core.engine import Engine
from toksmith.errors import ModelFormatError
from toksmith.models.common import CORE_RULES, build_normalizer, configure_vocab, user_defined_trie
from toksmith.spec import TokenizerSpec


def configure_unigram(engine: Engine, spec: TokenizerSpec) -> None:
    configure_vocab(engine, spec)
    normalizer = build_normalizer(spec.normalizer, spec.rules, user_defined_trie(spec), spec.source)
    try:
        engine._configure_unigram(spec.vocab.pieces, spec.vocab.scores, rules=CORE_RULES[spec.rules],
                                  normalizer=normalizer, byte_fallback=spec.byte_fallback)
    except ModelFormatError:
        raise   # already names the file
    except ValueError as e:
        raise ModelFormatError(spec.source, str(e)) from None
