"""Special tokens: which texts `encode(..., parse_special=True)` turns into ids.

Under llama.cpp's rules these are the tokens whose attributes include
CONTROL, USER_DEFINED or UNKNOWN (llama_vocab's cache_special_tokens);
user-defined ones are split out even without parse_special. Under
sentencepiece's rules control and unknown pieces are split out with
parse_special; user-defined pieces are matched by the model itself. Under tokenizers'
rules (tokenizer.json) special added tokens are split out with parse_special, other
added tokens always.

>>> [t.text for t in tok.special_tokens][:3]     # doctest: +SKIP
['<unk>', '<s>', '</s>']
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntFlag

from toksmith._core.specials import SpecialSplitter
from toksmith.spec import ReferenceRules, TokenizerSpec
from toksmith.vocab import TokenType


class TokenAttr(IntFlag):
    """llama.cpp's llama_token_attr bits."""

    UNDEFINED = 0
    UNKNOWN = 1 << 0
    UNUSED = 1 << 1
    NORMAL = 1 << 2
    CONTROL = 1 << 3
    USER_DEFINED = 1 << 4
    BYTE = 1 << 5
    NORMALIZED = 1 << 6
    LSTRIP = 1 << 7
    RSTRIP = 1 << 8
    SINGLE_WORD = 1 << 9


# llama.cpp's token-type -> attribute table (llama_vocab::impl::load).
ATTR_OF_TYPE: dict[int, TokenAttr] = {TokenType.UNDEFINED: TokenAttr.UNDEFINED, TokenType.NORMAL: TokenAttr.NORMAL,
                TokenType.UNKNOWN: TokenAttr.UNKNOWN, TokenType.CONTROL: TokenAttr.CONTROL,
                TokenType.USER_DEFINED: TokenAttr.USER_DEFINED, TokenType.UNUSED: TokenAttr.UNUSED,
                TokenType.BYTE: TokenAttr.BYTE}

# Values of the split flags understood by the compiled splitter (specials.pxd).
_SPLIT_ALWAYS, _STRIP_LEFT, _STRIP_RIGHT = 1, 2, 4


class SplitWhen(Enum):
    ALWAYS = "always"                  # even with parse_special=False
    PARSE_SPECIAL = "parse_special"    # only with parse_special=True
    NEVER = "never"                    # the model matches the text itself


class SpecialKind(Enum):
    CONTROL = "control"
    USER_DEFINED = "user_defined"
    UNKNOWN = "unknown"


@dataclass(frozen=True, repr=False)
class SpecialToken:
    """One special token: its id, text, kind, and how input text is split around it."""

    id: int
    text: str
    kind: SpecialKind
    split: SplitWhen
    lstrip: bool = False
    rstrip: bool = False
    # The text matched in the input when it is not the vocabulary's piece of `id` (tiktoken
    # lets two texts share an id); empty: the piece.
    alias: bytes = b""

    def __repr__(self) -> str:
        text = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        strip = "".join(f", {side}" for side in ("lstrip", "rstrip") if getattr(self, side))
        return f"<SpecialToken {self.id} {text!r} {self.kind.value} split={self.split.value}{strip}>"


# bytes.translate table: token type -> attribute bits (all fit in a byte).
_ATTR_TABLE = bytes(int(ATTR_OF_TYPE.get(t, TokenAttr.UNDEFINED)) for t in range(256))


def attributes_from_types(types: bytes) -> list[int]:
    """llama.cpp attributes of tokens that carry no model-specific overrides."""
    return list(types.translate(_ATTR_TABLE))


def _llama_cpp_special_tokens(spec: TokenizerSpec) -> list[SpecialToken]:
    """Parity: llama_vocab's cache_special_tokens (CONTROL, USER_DEFINED, UNKNOWN attributes)."""
    vocab = spec.vocab
    found = []
    attrs = spec.token_attributes or attributes_from_types(vocab.types)
    wanted = int(TokenAttr.CONTROL | TokenAttr.USER_DEFINED | TokenAttr.UNKNOWN)
    for i, attr in enumerate(attrs):
        if not attr & wanted:
            continue
        kind = (SpecialKind.CONTROL if attr & TokenAttr.CONTROL else
                SpecialKind.UNKNOWN if attr & TokenAttr.UNKNOWN else SpecialKind.USER_DEFINED)
        # Parity: llama.cpp splits user-defined tokens even without parse_special.
        split = (SplitWhen.PARSE_SPECIAL if attr & (TokenAttr.CONTROL | TokenAttr.UNKNOWN)
                 else SplitWhen.ALWAYS)
        found.append(SpecialToken(i, vocab.piece(i), kind, split,
                                  lstrip=bool(attr & TokenAttr.LSTRIP),
                                  rstrip=bool(attr & TokenAttr.RSTRIP)))
    return found


