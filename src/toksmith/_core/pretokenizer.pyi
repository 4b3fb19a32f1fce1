# Partial type stub of the internal compiled module pretokenizer.pyx (not public API).
from typing import Any

class PreTokenizer:
    def split_text(self, text: bytes) -> list[bytes]: ...

def __getattr__(name: str) -> Any: ...
