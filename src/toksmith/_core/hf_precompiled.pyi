# Type stub of the internal compiled module hf_precompiled.pyx (not public API).
from toksmith._core.normalizer import Normalizer

class HfPrecompiledNormalizer(Normalizer):
    def __init__(self, charsmap: bytes = ...) -> None: ...
