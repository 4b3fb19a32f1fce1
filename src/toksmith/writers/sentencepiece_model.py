"""Write a sentencepiece .model (a serialized ModelProto) from a loaded tokenizer.

- a .model's own tokenizer: its pieces, scores and types from the vocabulary and every
  other field (trainer_spec, normalizer_spec, self_test_data, denormalizer_spec, unknown
  fields) as the file held them: the result is byte-identical to the file;
- a GGUF "llama" (SPM) or "t5" (UGM) vocabulary (writers/spm_from_gguf.py);
- a tokenizer.json of a SentencePiece-style Unigram or BPE pipeline (writers/spm_from_hf.py);
- a tokenizer built in memory (no file fields): trainer_spec and normalizer_spec from the spec.
Anything else raises UnsupportedConversionError naming what a .model cannot hold.

>>> import toksmith
>>> tok = toksmith.load("spm/llama2c_tok512.model")                # doctest: +SKIP
>>> write_sentencepiece_model(tok.spec) == open("spm/llama2c_tok512.model", "rb").read()  # doctest: +SKIP
True
"""
from __future__ import annotations

from toksmith.decoders.sentencepiece import DEFAULT_UNK_SURFACE
from toksmith.spec import FileFormat, TokenizerSpec
from toksmith.writers.common import cannot_write
from toksmith.writers.spm_model_proto import ModelProtoParts, encode_model_proto
from toksmith.writers.spm_trainer_fields import MODEL_TYPES, trainer_fields_of

TARGET = "a sentencepiece .model"


def write_sentencepiece_model(spec: TokenizerSpec) -> bytes:
    """The bytes of a sentencepiece .model holding `spec` (raises UnsupportedConversionError)."""
    if spec.hf is not None:
        from toksmith.writers.spm_from_hf import model_proto_parts_of_hf
        return encode_model_proto(model_proto_parts_of_hf(spec))
    if spec.algorithm not in MODEL_TYPES:
        raise cannot_write(spec, TARGET, [f"a {spec.algorithm.value} model (a .model holds SentencePiece "
                                          f"Unigram and BPE models only)"])
    if spec.file_format is FileFormat.GGUF:
        from toksmith.writers.spm_from_gguf import model_proto_parts_of_gguf
        return encode_model_proto(model_proto_parts_of_gguf(spec))
    if spec.file_format is FileFormat.SENTENCEPIECE and spec.file_fields is not None:
        return encode_model_proto(own_model_proto_parts(spec))
    return encode_model_proto(in_memory_model_proto_parts(spec))


def own_model_proto_parts(spec: TokenizerSpec) -> ModelProtoParts:
    """A .model's tokenizer written back: vocabulary from the spec, other fields as read."""
    vocab = spec.vocab
    fields = spec.file_fields
    return ModelProtoParts(pieces=vocab.pieces, scores=vocab.scores, types=vocab.types,
                           raw_fields=fields.sentencepiece_fields, scores_omitted=fields.sentencepiece_unscored)


def in_memory_model_proto_parts(spec: TokenizerSpec) -> ModelProtoParts:
    """A SentencePiece-family spec without file fields: trainer_spec from the vocabulary's
    special ids, normalizer_spec from the spec's normalizer."""
    if spec.normalizer is None:
        raise cannot_write(spec, TARGET, ["a normalizer spec (the tokenizer has none)"])
    vocab = spec.vocab
    decoder = spec.decoder
    surface = None
    if decoder is not None and decoder.unk_surface != DEFAULT_UNK_SURFACE:
        surface = decoder.unk_surface.encode()
    return ModelProtoParts(pieces=vocab.pieces, scores=vocab.scores, types=vocab.types,
                           trainer=trainer_fields_of(spec, unk_surface=surface), normalizer=spec.normalizer,
                           denormalizer=decoder.denormalizer if decoder is not None else None)
