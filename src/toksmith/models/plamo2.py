"""Compile a PLaMo-2 `TokenizerSpec` (GGUF tokenizer.ggml.model "plamo2") into llama.cpp's
pipeline: special tokens split out, then each raw-text fragment through the suffix-table DP
(_core/plamo2.pyx); no normalizer, no pre-tokenizer, never a BOS or EOS.

>>> tok = toksmith.load("plamo-2-1b.gguf")     # doctest: +SKIP  (calls build_plamo2)
"""
from __future__ import annotations

import dataclasses

from toksmith._core.detokenizer import LlamaCppDecoder, Render
from toksmith._core.engine import Engine
from toksmith._core.plamo2 import Plamo2
from toksmith.errors import UnsupportedFeatureError
from toksmith.models.common import bad_data_names_file, build_engine, id_or_minus_one
from toksmith.special_tokens import TokenAttr, attributes_from_types
from toksmith.spec import ReferenceRules, TokenizerSpec

HEX_DIGITS = b"0123456789abcdefABCDEF"


def build_plamo2(spec: TokenizerSpec) -> Engine:
    if spec.rules is not ReferenceRules.LLAMA_CPP:
        raise UnsupportedFeatureError(f"{spec.source}: a PLaMo-2 vocabulary has llama.cpp's rules only; "
                                      f"use rules='llama.cpp' (or none)")
    vocab = spec.vocab
    with bad_data_names_file(spec.source):
        model = Plamo2(list(vocab.pieces), vocab.types, list(vocab.scores))
    # Parity: llama_tokenize, case LLAMA_VOCAB_TYPE_PLAMO2: no BOS or EOS even with add_special.
    return build_engine(dataclasses.replace(spec, add_bos=False, add_eos=False), normalizer=None,
                        pretokenizer=None, model=model, decoder=build_plamo2_decoder(spec))


def build_plamo2_decoder(spec: TokenizerSpec) -> LlamaCppDecoder:
    """Parity: llama_detokenize / token_to_piece, case LLAMA_VOCAB_TYPE_PLAMO2: CONTROL and
    UNKNOWN tokens print their text only with unparse_special; a BYTE token with a
    well-formed "<0xXX>" text prints that byte; every other token its text as stored."""
    vocab = spec.vocab
    attrs = spec.token_attributes or attributes_from_types(vocab.types)
    special, byte = int(TokenAttr.CONTROL | TokenAttr.UNKNOWN), int(TokenAttr.BYTE)
    renders = bytearray(len(attrs))
    byte_values = [-1] * len(attrs)
    for i, attr in enumerate(attrs):
        if attr & special:
            renders[i] = Render.RENDER_SPECIAL
        elif attr & byte and _is_byte_text(vocab.pieces[i]):
            renders[i] = Render.RENDER_BYTE
            byte_values[i] = int(vocab.pieces[i][3:5], 16)
        else:
            renders[i] = Render.RENDER_TEXT
    return LlamaCppDecoder.build(
        vocab.pieces, bytes(renders), byte_values, add_space_prefix=spec.decoder.add_dummy_prefix,
        add_bos=spec.add_bos, add_eos=spec.add_eos, bos_id=id_or_minus_one(vocab.special.bos),
        eos_id=id_or_minus_one(vocab.special.eos))


def _is_byte_text(text: bytes) -> bool:
    """Parity: token_to_piece: length 6, "<0x", two isxdigit characters, ">"."""
    return (len(text) == 6 and text.startswith(b"<0x") and text.endswith(b">")
            and text[3] in HEX_DIGITS and text[4] in HEX_DIGITS)
