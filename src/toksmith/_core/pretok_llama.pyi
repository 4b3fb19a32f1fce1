# Partial type stub of the internal compiled module pretok_llama.pyx (not public API).
from typing import Any, Sequence

from toksmith._core.pretokenizer import PreTokenizer

class LlamaSplitter(PreTokenizer):
    regexes: tuple[str, ...]
    oniguruma: bool
    tiktoken: bool
    def __init__(self, regexes: Sequence[str], *, force_vm: bool = ..., oniguruma: bool = ...,
                 by_codepoints: bool = ..., tiktoken: bool = ...) -> None: ...

HF_GPT2_REGEX: str
HF_LLAMA3_REGEX: str
HF_QWEN2_REGEX: str
ONIGURUMA_STAGES: dict[str, tuple[int, int]]

def __getattr__(name: str) -> Any: ...

def codepoint_symbols(cp: int) -> tuple[int, int]: ...
