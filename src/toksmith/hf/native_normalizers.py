"""tokenizer.json normalizers -> native `Normalizer` stages.

One builder per component type of `toksmith.hf.components`; a type without a native
stage yet is refused by name (`UnsupportedModelError`), never run approximately.

>>> build_normalizer(hf, None, "$.normalizer") is None          # doctest: +SKIP
True
"""
from __future__ import annotations

from typing import Callable

from toksmith._core.normalizer import Normalizer
from toksmith._core.stage_sequences import NormalizerSequence
from toksmith.hf import components as c


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


def _replace(hf: c.HfTokenizerSpec, replace: c.Replace, path: str) -> Normalizer:
    if not isinstance(replace.pattern, c.StringPattern):
        from toksmith.hf.pipeline import unsupported
        raise unsupported(hf, path, replace, "no native Replace by a regex yet")
    from toksmith._core.hf_normalizers import HfStringReplace
    return HfStringReplace(replace.pattern.text, replace.content)


def _simple(hf: c.HfTokenizerSpec, component: c.Normalizer, path: str) -> Normalizer:
    """The normalizers built from their fields alone (toksmith._core.hf_normalizers)."""
    from toksmith._core import hf_normalizers as n
    if isinstance(component, c.Strip):
        return n.HfStrip(component.left, component.right)
    if isinstance(component, c.Prepend):
        return n.HfPrepend(component.prepend)
    if isinstance(component, c.ByteLevelNormalizer):
        return n.HfByteLevelNormalizer()
    return n.HfNmt()


# type of component -> builder(hf, component, json_path) -> Normalizer
NORMALIZER_BUILDERS: dict[type, Callable[..., Normalizer | None]] = {
    c.NormalizerSequence: _sequence,
    c.Strip: _simple,
    c.Prepend: _simple,
    c.ByteLevelNormalizer: _simple,
    c.Nmt: _simple,
    c.Replace: _replace,
}
