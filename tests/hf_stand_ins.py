"""Test plumbing for tokenizer.json files whose decoder has no native stage on this branch.

The Metaspace decoder (and the no-decoder case) are built on another branch; until they
land, encode tests load such files with a stand-in that joins token texts. Nothing that
uses it decodes.

    >>> with decoder_stand_ins():                               # doctest: +SKIP
    ...     tok = toksmith.load("rut5/tokenizer.json")
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import pytest

from toksmith._core.detokenizer import LlamaCppDecoder, Render
from toksmith.hf import components as c
from toksmith.hf.native_decoders import DECODER_BUILDERS
from toksmith.vocab import TokenType


def stand_in_decoder(spec, hf, decoder) -> LlamaCppDecoder:
    """Token texts joined (for encode tests only)."""
    n = len(spec.vocab)
    renders = bytearray([Render.RENDER_TEXT]) * n
    for i, t in enumerate(spec.vocab.types):
        if t == TokenType.CONTROL:
            renders[i] = Render.RENDER_SPECIAL
        elif t == TokenType.UNDEFINED:
            renders[i] = Render.RENDER_INVALID
    return LlamaCppDecoder.build(list(spec.vocab.pieces), bytes(renders), [-1] * n)


@contextmanager
def decoder_stand_ins() -> Iterator[None]:
    """Register the stand-in for the Metaspace decoder and for no decoder, where nothing is."""
    with pytest.MonkeyPatch.context() as mp:
        for decoder_type in (c.Metaspace, type(None)):
            if decoder_type not in DECODER_BUILDERS:
                mp.setitem(DECODER_BUILDERS, decoder_type, stand_in_decoder)
        yield
