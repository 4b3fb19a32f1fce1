# Type stub of the internal compiled module hf_replace.pyx (not public API).
from toksmith._core.normalizer import Normalizer

class LiteralReplace(Normalizer):
    min_run: int
    def __init__(self, pattern: bytes, content: bytes, min_run: int = 0) -> None: ...
