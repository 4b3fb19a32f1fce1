"""The native splitter of a byte-level tokenizer.json's pre-tokenizer.

Real files split with GPT-2's regex (a ByteLevel pre-tokenizer with use_regex) or with
Split pre-tokenizers by a family's regex followed by ByteLevel without regex (Llama 3,
Qwen 2, DeepSeek's three Splits, ...). tokenizers runs all of them on Oniguruma, so they
run here on the Oniguruma-exact matcher (toksmith.hf.native_regex): the hand-written
splitters of llama.cpp's and tiktoken's families differ from Oniguruma on characters of
other Unicode versions, and on `(?i)` matching U+017F (ſ) as "s" (Llama 3's `(?i:'s|...)`).

>>> byte_level_splitter(hf)                                     # doctest: +SKIP
<toksmith._core.hf_regex_stages.HfSplit object at ...>
"""
from __future__ import annotations

from toksmith.hf import components as c

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# Parity: tokenizers pre_tokenizers/byte_level.rs RE (ByteLevel with use_regex).
GPT2_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def byte_level_splitter(hf: c.HfTokenizerSpec):
    """The native pre-tokenizer stage of a byte-level file's pre-tokenizer (None: each
    fragment is one pre-token), or UnsupportedModelError naming what has none yet."""
    from toksmith._core.stage_sequences import PreTokenizerSequence
    from toksmith.hf.native_pretokenizers import gpt2_split_stage, split_stage
    from toksmith.hf.pipeline import unsupported
    pre = hf.pre_tokenizer
    if isinstance(pre, c.ByteLevel):
        if pre.add_prefix_space:
            # RoBERTa: a ' ' before each piece that lacks one, then the regex; the bytes stay
            # raw (ByteLevelBpe maps its vocabulary instead).
            from toksmith.hf.native_pretokenizers import byte_level_pretokenizer
            return byte_level_pretokenizer(pre, map_bytes=False)
        return gpt2_split_stage() if pre.use_regex else None
    if isinstance(pre, c.PreTokenizerSequence) and pre.pretokenizers:
        *splits, last = pre.pretokenizers
        if (isinstance(last, c.ByteLevel) and not last.add_prefix_space
                and all(isinstance(split, c.Split) for split in splits)):
            stages = [split_stage(hf, split, f"$.pre_tokenizer.pretokenizers[{i}]")
                      for i, split in enumerate(splits)]
            if last.use_regex:
                stages.append(gpt2_split_stage())
            if not stages:
                return None
            return stages[0] if len(stages) == 1 else PreTokenizerSequence(stages)
    raise unsupported(hf, "$.pre_tokenizer", pre, "no native splitter for this pre-tokenizer yet")
