"""A tokenizer.json that toksmith wrote from a GGUF "bert" (WPM) vocabulary -> that GGUF's
tokenizer.ggml.* keys again (the round trip GGUF -> tokenizer.json -> GGUF).

hf_from_gguf_wordpiece.py writes llama.cpp's WPM pipeline in tokenizers' terms (WordPiece
with continuing_subword_prefix "" over the GGUF's own "\u2581"-spelled texts); the
transformers-style route (gguf_wordpiece_json.py) refuses it. Here the GGUF parameters are
read off the json (texts and types by id, lowercase / strip_accents from the BertNormalizer
step, add_space_prefix from the decoder's StripDecoder, [CLS]/[SEP] from the template, the
unknown token), and the GGUF is accepted only when writing it as tokenizer.json again gives
the json's components exactly (gguf_own_json_check.py); else None, and the other routes apply.

Keys written: tokenizer.ggml.token_type_count, model "bert", pre (the check-text hash, as
the converter finds it), tokens, token_type, bos/unknown/seperator ids, and the normalizer /
add_space_prefix keys only where they differ from llama.cpp's defaults. What a json does not
hold is not written: padding and mask ids (tokenizers' json has no roles for them).

>>> entries = own_wordpiece_entries(toksmith.load("bge/tokenizer.json").spec)   # doctest: +SKIP
"""
from __future__ import annotations

import hashlib

from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec
from toksmith.vocab import TokenType
from toksmith.writers.gguf_binary import Entry, GgufValue, ValueType
from toksmith.writers.gguf_hf_common import add_bos_eos
from toksmith.writers.gguf_keys import bool_entry, header_entries, model_name, special_id_entries, string_entry, u32_entry
from toksmith.writers.gguf_own_json_check import rebuilds_json
from toksmith.writers.gguf_pre_hashes import CHECK_TEXT, PRE_NAME_BY_HASH
from toksmith.writers.gguf_wordpiece_json import _has_pair_type
from toksmith.writers.hf_from_gguf_wordpiece import hf_spec_from_wordpiece_gguf


def own_wordpiece_entries(spec: TokenizerSpec) -> list[Entry] | None:
    """The GGUF key/values `spec`'s tokenizer.json was written from, or None when it is not
    hf_from_gguf_wordpiece's writing of a GGUF."""
    hf = spec.hf
    model = hf.model
    if not isinstance(model, c.WordPieceModel) or model.continuing_subword_prefix != "":
        return None
    bert = _bert_normalizer(hf.normalizer)
    if bert is None or TokenType.UNDEFINED in spec.vocab.types or model.unk_token not in model.vocab:
        return None
    try:
        add_bos, add_eos, bos, sep = add_bos_eos(hf.post_processor)
    except ValueError:
        return None
    if not (add_bos and add_eos):
        return None
    lowercase, strip_accents = bert.lowercase, bool(bert.strip_accents)
    add_space_prefix = isinstance(hf.decoder, c.DecoderSequence) and any(
        isinstance(d, c.StripDecoder) for d in hf.decoder.decoders)
    from toksmith.tokenizer import Tokenizer
    digest = hashlib.sha256(str(Tokenizer(spec).encode(CHECK_TEXT, add_special=True)).encode()).hexdigest()
    entries = (header_entries("bert", model_name(spec))
               + [u32_entry("tokenizer.ggml.token_type_count", 2 if _has_pair_type(hf.post_processor) else 1),
                  string_entry("tokenizer.ggml.model", "bert"),
                  string_entry("tokenizer.ggml.pre", PRE_NAME_BY_HASH.get(digest, "default")),
                  Entry("tokenizer.ggml.tokens", GgufValue.strings(list(spec.vocab.pieces))),
                  Entry("tokenizer.ggml.token_type", GgufValue.numbers(ValueType.INT32, spec.vocab.types))]
               + special_id_entries({"bos": bos, "unk": model.vocab[model.unk_token], "sep": sep}))
    # Parity: llama_vocab::impl::load: lowercase defaults to true, strip_accents to lowercase,
    # add_space_prefix to false for "bert".
    if not lowercase:
        entries.append(bool_entry("tokenizer.ggml.normalizer.lowercase", False))
    if strip_accents != lowercase:
        entries.append(bool_entry("tokenizer.ggml.normalizer.strip_accents", strip_accents))
    if add_space_prefix:
        entries.append(bool_entry("tokenizer.ggml.add_space_prefix", True))
    return entries if rebuilds_json(spec, entries, hf_spec_from_wordpiece_gguf) else None


def _bert_normalizer(normalizer) -> c.BertNormalizer | None:
    """The one BertNormalizer step of hf_from_gguf_wordpiece's normalizer sequence."""
    if not isinstance(normalizer, c.NormalizerSequence):
        return None
    found = [n for n in normalizer.normalizers if isinstance(n, c.BertNormalizer)]
    return found[0] if len(found) == 1 else None
