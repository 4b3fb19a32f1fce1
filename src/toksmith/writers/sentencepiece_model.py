"""Write a sentencepiece .model (placeholder: the writer is being built)."""
from __future__ import annotations

from toksmith.errors import UnsupportedFeatureError
from toksmith.spec import TokenizerSpec


def write_sentencepiece_model(spec: TokenizerSpec) -> bytes:
    """The bytes of a sentencepiece .model holding `spec`."""
    raise UnsupportedFeatureError("writing a sentencepiece .model is not implemented yet")
