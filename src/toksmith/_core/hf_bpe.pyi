# Partial type stub of the internal compiled module hf_bpe.pyx (not public API).
from typing import Any, Iterable, Sequence

class HfBpe:
    n_pieces: int
    n_pairs: int
    unk_id: int
    unk_missing: bool
    fuse_unk: bool
    byte_fallback: bool
    ignore_merges: bool
    exact_stale_check: bool
    n_cut_chars: int
    @staticmethod
    def build(tokens: list[bytes | None], lefts: Sequence[int], rights: Sequence[int], mergeds: Sequence[int], *,
              unk_id: int = ..., unk_missing: bool = ..., fuse_unk: bool = ..., byte_fallback: bool = ...,
              prefix: bytes = ..., suffix: bytes = ..., ignore_merges: bool = ...,
              exact_stale_check: bool = ..., cut_chars: list[bytes] | None = ...) -> HfBpe: ...
    def token_id(self, text: str | bytes) -> int | None: ...
    def encode_piece(self, piece: str | bytes) -> list[int]: ...
    def encode_pieces(self, pieces: Iterable[str | bytes], with_spans: bool = ...) -> list[Any]: ...

def __getattr__(name: str) -> Any: ...
