"""An RWKV vocabulary .txt -> GGUF "rwkv", as llama.cpp's converter writes it.

Parity: conversion/base.py `_set_vocab_rwkv_world`: "<s>" CONTROL at id 0, then each
line's token as repr(token_bytes)[2:-1] (llama.cpp unescapes it) NORMAL, "[PAD<i>]" UNUSED
up to 65536 tokens; SpecialVocab with bos = eos = 0 and eot = 261 (the converter's "\\n\\n"
hack). The chat template the converter adds is left out (it changes no tokenization).
llama.cpp matches the text of "<s>" and of the fillers in input text, which the rwkv package
does not: the file is written only with save(..., exact=False).

>>> entries = rwkv_entries(toksmith.load("rwkv_vocab_v20230424.txt").spec)   # doctest: +SKIP
"""
from __future__ import annotations

from toksmith.spec import TokenizerSpec
from toksmith.vocab import TokenType
from toksmith.writers.common import cannot_write, refuse_inexact
from toksmith.writers.gguf_binary import Entry, GgufValue, ValueType
from toksmith.writers.gguf_keys import header_entries, model_name, special_id_entries, string_entry, u32_entry

TARGET = "a vocab-only GGUF"
# Parity: _set_vocab_rwkv_world: hparams vocab_size default; the architecture of its RWKV6 model.
VOCAB_SIZE = 65536
ARCHITECTURE = "rwkv6"
EOT_ID = 261


def rwkv_entries(spec: TokenizerSpec) -> list[Entry]:
    """The GGUF key/values of an RWKV .txt vocabulary (raises UnsupportedConversionError)."""
    token_bytes = spec.rwkv.token_bytes
    present = spec.rwkv.present
    missing = []
    if present is not None and (present[:1] != b"\0" or b"\0" in present[1:]):
        gaps = [i for i in range(1, len(present)) if not present[i]]
        missing.append(f"ids 1..{len(present) - 1} all given (the converter numbers lines in order; "
                       f"{'id 0 is given' if present[:1] == b'1' else f'{len(gaps)} ids are missing'})")
    if len(token_bytes) > VOCAB_SIZE:
        missing.append(f"more than {VOCAB_SIZE} ids (the converter's vocabulary size)")
    texts = [b"<s>"] + [repr(t)[2:-1].encode("utf-8") for t in token_bytes[1:]]
    if len(set(texts)) != len(texts):
        missing.append("tokens given twice with the same bytes (llama.cpp refuses a text given twice)")
    if missing:
        raise cannot_write(spec, TARGET, missing)
    # Parity: llama-vocab.cpp llm_tokenizer_rwkv builds its trie from every token, the CONTROL
    # "<s>" and the UNUSED fillers too, whatever parse_special says; the rwkv package has neither.
    fillers = VOCAB_SIZE - len(texts)
    refuse_inexact(spec, TARGET, [f"the converter's \"<s>\" at id 0{f' and {fillers} [PAD<i>] fillers' if fillers else ''}: "
                                  f"llama.cpp's RWKV vocabulary matches their text ('<s>' gives [0]), the rwkv "
                                  f"package reads it as plain text"])
    types = [TokenType.CONTROL] + [TokenType.NORMAL] * (len(texts) - 1)
    texts += [f"[PAD{i}]".encode() for i in range(len(texts), VOCAB_SIZE)]
    types += [TokenType.UNUSED] * (VOCAB_SIZE - len(types))
    eot = {"eot": EOT_ID} if EOT_ID < len(texts) else {}
    return (header_entries(ARCHITECTURE, model_name(spec))
            + [string_entry("tokenizer.ggml.model", "rwkv"),
               Entry("tokenizer.ggml.tokens", GgufValue.strings(texts)),
               Entry("tokenizer.ggml.token_type", GgufValue.numbers(ValueType.INT32, types))]
            + special_id_entries({"bos": 0, "eos": 0})
            + [u32_entry("tokenizer.ggml.eot_token_id", eot["eot"])] * bool(eot))
