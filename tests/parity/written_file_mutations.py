"""Files toksmith wrote, with their most used entries taken out.

Used by the mutation check (tests/parity_mutation_plugin.py, ``--mutation-target=writers
--mutation=truncated``): a parity test of a writer compares what the format's reference reads
from toksmith's file, so it must fail once the file loses its first merges or best pieces.
EDITS entries go, few enough to leave the file loadable, enough that a short multilingual
sample tokenizes otherwise:

- tokenizer.json: BPE loses its first merges; Unigram's best-scored pieces and WordPiece's
  lowest-id word pieces (two or more letters) are renamed (\\x01 appended), so the reference
  never produces them.
- sentencepiece .model: the best-scored NORMAL pieces of two or more letters are renamed.
- GGUF: the first merges whose last byte is a letter get \\x01 as that byte (they no longer
  apply); without merges, the best-scored (else lowest-id) NORMAL tokens of two or more bytes
  ending in a letter get the same. Lengths stay as they were, so the file's layout does not move.
- tiktoken: the first ranks of two or more letters (after a space or not) are dropped.

Example::

    cut = cut_written_file("tokenizer.json", data)
"""
from __future__ import annotations

import base64
import json
import struct

RENAMED = "\x01"
EDITS = 16


def cut_written_file(file_format: str, data: bytes) -> bytes:
    """`data`, a file of `file_format` ("tokenizer.json", "sentencepiece", "gguf", "tiktoken")
    as toksmith wrote it, with its most used entry taken out."""
    return CUTTERS[file_format](data)


def _is_word(text: str) -> bool:
    """Two or more letters once the word-boundary marks (sentencepiece's \u2581, GPT-2's \u0120,
    WordPiece's ##) are set aside."""
    letters = text.replace("\u2581", "").replace("\u0120", "").removeprefix("##")
    return len(letters) >= 2 and letters.isalpha()


def _cut_tokenizer_json(data: bytes) -> bytes:
    document = json.loads(data)
    model = document["model"]
    added = {token["content"] for token in document.get("added_tokens") or []}
    if model.get("merges"):
        del model["merges"][:EDITS]
    elif isinstance(model.get("vocab"), list):           # Unigram: [[piece, score], ...]
        candidates = [entry for entry in model["vocab"] if _is_word(entry[0]) and entry[0] not in added]
        for entry in sorted(candidates, key=lambda entry: -entry[1])[:EDITS]:
            entry[0] += RENAMED
    else:                                                # WordPiece (or BPE without merges): {piece: id}
        vocab = model["vocab"]
        for piece in sorted((p for p in vocab if _is_word(p) and p not in added), key=vocab.__getitem__)[:EDITS]:
            vocab[piece + RENAMED] = vocab.pop(piece)
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


def _cut_sentencepiece(data: bytes) -> bytes:
    from sentencepiece import sentencepiece_model_pb2 as pb
    proto = pb.ModelProto()
    proto.ParseFromString(data)
    normal = [p for p in proto.pieces if p.type == pb.ModelProto.SentencePiece.NORMAL and _is_word(p.piece)]
    for piece in sorted(normal, key=lambda p: -p.score)[:EDITS]:
        piece.piece += RENAMED
    return proto.SerializeToString()


# GGUF value types (gguf's GGUFValueType) and the byte size of the fixed-size ones.
GGUF_STRING, GGUF_ARRAY = 8, 9
GGUF_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def _gguf_arrays(data: bytes) -> dict[str, tuple[int, int, int]]:
    """{key: (element type, count, offset of the first element)} of the GGUF header's arrays."""
    (n_kv,) = struct.unpack_from("<Q", data, 16)
    pos, arrays = 24, {}

    def skip_string(at: int) -> int:
        return at + 8 + struct.unpack_from("<Q", data, at)[0]

    for _ in range(n_kv):
        key_end = skip_string(pos)
        key = data[pos + 8:key_end].decode("utf-8")
        (vtype,) = struct.unpack_from("<I", data, key_end)
        pos = key_end + 4
        if vtype == GGUF_STRING:
            pos = skip_string(pos)
        elif vtype == GGUF_ARRAY:
            etype, count = struct.unpack_from("<IQ", data, pos)
            pos += 12
            arrays[key] = (etype, count, pos)
            for _ in range(count):
                pos = skip_string(pos) if etype == GGUF_STRING else pos + GGUF_SIZES[etype]
        else:
            pos += GGUF_SIZES[vtype]
    return arrays


def _gguf_strings(data: bytes, first: int, count: int) -> list[tuple[int, bytes]]:
    """(offset of the text, text) of each string of an array."""
    out, pos = [], first
    for _ in range(count):
        (length,) = struct.unpack_from("<Q", data, pos)
        out.append((pos + 8, data[pos + 8:pos + 8 + length]))
        pos += 8 + length
    return out


def _cut_gguf(data: bytes) -> bytes:
    arrays = _gguf_arrays(data)
    out = bytearray(data)
    if "tokenizer.ggml.merges" in arrays:
        _, count, first = arrays["tokenizer.ggml.merges"]
        merges = [(at, t) for at, t in _gguf_strings(data, first, count) if t[-1:].isalpha()]
        for at, text in merges[:EDITS]:
            out[at + len(text) - 1] = ord(RENAMED)
        return bytes(out)
    _, count, first = arrays["tokenizer.ggml.tokens"]
    tokens = _gguf_strings(data, first, count)
    types = [1] * count
    if "tokenizer.ggml.token_type" in arrays:
        _, _, at = arrays["tokenizer.ggml.token_type"]
        types = list(struct.unpack_from(f"<{count}i", data, at))
    scores = list(range(count, 0, -1))                  # no scores: the lowest id first
    if "tokenizer.ggml.scores" in arrays:
        _, _, at = arrays["tokenizer.ggml.scores"]
        scores = list(struct.unpack_from(f"<{count}f", data, at))
    candidates = [i for i, (_, text) in enumerate(tokens)
                  if types[i] == 1 and len(text) >= 2 and text[-1:].isalpha()]
    for best in sorted(candidates, key=lambda i: (-scores[i], i))[:EDITS]:
        at, text = tokens[best]
        out[at + len(text) - 1] = ord(RENAMED)
    return bytes(out)


def _cut_tiktoken(data: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    words = [i for i, line in enumerate(lines) if line.strip() and _is_word_bytes(base64.b64decode(line.split()[0]))]
    for i in reversed(words[:EDITS]):
        del lines[i]
    return b"".join(lines)


def _is_word_bytes(token: bytes) -> bool:
    letters = token.removeprefix(b" ")
    return len(letters) >= 2 and letters.isalpha()


CUTTERS = {
    "tokenizer.json": _cut_tokenizer_json,
    "sentencepiece": _cut_sentencepiece,
    "gguf": _cut_gguf,
    "tiktoken": _cut_tiktoken,
}
