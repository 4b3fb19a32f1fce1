# Partial type stub of the internal compiled module utf8_repair.pyx (not public API).
from typing import Any

class LlamaCppUtf8Repair:
    def normalize_text(self, text: bytes) -> bytes: ...

class PythonUtf8Repair:
    def normalize_text(self, text: bytes) -> bytes: ...

def __getattr__(name: str) -> Any: ...
