"""GGUF "bert" vocabularies: llama.cpp's WPM tokenizer (BERT, BGE, MiniLM, nomic-embed v1, jina).

llama.cpp's converter stores a BERT vocab.txt with a word-start piece spelled "▁" + text and
a "##" continuation spelled without its "##"; llama.cpp segments "▁" + word greedily,
longest token first, over that vocabulary (models/llama_wordpiece.py builds the stages).

>>> spec = toksmith.load("ggml-vocab-bert-bge.gguf").spec      # doctest: +SKIP
>>> spec.algorithm, spec.wordpiece.lowercase
(<Algorithm.WORDPIECE: 'wordpiece'>, True)
"""
from __future__ import annotations

from toksmith.errors import ModelFormatError
from toksmith.formats.gguf import (_check_key_types, _flag, _special_ids, _token_texts, end_of_generation_ids,
                                   gguf_file_fields, ids_by_text, token_types)
from toksmith.formats.llama_cpp_attributes import token_attributes
from toksmith.spec import (Algorithm, FileFormat, LlamaWordPieceOptions, ReferenceRules,
                           TokenizerSpec)
from toksmith.vocab import SpecialIds, TokenType, Vocab

# Parity: llama_vocab::impl::load, tokenizer_model == "bert": the default special ids.
WPM_DEFAULT_SPECIAL = {"bos": 101, "eos": None, "unk": 100, "sep": 102, "pad": 0, "mask": 103}


def read_wordpiece_vocabulary(meta: dict[str, object], value_types: dict[str, int], source: str,
                              payload: bytes) -> TokenizerSpec:
    """The WPM tokenizer described by GGUF metadata (`value_types`: GGUF type of each key)."""
    tokens = _token_texts(meta, source)
    n = len(tokens)
    types = token_types(meta, n, source)
    by_text = ids_by_text(tokens, source)
    if TokenType.BYTE in types:
        # Parity: llama_vocab::impl::token_to_byte aborts the process for a WPM vocabulary.
        at = types.index(TokenType.BYTE)
        raise ModelFormatError(source, f"token {at} {tokens[at]!r} has type BYTE: a WPM (bert) vocabulary "
                                       f"has no byte tokens (llama.cpp aborts when it decodes one)")
    _check_key_types(meta, value_types, source)
    special = _special_ids(meta, value_types, n, WPM_DEFAULT_SPECIAL, source)
    for role, what in (("bos", "CLS (tokenizer.ggml.bos_token_id)"), ("sep", "SEP (tokenizer.ggml.seperator_token_id)")):
        if special[role] is None:
            # Parity: llama_vocab::impl::tokenize asserts both ids with add_special (the process aborts).
            raise ModelFormatError(source, f"the vocabulary has no {what} token, which llama.cpp adds to every "
                                           f"text encoded with add_special (and aborts without)")
    lowercase = _flag(meta, "tokenizer.ggml.normalizer.lowercase", True, source)
    options = LlamaWordPieceOptions(
        lowercase=lowercase,
        # Parity: llama_vocab::impl::load: strip_accents defaults to lowercase.
        strip_accents=_flag(meta, "tokenizer.ggml.normalizer.strip_accents", lowercase, source),
        add_space_prefix=_flag(meta, "tokenizer.ggml.add_space_prefix", False, source))
    end_ids = end_of_generation_ids(meta, special["eos"], n)
    return TokenizerSpec(
        source=source, file_format=FileFormat.GGUF, algorithm=Algorithm.WORDPIECE,
        rules=ReferenceRules.LLAMA_CPP,
        vocab=Vocab(pieces=tokens, scores=[0.0] * n, types=types, special=SpecialIds(**special)),
        normalizer=None, decoder=None,
        # Parity: llama_vocab::impl::load: add_bos true, add_eos false for WPM unless the file
        # says otherwise; they decide only what decode(skip_special=True) removes, since
        # tokenize adds CLS and SEP with add_special whatever they say.
        add_bos=_flag(meta, "tokenizer.ggml.add_bos_token", True, source),
        add_eos=_flag(meta, "tokenizer.ggml.add_eos_token", False, source),
        token_attributes=tuple(token_attributes(tokens, types, meta, end_ids, by_text)),
        source_data=payload,
        file_fields=gguf_file_fields(meta, value_types),
        wordpiece=options)
