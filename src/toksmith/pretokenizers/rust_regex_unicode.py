"""The Unicode classes and simple case folding of tiktoken's regex engine (fancy-regex over
the Rust `regex` crate), from the tables tools/gen_rust_regex_unicode.py read from tiktoken
itself (rust_regex_unicode_data.py).

    >>> (0x41, 0x5A) in property_ranges("Lu")
    True
    >>> sorted(fold_class(ord("k")))
    [75, 107, 8490]
"""
from __future__ import annotations

from functools import lru_cache

from toksmith.hf.onig_unicode import _decode_ranges
from toksmith.pretokenizers import rust_regex_unicode_data as data


def normalize_property_name(name: str) -> str:
    """Parity: regex-syntax unicode::symbolic_name_normalize: case, ' ', '_' and '-' ignored,
    and a leading "is"."""
    key = "".join(ch for ch in name.lower() if ch not in " _-")
    return key[2:] if key.startswith("is") and len(key) > 2 else key


@lru_cache(maxsize=None)
def _properties() -> dict[str, int]:
    return {normalize_property_name(name): index for name, index in data.PROPERTIES.items()}


@lru_cache(maxsize=None)
def _set(index: int) -> tuple[tuple[int, int], ...]:
    return _decode_ranges(data.SETS[index])


def property_ranges(name: str) -> tuple[tuple[int, int], ...] | None:
    """The ranges of `\\p{name}` (also "gc=Lu", "sc=Greek" forms), or None when there is no table."""
    if "=" in name:
        key, _, value = name.partition("=")
        if normalize_property_name(key) not in ("gc", "generalcategory", "sc", "script"):
            return None
        name = value
    index = _properties().get(normalize_property_name(name))
    return None if index is None else _set(index)


def escape_ranges(letter: str) -> tuple[tuple[int, int], ...]:
    """The ranges of `\\d`, `\\s` or `\\w`."""
    return _set(data.ESCAPES[letter])


@lru_cache(maxsize=None)
def _fold_map() -> dict[int, tuple[int, ...]]:
    out: dict[int, tuple[int, ...]] = {}
    for part in data.FOLDS.split(";"):
        members = tuple(int(x, 16) for x in part.split(","))
        for cp in members:
            out[cp] = members
    return out


def fold_class(cp: int) -> tuple[int, ...]:
    """The code points `(?i)` makes `cp` match (itself included)."""
    return _fold_map().get(cp, (cp,))


def fold_classes() -> list[tuple[int, ...]]:
    """Every simple case-fold class of two or more code points."""
    return list(set(_fold_map().values()))
