"""What every model shares when it is compiled: vocabulary, specials, decoder, normalizer.

>>> tok = toksmith.load("tokenizer.model")   # doctest: +SKIP  (calls configure_vocab)
"""
from __future__ import annotations

from toksmith._core.detokenizer import DecodeRules, Detokenizer, Render
from toksmith._core.engine import Engine
from toksmith._core.normalizer import Normalizer, Rules
from toksmith._core.trie import DoubleArrayTrie
from toksmith.errors import ModelFormatError
from toksmith.normalizers.charsmap import CharsMapNormalizerSpec
from toksmith.special_tokens import (TokenAttr, attributes_from_types, build_splitter,
                                     special_tokens_of)
from toksmith.spec import ReferenceRules, TokenizerSpec
from toksmith.vocab import TokenType

CORE_RULES = {ReferenceRules.SENTENCEPIECE: Rules.SENTENCEPIECE,
              ReferenceRules.LLAMA_CPP: Rules.LLAMA_CPP}
HEX_DIGITS = "0123456789ABCDEF"


def byte_piece_value(piece: bytes) -> int | None:
    """The byte a "<0xXX>" piece stands for, or None (sentencepiece PieceToByte)."""
    if len(piece) != 6 or not piece.startswith(b"<0x") or not piece.endswith(b">"):
        return None
    try:
        return int(piece[3:5], 16)
    except ValueError:
        return None


def byte_token_ids(spec: TokenizerSpec) -> list[int]:
    """The id emitted for each byte value by byte fallback, -1 where there is none."""
    vocab = spec.vocab
    ids = [-1] * 256
    if spec.rules is ReferenceRules.LLAMA_CPP:
        # Parity: llama_vocab::byte_to_token looks up the text "<0xXX>" (any
        # token type), then the one-byte text itself.
        by_text = {piece: i for i, piece in enumerate(vocab.pieces)}
        for b in range(256):
            found = by_text.get(f"<0x{HEX_DIGITS[b >> 4]}{HEX_DIGITS[b & 15]}>".encode())
            ids[b] = found if found is not None else by_text.get(bytes([b]), -1)
        return ids
    for i in vocab.ids_of_type(TokenType.BYTE):
        ids[_byte_value(spec, i)] = i
    return ids


def _byte_value(spec: TokenizerSpec, token_id: int) -> int:
    value = byte_piece_value(spec.vocab.pieces[token_id])
    if value is None:
        raise ModelFormatError(spec.source, f"byte piece {token_id} is "
                                            f"{spec.vocab.pieces[token_id]!r}, expected <0xXX>")
    return value


def build_normalizer(spec: CharsMapNormalizerSpec, rules: ReferenceRules,
                     user_defined: DoubleArrayTrie | None, source: str) -> Normalizer:
    try:
        return Normalizer(spec.precompiled_charsmap,
                          add_dummy_prefix=spec.add_dummy_prefix,
                          remove_extra_whitespaces=spec.remove_extra_whitespaces,
                          escape_whitespaces=spec.escape_whitespaces,
                          user_defined=user_defined, rules=CORE_RULES[rules])
    except ModelFormatError:
        raise   # already names the file
    except ValueError as e:
        raise ModelFormatError(source, f"precompiled_charsmap: {e}") from None


def user_defined_trie(spec: TokenizerSpec) -> DoubleArrayTrie | None:
    """Trie of the USER_DEFINED pieces (value: id), or None when there are none."""
    vocab = spec.vocab
    ids = vocab.ids_of_type(TokenType.USER_DEFINED)
    if not ids:
        return None
    try:
        return DoubleArrayTrie.build([vocab.pieces[i] for i in ids], ids)
    except ModelFormatError:
        raise   # already names the file
    except ValueError as e:
        raise ModelFormatError(spec.source, f"user-defined pieces: {e}") from None


def build_detokenizer(spec: TokenizerSpec) -> Detokenizer:
    vocab = spec.vocab
    byte_values = [-1] * len(vocab)
    for i in vocab.ids_of_type(TokenType.BYTE):
        byte_values[i] = _byte_value(spec, i)
    decoder = spec.decoder
    special = vocab.special
    if spec.rules is ReferenceRules.LLAMA_CPP:
        attrs = spec.token_attributes or attributes_from_types(vocab.types)
        renders = {a: _render(a) for a in set(attrs)}
        return Detokenizer.build(
            DecodeRules.DECODE_LLAMA_CPP, vocab.pieces, bytes(map(renders.__getitem__, attrs)),
            byte_values, add_space_prefix=spec.normalizer.add_dummy_prefix,
            add_bos=spec.add_bos, add_eos=spec.add_eos,
            bos_id=_or_none(special.bos), eos_id=_or_none(special.eos))
    denormalizer = None
    if decoder.denormalizer is not None:
        # Parity: sentencepiece denormalizes decoded text with the denormalizer
        # spec's own charsmap and flags.
        denormalizer = build_normalizer(decoder.denormalizer, ReferenceRules.SENTENCEPIECE,
                                        None, spec.source)
    return Detokenizer.build(
        DecodeRules.DECODE_SENTENCEPIECE, vocab.pieces, vocab.types, byte_values,
        unk_surface=decoder.unk_surface.encode("utf-8"),
        add_dummy_prefix=decoder.add_dummy_prefix,
        remove_extra_whitespaces=decoder.remove_extra_whitespaces,
        denormalizer=denormalizer)


def _render(attr: int) -> int:
    """Parity: llama_vocab::impl::token_to_piece, in its order of checks."""
    if attr & (TokenAttr.CONTROL | TokenAttr.UNKNOWN):
        return Render.RENDER_SPECIAL
    if attr & TokenAttr.USER_DEFINED:
        return Render.RENDER_TEXT
    if attr & TokenAttr.NORMAL:
        return Render.RENDER_UNESCAPED
    if attr & TokenAttr.BYTE:
        return Render.RENDER_BYTE
    return Render.RENDER_NOTHING


def _or_none(token_id: int | None) -> int:
    return -1 if token_id is None else token_id


def configure_vocab(engine: Engine, spec: TokenizerSpec) -> None:
    """Install the parts every model shares; the model's own configure call follows."""
    vocab = spec.vocab
    special = vocab.special
    try:
        engine._configure_vocab(
            len(vocab), vocab.types,
            unk_id=_or_none(special.unk), bos_id=_or_none(special.bos),
            eos_id=_or_none(special.eos), add_bos=spec.add_bos, add_eos=spec.add_eos,
            byte_ids=byte_token_ids(spec), detokenizer=build_detokenizer(spec),
            splitter=build_splitter(spec, special_tokens_of(spec)))
    except ModelFormatError:
        raise   # already names the file
    except ValueError as e:
        raise ModelFormatError(spec.source, str(e)) from None
