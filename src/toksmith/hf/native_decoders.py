"""tokenizer.json decoders -> a native `Decoder` stage.

Parity: tokenizers' Tokenizer::decode: each id becomes its token text (the special
added tokens dropped with skip_special), the decoder's `decode_chain` runs over the
texts, and the results are joined; without a decoder the texts are joined by spaces.

>>> build_decoder(spec, hf)                                     # doctest: +SKIP
"""
from __future__ import annotations

from typing import Callable

from toksmith._core.detokenizer import Decoder
from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec


def build_decoder(spec: TokenizerSpec, hf: c.HfTokenizerSpec) -> Decoder:
    """The native decoder of the file (its `$.decoder`, or none)."""
    builder = DECODER_BUILDERS.get(type(hf.decoder))
    if builder is None:
        from toksmith.hf.pipeline import unsupported
        raise unsupported(hf, "$.decoder", hf.decoder, "no native decoder for this type yet")
    return builder(spec, hf, hf.decoder)


# type of the file's decoder (type(None) for none) -> builder(spec, hf, decoder) -> Decoder
DECODER_BUILDERS: dict[type, Callable[..., Decoder]] = {}
