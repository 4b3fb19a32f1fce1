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

# sentencepiece's pieces_ map: the piece types a merge can form (bytes.translate tables).
_SENTENCEPIECE_MERGEABLE = bytes(t in (TokenType.NORMAL, TokenType.USER_DEFINED, TokenType.UNUSED)
                                 for t in range(256))
_IS_UNUSED = bytes(t == TokenType.UNUSED for t in range(256))
_RESERVED = (TokenType.UNKNOWN, TokenType.CONTROL, TokenType.BYTE)


def configure_spm_bpe(engine: Engine, spec: TokenizerSpec) -> None:
    configure_vocab(engine, spec)
    vocab = spec.vocab
    n = len(vocab)
    if spec.rules is ReferenceRules.SENTENCEPIECE:
        mergeable = vocab.types.translate(_SENTENCEPIECE_MERGEABLE)
        unused = vocab.types.translate(_IS_UNUSED)
        # Parity: sentencepiece's PieceToId looks up reserved pieces first, so a
        # mergeable piece with a reserved piece's text is emitted as the reserved one.
        reserved = {vocab.pieces[i]: i for t in _RESERVED for i in vocab.ids_of_type(t)}
        overrides = {}
        if len(set(vocab.pieces)) != n:
            overrides = {i: reserved[vocab.pieces[i]] for i in range(n)
                         if mergeable[i] and vocab.pieces[i] in reserved}
        frozen = user_defined_trie(spec)
        normalizer = build_normalizer(spec.normalizer, spec.rules, frozen, spec.source)
        resegment_unused = b"\x01" in unused
        escape_prefix = False
    else:
        # Parity: llama.cpp's SPM session merges into any token and applies no
        # normalizer: it only prefixes a space and escapes spaces.
        mergeable = b"\x01" * n
        unused = b"\x00" * n
        overrides = {}
        frozen = None
        normalizer = None
        resegment_unused = False
        escape_prefix = spec.normalizer.add_dummy_prefix
    try:
        bpe = ScoreBpe.build(vocab.pieces, vocab.scores, mergeable, unused, overrides,
                             frozen, resegment_unused)
        engine._configure_score_bpe(bpe, rules=CORE_RULES[spec.rules], normalizer=normalizer,
                                    escape_prefix_space=escape_prefix,
                                    byte_fallback=spec.byte_fallback)
    except ModelFormatError:
        raise   # already names the file
    except ValueError as e:
        raise ModelFormatError(spec.source, str(e)) from None
