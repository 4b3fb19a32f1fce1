"""Whether a tokenizer.json is toksmith's own writing of a GGUF: the candidate GGUF's
key/values, read back by toksmith's GGUF reader and written as tokenizers components again,
give the json's components exactly.

Used by the GGUF WPM / UGM -> tokenizer.json -> GGUF round trip
(gguf_from_own_wordpiece_json.py, gguf_from_own_unigram_json.py): exact by construction,
since the check runs on the very key/values that would be written.

>>> rebuilds_json(spec, entries, hf_spec_from_wordpiece_gguf)   # doctest: +SKIP
True
"""
from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Callable

from toksmith.errors import ModelFormatError, UnsupportedConversionError
from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec
from toksmith.writers.gguf_binary import Entry, encode_gguf


def rebuilds_json(spec: TokenizerSpec, entries: list[Entry],
                  rebuild: Callable[[TokenizerSpec], c.HfTokenizerSpec]) -> bool:
    """True when `rebuild` (a GGUF -> tokenizers components writer) of the GGUF holding
    `entries` gives the components of the tokenizer.json `spec` was read from."""
    from toksmith.formats.gguf import parse_gguf
    try:
        candidate = parse_gguf(encode_gguf(entries), spec.source)
        rebuilt = rebuild(candidate)
    except (ModelFormatError, UnsupportedConversionError):
        return False
    return same_components(rebuilt, spec.hf)


def same_components(a: c.HfTokenizerSpec, b: c.HfTokenizerSpec) -> bool:
    """Every field but `source` equal; models (eq=False dataclasses) compared field by field,
    a Unigram vocabulary's scores as float32 (see `same_unigram_vocab`)."""
    for f in dataclasses.fields(c.HfTokenizerSpec):
        if f.name == "source":
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "model":
            if type(x) is not type(y) or not all(
                    same_unigram_vocab(getattr(x, g.name), getattr(y, g.name))
                    if isinstance(x, c.UnigramModel) and g.name == "vocab" else getattr(x, g.name) == getattr(y, g.name)
                    for g in dataclasses.fields(x)):
                return False
        elif x != y:
            return False
    return True


def same_unigram_vocab(a, b) -> bool:
    """(piece, score) pairs with the same pieces and the same scores as float32, the precision a
    GGUF holds. toksmith's tokenizer.json reader parses numbers as tokenizers' serde_json does
    (hf/json_numbers.py: not correctly rounded, "-14.412261962890625" -> -14.412261962890623),
    so a score written from a GGUF can come back one double ulp off; doubles are not compared."""
    if len(a) != len(b) or [p for p, _ in a] != [p for p, _ in b]:
        return False
    return array("f", [s for _, s in a]) == array("f", [s for _, s in b])
