"""Compile a Unigram `TokenizerSpec` (T5, mT5, ALBERT, XLNet, sentencepiece unigram).

The rules pick the model class: sentencepiece's Viterbi (float sums, byte
fallback) or llama.cpp's UGM one (double sums, no byte fallback).

>>> tok = toksmith.load("spiece.model")     # doctest: +SKIP  (calls build_unigram)
"""
from __future__ import annotations

from toksmith._core.engine import Engine
from toksmith._core.unigram import Unigram, UnigramLlamaCpp, UnigramSentencePiece
from toksmith.models.common import bad_data_names_file, build_engine, id_or_minus_one
from toksmith.models.sentencepiece_family import (build_charsmap_normalizer, build_decoder,
                                                  byte_token_ids, user_defined_trie)
from toksmith.spec import ReferenceRules, TokenizerSpec

UNIGRAM_MODELS: dict[ReferenceRules, type[Unigram]] = {
    ReferenceRules.SENTENCEPIECE: UnigramSentencePiece,
    ReferenceRules.LLAMA_CPP: UnigramLlamaCpp,
}


def build_unigram(spec: TokenizerSpec) -> Engine:
    vocab = spec.vocab
    decoder = build_decoder(spec)
    byte_ids = byte_token_ids(spec)
    normalizer = build_charsmap_normalizer(spec.normalizer, spec.rules, user_defined_trie(spec),
                                           spec.source)
    with bad_data_names_file(spec.source):
        model = UNIGRAM_MODELS[spec.rules](vocab.pieces, vocab.scores, vocab.types,
                                           id_or_minus_one(vocab.special.unk), byte_ids,
                                           spec.byte_fallback)
    return build_engine(spec, normalizer=normalizer, pretokenizer=None, model=model,
                        decoder=decoder)
