"""A tokenizer.json that toksmith wrote from a GGUF "t5" (UGM) vocabulary -> that GGUF's
tokenizer.ggml.* keys again (the round trip GGUF -> tokenizer.json -> GGUF).

hf_from_gguf_unigram.py writes llama.cpp's UGM pipeline in tokenizers' terms (Precompiled,
ASCII-space Replace steps, Prepend, no pre-tokenizer); the transformers-style route
(gguf_unigram_json.py) refuses it. Here the GGUF parameters are read off the json and the
GGUF is accepted only when writing it as tokenizer.json again gives the json's components
exactly (gguf_own_json_check.py); else None, and the other routes apply:
- tokens and scores by id; the unknown token UNKNOWN, other special added tokens CONTROL,
  scored 0.0 (the json holds a never-matched score for them, whatever the GGUF's was);
  a "[PAD<n>]" piece that is no added token UNUSED (the converter's filler for ids the
  model has no piece for; the json cannot tell it from a NORMAL piece); the rest NORMAL;
- precompiled_charsmap, remove_extra_whitespaces (the "\\A +" ... Prepend(" ") steps),
  add_space_prefix (the decoder's StripDecoder);
- bos/eos ids and add_bos/add_eos from the template, the unknown id from the model;
- general.architecture "nomic-bert-moe" when "<mask>" is an lstrip added token (the one UGM
  architecture llama.cpp gives that attribute), else "t5".
What a json does not hold is not written: sep, padding and mask ids, token_type_count.

>>> entries = own_unigram_entries(toksmith.load("nomic/tokenizer.json").spec)   # doctest: +SKIP
"""
from __future__ import annotations

import re

from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec
from toksmith.vocab import TokenType
from toksmith.writers.gguf_binary import Entry, GgufValue, ValueType
from toksmith.writers.gguf_hf_common import add_bos_eos
from toksmith.writers.gguf_keys import (add_token_entries, bool_entry, header_entries, model_name,
                                        special_id_entries, string_entry)
from toksmith.writers.gguf_own_json_check import rebuilds_json
from toksmith.writers.hf_from_gguf_unigram import hf_spec_from_unigram_gguf

# Parity: convert_hf_to_gguf.py _xlmroberta_set_vocab / T5Model.set_vocab: f"[PAD{i}]" UNUSED
# for the ids past the sentencepiece model's pieces.
FILLER = re.compile(r"\[PAD\d+\]")


def own_unigram_entries(spec: TokenizerSpec) -> list[Entry] | None:
    """The GGUF key/values `spec`'s tokenizer.json was written from, or None when it is not
    hf_from_gguf_unigram's writing of a GGUF."""
    hf = spec.hf
    model = hf.model
    if (not isinstance(model, c.UnigramModel) or model.unk_id is None or hf.pre_tokenizer is not None
            or not isinstance(hf.normalizer, c.NormalizerSequence) or not isinstance(hf.decoder, c.DecoderSequence)):
        return None
    try:
        add_bos, add_eos, bos, eos = add_bos_eos(hf.post_processor)
    except ValueError:
        return None
    steps = hf.normalizer.normalizers
    charsmap = next((s.charsmap for s in steps if isinstance(s, c.Precompiled)), b"")
    remove_extra_whitespaces = any(isinstance(s, c.Prepend) for s in steps)
    add_space_prefix = any(isinstance(d, c.StripDecoder) for d in hf.decoder.decoders)
    special = {t.id for t in hf.added_tokens if t.special}
    texts = [text for text, _ in model.vocab]
    types, scores = [], []
    for i, (text, score) in enumerate(model.vocab):
        if i == model.unk_id:
            types.append(TokenType.UNKNOWN)
        elif i in special:
            types.append(TokenType.CONTROL)
        else:
            types.append(TokenType.UNUSED if FILLER.fullmatch(text) else TokenType.NORMAL)
        scores.append(0.0 if i in special else score)
    entries = (header_entries(_architecture(hf.added_tokens), model_name(spec))
               + [string_entry("tokenizer.ggml.model", "t5"),
                  string_entry("tokenizer.ggml.pre", "default"),
                  Entry("tokenizer.ggml.tokens", GgufValue.strings([t.encode("utf-8") for t in texts])),
                  Entry("tokenizer.ggml.scores", GgufValue.numbers(ValueType.FLOAT32, scores)),
                  Entry("tokenizer.ggml.token_type", GgufValue.numbers(ValueType.INT32, types)),
                  bool_entry("tokenizer.ggml.add_space_prefix", add_space_prefix),
                  bool_entry("tokenizer.ggml.remove_extra_whitespaces", remove_extra_whitespaces)])
    if charsmap:
        entries.append(Entry("tokenizer.ggml.precompiled_charsmap", GgufValue.numbers(ValueType.UINT8, charsmap)))
    entries += (special_id_entries({"bos": bos, "eos": eos, "unk": model.unk_id})
                + add_token_entries(add_bos, add_eos))
    return entries if rebuilds_json(spec, entries, hf_spec_from_unigram_gguf) else None


def _architecture(added_tokens) -> str:
    """general.architecture: llama.cpp's attributes follow it (lstrip "<mask>")."""
    # Parity: llama-vocab.cpp load: _set_token_attr("<mask>", LLAMA_TOKEN_ATTR_LSTRIP) for nomic-bert-moe.
    if any(t.content == "<mask>" and t.lstrip for t in added_tokens):
        return "nomic-bert-moe"
    return "t5"
