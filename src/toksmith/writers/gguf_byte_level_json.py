"""A byte-level BPE tokenizer.json -> GGUF "gpt2", as llama.cpp's converter writes it.

Parity: conversion/base.py `_set_vocab_gpt2`: tokens and types (`get_vocab_base`),
tokenizer.ggml.pre from `get_vocab_base_pre` (the sha256 of str(ids) of CHECK_TEXT, here
encoded by the loaded tokenizer with add_special, looked up in its table), then
SpecialVocab's merges, special ids and add_bos/add_eos.

>>> entries = byte_level_entries(toksmith.load("llama3/tokenizer.json").spec)   # doctest: +SKIP
"""
from __future__ import annotations

import hashlib

from toksmith.hf import components as c
from toksmith.pretokenizers.llama_cpp import PRE_NAMES
from toksmith.spec import Algorithm, TokenizerSpec
from toksmith.writers.common import cannot_write, refuse_inexact
from toksmith.writers.gguf_binary import Entry, GgufValue, ValueType
from toksmith.writers.gguf_hf_common import add_bos_eos, added_token_problems, token_list
from toksmith.writers.gguf_keys import (add_token_entries, header_entries, model_name, special_id_entries,
                                        string_entry)
from toksmith.writers.gguf_pre_hashes import CHECK_TEXT, PRE_NAME_BY_HASH
from toksmith.writers.class_tables import Reference
from toksmith.writers.split_equivalence import llama_cpp_splits_as_hf, unicode_table_differences

TARGET = "a vocab-only GGUF"


def check_text_hash(spec: TokenizerSpec) -> str:
    """sha256 of str(ids) of CHECK_TEXT encoded by `spec`'s tokenizer with add_special.

    Parity: get_vocab_base_pre: chkhsh = sha256(str(tokenizer.encode(chktxt)).encode())
    (AutoTokenizer.encode adds special tokens by default).
    """
    from toksmith.tokenizer import Tokenizer
    ids = Tokenizer(spec).encode(CHECK_TEXT, add_special=True)
    return hashlib.sha256(str(ids).encode()).hexdigest()


def byte_level_entries(spec: TokenizerSpec) -> list[Entry]:
    """The GGUF key/values of a byte-level BPE tokenizer.json (raises UnsupportedConversionError)."""
    hf = spec.hf
    model = hf.model
    missing = []
    if spec.algorithm is not Algorithm.BYTE_BPE:
        missing.append("a BPE without GPT-2's byte-level map (llama.cpp's BPE vocabularies are byte-level; "
                       "SentencePiece-style BPE with byte fallback is not written yet)")
        raise cannot_write(spec, TARGET, missing)
    if hf.normalizer is not None:
        missing.append(f"the normalizer {type(hf.normalizer).__name__} (llama.cpp's BPE vocabularies "
                       f"apply none)")
    for option in ("continuing_subword_prefix", "end_of_word_suffix"):
        if getattr(model, option):
            missing.append(f"the BPE model's {option} {getattr(model, option)!r}")
    if model.byte_fallback:
        missing.append("the BPE model's byte_fallback")
    try:
        add_bos, add_eos, bos, eos = add_bos_eos(hf.post_processor)
    except ValueError as e:
        missing.append(str(e))
        add_bos = add_eos = False
        bos = eos = None
    missing += added_token_problems(spec)
    digest = check_text_hash(spec)
    pre = PRE_NAME_BY_HASH.get(digest)
    if pre is None:
        missing.append(f"a pre-tokenizer llama.cpp knows: the check text's ids hash to {digest}, which "
                       f"llama.cpp's converter (get_vocab_base_pre) has no tokenizer.ggml.pre name for")
    # What llama.cpp would read otherwise (save(..., exact=False) writes the file all the same)
    inexact = []
    if pre is not None and not llama_cpp_splits_as_hf(pre, hf.pre_tokenizer):
        inexact.append(f"the pre-tokenizer {type(hf.pre_tokenizer).__name__}: the converter names it {pre!r}, "
                       f"and llama.cpp's splitter of that name is not known to cut as it does")
    elif pre is not None:
        inexact += unicode_table_differences(pre, Reference.ONIGURUMA, hf.pre_tokenizer)
    if not _byte_level_decoder(hf.decoder, pre):
        inexact.append(f"the decoder {type(hf.decoder).__name__} (llama.cpp decodes byte-level text, then "
                       f"tidies spaces where its pre-tokenizer says)")
    if pre in PRE_NAMES and PRE_NAMES[pre].ignore_merges != model.ignore_merges:
        inexact.append(f"ignore_merges={model.ignore_merges} (llama.cpp's {pre!r} pre-tokenizer has "
                       f"ignore_merges={PRE_NAMES[pre].ignore_merges})")
    if missing:
        raise cannot_write(spec, TARGET, missing + inexact)
    refuse_inexact(spec, TARGET, inexact)
    texts, types = token_list(spec)
    merges = model.merges.byte_level_lines() if hasattr(model.merges, "byte_level_lines") \
        else [f"{a} {b}".encode() for a, b in model.merges]
    ids = {"bos": bos, "eos": eos, "unk": _unk_id(model)}
    return (header_entries("gpt2", model_name(spec))
            + [string_entry("tokenizer.ggml.model", "gpt2"), string_entry("tokenizer.ggml.pre", pre),
               Entry("tokenizer.ggml.tokens", GgufValue.strings(texts)),
               Entry("tokenizer.ggml.token_type", GgufValue.numbers(ValueType.INT32, types)),
               Entry("tokenizer.ggml.merges", GgufValue.strings(merges))]
            + special_id_entries(ids)
            + add_token_entries(add_bos, add_eos))


def _byte_level_decoder(decoder, pre: str | None) -> bool:
    """A ByteLevel decoder, or one followed by llama.cpp's clean_spaces replacements (as
    hf_from_gguf writes a GGUF's) when llama.cpp's pre-tokenizer `pre` tidies spaces too."""
    if isinstance(decoder, c.ByteLevel):
        return True
    from toksmith.writers.hf_from_gguf import CLEAN_SPACES_REPLACEMENTS
    if not isinstance(decoder, c.DecoderSequence) or pre not in PRE_NAMES or not PRE_NAMES[pre].clean_spaces:
        return False
    first, *rest = decoder.decoders
    cleanups = [c.Replace(c.StringPattern(a), b) for a, b in CLEAN_SPACES_REPLACEMENTS]
    return isinstance(first, c.ByteLevel) and rest == cleanups


def _unk_id(model: c.BpeModel) -> int | None:
    if model.unk_token is None:
        return None
    return model.vocab.get(model.unk_token)
