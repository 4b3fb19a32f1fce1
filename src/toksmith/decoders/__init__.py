"""Decoder specifications (the compiled decoders live in toksmith._core)."""
from toksmith.decoders.sentencepiece import SentencePieceDecoderSpec

__all__ = ["SentencePieceDecoderSpec"]
