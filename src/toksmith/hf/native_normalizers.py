"""tokenizer.json normalizers -> native `Normalizer` stages.

One builder per component type of `toksmith.hf.components`; a type without a native
stage yet is refused by name (`UnsupportedModelError`), never run approximately.

>>> build_normalizer(hf, None, "$.normalizer") is None          # doctest: +SKIP
True
"""
from __future__ import annotations

from typing import Callable

from toksmith._core.hf_normalizers import HfCharNormalizer, HfUnicodeNormalizer
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


def _bert(hf: c.HfTokenizerSpec, n: c.BertNormalizer, path: str) -> Normalizer:
    # Parity: tokenizers normalizers/bert.rs (strip_accents None follows lowercase)
    return HfCharNormalizer.bert(clean_text=n.clean_text, handle_chinese_chars=n.handle_chinese_chars,
                                 strip_accents=n.strip_accents, lowercase=n.lowercase)


def _unicode_form(form: str) -> Callable[..., Normalizer]:
    return lambda hf, n, path: HfUnicodeNormalizer(form)


# type of component -> builder(hf, component, json_path) -> Normalizer
NORMALIZER_BUILDERS: dict[type, Callable[..., Normalizer | None]] = {
    c.NormalizerSequence: _sequence,
    c.BertNormalizer: _bert,
    c.Lowercase: lambda hf, n, path: HfCharNormalizer.lowercase_only(),
    c.StripAccents: lambda hf, n, path: HfCharNormalizer.strip_accents_only(),
    c.NFC: _unicode_form("NFC"),
    c.NFD: _unicode_form("NFD"),
    c.NFKC: _unicode_form("NFKC"),
    c.NFKD: _unicode_form("NFKD"),
}
