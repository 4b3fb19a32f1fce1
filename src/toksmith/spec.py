"""The typed intermediate between file loaders and the tokenizer pipeline.

A loader turns a file into one `TokenizerSpec`; `Tokenizer` compiles it.
Strings read from files become these enums and dataclasses at the loader.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import Enum

from toksmith.decoders.sentencepiece import SentencePieceDecoderSpec
from toksmith.normalizers.charsmap import CharsMapNormalizerSpec
from toksmith.vocab import ByteLevelVocab, Vocab


class FileFormat(Enum):
    SENTENCEPIECE = "sentencepiece"
    GGUF = "gguf"
    TIKTOKEN = "tiktoken"       # a rank file: "base64(token) rank" lines


class Algorithm(Enum):
    UNIGRAM = "unigram"
    SPM_BPE = "spm-bpe"     # SentencePiece BPE: merges chosen by piece score
    BYTE_BPE = "byte-bpe"   # byte-level BPE (GPT-2 family, tiktoken): merges chosen by rank


class ReferenceRules(Enum):
    """Whose rules decide details where reference implementations differ."""

    SENTENCEPIECE = "sentencepiece"
    LLAMA_CPP = "llama.cpp"

    @classmethod
    def parse(cls, value: object) -> ReferenceRules:
        """A member, or the member whose value is the string `value`.

        >>> ReferenceRules.parse("llama.cpp")
        <ReferenceRules.LLAMA_CPP: 'llama.cpp'>
        """
        if isinstance(value, cls):
            return value
        valid = ", ".join([repr(m.value) for m in cls] + [f"ReferenceRules.{m.name}" for m in cls])
        if isinstance(value, str):
            try:
                return cls(value)
            except ValueError:
                raise ValueError(f"rules={value!r} is not one of: {valid}") from None
        raise TypeError(f"rules must be a ReferenceRules member or its value, one of: {valid}; "
                        f"not {type(value).__name__}")


@dataclass(frozen=True, eq=False, repr=False)
class FileFields:
    """What a reader found in the file, kept whole for writers (the pipeline uses a part).

    sentencepiece_fields: every ModelProto field but the pieces, as (field number,
    wire type, raw value) in file order: 2 trainer_spec, 3 normalizer_spec,
    4 self_test_data, 5 denormalizer_spec, and fields this version does not know.
    gguf_metadata: every GGUF metadata key in file order -> (GGUFType, value).
    """

    sentencepiece_fields: tuple[tuple[int, int, object], ...] = ()
    gguf_metadata: dict[str, tuple[int, object]] = field(default_factory=dict)


@dataclass(frozen=True, eq=False, repr=False)
class TokenizerSpec:
    source: str
    file_format: FileFormat
    algorithm: Algorithm
    rules: ReferenceRules
    vocab: Vocab
    normalizer: CharsMapNormalizerSpec
    decoder: SentencePieceDecoderSpec
    byte_fallback: bool = False
    add_bos: bool = False
    add_eos: bool = False
    # llama.cpp's per-token attribute bits (special_tokens.TokenAttr) when the
    # file carries what llama.cpp derives them from (GGUF); None: from types.
    token_attributes: tuple[int, ...] | None = None
    # The file's bytes as a pickled tokenizer carries them (a .model whole, a GGUF's
    # header and metadata without tensors); None for a spec built in memory.
    source_data: bytes | None = None
    # The file's other fields as its reader found them, for writers; None for a spec
    # built in memory.
    file_fields: FileFields | None = None

    def __repr__(self) -> str:
        return (f"<TokenizerSpec {self.algorithm.value} from {self.file_format.value} "
                f"{_short_source(self.source)}, {len(self.vocab)} pieces, rules={self.rules.value}>")


def _short_source(source: str) -> str:
    """The file name of `source` (repr'd), for one-line reprs."""
    return repr(os.path.basename(source) or source)


class SplitPattern(Enum):
    """A pre-tokenizer regex of tiktoken's encodings and Llama 3's rank file, as data
    (formats.tiktoken.PATTERN_REGEX holds each regex's text); a native splitter implements it."""

    R50K = "r50k"       # r50k_base, p50k_base, p50k_edit (GPT-2's pattern)
    CL100K = "cl100k"
    O200K = "o200k"     # o200k_base, o200k_harmony
    LLAMA3 = "llama3"   # Llama 3's tokenizer.model (llama.cpp pre "llama3")


class GgufBpeModel(Enum):
    """The tokenizer.ggml.model values llama.cpp reads as a BPE vocabulary."""

    GPT2 = "gpt2"               # byte-level BPE
    GEMMA4 = "gemma4"           # BPE over raw UTF-8 (no byte<->unicode map), <0xXX> byte tokens
    WHITESPACE = "whitespace"   # words cut at whitespace (lowercased if the file says), BPE over raw UTF-8
    HYBRIDDNA = "hybriddna"     # byte-level BPE plus <dna>...</dna> spans cut in 6-mers


@dataclass(frozen=True, eq=False, repr=False)
class ByteLevelSpec:
    """What a byte-level BPE file says (GGUF gpt2-family vocabulary, tiktoken rank file).

    pattern: the pre-tokenizer of a rank file (a known SplitPattern, or the regex text
        given with pattern=); None for GGUF, whose `pre` names it.
    pre: GGUF tokenizer.ggml.pre as stored ("" when the key is absent), or the load-time override.
    encoding: the OpenAI encoding (or "llama3") a rank file was recognised as, else None.
    """

    source: str
    file_format: FileFormat
    vocab: ByteLevelVocab
    pattern: SplitPattern | str | None = None
    pre: str | None = None
    encoding: str | None = None
    gguf_model: GgufBpeModel | None = None
    # GGUF tokenizer.ggml.add_bos_token etc.; None: the key is absent, and the pre-tokenizer's
    # default applies (llama.cpp: add_bos for the llama3 family, add_sep for jina/roberta ...)
    add_bos: bool | None = None
    add_eos: bool | None = None
    add_sep: bool | None = None
    lowercase: bool | None = None       # tokenizer.ggml.normalizer.lowercase (whitespace model)
    # llama.cpp's per-token attribute bits (special_tokens.TokenAttr), GGUF only
    token_attributes: tuple[int, ...] | None = None
    source_data: bytes | None = None

    @property
    def algorithm(self) -> Algorithm:
        return Algorithm.BYTE_BPE

    def __repr__(self) -> str:
        what = self.encoding or (self.pre and f"pre={self.pre}") or ""
        return (f"<ByteLevelSpec {self.vocab.merge_order.value} from {self.file_format.value} "
                f"{_short_source(self.source)}, {len(self.vocab)} ids{', ' + what if what else ''}>")
