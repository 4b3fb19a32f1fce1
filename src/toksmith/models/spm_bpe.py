"""Compile a SentencePiece-BPE `TokenizerSpec` (LLaMA 1/2, Mistral, Phi-3, Gemma).

>>> tok = toksmith.load("llama2/tokenizer.model")   # doctest: +SKIP  (calls configure_spm_bpe)
"""
from __future__ import annotations

from toksmith._core.engine import Engine
from toksmith._core.spm_bpe import ScoreBpe
from toksmith.errors import ModelFormatError
from toksmith.models.common import CORE_RULES, build_normalizer, configure_vocab, user_defined_trie
from toksmith.spec import ReferenceRules, TokenizerSpec
from toksmith.vocab import TokenType

# sentencepiece's pieces_ map: the piece types a merge can form.
_SENTENCEPIECE_MERGEABLE = (TokenType.NORMAL, TokenType.USER_DEFINED, TokenType.UNUSED)
_RESERVED = (TokenType.UNKNOWN, TokenType.CONTROL, TokenType.BYTE)


def configure_spm_bpe(engine: Engine, spec: TokenizerSpec) -> None:
    configure_vocab(engine, spec)
    vocab = spec.vocab
    n = len(vocab)
    if spec.rules is ReferenceRules.SENTENCEPIECE:
        mergeable = bytes(t in _SENTENCEPIECE_MERGEABLE for t in vocab.types)
        unused = bytes(t == TokenType.UNUSED for t in vocab.types)
        # Parity: sentencepiece's PieceToId looks up reserved pieces first.
        reserved = {vocab.pieces[i]: i for i in range(n) if vocab.types[i] in _RESERVED}
        output_ids = [reserved.get(vocab.pieces[i], i) for i in range(n)] if reserved else list(range(n))
        frozen = user_defined_trie(spec)
        normalizer = build_normalizer(spec.normalizer, spec.rules, frozen, spec.source)
        resegment_unused = any(unused)
        escape_prefix = False
    else:
        # Parity: llama.cpp's SPM session merges into any token and applies no
        # normalizer: it only prefixes a space and escapes spaces.
        mergeable = b"\x01" * n
        unused = b"\x00" * n
        output_ids = list(range(n))
        frozen = None
        normalizer = None
        resegment_unused = False
        escape_prefix = spec.normalizer.add_dummy_prefix
    try:
        bpe = ScoreBpe.build(vocab.pieces, vocab.scores, mergeable, unused, output_ids,
                             frozen, resegment_unused)
        engine._configure_score_bpe(bpe, rules=CORE_RULES[spec.rules], normalizer=normalizer,
                                    escape_prefix_space=escape_prefix,
                                    byte_fallback=spec.byte_fallback)
    except ValueError as e:
        raise ModelFormatError(spec.source, str(e)) from None
