"""GGUF files of RWKV vocabularies, written with the `gguf` package as llama.cpp's converter
writes them (conversion/base.py ``_set_vocab_rwkv_world``), vocabulary only.

Example::

    write_rwkv_world_gguf(fixtures / "rwkv/rwkv_vocab_v20230424.txt", tmp / "rwkv.gguf")
    write_rwkv_gguf(tmp / "tiny.gguf", [b"\\\\n", b"a", b"ab"], [1, 1, 1], unk=None)
"""
from __future__ import annotations

import ast
import os

import gguf

# An architecture llama.cpp loads a vocab-only RWKV model of.
ARCHITECTURE = "rwkv6"


def rwkv_world_tokens(vocab_txt: str | os.PathLike, vocab_size: int = 65536) -> tuple[list[bytes], list[int]]:
    """(token texts, token types) as _set_vocab_rwkv_world makes them: "<s>" CONTROL, then
    ``repr(token_bytes)[2:-1]`` of every line NORMAL, then "[PAD<i>]" UNUSED up to vocab_size."""
    tokens: list[bytes] = ["<s>".encode("utf-8")]
    toktypes: list[int] = [gguf.TokenType.CONTROL]
    with open(vocab_txt, "r", encoding="utf-8") as f:
        for line in f.readlines():
            parts = line.split(" ")
            assert len(parts) >= 3
            token, token_len = ast.literal_eval(" ".join(parts[1:-1])), int(parts[-1])
            token = token.encode("utf-8") if isinstance(token, str) else token
            assert isinstance(token, bytes)
            assert len(token) == token_len
            tokens.append(repr(token)[2:-1].encode("utf-8"))
            toktypes.append(gguf.TokenType.NORMAL)
    for i in range(len(tokens), vocab_size):
        tokens.append(f"[PAD{i}]".encode("utf-8"))
        toktypes.append(gguf.TokenType.UNUSED)
    return tokens, toktypes


def write_rwkv_world_gguf(vocab_txt: str | os.PathLike, target: str | os.PathLike) -> str:
    """The converter's GGUF of RWKV's world vocabulary: its tokens, bos = eos = 0, eot = 261."""
    tokens, toktypes = rwkv_world_tokens(vocab_txt)
    return write_rwkv_gguf(target, tokens, toktypes, bos=0, eos=0, eot=261)


def write_rwkv_gguf(target: str | os.PathLike, tokens: list[bytes], toktypes: list[int], *,
                    unk: int | None = None, bos: int | None = None, eos: int | None = None,
                    eot: int | None = None, flags: dict[str, bool] | None = None) -> str:
    """A vocab-only GGUF of tokenizer model "rwkv"; `flags`: e.g. {"add_space_prefix": True}."""
    writer = gguf.GGUFWriter(os.fspath(target), ARCHITECTURE)
    writer.add_tokenizer_model("rwkv")
    writer.add_token_list(tokens)
    writer.add_token_types(toktypes)
    for add, value in ((writer.add_unk_token_id, unk), (writer.add_bos_token_id, bos),
                       (writer.add_eos_token_id, eos), (writer.add_eot_token_id, eot)):
        if value is not None:
            add(value)
    for name, value in (flags or {}).items():
        writer.add_bool(f"tokenizer.ggml.{name}", value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return os.fspath(target)
