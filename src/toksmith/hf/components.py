"""The components of a Hugging Face `tokenizer.json`, as typed data.

`toksmith.hf.reader` turns the file's JSON into these (every string from the file becomes
an enum or a dataclass field here); `toksmith.hf.pipeline` compiles them into native
stages. One dataclass per component type of tokenizers 0.23 (`tokenizers.normalizers`,
`pre_tokenizers`, `models`, `processors`, `decoders`), with the defaults tokenizers
gives a field the file leaves out.

>>> BertNormalizer().lowercase
True
>>> Split(pattern=RegexPattern(r"\\s+"), behavior=SplitBehavior.ISOLATED).invert
False
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Union


# ---------------------------------------------------------------------- patterns

@dataclass(frozen=True)
class StringPattern:
    """A literal string to match (`{"String": "..."}` in the file)."""

    text: str


@dataclass(frozen=True)
class RegexPattern:
    """A regex in Oniguruma syntax, as tokenizers compiles it (`{"Regex": "..."}`)."""

    regex: str


Pattern = Union[StringPattern, RegexPattern]


class SplitBehavior(Enum):
    """What a split does with the matched delimiter (tokenizers' SplitDelimiterBehavior)."""

    REMOVED = "Removed"
    ISOLATED = "Isolated"
    MERGED_WITH_PREVIOUS = "MergedWithPrevious"
    MERGED_WITH_NEXT = "MergedWithNext"
    CONTIGUOUS = "Contiguous"


class PrependScheme(Enum):
    """When Metaspace puts the replacement character before the text."""

    FIRST = "first"     # only before the first section (not after an added token)
    ALWAYS = "always"
    NEVER = "never"


# ---------------------------------------------------------------------- normalizers

@dataclass(frozen=True)
class BertNormalizer:
    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool | None = None     # None: as `lowercase`
    lowercase: bool = True


@dataclass(frozen=True)
class ByteLevelNormalizer:
    """Each byte of the UTF-8 text becomes its GPT-2 byte<->unicode character."""


@dataclass(frozen=True)
class Lowercase:
    pass


@dataclass(frozen=True)
class NFC:
    pass


@dataclass(frozen=True)
class NFD:
    pass


@dataclass(frozen=True)
class NFKC:
    pass


@dataclass(frozen=True)
class NFKD:
    pass


@dataclass(frozen=True)
class Nmt:
    pass


@dataclass(frozen=True)
class StripAccents:
    pass


@dataclass(frozen=True)
class Precompiled:
    """A sentencepiece precompiled charsmap (the file holds it in base64)."""

    charsmap: bytes = field(repr=False)


@dataclass(frozen=True)
class Prepend:
    prepend: str


@dataclass(frozen=True)
class Replace:
    pattern: Pattern
    content: str


@dataclass(frozen=True)
class Strip:
    left: bool = True
    right: bool = True


@dataclass(frozen=True)
class NormalizerSequence:
    normalizers: tuple[Normalizer, ...]


Normalizer = Union[BertNormalizer, ByteLevelNormalizer, Lowercase, NFC, NFD, NFKC, NFKD, Nmt, StripAccents,
                   Precompiled, Prepend, Replace, Strip, NormalizerSequence]


# ---------------------------------------------------------------------- pre-tokenizers

@dataclass(frozen=True)
class BertPreTokenizer:
    pass


@dataclass(frozen=True)
class ByteLevel:
    """The ByteLevel pre-tokenizer (and the post-processor and decoder of that name)."""

    add_prefix_space: bool = True
    trim_offsets: bool = True
    use_regex: bool = True


@dataclass(frozen=True)
class CharDelimiterSplit:
    delimiter: str      # one character


@dataclass(frozen=True)
class Digits:
    individual_digits: bool = False


@dataclass(frozen=True)
class FixedLength:
    length: int = 5


@dataclass(frozen=True)
class Metaspace:
    """The Metaspace pre-tokenizer (and decoder)."""

    replacement: str = "\u2581"
    prepend_scheme: PrependScheme = PrependScheme.ALWAYS
    split: bool = True


@dataclass(frozen=True)
class Punctuation:
    behavior: SplitBehavior = SplitBehavior.ISOLATED


@dataclass(frozen=True)
class Split:
    pattern: Pattern
    behavior: SplitBehavior
    invert: bool = False


@dataclass(frozen=True)
class UnicodeScripts:
    pass


@dataclass(frozen=True)
class Whitespace:
    pass


@dataclass(frozen=True)
class WhitespaceSplit:
    pass


@dataclass(frozen=True)
class PreTokenizerSequence:
    pretokenizers: tuple[PreTokenizer, ...]


PreTokenizer = Union[BertPreTokenizer, ByteLevel, CharDelimiterSplit, Digits, FixedLength, Metaspace,
                     Punctuation, Split, UnicodeScripts, Whitespace, WhitespaceSplit, PreTokenizerSequence]


# ---------------------------------------------------------------------- models

@dataclass(frozen=True, eq=False)
class BpeModel:
    """vocab: token text -> id; merges: (left, right) texts, best first."""

    vocab: dict[str, int]
    merges: tuple[tuple[str, str], ...]
    unk_token: str | None = None
    continuing_subword_prefix: str | None = None
    end_of_word_suffix: str | None = None
    fuse_unk: bool = False
    byte_fallback: bool = False
    ignore_merges: bool = False


@dataclass(frozen=True, eq=False)
class UnigramModel:
    """vocab: (piece, log-probability) by id."""

    vocab: tuple[tuple[str, float], ...]
    unk_id: int | None = None
    byte_fallback: bool = False


@dataclass(frozen=True, eq=False)
class WordPieceModel:
    vocab: dict[str, int]
    unk_token: str = "[UNK]"
    continuing_subword_prefix: str = "##"
    max_input_chars_per_word: int = 100


@dataclass(frozen=True, eq=False)
class WordLevelModel:
    vocab: dict[str, int]
    unk_token: str | None = None


Model = Union[BpeModel, UnigramModel, WordPieceModel, WordLevelModel]


# ---------------------------------------------------------------------- added tokens

@dataclass(frozen=True)
class AddedToken:
    id: int
    content: str
    special: bool = False
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = True


# ---------------------------------------------------------------------- post-processors

class Sequence(Enum):
    """Which input a template's sequence piece stands for."""

    A = "A"
    B = "B"


@dataclass(frozen=True)
class TemplateSpecialToken:
    """A template piece naming an entry of TemplateProcessing.special_tokens."""

    name: str
    type_id: int = 0


@dataclass(frozen=True)
class TemplateSequence:
    sequence: Sequence
    type_id: int = 0


TemplatePiece = Union[TemplateSpecialToken, TemplateSequence]


@dataclass(frozen=True)
class TemplateProcessing:
    """single/pair: the templates; special_tokens: name -> the ids it stands for."""

    single: tuple[TemplatePiece, ...]
    pair: tuple[TemplatePiece, ...] | None
    special_tokens: dict[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class BertProcessing:
    sep: tuple[str, int]
    cls: tuple[str, int]


@dataclass(frozen=True)
class RobertaProcessing:
    sep: tuple[str, int]
    cls: tuple[str, int]
    trim_offsets: bool = True
    add_prefix_space: bool = True


@dataclass(frozen=True)
class PostProcessorSequence:
    processors: tuple[PostProcessor, ...]


PostProcessor = Union[TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, PostProcessorSequence]


# ---------------------------------------------------------------------- decoders

@dataclass(frozen=True)
class BpeDecoder:
    suffix: str = "</w>"


@dataclass(frozen=True)
class ByteFallback:
    pass


@dataclass(frozen=True)
class Ctc:
    pad_token: str = "<pad>"
    word_delimiter_token: str = "|"
    cleanup: bool = True


@dataclass(frozen=True)
class Fuse:
    pass


@dataclass(frozen=True)
class StripDecoder:
    content: str        # one character
    start: int = 0
    stop: int = 0


@dataclass(frozen=True)
class WordPieceDecoder:
    prefix: str = "##"
    cleanup: bool = True


@dataclass(frozen=True)
class DecoderSequence:
    decoders: tuple[Decoder, ...]


# ByteLevel, Metaspace and Replace are decoders too (the same dataclasses).
Decoder = Union[BpeDecoder, ByteFallback, ByteLevel, Ctc, Fuse, Metaspace, Replace, StripDecoder,
                WordPieceDecoder, DecoderSequence]


# ---------------------------------------------------------------------- the file

@dataclass(frozen=True, eq=False)
class HfTokenizerSpec:
    """Everything a tokenizer.json says that changes ids or text.

    has_truncation/has_padding: the file's sections, which `encode` does not apply
    (the README says so); kept so `inspect` can show them.
    pad_token: the padding section's token (transformers reports it as pad_token).
    """

    source: str
    model: Model
    normalizer: Normalizer | None = None
    pre_tokenizer: PreTokenizer | None = None
    post_processor: PostProcessor | None = None
    decoder: Decoder | None = None
    added_tokens: tuple[AddedToken, ...] = ()
    has_truncation: bool = False
    has_padding: bool = False
    pad_token: str | None = None
