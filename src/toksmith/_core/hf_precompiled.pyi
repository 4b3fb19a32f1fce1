# Type stub of the internal compiled module hf_precompiled.pyx (not public API).
from toksmith._core.normalizer import Normalizer

class HfPrecompiledNormalizer(Normalizer):
    repairs_invalid_utf8: bool
    def __init__(self, charsmap: bytes = ...) -> None: ...
