"""The vocabulary: pieces, scores and token types, as every loader produces it.

>>> v = Vocab(pieces=[b"<unk>", b"\\xe2\\x96\\x81a"], scores=[0.0, -1.5],
...           types=bytes([TokenType.UNKNOWN, TokenType.NORMAL]))
>>> v.piece(1), v.type_of(0)
('▁a', <TokenType.UNKNOWN: 2>)
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class TokenType(IntEnum):
    """Token types shared by sentencepiece's ModelProto and GGUF's token_type.

    Mirrors the core's definition, _core/token_types.pxd (tests/unit/test_token_types.py).
    """

    UNDEFINED = 0
    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


def indices_of_type(types: bytes, token_type: int) -> list[int]:
    """Positions of `token_type` in a one-byte-per-token type string."""
    ids, start, wanted = [], 0, bytes([token_type])
    while (found := types.find(wanted, start)) >= 0:
        ids.append(found)
        start = found + 1
    return ids


def first_repeated(pieces: list[bytes], indices=None) -> int | None:
    """The first of `indices` (default: all) whose piece text an earlier one already has.

    >>> first_repeated([b"a", b"b", b"a"])
    2
    """
    seen: set[bytes] = set()
    for index in range(len(pieces)) if indices is None else indices:
        if pieces[index] in seen:
            return index
        seen.add(pieces[index])
    return None


@dataclass(frozen=True)
class SpecialIds:
    """Ids of the special tokens a model names (None when it names none)."""

    unk: int | None = None
    bos: int | None = None
    eos: int | None = None
    pad: int | None = None
    sep: int | None = None
    mask: int | None = None

    def as_dict(self) -> dict[str, int]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True, eq=False, repr=False)
class Vocab:
    """Pieces as raw UTF-8 bytes, one score and one `TokenType` byte per piece."""

    pieces: list[bytes]
    scores: list[float]
    types: bytes
    special: SpecialIds = SpecialIds()

    def __post_init__(self):
        if not (len(self.pieces) == len(self.scores) == len(self.types)):
            raise ValueError("pieces, scores and types differ in length")

    def __len__(self) -> int:
        return len(self.pieces)

    def piece(self, token_id: int) -> str:
        return self.pieces[token_id].decode("utf-8", "replace")

    def type_of(self, token_id: int) -> TokenType:
        return TokenType(self.types[token_id])

    def ids_of_type(self, token_type: TokenType) -> list[int]:
        return indices_of_type(self.types, token_type)

    def __repr__(self) -> str:
        special = ", ".join(f"{k}={v}" for k, v in self.special.as_dict().items())
        return f"<Vocab {len(self)} pieces{', ' + special if special else ''}>"

    def type_counts(self) -> dict[str, int]:
        return {TokenType(t).name.lower(): self.types.count(t)
                for t in sorted(set(self.types)) if t in TokenType._value2member_map_}
