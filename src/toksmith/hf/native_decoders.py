"""tokenizer.json decoders -> one native `HfDecoder`: a chain of streaming stages.

Parity: tokenizers' Tokenizer::decode: each id becomes its token text (an added token's
content, normalized when the token is marked `normalized` and the file has a normalizer;
the special added tokens dropped with skip_special), the decoder's `decode_chain` runs
over the texts, and the results are joined; without a decoder the texts are joined by
spaces. Every decoder type becomes stages of `toksmith._core.hf_decoders`; a Replace
with a Regex pattern runs on toksmith.hf.native_regex's matcher (and is refused by JSON
path where that matcher refuses the pattern).

>>> build_decoder(spec, hf).decode([15496, 995])               # doctest: +SKIP
'Hello world'
"""
from __future__ import annotations

from typing import Callable

from toksmith._core.hf_decoders import (ByteFallbackStage, ByteLevelStage, BpeSuffixStage, DedupStage,
                                        DropEmptyStage, FuseStage, HfDecoder, JoinSpacesStage, MetaspaceStage,
                                        RegexReplaceStage, ReplaceStage, Stage, StripStage, TokenKind, WordPiecePrefixStage)
from toksmith._core.pieces import untrack_flat_list
from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec
from toksmith.vocab import TokenType

