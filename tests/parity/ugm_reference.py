"""sentencepiece as the reference for a UGM (Unigram) GGUF: a ModelProto holding the GGUF's
pieces, scores, types and normalizer (tests/parity/test_ugm_gguf.py, test_unigram_long_documents.py)."""
from __future__ import annotations

from sentencepiece import sentencepiece_model_pb2 as pb

from tests.gguf_reference import read_metadata


GGUF_UGM = "gguf/ggml-vocab-nomic-bert-moe.gguf"


def model_proto_from_gguf(path) -> bytes:
    """A sentencepiece ModelProto with the GGUF's vocabulary (read by tests.gguf_reference)."""
    meta = read_metadata(path)
    proto = pb.ModelProto()
    for text, score, kind in zip(meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.scores"],
                                 meta["tokenizer.ggml.token_type"], strict=True):
        piece = proto.pieces.add()
        piece.piece, piece.score, piece.type = text.decode("utf-8"), score, kind
    proto.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
    proto.normalizer_spec.name = "precompiled"
    proto.normalizer_spec.precompiled_charsmap = bytes(meta["tokenizer.ggml.precompiled_charsmap"])
    proto.normalizer_spec.add_dummy_prefix = meta["tokenizer.ggml.add_space_prefix"]
    proto.normalizer_spec.remove_extra_whitespaces = meta["tokenizer.ggml.remove_extra_whitespaces"]
    return proto.SerializeToString()
