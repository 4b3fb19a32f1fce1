"""tokenizer.json normalizers -> native `Normalizer` stages.

One builder per component type of `toksmith.hf.components`; a type without a native
stage yet is refused by name (`UnsupportedModelError`), never run approximately.

>>> build_normalizer(hf, None, "$.normalizer") is None          # doctest: +SKIP
True
"""
from __future__ import annotations

from typing import Callable

from toksmith._core.hf_regex_stages import HfReplace
from toksmith._core.normalizer import Normalizer
from toksmith._core.stage_sequences import NormalizerSequence
from toksmith.hf import components as c
from toksmith.hf.native_regex import native_pattern


def build_normalizer(hf: c.HfTokenizerSpec, component: c.Normalizer | None, path: str) -> Normalizer | None:
    """The native stage of `component` (found at JSON `path`), None for no normalizer."""
    if component is None:
        return None
    builder = NORMALIZER_BUILDERS.get(type(component))
    if builder is None:
        from toksmith.hf.pipeline import unsupported
        raise unsupported(hf, path, component, "no native normalizer for this type yet")
    return builder(hf, component, path)


def _sequence(hf: c.HfTokenizerSpec, seq: c.NormalizerSequence, path: str) -> Normalizer | None:
    members = [build_normalizer(hf, m, f"{path}.normalizers[{i}]") for i, m in enumerate(seq.normalizers)]
    members = [m for m in members if m is not None]
    if not members:
        return None
    return members[0] if len(members) == 1 else NormalizerSequence(members)


def replace_stage(hf: c.HfTokenizerSpec, replace: c.Replace, path: str) -> HfReplace:
    """Parity: tokenizers normalizers/replace.rs (String or Regex pattern, every match)."""
    return HfReplace(native_pattern(hf, replace.pattern, f"{path}.pattern"),
                     replace.content.encode("utf-8", "surrogatepass"))


# type of component -> builder(hf, component, json_path) -> Normalizer
NORMALIZER_BUILDERS: dict[type, Callable[..., Normalizer | None]] = {
    c.NormalizerSequence: _sequence,
    c.Replace: replace_stage,
}
