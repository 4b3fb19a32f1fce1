"""SentencePiece decoding rules: `▁` back to spaces, bytes reassembled, unknowns shown.

>>> SentencePieceDecoderSpec().unk_surface
' ⁇ '
"""
from __future__ import annotations

from dataclasses import dataclass

from toksmith.normalizers.charsmap import CharsMapNormalizerSpec

DEFAULT_UNK_SURFACE = " \u2047 "   # sentencepiece's kDefaultUnknownSymbol


@dataclass(frozen=True)
class SentencePieceDecoderSpec:
    unk_surface: str = DEFAULT_UNK_SURFACE
    # The leading space of the dummy prefix is dropped when either flag is set
    # (sentencepiece 0.2.x Decode).
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    denormalizer: CharsMapNormalizerSpec | None = None
