"""A tiktoken rank file as tokenizers components, the way Hugging Face's tiktoken-derived
tokenizer.json files are made (GPT-2's, Llama 3's).

- model: BPE over GPT-2's byte<->unicode texts with the merge list derived from the ranks
  (writers/byte_level_merges.py: one merge per token tiktoken builds) and ignore_merges (a
  piece that is a token is that token, as tiktoken's encode does); the special tokens are
  in the model's vocabulary too, since tokenizers gives an added token missing from it the
  next free id whatever the file says (p50k_base's <|endoftext|> sits in a rank gap);
- pre-tokenizer: Split by the rank file's pattern, spelled for Oniguruma
  (tiktoken_sources.oniguruma_spelling), Isolated, then ByteLevel without its own regex;
- special tokens: special added tokens, matched unless encode_special_tokens;
- decoder ByteLevel; no post-processor (tiktoken adds nothing).

>>> hf = hf_spec_from_tiktoken(toksmith.load("r50k_base.tiktoken").spec)   # doctest: +SKIP
>>> hf.model.ignore_merges
True
"""
from __future__ import annotations

from toksmith.formats.tiktoken import PATTERN_REGEX
from toksmith.hf import components as c
from toksmith.spec import SplitPattern, TokenizerSpec
from toksmith.writers.byte_level_merges import merge_list_vocab
from toksmith.writers.common import cannot_write
from toksmith.writers.tiktoken_sources import oniguruma_spelling

TARGET = "a tokenizer.json"


def hf_spec_from_tiktoken(spec: TokenizerSpec) -> c.HfTokenizerSpec:
    """The tokenizers components of a rank file's tokenizer (UnsupportedConversionError when
    its pattern is not one of tiktoken's known ones, or it adds BOS/EOS)."""
    byte_level = spec.byte_level
    missing = []
    if not isinstance(byte_level.pattern, SplitPattern):
        missing.append(f"the custom pre-tokenizer regex {byte_level.pattern!r} (only tiktoken's own patterns "
                       f"are known to cut alike in tokenizers' Oniguruma)")
    if spec.add_bos or spec.add_eos:
        missing.append("a BOS/EOS rule")
    if missing:
        raise cannot_write(spec, TARGET, missing)
    merged = merge_list_vocab(byte_level.vocab, spec.source)
    vocab = {text.decode("utf-8"): i for i, text in enumerate(merged.texts) if text is not None}
    specials = {text.decode("utf-8"): i for text, i in merged.special_tokens.items()}
    vocab.update(specials)
    merges = tuple(tuple(line.decode("utf-8").split(" ", 1)) for line in merged.merges)
    model = c.BpeModel(vocab=vocab, merges=merges, ignore_merges=True)
    split = c.Split(c.RegexPattern(oniguruma_spelling(PATTERN_REGEX[byte_level.pattern])), c.SplitBehavior.ISOLATED)
    byte_map = c.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    added = tuple(c.AddedToken(id=i, content=text, special=True, normalized=False)
                  for text, i in sorted(specials.items(), key=lambda item: item[1]))
    return c.HfTokenizerSpec(source=spec.source, model=model, pre_tokenizer=c.PreTokenizerSequence((split, byte_map)),
                             decoder=byte_map, added_tokens=added)
