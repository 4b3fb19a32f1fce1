"""Normalizer specifications (the compiled normalizers live in toksmith._core)."""
from toksmith.normalizers.charsmap import CharsMapNormalizerSpec

__all__ = ["CharsMapNormalizerSpec"]
