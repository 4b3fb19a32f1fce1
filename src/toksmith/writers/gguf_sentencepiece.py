"""sentencepiece .model -> GGUF, as llama.cpp's converter writes it.

BPE models take `_set_vocab_sentencepiece` (tokenizer model "llama", pre "default",
architecture "llama"); Unigram models take T5's route (conversion/t5.py T5Model.set_vocab:
"t5" with add_space_prefix, remove_extra_whitespaces and precompiled_charsmap). Tokens,
scores and types are the model's pieces as they are. The special ids are the model's
(what SpecialVocab finds beside a model), and add_bos/add_eos are those of llama.cpp's
vocab type (SPM: BOS; UGM: EOS), written out.

llama.cpp's SPM tokenizer applies no normalizer, so a BPE model whose normalizer does
anything (a precompiled charsmap, remove_extra_whitespaces) is refused, as is anything
else llama.cpp cannot express. A Unigram model with byte fallback is written only with
save(..., exact=False): llama.cpp's UGM gives the unknown token instead.

>>> entries = sentencepiece_entries(toksmith.load("llama2_tokenizer.model").spec)   # doctest: +SKIP
"""
from __future__ import annotations

from toksmith.spec import Algorithm, TokenizerSpec
from toksmith.writers.common import cannot_write, refuse_inexact
from toksmith.writers.gguf_binary import Entry, GgufValue, ValueType
from toksmith.writers.gguf_keys import (add_token_entries, bool_entry, header_entries, model_name,
                                        special_id_entries, special_ids_of, string_entry)

TARGET = "a vocab-only GGUF"
# (architecture, tokenizer.ggml.model, add_bos, add_eos) of each algorithm.
# Parity: llama_vocab::impl::load defaults: SPM add_bos, UGM add_eos.
ROUTES = {
    Algorithm.SPM_BPE: ("llama", "llama", True, False),
    Algorithm.UNIGRAM: ("t5", "t5", False, True),
}


def sentencepiece_entries(spec: TokenizerSpec) -> list[Entry]:
    """The GGUF key/values of a sentencepiece model `spec` (raises UnsupportedConversionError)."""
    check_expressible(spec)
    architecture, model, add_bos, add_eos = ROUTES[spec.algorithm]
    return (header_entries(architecture, model_name(spec))
            + vocabulary_entries(spec, model)
            + special_id_entries(special_ids_of(spec.vocab.special))
            + add_token_entries(add_bos, add_eos))


def vocabulary_entries(spec: TokenizerSpec, model: str) -> list[Entry]:
    """tokenizer.ggml.model ... precompiled_charsmap of a SentencePiece-family vocabulary.

    Parity: conversion/base.py _set_vocab_sentencepiece; conversion/t5.py T5Model.set_vocab.
    """
    vocab, normalizer = spec.vocab, spec.normalizer
    entries = [string_entry("tokenizer.ggml.model", model),
               string_entry("tokenizer.ggml.pre", "default"),
               Entry("tokenizer.ggml.tokens", GgufValue.strings(vocab.pieces)),
               Entry("tokenizer.ggml.scores", GgufValue.numbers(ValueType.FLOAT32, vocab.scores)),
               Entry("tokenizer.ggml.token_type", GgufValue.numbers(ValueType.INT32, vocab.types))]
    if model == "t5":
        entries += [bool_entry("tokenizer.ggml.add_space_prefix", normalizer.add_dummy_prefix),
                    bool_entry("tokenizer.ggml.remove_extra_whitespaces", normalizer.remove_extra_whitespaces)]
        if normalizer.precompiled_charsmap:
            entries.append(Entry("tokenizer.ggml.precompiled_charsmap",
                                 GgufValue.numbers(ValueType.UINT8, normalizer.precompiled_charsmap)))
    elif not normalizer.add_dummy_prefix:
        # The converter leaves the key out (llama.cpp's SPM default is true); written only when false.
        entries.append(bool_entry("tokenizer.ggml.add_space_prefix", False))
    return entries


def check_expressible(spec: TokenizerSpec) -> None:
    """UnsupportedConversionError listing what of `spec` llama.cpp's vocab types cannot hold."""
    if spec.algorithm not in ROUTES:
        raise cannot_write(spec, TARGET, [f"a {spec.algorithm.value} model (llama.cpp reads SentencePiece "
                                          f"BPE as \"llama\" and Unigram as \"t5\")"])
    missing = []
    normalizer = spec.normalizer
    if spec.algorithm is Algorithm.SPM_BPE:
        # Parity: llm_tokenizer_spm_session::tokenize: no normalization but escaping spaces.
        if normalizer.precompiled_charsmap:
            missing.append(f"the {normalizer.name!r} normalizer's precompiled charsmap (llama.cpp's SPM "
                           f"vocabulary applies no normalizer)")
        if normalizer.remove_extra_whitespaces:
            missing.append("remove_extra_whitespaces (llama.cpp's SPM vocabulary keeps every space)")
        # Parity: llm_tokenizer_spm_session::resegment: a symbol no piece holds becomes the
        # <0xXX> pieces of its bytes (token_to_id.at(), which aborts llama.cpp when one is missing).
        if not spec.byte_fallback:
            missing.append("<unk> for text no piece holds: the model has no byte pieces (byte_fallback "
                           "false), llama.cpp's SPM vocabulary falls back to <0xXX> pieces")
    if not normalizer.escape_whitespaces:
        missing.append("escape_whitespaces=false (llama.cpp always writes spaces as U+2581)")
    if normalizer.treat_whitespace_as_suffix:
        missing.append("treat_whitespace_as_suffix (llama.cpp puts the space before a word)")
    decoder = spec.decoder
    if decoder is not None and decoder.denormalizer is not None:
        missing.append("the denormalizer (llama.cpp has no denormalizer)")
    if spec.vocab.special.unk is None:
        missing.append("an unknown piece")
    if missing:
        raise cannot_write(spec, TARGET, missing)
    if spec.algorithm is Algorithm.UNIGRAM and spec.byte_fallback:
        # Parity: llama.cpp llm_tokenizer_ugm_session::tokenize: a character no piece holds
        # becomes the unknown token; UGM has no byte fallback (sentencepiece gives <0xXX> pieces).
        refuse_inexact(spec, TARGET, ["byte fallback (llama.cpp's UGM vocabulary gives the unknown token "
                                      "where sentencepiece gives <0xXX> byte pieces)"])
