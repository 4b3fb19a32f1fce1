"""Read the `truncation` and `padding` sections of a tokenizer.json.

toksmith's `encode` applies neither (a transformers face takes its own arguments), but a
file tokenizers refuses must not load: each section is checked as tokenizers 0.23.3
deserializes it (utils/truncation.rs TruncationParams, utils/padding.rs PaddingParams,
both plain serde derives, so either an object or an array of every field in declaration
order), and an unknown key is refused as everywhere in the reader.

>>> read_truncation({"max_length": -1, "stride": 0, "strategy": "LongestFirst"}, "$.truncation", "t.json")
Traceback (most recent call last):
...
toksmith.errors.ModelFormatError: t.json: $.truncation.max_length: expected an integer in 0..18446744073709551615; found -1
"""
from __future__ import annotations

from enum import Enum
from typing import Any

from ._fields import Fields, as_usize, fail, shown

# Parity: the fields of TruncationParams and PaddingParams in declaration order (serde
# reads a struct from a JSON array of exactly these, positionally).
TRUNCATION_FIELDS = ("direction", "max_length", "strategy", "stride")
PADDING_FIELDS = ("strategy", "direction", "pad_to_multiple_of", "pad_id", "pad_type_id", "pad_token")


class Direction(Enum):
    LEFT = "Left"
    RIGHT = "Right"


class TruncationStrategy(Enum):
    LONGEST_FIRST = "LongestFirst"
    ONLY_FIRST = "OnlyFirst"
    ONLY_SECOND = "OnlySecond"


def read_truncation(value: Any, path: str, source: str) -> bool:
    """Whether the file truncates (`value` not null), its fields checked."""
    if value is None:
        return False
    f = Fields(_as_object(value, TRUNCATION_FIELDS, path, source), path, source)
    # Parity: TruncationParams: direction has a default (Right); the other three are required.
    f.enum(Direction, "direction", Direction.RIGHT)
    as_usize(f.raw("max_length"), source, f.at("max_length"))
    f.enum(TruncationStrategy, "strategy")
    as_usize(f.raw("stride"), source, f.at("stride"))
    f.done()
    return True


def read_padding(value: Any, path: str, source: str) -> str | None:
    """The pad token's text if the file pads (`value` not null), its fields checked; else None."""
    if value is None:
        return None
    f = Fields(_as_object(value, PADDING_FIELDS, path, source), path, source)
    # Parity: PaddingParams: pad_to_multiple_of (Option<usize>) may be missing; the rest are required.
    _padding_strategy(f.raw("strategy"), source, f.at("strategy"))
    f.enum(Direction, "direction")
    multiple = f.raw("pad_to_multiple_of", None)
    if multiple is not None:
        as_usize(multiple, source, f.at("pad_to_multiple_of"))
    f.u32("pad_id")
    f.u32("pad_type_id")
    pad_token = f.str("pad_token")
    f.done()
    return pad_token


def _as_object(value: Any, fields: tuple[str, ...], path: str, source: str) -> Any:
    """An array of every field in order, as the object it stands for; anything else as is."""
    if not isinstance(value, list):
        return value
    if len(value) != len(fields):
        fail(source, path, f"expected an object, or an array of {len(fields)} values ({', '.join(fields)}); "
                           f"found an array of {len(value)}")
    return dict(zip(fields, value))


def _padding_strategy(value: Any, source: str, path: str) -> None:
    """Parity: PaddingStrategy, an externally tagged enum: "BatchLongest" (or
    {"BatchLongest": null}) or {"Fixed": usize}."""
    if value == "BatchLongest":
        return
    if isinstance(value, dict) and len(value) == 1:
        (variant, argument), = value.items()
        if variant == "BatchLongest" and argument is None:
            return
        if variant == "Fixed":
            as_usize(argument, source, f"{path}.Fixed")
            return
    fail(source, path, f'expected "BatchLongest" or {{"Fixed": length}}; found {shown(value)}')


__all__ = ["read_truncation", "read_padding"]
