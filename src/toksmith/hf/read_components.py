"""Read the normalizer, pre-tokenizer and decoder sections of a tokenizer.json.

Each `read_*` takes the JSON value and its path and returns the dataclass of
`toksmith.hf.components`; the accepted `type` names, required fields and defaults are
tokenizers 0.23.3's `Deserialize` impls (normalizers/mod.rs, pre_tokenizers/mod.rs,
decoders/mod.rs and the structs they name).

>>> read_pre_tokenizer({"type": "Digits", "individual_digits": True}, "$.pre_tokenizer", "tok.json")
Digits(individual_digits=True)
"""
from __future__ import annotations

import base64
import binascii
import struct
from typing import Any, Callable

from . import components as c
from ._fields import Fields, as_enum, expect_type, fail, shown
from .onig_syntax import oniguruma_error

Reader = Callable[[Fields], Any]


# ---------------------------------------------------------------------- shared pieces

def read_pattern(value: Any, path: str, source: str) -> c.Pattern:
    """`{"String": "..."}` or `{"Regex": "..."}` (tokenizers' SplitPattern / ReplacePattern)."""
    obj = expect_type(value, dict, 'an object {"String": ...} or {"Regex": ...}', source, path)
    if len(obj) != 1 or next(iter(obj)) not in ("String", "Regex"):
        keys = ", ".join(repr(key) for key in obj) or "no key"
        fail(source, path, f'expected an object {{"String": ...}} or {{"Regex": ...}}; found {keys}')
    kind, text = next(iter(obj.items()))
    expect_type(text, str, "a string", source, f"{path}.{kind}")
    if kind == "String":
        return c.StringPattern(text)
    problem = oniguruma_error(text)
    if problem is not None:
        fail(source, f"{path}.Regex", f"regex does not compile (Oniguruma): {problem}; pattern {shown(text)}")
    return c.RegexPattern(text)


def _replace(f: Fields) -> c.Replace:
    return c.Replace(pattern=read_pattern(f.raw("pattern"), f.at("pattern"), f.source), content=f.str("content"))


def _byte_level(f: Fields) -> c.ByteLevel:
    # Parity: tokenizers pre_tokenizers/byte_level.rs ByteLevel: add_prefix_space and trim_offsets
    # have no serde default; use_regex defaults to true.
    return c.ByteLevel(add_prefix_space=f.bool("add_prefix_space"), trim_offsets=f.bool("trim_offsets"),
                       use_regex=f.bool("use_regex", True))


def _metaspace(f: Fields) -> c.Metaspace:
    # Parity: tokenizers pre_tokenizers/metaspace.rs MetaspaceHelper (legacy add_prefix_space, str_rep).
    replacement = f.char("replacement")
    add_prefix_space = f.bool("add_prefix_space", None, nullable=True)
    scheme = f.enum(c.PrependScheme, "prepend_scheme", c.PrependScheme.ALWAYS)
    split = f.bool("split", True, nullable=True)
    f.str("str_rep", None, nullable=True)       # legacy, ignored by tokenizers
    if add_prefix_space is False:
        if scheme is not c.PrependScheme.NEVER:
            f.fail("add_prefix_space", "add_prefix_space false does not match prepend_scheme "
                   f"'{scheme.value}' (tokenizers refuses this)")
    return c.Metaspace(replacement=replacement, prepend_scheme=scheme, split=split)


def _unit(cls: type) -> Reader:
    return lambda f: cls()


def _dispatch(table: dict[str, Reader], what: str, value: Any, path: str, source: str) -> Any:
    f = Fields(value, path, source)
    kind = f.raw("type", None)
    if kind is None:
        f.fail(None, f"missing field 'type' (a {what} type: {', '.join(table)})")
    if not isinstance(kind, str) or kind not in table:
        f.fail("type", f"expected one of {', '.join(table)}; found {shown(kind)}")
    result = table[kind](f)
    f.done()
    return result


def _sequence(key: str, item_reader: Callable[[Any, str, str], Any]) -> Reader:
    def read(f: Fields) -> tuple:
        items = f.list(key)
        return tuple(item_reader(item, f"{f.at(key)}[{i}]", f.source) for i, item in enumerate(items))
    return read


# ---------------------------------------------------------------------- normalizers

def _bert_normalizer(f: Fields) -> c.BertNormalizer:
    # Parity: tokenizers normalizers/bert.rs BertNormalizer: only strip_accents (an Option) may be missing.
    return c.BertNormalizer(clean_text=f.bool("clean_text"), handle_chinese_chars=f.bool("handle_chinese_chars"),
                            strip_accents=f.bool("strip_accents", None, nullable=True),
                            lowercase=f.bool("lowercase"))


def _precompiled(f: Fields) -> c.Precompiled:
    text = f.str("precompiled_charsmap")
    try:
        charsmap = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        f.fail("precompiled_charsmap", f"expected base64; {exc}")
    # Parity: spm_precompiled Precompiled::from: a u32 trie size, the trie, then the normalized strings.
    if len(charsmap) < 4:
        f.fail("precompiled_charsmap", f"charsmap of {len(charsmap)} bytes is too short (tokenizers cannot parse it)")
    (trie_size,) = struct.unpack_from("<I", charsmap)
    if 4 + trie_size > len(charsmap):
        f.fail("precompiled_charsmap", f"charsmap trie of {trie_size} bytes does not fit the {len(charsmap)} bytes")
    return c.Precompiled(charsmap)


