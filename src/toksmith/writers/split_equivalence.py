"""Which llama.cpp pre-tokenizers cut text exactly as a rank-file pattern does.

A converted file is written only when its reader will split text as the source's reader
did. llama.cpp names its splitters (tokenizer.ggml.pre); tiktoken and tokenizer.json carry
regexes. The pairs below are the ones the parity tests show to cut alike on every corpus
line, with a reason each regex pair is the same language:

- GPT2 ("gpt-2", ...) and r50k_base: GPT-2's regex; tiktoken's r50k text adds `\\s++$` and
  makes the last `\\s+` a `\\s`, which changes no cut.
- LLAMA3 ("llama-bpe", ...) and Meta's Llama 3 pattern: the same regex, its
  case-insensitive contractions spelled out.

Not paired, though llama.cpp's converter names them for these encodings: "dbrx" (Llama 3's
regex, which cuts " \\n " at the end of a text otherwise than cl100k_base's `\\s++$`) and
"gpt-4o" (llama.cpp's splitter cuts upper-case non-ASCII letters otherwise than tiktoken's
o200k: " FÜR" on 142 corpus lines).

And the other way, llama.cpp's regexes written for tokenizers (Split by each regex,
Isolated, then ByteLevel): for the pre types in ONIGURUMA_VERIFIED_PRE_TYPES, Oniguruma cuts
every corpus line as llama.cpp's splitter does (tests/parity/test_convert_gguf_to_tokenizer_json.py).

>>> pattern_of_llama_cpp_pre("gpt-2")
<SplitPattern.R50K: 'r50k'>
>>> pattern_of_llama_cpp_pre("dbrx") is None
True
"""
from __future__ import annotations

from toksmith.hf import components as c
from toksmith.pretokenizers.llama_cpp import PRE_NAMES, PreType
from toksmith.spec import SplitPattern

# llama.cpp pre types -> the rank-file pattern they cut as (see the module docstring).
LLAMA_CPP_PATTERNS: dict[PreType, SplitPattern] = {
    PreType.GPT2: SplitPattern.R50K,
    PreType.LLAMA3: SplitPattern.LLAMA3,
}


def pattern_of_llama_cpp_pre(name: str) -> SplitPattern | None:
    """The rank-file pattern llama.cpp's pre-tokenizer `name` cuts as; None: none is known to."""
    pre = PRE_NAMES.get(name)
    return None if pre is None else LLAMA_CPP_PATTERNS.get(pre.pre_type)

# llama.cpp pre types whose regexes, run by tokenizers' Oniguruma as Split steps, cut every
# corpus line as llama.cpp's own splitter does: measured on every distinct corpus line with
# the GPT-2 vocabulary under each pre name (tests/parity/test_convert_gguf_pre_names_to_tokenizer_json.py
# keeps that comparison; the fixture GGUFs' types also in test_convert_gguf_to_tokenizer_json.py).
# Not here, measured against llama.cpp: deepseek-llm (" \xa0\u3000 x": llama.cpp's \s differs),
# youtu (69 lines) and tiny_aya (230 lines; lookahead digit groups), kimi-k2 (8,963 lines:
# llama.cpp's own digit/Han handling), afmoe (a custom \p{AFMoE_digits} Oniguruma refuses).
ONIGURUMA_VERIFIED_PRE_TYPES = frozenset({
    PreType.BAILINGMOE, PreType.BLOOM, PreType.CHAMELEON, PreType.CHATGLM4, PreType.CODESHELL, PreType.COMMAND_R,
    PreType.DBRX, PreType.DEEPSEEK3_LLM, PreType.DEEPSEEK_CODER, PreType.DEFAULT, PreType.EXAONE, PreType.EXAONE_MOE,
    PreType.FALCON, PreType.GPT2, PreType.GPT3_FINNISH, PreType.GPT4O, PreType.GRANITE_DOCLING,
    PreType.GRANITE_EMB_MULTI, PreType.GROK_2, PreType.HUNYUAN, PreType.HUNYUAN_DENSE, PreType.HY_V4, PreType.JAIS,
    PreType.JAIS2, PreType.JOYAI_LLM, PreType.LAGUNA, PreType.LLAMA3, PreType.MELLUM2, PreType.MINERVA,
    PreType.MINICPM5, PreType.MINIMAX_M2, PreType.MPT, PreType.OLMO, PreType.PORO, PreType.QWEN2, PreType.QWEN35,
    PreType.REFACT, PreType.SEED_CODER, PreType.SMAUG, PreType.SMOLLM, PreType.SOLAR_OPEN, PreType.SPARK2_5,
    PreType.STABLELM2, PreType.STARCODER, PreType.SUPERBPE, PreType.TEKKEN, PreType.TRILLION, PreType.UFAKZEKA,
    PreType.VIKING,
})


def llama_cpp_splits_as_hf(pre_name: str, hf_pre_tokenizer: object) -> bool:
    """Whether llama.cpp's pre-tokenizer `pre_name` cuts text as a tokenizer.json's byte-level
    pre-tokenizer does: a rank-file pattern paired above, or llama.cpp's own regexes as Split
    steps before a regex-less ByteLevel, for a verified pre type."""
    from toksmith.writers.tiktoken_sources import hf_rank_pattern
    pre = PRE_NAMES.get(pre_name)
    if pre is None:
        return False
    pattern, _ = hf_rank_pattern(hf_pre_tokenizer)
    if pattern is not None and LLAMA_CPP_PATTERNS.get(pre.pre_type) is pattern:
        return True
    if pre.pre_type not in ONIGURUMA_VERIFIED_PRE_TYPES or not isinstance(hf_pre_tokenizer, c.PreTokenizerSequence):
        return False
    *splits, last = hf_pre_tokenizer.pretokenizers
    return (isinstance(last, c.ByteLevel) and not last.use_regex and not last.add_prefix_space
            and len(splits) == len(pre.regexes)
            and all(isinstance(s, c.Split) and isinstance(s.pattern, c.RegexPattern) and s.pattern.regex == regex
                    and s.behavior is c.SplitBehavior.ISOLATED and not s.invert
                    for s, regex in zip(splits, pre.regexes)))
