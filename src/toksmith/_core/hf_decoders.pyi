# Type stub of hf_decoders.pyx: tokenizers' decoders as a chain of streaming stages.
from enum import IntEnum
from typing import Any

from toksmith._core.detokenizer import Decoder, TokenIds

class TokenKind(IntEnum):
    TOKEN_TEXT = 0
    TOKEN_SPECIAL = 1
    TOKEN_MISSING = 2

class Stage:
    @property
    def name(self) -> str: ...

class JoinSpacesStage(Stage):
    def __init__(self) -> None: ...

class FuseStage(Stage):
    def __init__(self) -> None: ...

class DropEmptyStage(Stage):
    def __init__(self) -> None: ...

class DedupStage(Stage):
    def __init__(self) -> None: ...

class ReplaceStage(Stage):
    def __init__(self, pattern: bytes, content: bytes, *, empty_token_stays_empty: bool = False) -> None: ...

class RegexReplaceStage(Stage):
    def __init__(self, matcher: Any, content: bytes) -> None: ...

class BpeSuffixStage(Stage):
    def __init__(self, suffix: bytes) -> None: ...

class StripStage(Stage):
    def __init__(self, content: bytes, start: int, stop: int) -> None: ...

class MetaspaceStage(Stage):
    def __init__(self, replacement: bytes, drop_in_first: bool) -> None: ...

class WordPiecePrefixStage(Stage):
    def __init__(self, prefix: bytes) -> None: ...

class ByteFallbackStage(Stage):
    def __init__(self) -> None: ...

class ByteLevelStage(Stage):
    def __init__(self) -> None: ...

class HfDecoder(Decoder):
    @property
    def stages(self) -> tuple[Stage, ...]: ...
    @property
    def stage_names(self) -> list[str]: ...
    @staticmethod
    def build(texts: list[bytes], kinds: bytes, stages: list[Stage],
              pieces: list[bytes] | None = None) -> HfDecoder: ...
    def decode(self, ids: TokenIds, *, skip_special: bool = False) -> str: ...
    def decode_bytes(self, ids: TokenIds, *, skip_special: bool = False) -> bytes: ...
