"""The native splitter of a byte-level tokenizer.json's pre-tokenizer.

Real files split with one of a few regexes: GPT-2's (a ByteLevel pre-tokenizer with
use_regex) or a Split by a family's regex followed by ByteLevel without regex (Llama 3,
Qwen 2, ...). Those run on the native splitters llama.cpp's and tiktoken's families
already use; llama.cpp's converter copied its regexes from these same files, so a
regex text maps to a llama.cpp pre type.

>>> KNOWN_SPLIT_REGEXES[LLAMA3_REGEX]
<PreType.LLAMA3: 1>
"""
from __future__ import annotations

from toksmith.hf import components as c
from toksmith.pretokenizers.llama_cpp import PreType, regexes_for
from toksmith.pretokenizers.tiktoken_encodings import TiktokenPattern

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")

# The regex of a tokenizer.json Split (behavior Isolated, not inverted) -> the llama.cpp
# pre type whose splitter gives the same pieces.
KNOWN_SPLIT_REGEXES: dict[str, PreType] = {
    LLAMA3_REGEX: PreType.LLAMA3,
    QWEN2_REGEX: PreType.QWEN2,
}


def byte_level_splitter(hf: c.HfTokenizerSpec):
    """The native pre-tokenizer stage of a byte-level file's pre-tokenizer, or
    UnsupportedModelError naming what has none yet."""
    from toksmith.hf.pipeline import unsupported
    pre = hf.pre_tokenizer
    if isinstance(pre, c.ByteLevel):
        if pre.add_prefix_space:
            # RoBERTa: a ' ' before each piece that lacks one, then the regex; the bytes stay
            # raw (ByteLevelBpe maps its vocabulary instead).
            from toksmith.hf.native_pretokenizers import byte_level_pretokenizer
            return byte_level_pretokenizer(pre, map_bytes=False)
        if not pre.use_regex:
            return None     # each fragment is one pre-token
        # Parity: tokenizers pre_tokenizers/byte_level.rs: GPT-2's regex, the same pieces as
        # tiktoken's r50k pattern (tested against tokenizers).
        return TiktokenPattern.R50K.build_splitter()
    if isinstance(pre, c.PreTokenizerSequence):
        *splits, last = pre.pretokenizers
        if (isinstance(last, c.ByteLevel) and not last.use_regex and not last.add_prefix_space
                and len(splits) == 1 and isinstance(splits[0], c.Split)):
            split = splits[0]
            if (isinstance(split.pattern, c.RegexPattern) and split.behavior is c.SplitBehavior.ISOLATED
                    and not split.invert and split.pattern.regex in KNOWN_SPLIT_REGEXES):
                from toksmith._core.pretok_llama import LlamaSplitter
                return LlamaSplitter(regexes_for(KNOWN_SPLIT_REGEXES[split.pattern.regex]))
    raise unsupported(hf, "$.pre_tokenizer", pre, "no native splitter for this pre-tokenizer yet")
