# Partial type stub of the internal compiled module pretok_llama.pyx (not public API).
from typing import Any, Sequence

from toksmith._core.pretokenizer import PreTokenizer

class LlamaSplitter(PreTokenizer):
    regexes: tuple[str, ...]
    def __init__(self, regexes: Sequence[str], *, force_vm: bool = ...) -> None: ...

def __getattr__(name: str) -> Any: ...

def codepoint_symbols(cp: int) -> tuple[int, int]: ...
