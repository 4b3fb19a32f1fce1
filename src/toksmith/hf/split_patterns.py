"""The native splitter of a byte-level tokenizer.json's pre-tokenizer.

Real files split with GPT-2's regex (a ByteLevel pre-tokenizer with use_regex) or with
Split pre-tokenizers by a family's regex followed by ByteLevel without regex (Llama 3,
Qwen 2, DeepSeek's three Splits, ...). tokenizers runs all of them on Oniguruma, so they
run exactly as Oniguruma runs them: GPT-2's, Llama 3's (cl100k's), Qwen 2's and o200k's
patterns (an Isolated Split, not inverted) on hand-written splitters reading Oniguruma's
classes (oniguruma_splitter: llama.cpp's and tiktoken's own tables differ from Oniguruma's
on characters of other Unicode versions, and `(?i)` matches U+017F (ſ) as "s"), any other
pattern on the Oniguruma-exact matcher (toksmith.hf.native_regex).

>>> byte_level_splitter(hf)                                     # doctest: +SKIP
<toksmith._core.pretok_llama.LlamaSplitter object at ...>
"""
from __future__ import annotations

from toksmith.hf import components as c

# Parity: tokenizers pre_tokenizers/byte_level.rs RE (ByteLevel with use_regex) is GPT2_REGEX.
from toksmith._core.pretok_llama import HF_GPT2_REGEX as GPT2_REGEX  # noqa: E402
from toksmith._core.pretok_llama import HF_LLAMA3_REGEX as LLAMA3_REGEX  # noqa: E402
from toksmith._core.pretok_llama import HF_QWEN2_REGEX as QWEN2_REGEX  # noqa: E402

# o200k_base's pattern as tokenizer.json files write it (GPT-4o's).
O200K_REGEX = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+"])


def oniguruma_splitter(regex: str):
    """The hand-written splitter that cuts text as tokenizers' Oniguruma cuts it with
    `regex` (an Isolated, not inverted Split), or None when `regex` has none: GPT-2's,
    Llama 3's (cl100k's) and Qwen 2's on llama.cpp's splitters, o200k's on tiktoken's,
    each reading Oniguruma's classes (toksmith.hf.onig_unicode.splitter_flag_table).

    >>> oniguruma_splitter(LLAMA3_REGEX).split_text("it's 12345".encode())
    [b'it', b"'s", b' ', b'123', b'45']
    """
    from toksmith._core.pretok_llama import ONIGURUMA_STAGES, LlamaSplitter
    if regex in ONIGURUMA_STAGES:
        return LlamaSplitter([regex], oniguruma=True)
    if regex == O200K_REGEX:
        from toksmith._core.pretok_tiktoken import O200kSplitter
        return O200kSplitter(oniguruma=True)
    return None


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
