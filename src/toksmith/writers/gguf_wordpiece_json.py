"""A WordPiece (BERT) tokenizer.json -> GGUF "bert", as llama.cpp's converter's BERT route writes it.

Parity: conversion/bert.py BertModel.set_vocab: the tokens of `get_vocab_base` spelled
with a phantom space (a word-start piece "\u2581" + text, a "##" continuation without its
prefix, CONTROL tokens as they are), tokenizer.ggml.pre from the check-text hash (llama.cpp
reads no pre-tokenizer for "bert"), then SpecialVocab: the template's [CLS] as BOS and
[SEP] as EOS (and separator), add_bos/add_eos, and the BertNormalizer's lowercase and
strip_accents as tokenizer.ggml.normalizer.*.

llama.cpp's WPM session always cleans text, splits CJK characters and punctuation, and adds
BOS ... SEP with add_special: a pipeline that differs is refused. Even the BERT pipeline it
follows reads some text otherwise (`wpm_differences`), so the file is written only with
save(..., exact=False).

>>> entries = wordpiece_entries(toksmith.load("all-MiniLM-L6-v2/tokenizer.json").spec)   # doctest: +SKIP
"""
from __future__ import annotations

import hashlib

from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec
from toksmith.vocab import TokenType
from toksmith.writers.common import cannot_write, refuse_inexact
from toksmith.writers.gguf_binary import Entry, GgufValue, ValueType
from toksmith.writers.gguf_hf_common import add_bos_eos, added_token_problems, token_list
from toksmith.writers.gguf_keys import (add_token_entries, bool_entry, header_entries, model_name,
                                        special_id_entries, string_entry, u32_entry)
from toksmith.writers.gguf_pre_hashes import CHECK_TEXT, PRE_NAME_BY_HASH

TARGET = "a vocab-only GGUF"
PHANTOM_SPACE = "\u2581".encode()


def wordpiece_entries(spec: TokenizerSpec) -> list[Entry]:
    """The GGUF key/values of a WordPiece tokenizer.json (raises UnsupportedConversionError)."""
    hf = spec.hf
    model = hf.model
    missing = []
    normalizer = hf.normalizer
    if not isinstance(normalizer, c.BertNormalizer):
        missing.append(f"the normalizer {type(normalizer).__name__} (llama.cpp's WPM normalizes as "
                       f"BertNormalizer does)")
    elif not (normalizer.clean_text and normalizer.handle_chinese_chars):
        missing.append("BertNormalizer without clean_text or handle_chinese_chars (llama.cpp's WPM "
                       "always does both)")
    if not isinstance(hf.pre_tokenizer, c.BertPreTokenizer):
        missing.append(f"the pre-tokenizer {type(hf.pre_tokenizer).__name__} (llama.cpp's WPM splits "
                       f"as BertPreTokenizer does)")
    if model.continuing_subword_prefix != "##":
        missing.append(f"the continuing_subword_prefix {model.continuing_subword_prefix!r} (llama.cpp's "
                       f"BERT vocabulary marks word starts instead of \"##\")")
    if not isinstance(hf.decoder, c.WordPieceDecoder) or not hf.decoder.cleanup:
        missing.append(f"the decoder {type(hf.decoder).__name__} (llama.cpp decodes as WordPiece with cleanup)")
    try:
        add_bos, add_eos, bos, eos = add_bos_eos(hf.post_processor)
        if not (add_bos and add_eos):
            raise ValueError("a post-processor other than [CLS] $A [SEP] (llama.cpp's WPM always "
                             "adds both with add_special)")
    except ValueError as e:
        missing.append(str(e))
        bos = eos = None
    missing += added_token_problems(spec)
    texts, types = token_list(spec)
    prefix = model.continuing_subword_prefix.encode()
    for i, (text, kind) in enumerate(zip(texts, types)):
        if kind == TokenType.CONTROL or kind == TokenType.UNUSED:
            continue
        # Parity: BertModel.set_vocab phantom()
        texts[i] = text[len(prefix):] if text.startswith(prefix) else PHANTOM_SPACE + text
    if len(set(texts)) != len(texts):
        missing.append("two tokens that are one text once spelled with llama.cpp's phantom space")
    if missing:
        raise cannot_write(spec, TARGET, missing)
    refuse_inexact(spec, TARGET, wpm_differences(normalizer, model))
    from toksmith.tokenizer import Tokenizer
    digest = hashlib.sha256(str(Tokenizer(spec).encode(CHECK_TEXT, add_special=True)).encode()).hexdigest()
    unk = model.vocab.get(model.unk_token)
    entries = (header_entries("bert", model_name(spec))
               + [u32_entry("tokenizer.ggml.token_type_count", 2 if _has_pair_type(hf.post_processor) else 1),
                  string_entry("tokenizer.ggml.model", "bert"),
                  string_entry("tokenizer.ggml.pre", PRE_NAME_BY_HASH.get(digest, "default")),
                  Entry("tokenizer.ggml.tokens", GgufValue.strings(texts)),
                  Entry("tokenizer.ggml.token_type", GgufValue.numbers(ValueType.INT32, types))]
               + special_id_entries({"bos": bos, "eos": eos, "unk": unk, "sep": eos})
               + add_token_entries(True, True)
               + [bool_entry("tokenizer.ggml.normalizer.lowercase", normalizer.lowercase)])
    if normalizer.strip_accents is not None:
        entries.append(bool_entry("tokenizer.ggml.normalizer.strip_accents", normalizer.strip_accents))
    return entries


def wpm_differences(normalizer: c.BertNormalizer, model: c.WordPieceModel) -> list[str]:
    """Where llama.cpp's WPM session reads text otherwise than BertNormalizer, BertPreTokenizer
    and WordPiece (measured with llama-cpp-python 0.3.36 against tokenizers 0.23.3 on MiniLM;
    hf_from_gguf_wordpiece.py writes llama.cpp's side in tokenizers' terms). Any text can hold
    them, so a BERT tokenizer.json is never written as an exact "bert" GGUF."""
    # Parity: llama-vocab.cpp llm_tokenizer_wpm_session::preprocess (unicode.cpp's flags and NFD).
    differences = ["controls that are white space (U+000C, U+0085): BertNormalizer's clean_text drops them, "
                   "llama.cpp's WPM splits words there ('b\\x0cc' is [bc] in tokenizers, [b, c] in llama.cpp)"]
    strips_accents = normalizer.lowercase if normalizer.strip_accents is None else normalizer.strip_accents
    if strips_accents:
        differences += ["marks other than Mn (U+093E, U+20E3): llama.cpp's WPM drops every mark, BertNormalizer "
                        "keeps them",
                        "characters whose NFD has several code points (Hangul syllables: '\uc5b4' is [\u110b, "
                        "##\u1165] in tokenizers): llama.cpp's NFD keeps the first one only"]
    differences.append(f"words over {model.max_input_chars_per_word} characters: tokenizers' WordPiece gives the "
                       f"unknown token, llama.cpp's WPM has no limit")
    return differences


def _has_pair_type(post_processor) -> bool:
    """Whether the pair template gives its second sequence type id 1 (BERT's token_type_count 2)."""
    if isinstance(post_processor, c.BertProcessing):
        return True
    if isinstance(post_processor, c.TemplateProcessing) and post_processor.pair:
        return any(piece.type_id for piece in post_processor.pair)
    return False
