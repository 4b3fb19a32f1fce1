"""Compile a SentencePiece-BPE `TokenizerSpec` (LLaMA 1/2, Mistral, Phi-3, Gemma).

The rules pick the stages: sentencepiece's charsmap normalizer, user-defined pieces
frozen, reserved pieces never merged, <unk> with byte fallback; or llama.cpp's SPM
session, which only escapes spaces and merges into any token.

>>> tok = toksmith.load("llama2/tokenizer.model")   # doctest: +SKIP  (calls build_spm_bpe)
"""
from __future__ import annotations

from toksmith._core.engine import Engine
from toksmith._core.normalizer import EscapeSpacesNormalizer
from toksmith._core.spm_bpe import ScoreBpe
from toksmith.errors import ModelFormatError
from toksmith.models.common import bad_data_names_file, build_engine, id_or_minus_one
from toksmith.models.sentencepiece_family import (build_charsmap_normalizer, build_decoder,
                                                  byte_token_ids, user_defined_trie)
from toksmith.spec import ReferenceRules, TokenizerSpec
from toksmith.vocab import TokenType

# sentencepiece's pieces_ map: the piece types a merge can form (bytes.translate tables).
_SENTENCEPIECE_MERGEABLE = bytes(t in (TokenType.NORMAL, TokenType.USER_DEFINED, TokenType.UNUSED)
                                 for t in range(256))
_IS_UNUSED = bytes(t == TokenType.UNUSED for t in range(256))
_RESERVED = (TokenType.UNKNOWN, TokenType.CONTROL, TokenType.BYTE)


def _sentencepiece_stages(spec: TokenizerSpec):
    """Parity: sentencepiece bpe_model.cc: (normalizer, model)."""
    vocab = spec.vocab
    n = len(vocab)
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
    normalizer = build_charsmap_normalizer(spec.normalizer, spec.rules, frozen, spec.source)
    unk_id = id_or_minus_one(vocab.special.unk)
    if unk_id < 0:
        raise ModelFormatError(spec.source, "a SentencePiece model needs an unknown piece")
    with bad_data_names_file(spec.source):
        # Parity: sentencepiece maps a character that is no piece to <unk>, then
        # byte fallback (if on) and unknown-run merging apply.
        model = ScoreBpe.build(vocab.pieces, vocab.scores, mergeable, unused, overrides, frozen,
                               b"\x01" in unused, unk_id=unk_id, missing_id=unk_id,
                               byte_fallback=spec.byte_fallback, merge_unknown_runs=True,
                               byte_ids=byte_token_ids(spec))
    return normalizer, model


def _llama_cpp_stages(spec: TokenizerSpec):
    """Parity: llama.cpp llm_tokenizer_spm_session: (normalizer, model)."""
    vocab = spec.vocab
    n = len(vocab)
    # It applies no normalizer: it only prefixes a space and escapes spaces.
    normalizer = EscapeSpacesNormalizer(add_prefix=spec.normalizer.add_dummy_prefix)
    with bad_data_names_file(spec.source):
        # It merges into any token, emits the byte tokens of a symbol that is no
        # token, and keeps real unknown tokens as they are.
        model = ScoreBpe.build(vocab.pieces, vocab.scores, b"\x01" * n, b"\x00" * n, {}, None,
                               False, unk_id=id_or_minus_one(vocab.special.unk), missing_id=-1,
                               byte_fallback=False, merge_unknown_runs=False,
                               byte_ids=byte_token_ids(spec))
    return normalizer, model


SPM_BPE_STAGES = {
    ReferenceRules.SENTENCEPIECE: _sentencepiece_stages,
    ReferenceRules.LLAMA_CPP: _llama_cpp_stages,
}


def build_spm_bpe(spec: TokenizerSpec) -> Engine:
    decoder = build_decoder(spec)
    normalizer, model = SPM_BPE_STAGES[spec.rules](spec)
    return build_engine(spec, normalizer=normalizer, pretokenizer=None, model=model,
                        decoder=decoder)
