"""tokenizer.json normalizers -> native `Normalizer` stages.

One builder per component type of `toksmith.hf.components`; a type without a native
stage yet is refused by name (`UnsupportedModelError`), never run approximately.

>>> build_normalizer(hf, None, "$.normalizer") is None          # doctest: +SKIP
True
"""
from __future__ import annotations

import re
from typing import Callable

from toksmith._core.hf_precompiled import HfPrecompiledNormalizer
from toksmith._core.hf_regex_stages import HfReplace
from toksmith._core.hf_replace import LiteralReplace
from toksmith._core.unicode_normalizers import HfCharNormalizer, HfUnicodeNormalizer
from toksmith._core.normalizer import Normalizer
from toksmith._core.stage_sequences import NormalizerSequence
from toksmith.hf import components as c
from toksmith.hf.native_regex import native_pattern
from toksmith.models.common import bad_data_names_file


def build_normalizer(hf: c.HfTokenizerSpec, component: c.Normalizer | None, path: str) -> Normalizer | None:
    """The native stage of `component` (found at JSON `path`), None for no normalizer."""
    if component is None:
        return None
    builder = NORMALIZER_BUILDERS.get(type(component))
    if builder is None:
        from toksmith.hf.pipeline import unsupported
        raise unsupported(hf, path, component, "no native normalizer for this type yet")
    return builder(hf, component, path)


def build_root_normalizer(hf: c.HfTokenizerSpec) -> Normalizer | None:
    """The native stage of the file's normalizer; with Metaspace's prepend_scheme "first" in
    the pipeline, one that follows which output characters stay aligned with the input's
    first character (a NormalizerSequence with track_start, one member or several)."""
    normalizer = build_normalizer(hf, hf.normalizer, "$.normalizer")
    if (normalizer is not None and not isinstance(normalizer, NormalizerSequence)
            and _has_metaspace_first(hf.pre_tokenizer)):
        normalizer = NormalizerSequence([normalizer], track_start=True)
    return normalizer


def _sequence(hf: c.HfTokenizerSpec, seq: c.NormalizerSequence, path: str) -> Normalizer | None:
    """The members in order (nested sequences flattened). With Metaspace's prepend_scheme
    "first" in the pipeline the sequence follows which output characters are aligned with
    the input's first character through every member (NormalizerSequence track_start)."""
    members = []
    for i, m in enumerate(seq.normalizers):
        built = build_normalizer(hf, m, f"{path}.normalizers[{i}]")
        if isinstance(built, NormalizerSequence):
            members.extend(built.members)
        elif built is not None:
            members.append(built)
    if not members:
        return None
    if len(members) == 1:
        return members[0]
    return NormalizerSequence(members, track_start=_has_metaspace_first(hf.pre_tokenizer))


def _has_metaspace_first(component: c.PreTokenizer | None) -> bool:
    if isinstance(component, c.PreTokenizerSequence):
        return any(_has_metaspace_first(p) for p in component.pretokenizers)
    return isinstance(component, c.Metaspace) and component.prepend_scheme is c.PrependScheme.FIRST


def _bert(hf: c.HfTokenizerSpec, n: c.BertNormalizer, path: str) -> Normalizer:
    # Parity: tokenizers normalizers/bert.rs (strip_accents None follows lowercase)
    return HfCharNormalizer.bert(clean_text=n.clean_text, handle_chinese_chars=n.handle_chinese_chars,
                                 strip_accents=n.strip_accents, lowercase=n.lowercase)


def _unicode_form(form: str) -> Callable[..., Normalizer]:
    return lambda hf, n, path: HfUnicodeNormalizer(form)


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


def _precompiled(hf: c.HfTokenizerSpec, component: c.Precompiled, path: str) -> Normalizer:
    # Parity: tokenizers normalizers/precompiled.rs (grapheme by grapheme, shortest key).
    with bad_data_names_file(hf.source, f"{path}.precompiled_charsmap"):
        return HfPrecompiledNormalizer(component.charsmap)


# A regex that is one literal character repeated: "c+" or "c{m,}" (c plain or escaped
# punctuation); greedy, it matches the maximal runs of c that are at least m long.
_REPEATED_CHAR = re.compile(r"(?s)(?P<char>[^\\.^$|?*+()\[\]{}]|\\[ -/:-@\[-`{-~])"
                            r"(?:(?P<plus>\+)|\{(?P<min>[1-9][0-9]{0,5}),\})")


def replace_stage(hf: c.HfTokenizerSpec, replace: c.Replace, path: str) -> Normalizer:
    """Parity: tokenizers normalizers/replace.rs (String or Regex pattern, every match).

    A non-empty literal, or one character repeated (transformers' `" {2,}"`), runs on
    LiteralReplace (a byte search, 8 bytes at a time); any other pattern on the
    Oniguruma-exact matcher (HfReplace)."""
    content = replace.content.encode("utf-8", "surrogatepass")
    pattern = replace.pattern
    if isinstance(pattern, c.StringPattern) and pattern.text:
        return LiteralReplace(pattern.text.encode("utf-8", "surrogatepass"), content, 0)
    m = _REPEATED_CHAR.fullmatch(pattern.regex) if isinstance(pattern, c.RegexPattern) else None
    if m is not None:
        return LiteralReplace(m["char"][-1].encode("utf-8", "surrogatepass"), content,
                              1 if m["plus"] else int(m["min"]))
    return HfReplace(native_pattern(hf, pattern, f"{path}.pattern"), content)


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
    c.Strip: _simple,
    c.Prepend: _simple,
    c.ByteLevelNormalizer: _simple,
    c.Nmt: _simple,
    c.Precompiled: _precompiled,
    c.Replace: replace_stage,
}
