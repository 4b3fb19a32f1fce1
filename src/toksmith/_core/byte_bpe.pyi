# Partial type stub of the internal compiled module byte_bpe.pyx (not public API).
from enum import IntEnum
from typing import Any, Iterable

class MergeOrder(IntEnum):
    MERGE_LIST: int
    TOKEN_RANK: int

class ByteLevelBpe:
    order: MergeOrder
    ignore_merges: bool
    utf8_symbols: bool
    whole_newline_runs: bool
    n_pieces: int
    n_symbols: int
    n_pairs: int
    @staticmethod
    def build(tokens: list[bytes | None], merges: list[bytes] | bytes | None = ..., *, order: MergeOrder,
              ignore_merges: bool = ..., byte_unicode: bool = ...,
              llama_byte_fallback: bool = ..., utf8_symbols: bool = ...,
              hex_byte_fallback: bool = ..., whole_newline_runs: bool = ...,
              char_starts: bool = ...) -> ByteLevelBpe: ...
    def token_bytes(self, token_id: int) -> bytes: ...
    def encode_piece(self, piece: bytes) -> list[int]: ...
    def encode_split(self, data: bytes, ends: list[int]) -> list[int]: ...
    def encode_pieces(self, pieces: Iterable[bytes], with_spans: bool = ...) -> list[Any]: ...

def __getattr__(name: str) -> Any: ...
