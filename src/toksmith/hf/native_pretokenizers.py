"""tokenizer.json pre-tokenizers -> native `PreTokenizer` stages.

One builder per component type of `toksmith.hf.components`; a type without a native
stage yet is refused by name (`UnsupportedModelError`), never run approximately.

>>> build_pretokenizer(hf, None, "$.pre_tokenizer") is None     # doctest: +SKIP
True
"""
from __future__ import annotations

from typing import Callable

from toksmith._core.pretok_metaspace import PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER, MetaspacePreTokenizer
from toksmith._core.pretokenizer import PreTokenizer
from toksmith._core.stage_sequences import PreTokenizerSequence
from toksmith.hf import components as c


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


_PREPEND_SCHEMES = {c.PrependScheme.ALWAYS: PREPEND_ALWAYS, c.PrependScheme.FIRST: PREPEND_FIRST,
                    c.PrependScheme.NEVER: PREPEND_NEVER}


def _metaspace(hf: c.HfTokenizerSpec, component: c.Metaspace, path: str) -> PreTokenizer:
    # Parity: tokenizers pre_tokenizers/metaspace.rs (legacy add_prefix_space is mapped by the reader).
    return MetaspacePreTokenizer(component.replacement, _PREPEND_SCHEMES[component.prepend_scheme],
                                 component.split)


# type of component -> builder(hf, component, json_path) -> PreTokenizer
PRETOKENIZER_BUILDERS: dict[type, Callable[..., PreTokenizer | None]] = {
    c.PreTokenizerSequence: _sequence,
    c.Metaspace: _metaspace,
}
