"""Compile a Unigram `TokenizerSpec` into the engine's tables.

>>> tok = toksmith.load("spiece.model")     # doctest: +SKIP  (calls configure_unigram)
"""
from __future__ import annotations

from toksmith._core.engine import Engine
from toksmith._core.normalizer import Normalizer, Rules
from toksmith._core.trie import DoubleArrayTrie
from toksmith.errors import ModelFormatError
from toksmith.normalizers.charsmap import CharsMapNormalizerSpec
from toksmith.spec import ReferenceRules, TokenizerSpec
from toksmith.vocab import TokenType

_CORE_RULES = {ReferenceRules.SENTENCEPIECE: Rules.SENTENCEPIECE,
               ReferenceRules.LLAMA_CPP: Rules.LLAMA_CPP}


def build_normalizer(spec: CharsMapNormalizerSpec, rules: ReferenceRules,
                     user_defined: DoubleArrayTrie | None, source: str) -> Normalizer:
    try:
        return Normalizer(spec.precompiled_charsmap,
                          add_dummy_prefix=spec.add_dummy_prefix,
                          remove_extra_whitespaces=spec.remove_extra_whitespaces,
                          escape_whitespaces=spec.escape_whitespaces,
                          user_defined=user_defined, rules=_CORE_RULES[rules])
    except ValueError as e:
        raise ModelFormatError(source, f"precompiled_charsmap: {e}") from None


def configure_unigram(engine: Engine, spec: TokenizerSpec) -> None:
    vocab = spec.vocab
    user_defined_ids = vocab.ids_of_type(TokenType.USER_DEFINED)
    user_defined = None
    if user_defined_ids:
        try:
            user_defined = DoubleArrayTrie.build([vocab.pieces[i] for i in user_defined_ids],
                                                 user_defined_ids)
        except ValueError as e:
            raise ModelFormatError(spec.source, f"user-defined pieces: {e}") from None
    normalizer = build_normalizer(spec.normalizer, spec.rules, user_defined, spec.source)
    decoder = spec.decoder
    denormalizer = None
    if decoder.denormalizer is not None:
        # Parity: sentencepiece denormalizes decoded text with the denormalizer
        # spec's own charsmap and flags.
        denormalizer = build_normalizer(decoder.denormalizer, ReferenceRules.SENTENCEPIECE,
                                        None, spec.source)
    special = vocab.special
    unk_id = special.unk if special.unk is not None else -1
    try:
        engine._configure_unigram(
            vocab.pieces, vocab.scores, vocab.types,
            unk_id=unk_id,
            bos_id=special.bos if special.bos is not None else -1,
            eos_id=special.eos if special.eos is not None else -1,
            add_bos=spec.add_bos, add_eos=spec.add_eos,
            byte_fallback=spec.byte_fallback, rules=_CORE_RULES[spec.rules],
            normalizer=normalizer, denormalizer=denormalizer,
            unk_surface=decoder.unk_surface.encode("utf-8"),
            add_dummy_prefix=decoder.add_dummy_prefix,
            remove_extra_whitespaces=decoder.remove_extra_whitespaces,
        )
    except ValueError as e:
        raise ModelFormatError(spec.source, str(e)) from None
