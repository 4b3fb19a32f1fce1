"""The TrainerSpec fields of a SentencePiece-family spec: model type, byte fallback, special pieces.

>>> import toksmith
>>> trainer_fields_of(toksmith.load("ggml-vocab-llama-spm.gguf").spec).bos_piece   # doctest: +SKIP
b'<s>'
"""
from __future__ import annotations

from toksmith.formats.sentencepiece import DEFAULT_SPECIAL_PIECES, ModelType
from toksmith.spec import Algorithm, TokenizerSpec
from toksmith.writers.spm_model_proto import TrainerFields

MODEL_TYPES = {Algorithm.UNIGRAM: ModelType.UNIGRAM, Algorithm.SPM_BPE: ModelType.BPE}


def trainer_fields_of(spec: TokenizerSpec, *, unk_surface: bytes | None = None) -> TrainerFields:
    """TrainerSpec fields for `spec`'s vocabulary: model type, byte fallback, and the
    special pieces by their ids (an absent role gets id -1, as sentencepiece writes it).

    Parity: SentencePieceProcessor::Load finds unk/bos/eos/pad by the *_piece texts (default
    <unk>, <s>, </s>, <pad>), not by the ids: a role the tokenizer lacks whose default text
    is a piece of the vocabulary gets an empty *_piece, which names no piece.
    """
    vocab = spec.vocab
    special = vocab.special
    texts = set(vocab.pieces)

    def piece_of(token_id: int | None, role: str) -> bytes | None:
        if token_id is not None:
            return vocab.pieces[token_id]
        return b"" if DEFAULT_SPECIAL_PIECES[role] in texts else None

    return TrainerFields(
        model_type=MODEL_TYPES[spec.algorithm], vocab_size=len(vocab), byte_fallback=spec.byte_fallback,
        unk_id=-1 if special.unk is None else special.unk, bos_id=-1 if special.bos is None else special.bos,
        eos_id=-1 if special.eos is None else special.eos, pad_id=-1 if special.pad is None else special.pad,
        unk_piece=piece_of(special.unk, "unk"), bos_piece=piece_of(special.bos, "bos"),
        eos_piece=piece_of(special.eos, "eos"), pad_piece=piece_of(special.pad, "pad"), unk_surface=unk_surface)
