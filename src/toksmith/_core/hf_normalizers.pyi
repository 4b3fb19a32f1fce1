# Partial type stub of the internal compiled module hf_normalizers.pyx (not public API).
from typing import Any

from toksmith._core.normalizer import Normalizer

class HfStrip(Normalizer):
    left: bool
    right: bool
    def __init__(self, left: bool, right: bool) -> None: ...

class HfPrepend(Normalizer):
    prepend: bytes
    def __init__(self, prepend: str | bytes) -> None: ...

class HfByteLevelNormalizer(Normalizer): ...

class HfNmt(Normalizer): ...

def starts_late(normalizer: Normalizer, text: str | bytes) -> bool: ...

def __getattr__(name: str) -> Any: ...
