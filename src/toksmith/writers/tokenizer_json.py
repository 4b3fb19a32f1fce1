"""Write a tokenizer.json (placeholder: the writer is being built)."""
from __future__ import annotations

from toksmith.errors import UnsupportedFeatureError
from toksmith.spec import TokenizerSpec


def write_tokenizer_json(spec: TokenizerSpec) -> bytes:
    """The bytes of a tokenizer.json holding `spec`."""
    raise UnsupportedFeatureError("writing a tokenizer.json is not implemented yet")
