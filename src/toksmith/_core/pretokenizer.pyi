# Partial type stub of the internal compiled module pretokenizer.pyx (not public API).
from typing import Any

class SplitScratch:
    def release(self) -> None: ...

class PreTokenizer:
    def split_text(self, text: bytes, scratch: SplitScratch | None = None) -> list[bytes]: ...

def __getattr__(name: str) -> Any: ...