# Parity: decoders/wordpiece.rs `cleanup`, in its order (CTC runs it too).
CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
           (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


# Stages call the next one down the chain (C recursion): a longer chain is refused.
MAX_STAGES = 256


def build_decoder(spec: TokenizerSpec, hf: c.HfTokenizerSpec) -> HfDecoder:
    """The native decoder of the file (its `$.decoder`, or none)."""
    texts, kinds = decode_texts(spec, hf)
    stages, _ = decoder_stages(hf, hf.decoder, "$.decoder", fused=False)
    if len(stages) > MAX_STAGES:
        from toksmith.hf.pipeline import unsupported
        raise unsupported(hf, "$.decoder", hf.decoder, f"a chain of {len(stages)} decoder stages "
                                                       f"(at most {MAX_STAGES} run natively)")
    pieces = list(spec.vocab.pieces)
    untrack_flat_list(pieces)   # bytes only: the GC need not walk it (as Vocab's own lists)
    return HfDecoder.build(texts, kinds, stages, pieces)


def decode_texts(spec: TokenizerSpec, hf: c.HfTokenizerSpec) -> tuple[list[bytes], bytes]:
    """Each id's text as Tokenizer::decode reads it, and its TokenKind.

    Parity: AddedVocabulary::simple_id_to_token (the normalized form of a `normalized`
    added token, cached when the tokens are added) and is_special_token (by text: a
    special token whose normalized form differs from its content is not dropped)."""
    texts = list(spec.vocab.pieces)
    normalized = [t for t in hf.added_tokens if t.normalized]
    if normalized and hf.normalizer is not None:
        from toksmith.hf.native_normalizers import build_normalizer
        normalizer = build_normalizer(hf, hf.normalizer, "$.normalizer")
        if normalizer is not None:
            for token in normalized:
                text = normalizer.normalize_text(_utf8(token.content))
                texts[token.id] = _utf8(text) if isinstance(text, str) else bytes(text)
    specials = {t.content.encode("utf-8", "surrogatepass") for t in hf.added_tokens if t.special and t.content}
    # Speed: C-level passes (translate, map) over the 30k-250k ids; specials are few.
    types = bytes(spec.vocab.types)
    kinds = bytearray(types.translate(_KIND_OF_TYPE))
    if specials:
        flags = bytes(map(specials.__contains__, texts))
        i = flags.find(1)
        while i >= 0:
            if types[i] != TokenType.UNDEFINED:
                kinds[i] = TokenKind.TOKEN_SPECIAL
            i = flags.find(1, i + 1)
    return texts, bytes(kinds)


# TokenType -> TokenKind before specials: an id no token has is missing, any other is text.
_KIND_OF_TYPE = bytes([TokenKind.TOKEN_MISSING if t == TokenType.UNDEFINED else TokenKind.TOKEN_TEXT
                       for t in range(256)])


def decoder_stages(hf: c.HfTokenizerSpec, component, path: str, fused: bool) -> tuple[list[Stage], bool]:
    """The stages of `component` (at JSON `path`), and whether its output is one token.

    `fused`: the tokens reaching it were joined into one already (by Fuse or ByteLevel):
    then a stage that treats the last token apart knows it holds the last one."""
    builder = DECODER_BUILDERS.get(type(component))
    if builder is None:
        from toksmith.hf.pipeline import unsupported
        raise unsupported(hf, path, component, "no native decoder for this type yet")
    return builder(hf, component, path, fused)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _replace(pattern: str, content: str, **kwargs) -> list[Stage]:
    """A ReplaceStage, or none where it changes nothing."""
    return [] if pattern == content else [ReplaceStage(_utf8(pattern), _utf8(content), **kwargs)]


def _cleanup() -> list[Stage]:
    return [s for pattern, content in CLEANUP for s in _replace(pattern, content)]


def _none(hf, component: None, path: str, fused: bool):
    return [JoinSpacesStage()], True


def _bpe(hf, component: c.BpeDecoder, path: str, fused: bool):
    # after a Fuse the one token is the last: its suffixes become ""
    if fused:
        return _replace(component.suffix, ""), fused
    return [BpeSuffixStage(_utf8(component.suffix))], fused


def _byte_fallback(hf, component: c.ByteFallback, path: str, fused: bool):
    return [ByteFallbackStage()], fused


def _byte_level(hf, component: c.ByteLevel, path: str, fused: bool):
    return [ByteLevelStage()], True


def _ctc(hf, component: c.Ctc, path: str, fused: bool):
    stages: list[Stage] = [] if fused else [DedupStage()]
    stages += _replace(component.pad_token, "")
    if component.cleanup:
        stages += _cleanup() + _replace(component.word_delimiter_token, " ")
    return stages + [DropEmptyStage()], fused


def _fuse(hf, component: c.Fuse, path: str, fused: bool):
    return [FuseStage()], True


def _metaspace(hf, component: c.Metaspace, path: str, fused: bool):
    drop_in_first = component.prepend_scheme is not c.PrependScheme.NEVER
    return [MetaspaceStage(_utf8(component.replacement), drop_in_first)], fused


def _replace_decoder(hf, component: c.Replace, path: str, fused: bool):
    if isinstance(component.pattern, c.RegexPattern):
        from toksmith.hf.native_regex import native_pattern
        return [RegexReplaceStage(native_pattern(hf, component.pattern, f"{path}.pattern"),
                                  _utf8(component.content))], fused
    return _replace(component.pattern.text, component.content, empty_token_stays_empty=True), fused


def _strip(hf, component: c.StripDecoder, path: str, fused: bool):
    if component.start == 0 and component.stop == 0:
        return [], fused
    return [StripStage(_utf8(component.content), component.start, component.stop)], fused


def _wordpiece(hf, component: c.WordPieceDecoder, path: str, fused: bool):
    # after a Fuse the one token is the first: its prefix stays
    stages: list[Stage] = [] if fused else [WordPiecePrefixStage(_utf8(component.prefix))]
    return stages + (_cleanup() if component.cleanup else []), fused


def _sequence(hf, component: c.DecoderSequence, path: str, fused: bool):
    stages: list[Stage] = []
    for i, member in enumerate(component.decoders):
        more, fused = decoder_stages(hf, member, f"{path}.decoders[{i}]", fused)
        stages += more
    return stages, fused


# type of the file's decoder (type(None) for none) -> builder(hf, component, json_path, fused)
# -> (stages, fused after it)
DECODER_BUILDERS: dict[type, Callable[..., tuple[list[Stage], bool]]] = {
    type(None): _none,
    c.BpeDecoder: _bpe,
    c.ByteFallback: _byte_fallback,
    c.ByteLevel: _byte_level,
    c.Ctc: _ctc,
    c.Fuse: _fuse,
    c.Metaspace: _metaspace,
    c.Replace: _replace_decoder,
    c.StripDecoder: _strip,
    c.WordPieceDecoder: _wordpiece,
    c.DecoderSequence: _sequence,
}
