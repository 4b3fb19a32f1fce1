"""Write a tiktoken rank file (placeholder: the writer is being built)."""
from __future__ import annotations

from toksmith.errors import UnsupportedFeatureError
from toksmith.spec import TokenizerSpec


def write_tiktoken(spec: TokenizerSpec) -> bytes:
    """The bytes of a tiktoken rank file holding `spec`."""
    raise UnsupportedFeatureError("writing a tiktoken rank file is not implemented yet")
