"""Compile an RWKV `TokenizerSpec`: a GGUF "rwkv" vocabulary (llama.cpp's rules) or RWKV's
own .txt vocabulary (the rwkv package's rules).

Both encode alike: no normalizer, no pre-tokenizer, greedy longest match over the raw
bytes (`_core.rwkv.RwkvTrie`). They differ in what a byte no token starts becomes (the
GGUF's unk token; without one, and always for the .txt, the call fails) and in decoding.

>>> tok = toksmith.load("rwkv_vocab_v20230424.txt")   # doctest: +SKIP  (calls build_rwkv)
"""
from __future__ import annotations

import dataclasses

from toksmith._core.detokenizer import LlamaCppDecoder
from toksmith._core.engine import Engine
from toksmith._core.rwkv import RwkvTrie, RwkvVocabDecoder
from toksmith.errors import UnsupportedFeatureError
from toksmith.models.common import bad_data_names_file, build_engine, id_or_minus_one, special_or_text_renders
from toksmith.special_tokens import attributes_from_types
from toksmith.spec import FileFormat, ReferenceRules, TokenizerSpec

# The rules each RWKV file format is read under (its reference).
RULES_OF_FORMAT = {FileFormat.GGUF: ReferenceRules.LLAMA_CPP, FileFormat.RWKV_VOCAB: ReferenceRules.RWKV}


def build_rwkv(spec: TokenizerSpec) -> Engine:
    rules = RULES_OF_FORMAT[spec.file_format]
    if spec.rules is not rules:
        raise UnsupportedFeatureError(f"{spec.source}: an RWKV vocabulary in a {spec.file_format.value} file "
                                      f"is read under {rules.value}'s rules only (rules={rules.value!r})")
    rwkv = spec.rwkv
    with bad_data_names_file(spec.source, "vocabulary"):
        model = RwkvTrie(rwkv.keys, rwkv.key_ids, unk_id=id_or_minus_one(spec.vocab.special.unk),
                         n_pieces=len(spec.vocab))
    if spec.file_format is FileFormat.GGUF:
        decoder = _llama_cpp_decoder(spec)
    else:
        decoder = RwkvVocabDecoder.build(rwkv.token_bytes, rwkv.present)
    # Parity: llama_vocab::impl::tokenize_impl, LLAMA_VOCAB_TYPE_RWKV: no BOS or EOS is
    # added, even with add_special and the file's add_bos_token/add_eos_token true (those
    # still count in llama_detokenize, which the decoder has them for).
    return build_engine(dataclasses.replace(spec, add_bos=False, add_eos=False), normalizer=None,
                        pretokenizer=None, model=model, decoder=decoder)


def _llama_cpp_decoder(spec: TokenizerSpec) -> LlamaCppDecoder:
    """Parity: llama_detokenize for RWKV vocabularies: token_to_piece gives every token's
    unescaped bytes whatever its type (its cache, built with special=True), but nothing for
    CONTROL/UNKNOWN tokens without unparse_special; lstrip (add_space_prefix) drops one
    leading space of the first token; remove_special drops a leading BOS and trailing EOS
    when add_bos/add_eos say the model adds them; no clean_spaces."""
    renders = special_or_text_renders(spec.token_attributes or attributes_from_types(spec.vocab.types))
    special = spec.vocab.special
    pieces = spec.rwkv.token_bytes
    return LlamaCppDecoder.build(pieces, renders, [-1] * len(pieces),
                                 add_space_prefix=spec.rwkv.add_space_prefix, add_bos=spec.add_bos,
                                 add_eos=spec.add_eos, bos_id=id_or_minus_one(special.bos),
                                 eos_id=id_or_minus_one(special.eos), clean_spaces=False)
