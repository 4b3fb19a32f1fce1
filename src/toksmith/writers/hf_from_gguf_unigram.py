"""A GGUF "t5" vocabulary (llama.cpp's UGM tokenizer) as tokenizers components.

llama.cpp (llama-vocab.cpp llm_tokenizer_ugm_session) normalizes each text fragment with the
precompiled charsmap, then handles spaces (only " ", after the charsmap): with
remove_extra_whitespaces it drops leading and trailing spaces, makes every run of spaces
one and puts one space before the first word whatever add_space_prefix says; spaces are
written "\u2581" (escape_whitespaces). It then runs a Viterbi over NORMAL, USER_DEFINED and
UNUSED tokens, an unknown code point costing the lowest NORMAL score minus 10, and merges
consecutive unknowns. In tokenizers' terms:
- normalizer: Precompiled(charsmap); Replace("\\A +", ""), Replace(" {2,}", " "),
  Replace(" +\\z", "") (ASCII spaces only: Strip would take every Unicode space, and a
  trailing "\u2581" typed in the text stays); Prepend("\u2581"); Replace(" ", "\u2581");
- Unigram over every piece with llama.cpp's scores, except CONTROL and UNKNOWN pieces, which
  llama.cpp never matches but tokenizers' lattice would (a text "<s>" with parse_special off):
  they get a score below any path of single characters over their text. That moves
  tokenizers' unknown cost (lowest score minus 10) too, which changes nothing only where every
  character of every piece is a single-character piece itself: then every path has the same
  unknowns. Checked; refused otherwise;
- CONTROL/UNKNOWN as special added tokens, BOS/EOS as add_special adds them;
- decoder: Fuse, the first "\u2581" dropped (add_space_prefix: detokenize's remove_space),
  "\u2581" -> " " (llama.cpp's token_to_piece; no clean_spaces for UGM).

>>> import toksmith
>>> hf = hf_spec_from_unigram_gguf(toksmith.load("ggml-vocab-nomic-bert-moe.gguf").spec)   # doctest: +SKIP
>>> type(hf.model).__name__                                                               # doctest: +SKIP
'UnigramModel'
"""
from __future__ import annotations

from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec
from toksmith.vocab import TokenType
from toksmith.writers.common import cannot_write
from toksmith.writers.hf_from_gguf import added_tokens_of_types
from toksmith.writers.hf_from_sentencepiece import SPACE_SYMBOL, bos_eos_template

TARGET = "a tokenizer.json"
# Parity: llm_tokenizer_ugm (token_matcher holds NORMAL, USER_DEFINED and UNUSED tokens).
MATCHED = (TokenType.NORMAL, TokenType.UNUSED)
NEVER_MATCHED = (TokenType.CONTROL, TokenType.UNKNOWN)


def hf_spec_from_unigram_gguf(spec: TokenizerSpec) -> c.HfTokenizerSpec:
    """The tokenizers components of a GGUF UGM vocabulary (see the module docstring);
    UnsupportedConversionError naming what tokenizers cannot express."""
    texts = [piece.decode("utf-8") for piece in spec.vocab.pieces]
    types, scores = spec.vocab.types, spec.vocab.scores
    norm = spec.normalizer
    missing = []
    if TokenType.USER_DEFINED in types:
        missing.append("USER_DEFINED tokens in a UGM vocabulary (llama.cpp matches them inside the normalized "
                       "text, scored 0, without splitting the text; tokenizers' added tokens split it)")
    if TokenType.BYTE in types or spec.byte_fallback:
        missing.append("BYTE tokens in a UGM vocabulary (llama.cpp's UGM never produces them)")
    if not norm.escape_whitespaces:
        missing.append("a UGM vocabulary without escape_whitespaces")
    if norm.add_dummy_prefix and not norm.remove_extra_whitespaces:
        missing.append("add_space_prefix without remove_extra_whitespaces (llama.cpp puts the space after the "
                       "leading spaces and none on a text of spaces; tokenizers' Prepend does neither)")
    if spec.vocab.special.unk is None:
        missing.append("a UGM vocabulary without an unknown token")
    if len(set(texts)) != len(texts):
        missing.append("two tokens with one text (llama.cpp's token matcher keeps one of them)")
    normal = [s for s, t in zip(scores, types) if t == TokenType.NORMAL]
    floor = min(normal) if normal else 0.0
    singles = {text for text, t in zip(texts, types) if t in MATCHED and len(text) == 1}
    lacking = sorted({ch for text, t in zip(texts, types) if t in MATCHED + NEVER_MATCHED
                      for ch in text if ch not in singles})
    if lacking:
        missing.append(f"{len(lacking)} characters of tokens that are no single-character token "
                       f"({', '.join(repr(ch) for ch in lacking[:5])}): tokenizers' unknown cost follows the "
                       f"lowest score of any token, llama.cpp's the lowest NORMAL one")
    if floor >= 0.0:
        missing.append("NORMAL scores that are not all negative (the never-matched score needs them)")
    if missing:
        raise cannot_write(spec, TARGET, missing)
    vocab = tuple((text, _never_matched_score(floor, text) if t in NEVER_MATCHED else score)
                  for text, t, score in zip(texts, types, scores))
    model = c.UnigramModel(vocab=vocab, unk_id=spec.vocab.special.unk, byte_fallback=False)
    steps: list[c.Normalizer] = []
    if norm.precompiled_charsmap:
        steps.append(c.Precompiled(norm.precompiled_charsmap))
    if norm.remove_extra_whitespaces:
        # Parity: llm_tokenizer_ugm_session::normalize shall_merge_spaces: a space before every
        # run of non-space bytes, none at the end.
        steps += [c.Replace(c.RegexPattern("\\A +"), ""), c.Replace(c.RegexPattern(" {2,}"), " "),
                  c.Replace(c.RegexPattern(" +\\z"), ""), c.Prepend(" ")]
    steps.append(c.Replace(c.StringPattern(" "), SPACE_SYMBOL))
    decoders: list[c.Decoder] = [c.Fuse()]
    if norm.add_dummy_prefix:
        # Parity: llama-vocab.cpp detokenize: remove_space = add_space_prefix, for the first token
        decoders.append(c.StripDecoder(SPACE_SYMBOL, 1, 0))
    decoders.append(c.Replace(c.StringPattern(SPACE_SYMBOL), " "))
    return c.HfTokenizerSpec(source=spec.source, model=model, normalizer=c.NormalizerSequence(tuple(steps)),
                             decoder=c.DecoderSequence(tuple(decoders)),
                             added_tokens=added_tokens_of_types(texts, types, spec.token_attributes),
                             post_processor=bos_eos_template(spec, texts))


def _never_matched_score(floor: float, text: str) -> float:
    """Below any path of single-character tokens (each scored at least `floor`) over `text`."""
    return floor * (len(text) + 1)
