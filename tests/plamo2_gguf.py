"""Write PLaMo-2 GGUF vocabularies (tokenizer.ggml.model "plamo2") with the `gguf` package's
GGUFWriter, laid out as llama.cpp's converter (conversion/base.py `_set_vocab_plamo`) writes
them, for the parity tests and the benchmarks.

Example::

    pieces = sentencepiece_pieces(Path("spm/t5_base_japanese_spiece.model"))
    write_plamo2_gguf(tmp / "plamo2.gguf", pieces, pads=12)
"""
from __future__ import annotations

import gguf

from sentencepiece import sentencepiece_model_pb2 as pb

PLAMO_SPECIALS = ("<|plamo:unk|>", "<|plamo:bos|>", "<|plamo:eos|>", "<|plamo:pad|>", "<|plamo:op|>")


def write_plamo2_gguf(path, pieces: list[tuple[bytes, float, int]], *, specials=PLAMO_SPECIALS,
                      byte_tokens: bool = True, pads: int = 0, add_space_prefix: bool = False, extra=None):
    """A vocab-only GGUF laid out as `_set_vocab_plamo` writes it: `specials` (the first one
    UNKNOWN, the others CONTROL), 256 BYTE tokens, `pieces` ((text, score, GGUF type)),
    `pads` [PADi] UNUSED tokens scored -1000; `extra(writer)` adds keys."""
    tokens, scores, types = [], [], []
    for i, text in enumerate(specials):
        tokens.append(text.encode())
        scores.append(0.0)
        types.append(gguf.TokenType.UNKNOWN if i == 0 else gguf.TokenType.CONTROL)
    if byte_tokens:
        for b in range(256):
            tokens.append(b"<0x%02X>" % b)
            scores.append(0.0)
            types.append(gguf.TokenType.BYTE)
    for text, score, kind in pieces:
        tokens.append(text)
        scores.append(score)
        types.append(kind)
    for i in range(1, pads + 1):
        tokens.append(f"[PAD{i}]".encode())
        scores.append(-1000.0)
        types.append(gguf.TokenType.UNUSED)
    writer = gguf.GGUFWriter(str(path), "plamo2")
    writer.add_tokenizer_model("plamo2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    if len(specials) >= 5:
        writer.add_bos_token_id(1)
        writer.add_eos_token_id(2)
        writer.add_pad_token_id(3)
        writer.add_unk_token_id(0)
        writer.add_eot_token_id(4)
    writer.add_add_space_prefix(add_space_prefix)
    if extra is not None:
        extra(writer)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def sentencepiece_pieces(model_path) -> list[tuple[bytes, float, int]]:
    """The NORMAL pieces of a sentencepiece model with U+2581 made a space, first of each text kept."""
    proto = pb.ModelProto()
    proto.ParseFromString(model_path.read_bytes())
    seen = {text.encode() for text in PLAMO_SPECIALS} | {b"<0x%02X>" % b for b in range(256)}
    pieces = []
    for piece in proto.pieces:
        if piece.type != pb.ModelProto.SentencePiece.NORMAL:
            continue
        text = piece.piece.replace("\u2581", " ").encode()
        if text not in seen:
            seen.add(text)
            pieces.append((text, piece.score, gguf.TokenType.NORMAL))
    return pieces
