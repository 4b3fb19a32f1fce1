"""Write a vocab-only GGUF (placeholder: the writer is being built)."""
from __future__ import annotations

from toksmith.errors import UnsupportedFeatureError
from toksmith.spec import TokenizerSpec


def write_gguf(spec: TokenizerSpec) -> bytes:
    """The bytes of a vocab-only GGUF holding `spec`."""
    raise UnsupportedFeatureError("writing a vocab-only GGUF is not implemented yet")
