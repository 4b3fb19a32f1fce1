# Type stub of detokenizer.pyx: what mypy and IDEs see.
from collections.abc import Iterable
from enum import IntEnum
from typing import Any, SupportsIndex

# A token id is an int or anything with __index__ (numpy integers); a bool is refused at run time.
TokenId = int | SupportsIndex
# Token ids: an iterable of ids, such as a list or a one-dimensional numpy integer array.
TokenIds = Iterable[TokenId]

class Render(IntEnum):
    RENDER_NOTHING = 0
    RENDER_SPECIAL = 1
    RENDER_TEXT = 2
    RENDER_UNESCAPED = 3
    RENDER_BYTE = 4

class Decoder:
    @property
    def n_pieces(self) -> int: ...
    def piece(self, piece_id: int) -> bytes: ...
    @property
    def streamable(self) -> bool: ...
    def decode(self, ids: TokenIds, *, skip_special: bool = False) -> str: ...
    def decode_bytes(self, ids: TokenIds, *, skip_special: bool = False) -> bytes: ...

class SentencePieceDecoder(Decoder):
    @staticmethod
    def build(pieces: list[bytes], types: bytes, byte_values: list[int], *, unk_surface: bytes = b"",
              add_dummy_prefix: bool = False, remove_extra_whitespaces: bool = False,
              denormalizer: Any = None) -> SentencePieceDecoder: ...

class LlamaCppDecoder(Decoder):
    @staticmethod
    def build(pieces: list[bytes], renders: bytes, byte_values: list[int], *, add_space_prefix: bool = False,
              add_bos: bool = False, add_eos: bool = False, bos_id: int = -1,
              eos_id: int = -1, clean_spaces: bool = False) -> LlamaCppDecoder: ...

class StreamDecoder:
    """Text from ids fed one at a time, as soon as it is complete UTF-8."""

    def __init__(self, decoder: Decoder, *, skip_special: bool = False) -> None: ...
    def feed(self, ids: TokenId | TokenIds) -> str: ...
    def finish(self) -> str: ...

def checked_id(obj: object, n_pieces: int, name: str = "token_id", position: int = -1) -> int: ...