def _sentencepiece_special_tokens(spec: TokenizerSpec) -> list[SpecialToken]:
    """Control and unknown pieces split with parse_special; user-defined ones never (the
    sentencepiece model matches them itself)."""
    vocab = spec.vocab
    found = []
    kinds = {TokenType.CONTROL: SpecialKind.CONTROL, TokenType.UNKNOWN: SpecialKind.UNKNOWN,
             TokenType.USER_DEFINED: SpecialKind.USER_DEFINED}
    for token_type, kind in kinds.items():
        split = SplitWhen.NEVER if kind is SpecialKind.USER_DEFINED else SplitWhen.PARSE_SPECIAL
        found.extend(SpecialToken(i, vocab.piece(i), kind, split)
                     for i in vocab.ids_of_type(token_type))
    found.sort(key=lambda t: t.id)
    return found


def _tiktoken_special_tokens(spec: TokenizerSpec) -> list[SpecialToken]:
    """Parity: tiktoken Encoding.encode(allowed_special="all"): every special token is
    split out with parse_special, none without (encode_ordinary)."""
    specials = spec.byte_level.vocab.special_tokens if spec.byte_level is not None else {}
    return sorted((SpecialToken(i, text.decode("utf-8"), SpecialKind.CONTROL, SplitWhen.PARSE_SPECIAL,
                                alias=b"" if text == spec.vocab.pieces[i] else text)
                   for text, i in specials.items()), key=lambda t: (t.id, t.text))


def _hf_special_tokens(spec: TokenizerSpec) -> list[SpecialToken]:
    """Parity: tokenizers 0.23 AddedVocabulary: every added token is split out of the raw
    text, a special one only with parse_special (tokenizers' encode_special_tokens=False),
    others always. The unknown token and the post-processor's special tokens that are no
    added token are listed too, never split out (the model sees their text)."""
    from toksmith.hf.special_roles import post_processor_ids
    hf, vocab = spec.hf, spec.vocab
    if hf is None:          # rules="hf" given for a file that is no tokenizer.json: its token types
        return _llama_cpp_special_tokens(spec)
    unk = vocab.special.unk
    found = [SpecialToken(t.id, t.content,
                          SpecialKind.UNKNOWN if t.id == unk else
                          SpecialKind.CONTROL if t.special else SpecialKind.USER_DEFINED,
                          SplitWhen.PARSE_SPECIAL if t.special else SplitWhen.ALWAYS,
                          lstrip=t.lstrip, rstrip=t.rstrip)
             for t in hf.added_tokens]
    listed = {t.id for t in found}
    for token_id in post_processor_ids(hf):
        if token_id not in listed and token_id < len(vocab):
            found.append(SpecialToken(token_id, vocab.piece(token_id), SpecialKind.CONTROL, SplitWhen.NEVER))
            listed.add(token_id)
    if unk is not None and unk not in listed and unk < len(vocab):
        found.append(SpecialToken(unk, vocab.piece(unk), SpecialKind.UNKNOWN, SplitWhen.NEVER))
    found.sort(key=lambda t: (t.id, t.text))
    return found


def _no_special_tokens(spec: TokenizerSpec) -> list[SpecialToken]:
    """The rwkv package's TRIE_TOKENIZER splits nothing out: every text goes to its trie."""
    return []


# Which tokens are special, by each reference's rules.
SPECIAL_TOKEN_RULES = {
    ReferenceRules.TIKTOKEN: _tiktoken_special_tokens,
    ReferenceRules.LLAMA_CPP: _llama_cpp_special_tokens,
    ReferenceRules.SENTENCEPIECE: _sentencepiece_special_tokens,
    ReferenceRules.RWKV: _no_special_tokens,
    ReferenceRules.HF: _hf_special_tokens,
}


def special_tokens_of(spec: TokenizerSpec) -> tuple[SpecialToken, ...]:
    """The special tokens of `spec` under its rules, in id order."""
    return tuple(SPECIAL_TOKEN_RULES[spec.rules](spec))


def build_splitter(spec: TokenizerSpec, tokens: tuple[SpecialToken, ...]) -> SpecialSplitter | None:
    """The compiled splitter for `tokens`, or None when nothing is ever split.

    Rank order is llama.cpp's: longest text first (its sort is not stable;
    equal lengths go by id here, which only matters for overlapping texts).
    """
    pieces = spec.vocab.pieces
    splittable = [t for t in tokens if t.split is not SplitWhen.NEVER and (t.alias or pieces[t.id])]
    if not splittable:
        return None
    texts = {id(t): t.alias or pieces[t.id] for t in splittable}
    splittable.sort(key=lambda t: (-len(texts[id(t)]), t.id))
    flags = bytes((_SPLIT_ALWAYS if t.split is SplitWhen.ALWAYS else 0)
                  | (_STRIP_LEFT if t.lstrip else 0) | (_STRIP_RIGHT if t.rstrip else 0)
                  for t in splittable)
    return SpecialSplitter.build([texts[id(t)] for t in splittable],
                                 [t.id for t in splittable], flags)
