"""The vocabulary: pieces, scores and token types, as every loader produces it.

>>> v = Vocab(pieces=[b"<unk>", b"\\xe2\\x96\\x81a"], scores=[0.0, -1.5],
...           types=bytes([TokenType.UNKNOWN, TokenType.NORMAL]))
>>> v.piece(1), v.type_of(0)
('▁a', <TokenType.UNKNOWN: 2>)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, IntEnum


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


def _untrack_lists(*lists) -> None:
    """Keep the cyclic GC from walking a vocabulary's big flat lists (pieces.untrack_flat_list)."""
    from toksmith._core.pieces import untrack_flat_list
    for items in lists:
        if type(items) is list:
            untrack_flat_list(items)


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
        _untrack_lists(self.pieces, self.scores)

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


class MergeOrder(Enum):
    """Which adjacent pair a byte-level BPE merges first."""

    MERGE_LIST = "merge-list"   # rank of the (left, right) pair in the merges list (llama.cpp, HF)
    TOKEN_RANK = "token-rank"   # rank of the token the pair forms (tiktoken)


@dataclass(frozen=True, eq=False, repr=False)
class ByteLevelVocab:
    """A byte-level BPE vocabulary (GPT-2 family, tiktoken), as the file stores it.

    texts: per id, the token text as stored: GGUF and tokenizer.json store texts
        through GPT-2's byte<->unicode map (`byte_unicode`); rank files store the raw
        bytes. None: an id no text is given for (a rank-file gap).
    merges: MERGE_LIST only: the merges as stored ("left right"), in rank order (or one
        bytes object of those lines joined by b"\n": ByteLevelBpe.build reads its lines).
    special_tokens: texts (raw UTF-8) matched in the input before pre-tokenization,
        with their ids (tiktoken's special tokens; ids may lie past `texts`).
    types: one TokenType per id (GGUF), or None (every text NORMAL).
    llama_byte_fallback: a merge result that is no token becomes the tokens of its
        bytes as llama.cpp does (see ByteLevelBpe.build).

    >>> v = ByteLevelVocab(texts=[b"a", b"b", b"ab"], merge_order=MergeOrder.TOKEN_RANK)
    >>> v.build_model().encode_piece(b"ab"), len(v)
    ([2], 3)
    """

    texts: list[bytes | None]
    merge_order: MergeOrder
    merges: list[bytes] | bytes | None = None
    byte_unicode: bool = False
    ignore_merges: bool = False
    llama_byte_fallback: bool = False
    utf8_symbols: bool = False          # BPE over UTF-8 characters (llama.cpp without the byte map)
    hex_byte_fallback: bool = False     # a merge result that is no token becomes <0xXX> tokens
    whole_newline_runs: bool = False    # gemma4: a newline run that is a token stays whole
    drop_unknown_bytes: bool = False    # tokenizers: a byte whose character is no token is left out
    types: bytes | None = None
    special_tokens: dict[bytes, int] = field(default_factory=dict)
    special: SpecialIds = SpecialIds()

    def __post_init__(self):
        _untrack_lists(self.texts, self.merges)

    def __len__(self) -> int:
        """Ids in use: the texts and the special tokens past them."""
        return max(len(self.texts), max(self.special_tokens.values(), default=-1) + 1)

    def token_bytes(self, token_id: int) -> bytes | None:
        """The raw bytes of a token (special tokens: their text); None for a gap or a
        stored text outside the byte<->unicode map."""
        if token_id < len(self.texts) and self.texts[token_id] is not None:
            text = self.texts[token_id]
            if not self.byte_unicode:
                return text
            from toksmith._core.byte_unicode import byte_unicode_decode
            return byte_unicode_decode(text)
        for text, special_id in self.special_tokens.items():
            if special_id == token_id:
                return text
        return None

    def merge_count(self) -> int:
        """How many merges `merges` holds (lines, when one bytes object)."""
        if isinstance(self.merges, bytes):
            return self.merges.count(b"\n") + 1 if self.merges else 0
        return len(self.merges or ())

    def build_model(self):
        """The compiled model stage (toksmith._core.byte_bpe.ByteLevelBpe) of this vocabulary."""
        from toksmith._core.byte_bpe import ByteLevelBpe
        from toksmith._core.byte_bpe import MergeOrder as CoreMergeOrder
        order = (CoreMergeOrder.MERGE_LIST if self.merge_order is MergeOrder.MERGE_LIST
                 else CoreMergeOrder.TOKEN_RANK)
        return ByteLevelBpe.build(self.texts, self.merges, order=order, ignore_merges=self.ignore_merges,
                                  byte_unicode=self.byte_unicode,
                                  llama_byte_fallback=self.llama_byte_fallback,
                                  utf8_symbols=self.utf8_symbols, hex_byte_fallback=self.hex_byte_fallback,
                                  whole_newline_runs=self.whole_newline_runs,
                                  drop_unknown_bytes=self.drop_unknown_bytes)

    def __repr__(self) -> str:
        return (f"<ByteLevelVocab {len(self)} ids, {self.merge_order.value}"
                f"{f', {self.merge_count()} merges' if self.merges is not None else ''}"
                f"{f', {len(self.special_tokens)} special tokens' if self.special_tokens else ''}>")