def _strip_normalizer(f: Fields) -> c.Strip:
    return c.Strip(left=f.bool("strip_left"), right=f.bool("strip_right"))


_NORMALIZERS: dict[str, Reader] = {
    "BertNormalizer": _bert_normalizer,
    "Bert": _bert_normalizer,           # the name tokenizers' tagged path accepts too
    "Strip": _strip_normalizer,
    "StripAccents": _unit(c.StripAccents),
    "NFC": _unit(c.NFC),
    "NFD": _unit(c.NFD),
    "NFKC": _unit(c.NFKC),
    "NFKD": _unit(c.NFKD),
    "Sequence": lambda f: c.NormalizerSequence(_sequence("normalizers", read_normalizer_item)(f)),
    "Lowercase": _unit(c.Lowercase),
    "Nmt": _unit(c.Nmt),
    "Precompiled": _precompiled,
    "Replace": _replace,
    "Prepend": lambda f: c.Prepend(f.str("prepend")),
    "ByteLevel": _unit(c.ByteLevelNormalizer),
}


def read_normalizer_item(value: Any, path: str, source: str) -> c.Normalizer:
    return _dispatch(_NORMALIZERS, "normalizer", value, path, source)


def read_normalizer(value: Any, path: str, source: str) -> c.Normalizer | None:
    """The `normalizer` section (null: none)."""
    return None if value is None else read_normalizer_item(value, path, source)


# ---------------------------------------------------------------------- pre-tokenizers

def _split(f: Fields) -> c.Split:
    # Parity: tokenizers pre_tokenizers/split.rs SplitHelper: pattern, behavior and invert are all required.
    return c.Split(pattern=read_pattern(f.raw("pattern"), f.at("pattern"), f.source),
                   behavior=f.enum(c.SplitBehavior, "behavior"), invert=f.bool("invert"))


def _fixed_length(f: Fields) -> c.FixedLength:
    length = f.u32("length", 5)
    if length == 0:
        # tokenizers loads it, then panics in encode (`chunks(0)`).
        f.fail("length", "expected a length of at least 1; found 0")
    return c.FixedLength(length)


_PRE_TOKENIZERS: dict[str, Reader] = {
    "BertPreTokenizer": _unit(c.BertPreTokenizer),
    "ByteLevel": _byte_level,
    "CharDelimiterSplit": lambda f: c.CharDelimiterSplit(f.char("delimiter")),
    "Metaspace": _metaspace,
    "Whitespace": _unit(c.Whitespace),
    "Sequence": lambda f: c.PreTokenizerSequence(_sequence("pretokenizers", read_pre_tokenizer_item)(f)),
    "Split": _split,
    "Punctuation": lambda f: c.Punctuation(f.enum(c.SplitBehavior, "behavior", c.SplitBehavior.ISOLATED)),
    "WhitespaceSplit": _unit(c.WhitespaceSplit),
    "Digits": lambda f: c.Digits(f.bool("individual_digits")),
    "UnicodeScripts": _unit(c.UnicodeScripts),
    "FixedLength": _fixed_length,
}


def read_pre_tokenizer_item(value: Any, path: str, source: str) -> c.PreTokenizer:
    return _dispatch(_PRE_TOKENIZERS, "pre-tokenizer", value, path, source)


def read_pre_tokenizer(value: Any, path: str, source: str) -> c.PreTokenizer | None:
    """The `pre_tokenizer` section (null: none)."""
    return None if value is None else read_pre_tokenizer_item(value, path, source)


# ---------------------------------------------------------------------- decoders

_DECODERS: dict[str, Reader] = {
    "BPEDecoder": lambda f: c.BpeDecoder(f.str("suffix")),
    "ByteLevel": _byte_level,
    "WordPiece": lambda f: c.WordPieceDecoder(prefix=f.str("prefix"), cleanup=f.bool("cleanup")),
    "Metaspace": _metaspace,
    "CTC": lambda f: c.Ctc(pad_token=f.str("pad_token"), word_delimiter_token=f.str("word_delimiter_token"),
                           cleanup=f.bool("cleanup")),
    "Sequence": lambda f: c.DecoderSequence(_sequence("decoders", read_decoder_item)(f)),
    "Replace": _replace,
    "Fuse": _unit(c.Fuse),
    "Strip": lambda f: c.StripDecoder(content=f.char("content"), start=f.u32("start"), stop=f.u32("stop")),
    "ByteFallback": _unit(c.ByteFallback),
}


def read_decoder_item(value: Any, path: str, source: str) -> c.Decoder:
    return _dispatch(_DECODERS, "decoder", value, path, source)


def read_decoder(value: Any, path: str, source: str) -> c.Decoder | None:
    """The `decoder` section (null: none)."""
    return None if value is None else read_decoder_item(value, path, source)


__all__ = ["read_normalizer", "read_pre_tokenizer", "read_decoder", "read_pattern", "as_enum"]
