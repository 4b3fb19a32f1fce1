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

Cutting by the same rules is not cutting alike: llama.cpp reads its own (older) Unicode
tables, tiktoken and tokenizers Unicode 16's, so `\\p{L}` etc. are different sets
(class_tables). A GGUF's regexes are written for tokenizers with each class spelled as
llama.cpp's set (exact); the routes into a GGUF, and from a GGUF into a rank file (which
carries no pattern), are exact only where the classes they read are the same sets:
`unicode_table_differences` names the ones that are not.

>>> pattern_of_llama_cpp_pre("gpt-2")
<SplitPattern.R50K: 'r50k'>
>>> pattern_of_llama_cpp_pre("dbrx") is None
True
"""
from __future__ import annotations

from toksmith.hf import components as c
from toksmith.writers.class_tables import Reference, llama_cpp_class_differences, oniguruma_regex_for_llama_cpp
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
# keeps that comparison; the fixture GGUFs' types also in test_convert_gguf_to_tokenizer_json.py),
# and, with each class spelled as llama.cpp's set (class_tables.oniguruma_regex_for_llama_cpp),
# every probe on the code points where the Unicode tables differ (test_convert_unicode_tables.py).
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
    return _split_regexes(hf_pre_tokenizer, pre.regexes) is not None


def _split_regexes(hf_pre_tokenizer: object, regexes: tuple[str, ...]) -> tuple[str, ...] | None:
    """The Split regexes of `hf_pre_tokenizer` when it is llama.cpp's `regexes` as Split steps
    before a regex-less ByteLevel, spelled as they are or as hf_from_gguf writes them; else None."""
    if not isinstance(hf_pre_tokenizer, c.PreTokenizerSequence):
        return None
    *splits, last = hf_pre_tokenizer.pretokenizers
    if not (isinstance(last, c.ByteLevel) and not last.use_regex and not last.add_prefix_space
            and len(splits) == len(regexes)
            and all(isinstance(s, c.Split) and isinstance(s.pattern, c.RegexPattern)
                    and s.behavior is c.SplitBehavior.ISOLATED and not s.invert for s in splits)):
        return None
    written = tuple(s.pattern.regex for s in splits)
    if all(w in (regex, oniguruma_regex_for_llama_cpp(regex)) for w, regex in zip(written, regexes)):
        return written
    return None


def unicode_table_differences(pre_name: str, source: Reference, hf_pre_tokenizer: object = None) -> list[str]:
    """Where `source`'s reader (tokenizers' Oniguruma or tiktoken) and llama.cpp's splitter
    `pre_name`, cutting by the same rules, still cut some text otherwise because their Unicode
    tables put code points in different classes; one line per differing class, [] if none.
    A tokenizer.json whose Split regexes spell llama.cpp's classes (hf_from_gguf) has none.
    """
    pre = PRE_NAMES[pre_name]
    if hf_pre_tokenizer is not None:
        written = _split_regexes(hf_pre_tokenizer, pre.regexes)
        if written is not None and written == tuple(oniguruma_regex_for_llama_cpp(r) for r in pre.regexes):
            return []
    return [f"{line} (llama.cpp's {pre_name!r} splitter reads its own)"
            for line in llama_cpp_class_differences(pre.regexes, source)]
