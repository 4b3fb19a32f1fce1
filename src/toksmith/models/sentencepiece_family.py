"""Stages the SentencePiece-family models (Unigram, SentencePiece BPE) share: byte
pieces "<0xXX>", the charsmap normalizer, the SentencePiece and llama.cpp decoders.
The spec's rules pick each compiled class here, once, at load time.

>>> byte_piece_value(b"<0x41>")
65
"""
from __future__ import annotations

from toksmith._core.detokenizer import Decoder, LlamaCppDecoder, Render, SentencePieceDecoder
from toksmith._core.normalizer import CharsMapNormalizer, LlamaUgmNormalizer, SentencePieceNormalizer
from toksmith._core.trie import DoubleArrayTrie
from toksmith.errors import ModelFormatError
from toksmith.models.common import bad_data_names_file, id_or_minus_one
from toksmith.normalizers.charsmap import CharsMapNormalizerSpec
from toksmith.special_tokens import TokenAttr, attributes_from_types
from toksmith.spec import ReferenceRules, TokenizerSpec
from toksmith.vocab import TokenType

HEX_DIGITS = "0123456789ABCDEF"

# The charsmap normalizer class of each reference's rules.
CHARSMAP_NORMALIZERS: dict[ReferenceRules, type[CharsMapNormalizer]] = {
    ReferenceRules.SENTENCEPIECE: SentencePieceNormalizer,
    ReferenceRules.LLAMA_CPP: LlamaUgmNormalizer,
}


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


def build_charsmap_normalizer(spec: CharsMapNormalizerSpec, rules: ReferenceRules,
                              user_defined: DoubleArrayTrie | None, source: str) -> CharsMapNormalizer:
    """The charsmap normalizer of `rules` (user-defined pieces pass through it unchanged)."""
    with bad_data_names_file(source, "precompiled_charsmap"):
        return CHARSMAP_NORMALIZERS[rules](
            spec.precompiled_charsmap, add_dummy_prefix=spec.add_dummy_prefix,
            remove_extra_whitespaces=spec.remove_extra_whitespaces,
            escape_whitespaces=spec.escape_whitespaces, user_defined=user_defined,
            treat_whitespace_as_suffix=spec.treat_whitespace_as_suffix)


def user_defined_trie(spec: TokenizerSpec) -> DoubleArrayTrie | None:
    """Trie of the USER_DEFINED pieces (value: id), or None when there are none."""
    vocab = spec.vocab
    ids = vocab.ids_of_type(TokenType.USER_DEFINED)
    if not ids:
        return None
    with bad_data_names_file(spec.source, "user-defined pieces"):
        return DoubleArrayTrie.build([vocab.pieces[i] for i in ids], ids)


def _byte_values(spec: TokenizerSpec) -> list[int]:
    values = [-1] * len(spec.vocab)
    for i in spec.vocab.ids_of_type(TokenType.BYTE):
        values[i] = _byte_value(spec, i)
    return values


def build_sentencepiece_decoder(spec: TokenizerSpec) -> SentencePieceDecoder:
    """Parity: SentencePieceProcessor::Decode, with the denormalizer spec if the file has one."""
    decoder = spec.decoder
    denormalizer = None
    if decoder.denormalizer is not None:
        # Parity: sentencepiece denormalizes decoded text with the denormalizer
        # spec's own charsmap and flags.
        denormalizer = build_charsmap_normalizer(decoder.denormalizer, ReferenceRules.SENTENCEPIECE,
                                                 None, spec.source)
    return SentencePieceDecoder.build(
        spec.vocab.pieces, spec.vocab.types, _byte_values(spec),
        unk_surface=decoder.unk_surface.encode("utf-8"),
        add_dummy_prefix=decoder.add_dummy_prefix,
        remove_extra_whitespaces=decoder.remove_extra_whitespaces,
        denormalizer=denormalizer)


def build_llama_cpp_decoder(spec: TokenizerSpec) -> LlamaCppDecoder:
    """Parity: llama_detokenize / token_to_piece of SPM and UGM vocabularies."""
    vocab = spec.vocab
    attrs = spec.token_attributes or attributes_from_types(vocab.types)
    renders = {a: render_of_attribute(a) for a in set(attrs)}
    return LlamaCppDecoder.build(
        vocab.pieces, bytes(map(renders.__getitem__, attrs)), _byte_values(spec),
        add_space_prefix=spec.normalizer.add_dummy_prefix, add_bos=spec.add_bos,
        add_eos=spec.add_eos, bos_id=id_or_minus_one(vocab.special.bos),
        eos_id=id_or_minus_one(vocab.special.eos))


# The decoder builder of each reference's rules.
DECODER_BUILDERS = {
    ReferenceRules.SENTENCEPIECE: build_sentencepiece_decoder,
    ReferenceRules.LLAMA_CPP: build_llama_cpp_decoder,
}


def build_decoder(spec: TokenizerSpec) -> Decoder:
    return DECODER_BUILDERS[spec.rules](spec)


def render_of_attribute(attr: int) -> int:
    """How llama.cpp prints a token of attribute bits `attr` (a `Render`).

    Parity: llama_vocab::impl::token_to_piece for SPM, UGM and WPM, in its order of checks."""
    if attr & (TokenAttr.CONTROL | TokenAttr.UNKNOWN):
        return Render.RENDER_SPECIAL
    if attr & TokenAttr.USER_DEFINED:
        return Render.RENDER_TEXT
    if attr & TokenAttr.NORMAL:
        return Render.RENDER_UNESCAPED
    if attr & TokenAttr.BYTE:
        return Render.RENDER_BYTE
    return Render.RENDER_NOTHING
