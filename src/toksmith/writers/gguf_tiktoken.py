"""A tiktoken rank file -> GGUF "gpt2": the merge list derived from the ranks, written as
llama.cpp's converter writes a byte-level vocabulary.

Parity: conversion/base.py `_set_vocab_gpt2` (tokens, types, merges, tokenizer.ggml.pre
from `get_vocab_base_pre`'s check-text hash) on the tokenizer transformers derives from a
rank file (one merge per token: writers/byte_level_merges.py). The file is written only
when llama.cpp's pre-tokenizer of that name cuts as the rank file's pattern does
(writers/split_equivalence.py), and adds nothing with add_special, as tiktoken adds nothing.
With save(..., exact=False) a pre-tokenizer that cuts otherwise (o200k as "gpt-4o") is
written under the converter's name all the same.

>>> entries = tiktoken_entries(toksmith.load("r50k_base.tiktoken").spec)   # doctest: +SKIP
"""
from __future__ import annotations

from toksmith.pretokenizers.llama_cpp import PRE_NAMES
from toksmith.vocab import TokenType
from toksmith.spec import TokenizerSpec
from toksmith.writers.byte_level_merges import merge_list_vocab_counting_unreachable
from toksmith.writers.common import cannot_write, refuse_inexact
from toksmith.writers.gguf_binary import Entry, GgufValue, ValueType
from toksmith.writers.gguf_byte_level_json import check_text_hash
from toksmith.writers.gguf_keys import (add_token_entries, header_entries, model_name, special_id_entries,
                                        string_entry)
from toksmith.writers.gguf_pre_hashes import PRE_NAME_BY_HASH
from toksmith.writers.class_tables import Reference
from toksmith.writers.split_equivalence import pattern_of_llama_cpp_pre, unicode_table_differences

TARGET = "a vocab-only GGUF"
# The special token GPT-2's and cl100k's GGUFs name as BOS and EOS.
END_OF_TEXT = b"<|endoftext|>"


def tiktoken_entries(spec: TokenizerSpec) -> list[Entry]:
    """The GGUF key/values of a rank file's tokenizer (raises UnsupportedConversionError)."""
    byte_level = spec.byte_level
    digest = check_text_hash(spec)
    pre = PRE_NAME_BY_HASH.get(digest)
    if pre is None:
        raise cannot_write(spec, TARGET, [f"a pre-tokenizer llama.cpp knows: the check text's ids hash to {digest}, "
                                          f"which llama.cpp's converter (get_vocab_base_pre) has no "
                                          f"tokenizer.ggml.pre name for"])
    inexact = []
    if pattern_of_llama_cpp_pre(pre) is not byte_level.pattern:
        shown = byte_level.pattern.value if hasattr(byte_level.pattern, "value") else repr(byte_level.pattern)
        inexact.append(f"the pre-tokenizer {shown}: the converter names it {pre!r}, whose llama.cpp "
                       f"splitter cuts some text otherwise")
    else:
        inexact += unicode_table_differences(pre, Reference.TIKTOKEN)
    merged, unreachable = merge_list_vocab_counting_unreachable(byte_level.vocab, spec.source)
    if unreachable and not PRE_NAMES[pre].ignore_merges:
        inexact.append(f"{unreachable} tokens tiktoken only gives for a whole piece (llama.cpp's {pre!r} "
                       f"pre-tokenizer does not set ignore_merges)")
    refuse_inexact(spec, TARGET, inexact)
    texts, types = _tokens(merged)
    end_of_text = byte_level.vocab.special_tokens.get(END_OF_TEXT)
    return (header_entries("gpt2", model_name(spec))
            + [string_entry("tokenizer.ggml.model", "gpt2"), string_entry("tokenizer.ggml.pre", pre),
               Entry("tokenizer.ggml.tokens", GgufValue.strings(texts)),
               Entry("tokenizer.ggml.token_type", GgufValue.numbers(ValueType.INT32, types)),
               Entry("tokenizer.ggml.merges", GgufValue.strings(list(merged.merges)))]
            + special_id_entries({"bos": end_of_text, "eos": end_of_text})
            # tiktoken adds nothing: say so, or llama.cpp's BPE defaults could add BOS.
            + add_token_entries(False, False))


def _tokens(merged) -> tuple[list[bytes], list[int]]:
    """(texts, GGUF types): ranks NORMAL, special tokens CONTROL, a gap "[PAD<id>]" UNUSED.

    Parity: conversion/base.py get_vocab_base (its "[PAD{i}]" filler for ids with no token).
    """
    size = max(len(merged.texts), max(merged.special_tokens.values(), default=-1) + 1)
    texts = [f"[PAD{i}]".encode() for i in range(size)]
    types = [int(TokenType.UNUSED)] * size
    for i, text in enumerate(merged.texts):
        if text is not None:
            texts[i], types[i] = text, int(TokenType.NORMAL)
    for text, i in merged.special_tokens.items():
        texts[i], types[i] = text, int(TokenType.CONTROL)
    return texts, types
