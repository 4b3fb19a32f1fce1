"""Compile a GGUF "bert" vocabulary: llama.cpp's WPM tokenizer.

Parity: llama-vocab.cpp llm_tokenizer_wpm_session. Where it agrees with HF's WordPiece the
stage is the same compiled `WordPiece`; each difference is a component of its own:

- normalizer `LlamaWpmNormalizer`: llama.cpp's one-to-one "NFD", its \\p{C} and accent
  drops and unicode_tolower (HF's BertNormalizer differs on all three);
- pre-tokenizer `LlamaWpmPreTokenizer`: whitespace and punctuation split;
- model `WordPiece` with the phantom space "▁" in front of each word's first lookup (the
  converted vocabulary spells word starts with it), no continuation prefix (a continuation
  is looked up in the whole vocabulary, as llama.cpp does) and no max_input_chars_per_word
  (llama.cpp has none);
- post-processor: CLS and SEP around the text with add_special (llama_vocab::impl::tokenize);
- decoder `LlamaCppDecoder`: token_to_piece as for SPM (▁ becomes a space) and
  llama_detokenize's clean_spaces passes.

>>> tok = toksmith.load("ggml-vocab-bert-bge.gguf")      # doctest: +SKIP  (calls build_llama_wordpiece)
>>> tok.encode("Hello world")
[101, 7592, 2088, 102]
"""
from __future__ import annotations

import sys

from toksmith._core.detokenizer import LlamaCppDecoder
from toksmith._core.engine import Engine
from toksmith._core.llama_wpm import LlamaWpmNormalizer, LlamaWpmPreTokenizer
from toksmith._core.postprocessor import BosEos
from toksmith._core.wordpiece import WordPiece
from toksmith.errors import UnsupportedFeatureError
from toksmith.models.common import bad_data_names_file, build_engine, id_or_minus_one
from toksmith.models.sentencepiece_family import render_of_attribute
from toksmith.special_tokens import attributes_from_types
from toksmith.spec import ReferenceRules, TokenizerSpec

PHANTOM_SPACE = "\u2581".encode()


def build_llama_wordpiece(spec: TokenizerSpec) -> Engine:
    if spec.rules is not ReferenceRules.LLAMA_CPP:
        raise UnsupportedFeatureError(f"{spec.source}: a GGUF bert (WPM) vocabulary tokenizes by llama.cpp's "
                                      f"rules only; use rules='llama.cpp' (or none)")
    options = spec.wordpiece
    vocab = spec.vocab
    pieces = list(vocab.pieces)
    special = vocab.special
    with bad_data_names_file(spec.source):
        # Parity: llm_tokenizer_wpm_session::tokenize: a word none of whose positions
        # matches is the unknown token (with no unknown id, encode refuses such a word,
        # where llama.cpp would emit the id -1).
        # Parity: llm_tokenizer_wpm_session::tokenize: "prepend phantom space" to each word.
        model = WordPiece(pieces, list(range(len(pieces))), unk_id=id_or_minus_one(special.unk), prefix=b"",
                          max_input_chars_per_word=sys.maxsize, word_prefix=PHANTOM_SPACE)
    attrs = spec.token_attributes or attributes_from_types(vocab.types)
    renders = {a: render_of_attribute(a) for a in set(attrs)}
    decoder = LlamaCppDecoder.build(
        pieces, bytes(map(renders.__getitem__, attrs)), [-1] * len(pieces),
        add_space_prefix=options.add_space_prefix, add_bos=spec.add_bos, add_eos=spec.add_eos,
        bos_id=id_or_minus_one(special.bos), eos_id=id_or_minus_one(special.eos),
        # Parity: llama_vocab::impl::load sets clean_spaces for WPM.
        clean_spaces=True)
    return build_engine(spec, normalizer=LlamaWpmNormalizer(lowercase=options.lowercase,
                                                            strip_accents=options.strip_accents),
                        pretokenizer=LlamaWpmPreTokenizer(), model=model, decoder=decoder,
                        postprocessor=BosEos(special.bos, special.sep))
