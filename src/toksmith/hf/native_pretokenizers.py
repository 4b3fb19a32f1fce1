"""tokenizer.json pre-tokenizers -> native `PreTokenizer` stages.

One builder per component type of `toksmith.hf.components`; a type without a native
stage yet is refused by name (`UnsupportedModelError`), never run approximately.

>>> build_pretokenizer(hf, None, "$.pre_tokenizer") is None     # doctest: +SKIP
True
"""
from __future__ import annotations

from typing import Callable

from toksmith._core import hf_regex_stages
from toksmith._core.hf_regex_stages import HfSplit
from toksmith._core.pretokenizer import PreTokenizer
from toksmith._core.stage_sequences import PreTokenizerSequence
from toksmith.hf import components as c
from toksmith.hf.native_regex import native_pattern


def build_pretokenizer(hf: c.HfTokenizerSpec, component: c.PreTokenizer | None,
                       path: str) -> PreTokenizer | None:
    """The native stage of `component` (found at JSON `path`), None for no pre-tokenizer."""
    if component is None:
        return None
    builder = PRETOKENIZER_BUILDERS.get(type(component))
    if builder is None:
        from toksmith.hf.pipeline import unsupported
        raise unsupported(hf, path, component, "no native pre-tokenizer for this type yet")
    return builder(hf, component, path)


def _sequence(hf: c.HfTokenizerSpec, seq: c.PreTokenizerSequence, path: str) -> PreTokenizer | None:
    members = [build_pretokenizer(hf, m, f"{path}.pretokenizers[{i}]") for i, m in enumerate(seq.pretokenizers)]
    members = [m for m in members if m is not None]
    if not members:
        return None
    return members[0] if len(members) == 1 else PreTokenizerSequence(members)


# Parity: tokenizers SplitDelimiterBehavior -> HfSplit's behavior codes.
SPLIT_BEHAVIORS = {
    c.SplitBehavior.REMOVED: hf_regex_stages.SPLIT_REMOVED,
    c.SplitBehavior.ISOLATED: hf_regex_stages.SPLIT_ISOLATED,
    c.SplitBehavior.MERGED_WITH_PREVIOUS: hf_regex_stages.SPLIT_MERGED_WITH_PREVIOUS,
    c.SplitBehavior.MERGED_WITH_NEXT: hf_regex_stages.SPLIT_MERGED_WITH_NEXT,
    c.SplitBehavior.CONTIGUOUS: hf_regex_stages.SPLIT_CONTIGUOUS,
}


def split_stage(hf: c.HfTokenizerSpec, split: c.Split, path: str) -> HfSplit:
    """Parity: tokenizers pre_tokenizers/split.rs (any pattern Oniguruma runs that the
    linear-time matcher can run exactly; the others are refused by JSON path)."""
    return HfSplit(native_pattern(hf, split.pattern, f"{path}.pattern"), SPLIT_BEHAVIORS[split.behavior],
                   split.invert)


def gpt2_split_stage() -> HfSplit:
    """Parity: tokenizers pre_tokenizers/byte_level.rs ByteLevel with use_regex: GPT-2's
    regex on Oniguruma, each match and each gap a pre-token."""
    from toksmith.hf.native_regex import compiled_pattern
    from toksmith.hf.split_patterns import GPT2_REGEX
    return HfSplit(compiled_pattern("Regex", GPT2_REGEX), hf_regex_stages.SPLIT_ISOLATED, False)


# type of component -> builder(hf, component, json_path) -> PreTokenizer
PRETOKENIZER_BUILDERS: dict[type, Callable[..., PreTokenizer | None]] = {
    c.PreTokenizerSequence: _sequence,
    c.Split: split_stage,
}
