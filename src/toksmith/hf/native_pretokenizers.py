"""tokenizer.json pre-tokenizers -> native `PreTokenizer` stages.

One builder per component type of `toksmith.hf.components`; a type without a native
stage yet is refused by name (`UnsupportedModelError`), never run approximately.

>>> build_pretokenizer(hf, None, "$.pre_tokenizer") is None     # doctest: +SKIP
True
"""
from __future__ import annotations

from typing import Callable

from toksmith._core.bert_pretokenizers import HfBertPreTokenizer, HfPunctuation, HfRunsPreTokenizer
from toksmith._core.pretok_metaspace import PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER, MetaspacePreTokenizer
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


def _simple(hf: c.HfTokenizerSpec, component: c.PreTokenizer, path: str) -> PreTokenizer:
    """The pre-tokenizers built from their fields alone (toksmith._core.hf_pretokenizers)."""
    from toksmith._core import hf_pretokenizers as p
    if isinstance(component, c.Digits):
        return p.HfDigits(component.individual_digits)
    if isinstance(component, c.CharDelimiterSplit):
        return p.HfCharDelimiterSplit(component.delimiter)
    if isinstance(component, c.FixedLength):
        return p.HfFixedLength(component.length)
    return p.HfUnicodeScripts()


def byte_level_pretokenizer(pre: c.ByteLevel, *, map_bytes: bool = True) -> PreTokenizer:
    """ByteLevel (pre_tokenizers/byte_level.rs): add_prefix_space, GPT-2's regex (as
    Oniguruma matches it: gpt2_split_stage), the byte<->unicode map (`map_bytes`: False for
    a byte-level model that maps its vocabulary instead). trim_offsets changes offsets
    only, never ids."""
    from toksmith._core.hf_pretokenizers import HfByteLevel
    splitter = gpt2_split_stage() if pre.use_regex else None
    return HfByteLevel(add_prefix_space=pre.add_prefix_space, splitter=splitter, map_bytes=map_bytes)


_PREPEND_SCHEMES = {c.PrependScheme.ALWAYS: PREPEND_ALWAYS, c.PrependScheme.FIRST: PREPEND_FIRST,
                    c.PrependScheme.NEVER: PREPEND_NEVER}


def _metaspace(hf: c.HfTokenizerSpec, component: c.Metaspace, path: str) -> PreTokenizer:
    # Parity: tokenizers pre_tokenizers/metaspace.rs (legacy add_prefix_space is mapped by the reader).
    return MetaspacePreTokenizer(component.replacement, _PREPEND_SCHEMES[component.prepend_scheme],
                                 component.split)
# Parity: tokenizers SplitDelimiterBehavior -> the behavior codes of HfSplit and HfPunctuation.
SPLIT_BEHAVIORS = {
    c.SplitBehavior.REMOVED: hf_regex_stages.SPLIT_REMOVED,
    c.SplitBehavior.ISOLATED: hf_regex_stages.SPLIT_ISOLATED,
    c.SplitBehavior.MERGED_WITH_PREVIOUS: hf_regex_stages.SPLIT_MERGED_WITH_PREVIOUS,
    c.SplitBehavior.MERGED_WITH_NEXT: hf_regex_stages.SPLIT_MERGED_WITH_NEXT,
    c.SplitBehavior.CONTIGUOUS: hf_regex_stages.SPLIT_CONTIGUOUS,
}


def split_stage(hf: c.HfTokenizerSpec, split: c.Split, path: str) -> PreTokenizer:
    """Parity: tokenizers pre_tokenizers/split.rs (any pattern Oniguruma runs that the
    linear-time matcher can run exactly; the others are refused by JSON path). The
    patterns of real byte-level files (GPT-2's, Llama 3's, Qwen 2's, o200k's), Isolated and
    not inverted, run on a hand-written splitter with Oniguruma's classes."""
    from toksmith.hf.split_patterns import oniguruma_splitter
    if (isinstance(split.pattern, c.RegexPattern) and split.behavior == c.SplitBehavior.ISOLATED
            and not split.invert):
        splitter = oniguruma_splitter(split.pattern.regex)
        if splitter is not None:
            return splitter
    return HfSplit(native_pattern(hf, split.pattern, f"{path}.pattern"), SPLIT_BEHAVIORS[split.behavior],
                   split.invert)


def gpt2_split_stage() -> PreTokenizer:
    """Parity: tokenizers pre_tokenizers/byte_level.rs ByteLevel with use_regex: GPT-2's
    regex on Oniguruma, each match and each gap a pre-token (llama.cpp's GPT-2 splitter
    reading Oniguruma's classes)."""
    from toksmith._core.pretok_llama import HF_GPT2_REGEX, LlamaSplitter
    return LlamaSplitter([HF_GPT2_REGEX], oniguruma=True)


# type of component -> builder(hf, component, json_path) -> PreTokenizer
PRETOKENIZER_BUILDERS: dict[type, Callable[..., PreTokenizer | None]] = {
    c.PreTokenizerSequence: _sequence,
    c.BertPreTokenizer: lambda hf, p, path: HfBertPreTokenizer(),
    c.Whitespace: lambda hf, p, path: HfRunsPreTokenizer.whitespace(),
    c.WhitespaceSplit: lambda hf, p, path: HfRunsPreTokenizer.whitespace_split(),
    c.Punctuation: lambda hf, p, path: HfPunctuation(SPLIT_BEHAVIORS[p.behavior]),
    c.Digits: _simple,
    c.CharDelimiterSplit: _simple,
    c.FixedLength: _simple,
    c.UnicodeScripts: _simple,
    c.ByteLevel: lambda hf, pre, path: byte_level_pretokenizer(pre),
    c.Metaspace: _metaspace,
    c.Split: split_stage,
}
