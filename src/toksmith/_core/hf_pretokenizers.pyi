# Partial type stub of the internal compiled module hf_pretokenizers.pyx (not public API).
from typing import Any

from toksmith._core.pretokenizer import PreTokenizer

class HfDigits(PreTokenizer):
    individual_digits: bool
    def __init__(self, individual_digits: bool) -> None: ...

class HfCharDelimiterSplit(PreTokenizer):
    delimiter: bytes
    def __init__(self, delimiter: str | bytes) -> None: ...

class HfFixedLength(PreTokenizer):
    length: int
    def __init__(self, length: int) -> None: ...

class HfUnicodeScripts(PreTokenizer): ...

class HfByteLevel(PreTokenizer):
    add_prefix_space: bool
    map_bytes: bool
    splitter: PreTokenizer | None
    def __init__(self, *, add_prefix_space: bool, splitter: PreTokenizer | None = ...,
                 map_bytes: bool = ...) -> None: ...

def __getattr__(name: str) -> Any: ...
