"""Typed access to the JSON of a tokenizer.json, every failure named by file and JSON path.

A `Fields` wraps one JSON object at a path (`$.pre_tokenizer.pretokenizers[1]`); its getters
check the type of each value, take the default tokenizers gives a missing field, and
`done()` refuses any key nobody asked for (tokenizers ignores unknown keys; we refuse them so a
misspelled option is never silently dropped).

>>> f = Fields({"type": "Digits", "individual_digits": True}, "$.pre_tokenizer", "tok.json")
>>> f.bool("individual_digits"), f.done()
(True, None)
"""
from __future__ import annotations

import dataclasses
from collections.abc import Collection
from enum import Enum
from typing import Any, NoReturn, TypeVar

from ..errors import ModelFormatError

E = TypeVar("E", bound=Enum)
U32_MAX = 2**32 - 1
USIZE_MAX = 2**64 - 1
MISSING = object()


def json_type_name(value: Any) -> str:
    """The JSON name of a Python value from json.loads (for 'expected X; found Y' messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def shown(value: Any) -> str:
    """A short rendering of a found value for an error message."""
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "...'"
    if isinstance(value, (dict, list)):
        return json_type_name(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def fail(source: str, path: str, message: str) -> NoReturn:
    raise ModelFormatError(source, f"{path}: {message}")


def expect_type(value: Any, kind: type | tuple[type, ...], what: str, source: str, path: str) -> Any:
    """`value` if it is a `kind` (bool never counts as int), else ModelFormatError."""
    ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _as_tuple(kind))
    if not ok:
        fail(source, path, f"expected {what}; found {json_type_name(value)}")
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def as_u32(value: Any, source: str, path: str) -> int:
    """A JSON integer in 0..2**32-1 (tokenizers' u32 ids and counts)."""
    if isinstance(value, bool) or not isinstance(value, int):
        fail(source, path, f"expected an integer in 0..{U32_MAX}; found {json_type_name(value)}")
    if not 0 <= value <= U32_MAX:
        fail(source, path, f"expected an integer in 0..{U32_MAX}; found {value}")
    return value


def as_usize(value: Any, source: str, path: str) -> int:
    """A JSON integer in 0..2**64-1 (tokenizers' usize lengths, on a 64-bit machine)."""
    if isinstance(value, bool) or not isinstance(value, int):
        fail(source, path, f"expected an integer in 0..{USIZE_MAX}; found {json_type_name(value)}")
    if not 0 <= value <= USIZE_MAX:
        fail(source, path, f"expected an integer in 0..{USIZE_MAX}; found {value}")
    return value


def as_char(value: Any, source: str, path: str) -> str:
    """A string of exactly one character (Rust `char`)."""
    expect_type(value, str, "a string of one character", source, path)
    if len(value) != 1:
        fail(source, path, f"expected a string of one character; found {shown(value)}")
    return value


def as_enum(enum: type[E], value: Any, source: str, path: str) -> E:
    """The member of `enum` whose value is the file's string; else the list of known values."""
    known = ", ".join(member.value for member in enum)
    if not isinstance(value, str):
        fail(source, path, f"expected one of {known}; found {json_type_name(value)}")
    try:
        return enum(value)
    except ValueError:
        fail(source, path, f"expected one of {known}; found {shown(value)}")


class Fields:
    """One JSON object at `path`, read field by field (see the module docstring)."""

    def __init__(self, value: Any, path: str, source: str):
        self.source = source
        self.path = path
        self.obj: dict = expect_type(value, dict, "an object", source, path)
        self._seen: set[str] = set()

    def at(self, key: str) -> str:
        return f"{self.path}.{key}"

    def fail(self, key: str | None, message: str) -> NoReturn:
        fail(self.source, self.at(key) if key else self.path, message)

    def raw(self, key: str, default: Any = MISSING) -> Any:
        """The value of `key`; a missing required key (no default) is an error."""
        self._seen.add(key)
        if key in self.obj:
            return self.obj[key]
        if default is MISSING:
            fail(self.source, self.path, f"missing field '{key}'")
        return default

    def has(self, key: str) -> bool:
        return key in self.obj

    def bool(self, key: str, default: Any = MISSING, *, nullable: bool = False) -> Any:
        value = self.raw(key, default)
        if value is default and key not in self.obj:
            return value
        if value is None and nullable:
            return default if default is not MISSING else None
        return expect_type(value, bool, "a boolean", self.source, self.at(key))

    def str(self, key: str, default: Any = MISSING, *, nullable: bool = False) -> Any:
        value = self.raw(key, default)
        if value is default and key not in self.obj:
            return value
        if value is None and nullable:
            return default if default is not MISSING else None
        return expect_type(value, str, "a string", self.source, self.at(key))

    def char(self, key: str) -> str:
        return as_char(self.raw(key), self.source, self.at(key))

    def u32(self, key: str, default: Any = MISSING, *, nullable: bool = False) -> Any:
        value = self.raw(key, default)
        if value is default and key not in self.obj:
            return value
        if value is None and nullable:
            return default if default is not MISSING else None
        return as_u32(value, self.source, self.at(key))

    def list(self, key: str) -> list:
        return expect_type(self.raw(key), list, "an array", self.source, self.at(key))

    def enum(self, enum: type[E], key: str, default: Any = MISSING) -> Any:
        value = self.raw(key, default)
        if value is default and key not in self.obj:
            return value
        return as_enum(enum, value, self.source, self.at(key))

    def done(self, also_allowed: tuple[str, ...] = ()) -> None:
        """Refuse any key that was not read (tokenizers would ignore it silently)."""
        extra = [key for key in self.obj if key not in self._seen and key not in also_allowed and key != "type"]
        if extra:
            known = sorted(self._seen | set(also_allowed) | {"type"})
            fail(self.source, self.at(extra[0]),
                 f"unknown option '{extra[0]}' (known: {', '.join(known)})")


def shown_component(component: Any, limit: int = 200) -> str:
    """A component's repr cut at about `limit` characters, made without rendering all of
    it (a BPE model's repr would spell out its whole vocabulary): dataclass fields, and
    the first items of dicts, lists and tuples, in their own order.

    >>> shown_component({"vocab": dict.fromkeys(range(10**6), 0)}, 40)
    "{'vocab': {0: 0, 1: 0, 2: 0, 3: 0, 4: 0,..."
    """
    if dataclasses.is_dataclass(component) and not isinstance(component, type):
        fields = ((f.name + "=", getattr(component, f.name)) for f in dataclasses.fields(component) if f.repr)
        text = _joined(f"{type(component).__name__}(", fields, ")", limit)
    elif isinstance(component, dict):
        text = _joined("{", ((shown_component(k, limit) + ": ", v) for k, v in component.items()), "}", limit)
    elif isinstance(component, (list, tuple)):
        opening, closing = ("[", "]") if isinstance(component, list) else ("(", ")")
        text = _joined(opening, (("", item) for item in component), closing, limit)
    elif isinstance(component, Collection) and not isinstance(component, (str, bytes, frozenset, set)):
        # a native table (TokenTable, MergeTable): its repr renders every entry
        text = f"{type(component).__name__}({len(component)} entries)"
    else:
        text = repr(component)
    return text if len(text) <= limit else text[:limit] + "..."


def _joined(opening: str, items, closing: str, limit: int) -> str:
    """opening + "label value, ..." + closing, stopping once `limit` characters are made."""
    parts: list[str] = []
    size = len(opening)
    for label, value in items:
        if size > limit:
            parts.append("...")
            break
        part = label + shown_component(value, limit - size)
        parts.append(part)
        size += len(part) + 2
    return opening + ", ".join(parts) + closing
