"""The Unicode classes of tokenizers' Oniguruma (Unicode 16), read from the tables that
tools/gen_onig_unicode.py derived from tokenizers itself (onig_unicode_data.py).

    >>> (0x41, 0x5A) in property_ranges("Lu")
    True
    >>> sorted(fold_class(ord("k")))
    [75, 107, 8490]
"""
from __future__ import annotations

import base64
from functools import lru_cache

from toksmith.hf import onig_unicode_data as data


def normalize_property_name(name: str) -> str:
    """Oniguruma's key for a property name: case and ' ', '-', '_' ignored."""
    return "".join(ch for ch in name.lower() if ch not in " -_")


@lru_cache(maxsize=None)
def _set(index: int) -> tuple[tuple[int, int], ...]:
    return _decode_ranges(data.SETS[index])


def _decode_ranges(encoded: str) -> tuple[tuple[int, int], ...]:
    raw = base64.b64decode(encoded)
    values = []
    value = shift = 0
    for byte in raw:
        value |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
        else:
            values.append(value)
            value = shift = 0
    out = []
    prev = -1
    for k in range(0, len(values), 2):
        lo = prev + 1 + values[k]
        hi = lo + values[k + 1]
        out.append((lo, hi))
        prev = hi
    return tuple(out)


def property_ranges(name: str) -> tuple[tuple[int, int], ...] | None:
    """The ranges of `\\p{name}`, or None when there is no table for that name."""
    index = data.PROPERTIES.get(normalize_property_name(name))
    return None if index is None else _set(index)


def escape_ranges(letter: str) -> tuple[tuple[int, int], ...]:
    """The ranges of `\\w`, `\\s`, `\\d` or `\\h`."""
    return _set(data.ESCAPES[letter])


def posix_ranges(name: str) -> tuple[tuple[int, int], ...] | None:
    """The ranges of `[[:name:]]` (lowercase names only, as Oniguruma), or None."""
    index = data.POSIX_BRACKETS.get(name)
    return None if index is None else _set(index)


@lru_cache(maxsize=1)
def grapheme_values() -> dict[str, tuple[tuple[int, int], ...]]:
    """Oniguruma's Grapheme_Cluster_Break ranges by value name (and Extended_Pictographic),
    for \\X, \\y and \\Y (onig_grapheme_data, read from tokenizers' Oniguruma: Unicode 16).

    >>> grapheme_values()["ZWJ"]
    ((8205, 8205),)
    """
    from toksmith.hf import onig_grapheme_data
    return {name: _decode_ranges(encoded) for name, encoded in onig_grapheme_data.VALUES.items()}


@lru_cache(maxsize=1)
def _fold_map() -> dict[int, tuple[int, ...]]:
    out: dict[int, tuple[int, ...]] = {}
    for members in data.FOLD_CLASSES:
        for cp in members:
            out[cp] = members
    return out


def fold_class(cp: int) -> tuple[int, ...]:
    """The code points a case-insensitive literal `cp` matches (one character each)."""
    return _fold_map().get(cp, (cp,))


def fold_classes() -> list[tuple[int, ...]]:
    """Every simple case-fold class of two or more code points."""
    return data.FOLD_CLASSES


def multi_folds() -> dict[int, str]:
    """{code point: the string of several characters that `(?i)` also matches for it}."""
    return data.MULTI_FOLDS


# Flag bits of toksmith._core.pretok_common (F_LETTER, F_NUMBER, F_MARK, F_SPACE, TF_UPPERISH
# [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], TF_LOWERISH [\p{Ll}\p{Lm}\p{Lo}\p{M}]; LF_DEFINED).
_FLAG_CLASSES = ((1, lambda: property_ranges("L")), (2, lambda: property_ranges("N")),
                 (4, lambda: property_ranges("M")), (8, lambda: escape_ranges("s")),
                 (16, lambda: [r for name in ("Lu", "Lt", "Lm", "Lo", "M") for r in property_ranges(name)]),
                 (32, lambda: [r for name in ("Ll", "Lm", "Lo", "M") for r in property_ranges(name)]))


@lru_cache(maxsize=1)
def splitter_flag_table() -> bytes:
    """Oniguruma's \\p{L} \\p{N} \\p{M} \\s and o200k's upper/lower word classes as the
    two-level flag table the hand-written splitters read (pretok_common.table_flags):
    4352 little-endian u16 block numbers, then the distinct 256-byte blocks. Every code point has bit 64 (defined) set.

    >>> table = splitter_flag_table()
    >>> block = int.from_bytes(table[0:2], "little")
    >>> table[8704 + 256 * block + ord("a")], table[8704 + 256 * block + ord(" ")]
    (97, 72)
    """
    flags = bytearray(b"\x40" * 0x110000)
    for bit, ranges in _FLAG_CLASSES:
        with_bit = bytes(f | bit for f in range(256))
        for lo, hi in ranges():
            flags[lo:hi + 1] = flags[lo:hi + 1].translate(with_bit)
    blocks: dict[bytes, int] = {}
    index = bytearray()
    for k in range(0, 0x110000, 256):
        block = bytes(flags[k:k + 256])
        index += blocks.setdefault(block, len(blocks)).to_bytes(2, "little")
    return bytes(index) + b"".join(blocks)
