"""GGUF files whose tokenizer.ggml.model is "plamo2" (llama.cpp's PLaMo-2 vocab type).

The vocabulary is a list of scored pieces (raw spaces, no U+2581) and 256 BYTE tokens
"<0xXX>"; models/plamo2.py compiles it into llama.cpp's suffix-table DP. Example::

    >>> spec = read_plamo2_gguf("plamo-2-1b.gguf")   # doctest: +SKIP
    >>> spec.algorithm                                # doctest: +SKIP
    <Algorithm.PLAMO2: 'plamo2'>
"""
from __future__ import annotations

import os
from array import array

from toksmith.decoders.sentencepiece import SentencePieceDecoderSpec
from toksmith.formats.llama_cpp_attributes import token_attributes
from toksmith.spec import Algorithm, FileFormat, ReferenceRules, TokenizerSpec
from toksmith.vocab import SpecialIds, Vocab

# Parity: llama_vocab::impl::load, tokenizer_model == "plamo2": default special ids.
DEFAULT_SPECIAL = {"bos": 1, "eos": 2, "unk": 0, "pad": 3, "sep": None, "mask": None}


def read_plamo2_gguf(path: str | os.PathLike) -> TokenizerSpec:
    """Read the PLaMo-2 vocabulary of a GGUF file."""
    from toksmith.formats.gguf import _read_metadata
    return plamo2_spec_of_metadata(*_read_metadata(path), os.fspath(path))


def plamo2_spec_of_metadata(meta: dict[str, object], value_types: dict[str, int], payload: bytes,
                            source: str) -> TokenizerSpec:
    """The PLaMo-2 tokenizer described by GGUF metadata (values and GGUF types by key)."""
    from toksmith.formats.gguf import (_check_key_types, _flag, _number_array, _special_ids, _token_texts,
                                       end_of_generation_ids, gguf_file_fields, ids_by_text, token_types)
    texts = _token_texts(meta, source)
    n = len(texts)
    scores = _number_array(meta, "tokenizer.ggml.scores", n, source, default=0.0, typecodes="fi")
    if scores.typecode == "i":
        scores = array("f", scores)   # Parity: load: static_cast<float>(iscores[i])
    types = token_types(meta, n, source)
    by_text = ids_by_text(texts, source)
    special = _special_ids(meta, value_types, n, DEFAULT_SPECIAL, source)
    _check_key_types(meta, value_types, source)
    # Parity: load: a PLaMo-2 vocabulary falls in the "else" branch of the pre-type block, so
    # add_space_prefix, add_bos, add_eos and clean_spaces keep their defaults (false) unless
    # the file's keys say otherwise; tokenize adds no BOS/EOS whatever add_bos says (the
    # flags only decide what llama_detokenize drops).
    add_space_prefix = _flag(meta, "tokenizer.ggml.add_space_prefix", False, source)
    _flag(meta, "tokenizer.ggml.remove_extra_whitespaces", False, source)   # read, unused
    end_ids = end_of_generation_ids(meta, special["eos"], n)
    return TokenizerSpec(
        source=source, file_format=FileFormat.GGUF, algorithm=Algorithm.PLAMO2,
        rules=ReferenceRules.LLAMA_CPP,
        vocab=Vocab(pieces=texts, scores=list(scores), types=types, special=SpecialIds(**special)),
        normalizer=None,
        # llama_detokenize strips the first piece's leading space when add_space_prefix is set
        decoder=SentencePieceDecoderSpec(add_dummy_prefix=add_space_prefix, remove_extra_whitespaces=False),
        byte_fallback=True,   # a character no piece covers becomes the byte tokens of its UTF-8
        add_bos=_flag(meta, "tokenizer.ggml.add_bos_token", False, source),
        add_eos=_flag(meta, "tokenizer.ggml.add_eos_token", False, source),
        token_attributes=tuple(token_attributes(texts, types, meta, end_ids, by_text)),
        source_data=payload,
        file_fields=gguf_file_fields(meta, value_types),
    )
