"""A GGUF "llama" (SPM) or "t5" (UGM) vocabulary as the parts of a sentencepiece .model.

The GGUF holds what a .model holds, under other names: tokens/scores/token_type are the
pieces, tokenizer.ggml.precompiled_charsmap, add_space_prefix and
remove_extra_whitespaces are the normalizer_spec, the *_token_id keys name the special
pieces. What does not carry over:

- tokenizer.ggml.add_bos_token / add_eos_token: sentencepiece adds BOS/EOS only when
  its caller asks (encode(add_bos=, add_eos=)); a .model has no field for it.
- llama.cpp's token attributes (which it derives from the types, the EOG ids and the model
  name) decide the piece types: a token llama.cpp treats as CONTROL or UNKNOWN (other than
  the unknown token: Phi-3's [PAD...] fillers; Phi-3's </s>, USER_DEFINED in the file but
  CONTROL as an end-of-generation token) is skipped in text without parse_special, so it
  becomes a CONTROL piece, which sentencepiece never matches in text (sentencepiece allows
  one UNKNOWN piece, and matches USER_DEFINED pieces in every text).
- the text of the unknown token in decode: llama.cpp's llama_detokenize (remove_special,
  no unparse_special: what sentencepiece's decode is, as it drops CONTROL pieces) writes
  nothing for it, sentencepiece writes trainer_spec.unk_surface (" \u2047 " unless set): the
  .model gets an empty unk_surface.
- the unknown token's own type: llama.cpp uses tokenizer.ggml.unknown_token_id whatever
  its type (Phi-3's <unk> is CONTROL); sentencepiece finds unk by type, so it is UNKNOWN.

>>> import toksmith
>>> parts = model_proto_parts_of_gguf(toksmith.load("ggml-vocab-llama-spm.gguf").spec)   # doctest: +SKIP
>>> parts.trainer.model_type, parts.normalizer.add_dummy_prefix                          # doctest: +SKIP
(<ModelType.BPE: 2>, True)
"""
from __future__ import annotations

from toksmith.special_tokens import TokenAttr
from toksmith.spec import TokenizerSpec
from toksmith.vocab import TokenType
from toksmith.writers.common import cannot_write
from toksmith.writers.spm_model_proto import ModelProtoParts
from toksmith.writers.spm_trainer_fields import trainer_fields_of

TARGET = "a sentencepiece .model"
# Parity: llama_vocab::impl::token_to_piece writes nothing for an UNKNOWN token without `special`.
LLAMA_CPP_UNK_SURFACE = b""


def model_proto_parts_of_gguf(spec: TokenizerSpec) -> ModelProtoParts:
    """The .model parts of a GGUF SPM/UGM tokenizer (raises UnsupportedConversionError)."""
    vocab = spec.vocab
    missing = []
    if TokenType.UNDEFINED in vocab.types:
        index = vocab.types.index(TokenType.UNDEFINED)
        missing.append(f"token {index} {vocab.pieces[index]!r} of type UNDEFINED (a .model piece has a type "
                       f"1..6)")
    if b"" in vocab.pieces:
        missing.append(f"an empty token text (token {vocab.pieces.index(b'')})")
    if missing:
        raise cannot_write(spec, TARGET, missing)
    types = sentencepiece_types(vocab.types, vocab.special.unk, spec.token_attributes)
    return ModelProtoParts(pieces=vocab.pieces, scores=vocab.scores, types=types,
                           trainer=trainer_fields_of(spec, unk_surface=LLAMA_CPP_UNK_SURFACE),
                           normalizer=spec.normalizer)


def sentencepiece_types(types: bytes, unk_id: int, attributes: tuple[int, ...] | None = None) -> bytes:
    """GGUF token types as .model piece types: the unknown token UNKNOWN; CONTROL every other
    token llama.cpp's attributes (default: from the types) mark CONTROL or UNKNOWN.

    >>> list(sentencepiece_types(bytes([3, 2, 1, 2, 4]), unk_id=0))
    [2, 3, 1, 3, 4]
    >>> list(sentencepiece_types(bytes([3, 2, 1, 2, 4]), unk_id=0, attributes=(8, 1, 4, 1, 24)))
    [2, 3, 1, 3, 3]
    """
    out = bytearray(types.replace(bytes([TokenType.UNKNOWN]), bytes([TokenType.CONTROL])))
    if attributes is not None:
        # Parity: llama_vocab::impl::tokenizer_st_partition skips CONTROL|UNKNOWN tokens
        # without parse_special, whatever the file's type says.
        for index, attr in enumerate(attributes):
            if attr & (TokenAttr.CONTROL | TokenAttr.UNKNOWN):
                out[index] = TokenType.CONTROL
    out[unk_id] = TokenType.UNKNOWN
    return bytes(out)
