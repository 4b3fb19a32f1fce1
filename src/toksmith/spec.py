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
    HF_JSON = "tokenizer.json"  # Hugging Face tokenizers' serialized pipeline
    RWKV_VOCAB = "rwkv-vocab"   # RWKV's rwkv_vocab_*.txt: "id repr(bytes) length" lines


class Algorithm(Enum):
    UNIGRAM = "unigram"
    SPM_BPE = "spm-bpe"     # SentencePiece BPE: merges chosen by piece score
    BYTE_BPE = "byte-bpe"   # byte-level BPE (GPT-2 family, tiktoken): merges chosen by rank
    BPE = "bpe"             # HF BPE over characters (no byte map): merges chosen by rank
    WORDPIECE = "wordpiece"  # greedy longest match with a continuing-subword prefix (BERT)
    WORD_LEVEL = "word-level"  # one id per pre-token
    RWKV = "rwkv"           # greedy longest match over a byte trie of the tokens' bytes
    PLAMO2 = "plamo2"       # llama.cpp's PLaMo-2: scored longest-suffix DP over code points, byte fallback


class ReferenceRules(Enum):
    """Whose rules decide details where reference implementations differ."""

    SENTENCEPIECE = "sentencepiece"
    LLAMA_CPP = "llama.cpp"
    TIKTOKEN = "tiktoken"
    HF = "hf"               # Hugging Face tokenizers
    RWKV = "rwkv"           # the rwkv package's TRIE_TOKENIZER (RWKV's .txt vocabulary)

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


@dataclass(frozen=True)
class LoadOptions:
    """Options of `toksmith.load` that change how a file is read.

    pre: a GGUF BPE vocabulary's pre-tokenizer name, instead of tokenizer.ggml.pre.
    encoding: the OpenAI encoding a rank file holds (r50k_base, ..., o200k_harmony).
    pattern: a rank file's pre-tokenizer (a SplitPattern or its regex text).
    special_tokens: a rank file's special tokens, (text, id) pairs.
    """

    pre: str | None = None
    encoding: str | None = None
    pattern: SplitPattern | str | None = None
    special_tokens: tuple[tuple[str, int], ...] | None = None

    @classmethod
    def of(cls, *, pre: object = None, encoding: object = None, pattern: object = None,
           special_tokens: object = None) -> LoadOptions:
        """Options from `toksmith.load`'s arguments, type-checked."""
        for name, value in (("pre", pre), ("encoding", encoding)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a str or None, not {type(value).__name__}")
        if pattern is not None and not isinstance(pattern, (str, SplitPattern)):
            raise TypeError(f"pattern must be a SplitPattern, a regex str or None, not {type(pattern).__name__}")
        pairs = None
        if special_tokens is not None:
            if not isinstance(special_tokens, dict):
                raise TypeError(f"special_tokens must be a dict {{text: id}}, not {type(special_tokens).__name__}")
            for text, token_id in special_tokens.items():
                if not isinstance(text, str) or isinstance(token_id, bool) or not isinstance(token_id, int):
                    raise TypeError(f"special_tokens must map str texts to int ids, found {text!r}: {token_id!r}")
            pairs = tuple(sorted(special_tokens.items(), key=lambda kv: kv[1]))
        return cls(pre=pre, encoding=encoding, pattern=pattern, special_tokens=pairs)

    def special_token_dict(self) -> dict[str, int] | None:
        return None if self.special_tokens is None else dict(self.special_tokens)

    def check_applies_to(self, file_format: FileFormat, source: str) -> None:
        """ValueError when an option does not apply to a file of `file_format`."""
        wrong = []
        if self.pre is not None and file_format is not FileFormat.GGUF:
            wrong.append("pre= (GGUF BPE vocabularies only)")
        if file_format is not FileFormat.TIKTOKEN:
            wrong += [f"{name}= (tiktoken rank files only)" for name in ("encoding", "pattern", "special_tokens")
                      if getattr(self, name) is not None]
        if wrong:
            raise ValueError(f"{source}: a {file_format.value} file: {', '.join(wrong)} does not apply")


@dataclass(frozen=True, eq=False, repr=False)
class FileFields:
    """What a reader found in the file, kept whole for writers (the pipeline uses a part).

    sentencepiece_fields: every ModelProto field but the pieces, as (field number,
    wire type, raw value) in file order: 2 trainer_spec, 3 normalizer_spec,
    4 self_test_data, 5 denormalizer_spec, and fields this version does not know.
    sentencepiece_unscored: ids of the pieces written without a score field (older
    trainers wrote the meta pieces so), kept so to give the file back byte for byte.
    gguf_metadata: every GGUF metadata key in file order -> (GGUFType, value).
    """

    sentencepiece_fields: tuple[tuple[int, int, object], ...] = ()
    sentencepiece_unscored: frozenset[int] = frozenset()
    gguf_metadata: dict[str, tuple[int, object]] = field(default_factory=dict)


@dataclass(frozen=True)
class LlamaWordPieceOptions:
    """What a GGUF "bert" (llama.cpp WPM) vocabulary says beyond its tokens and special ids.

    lowercase, strip_accents: tokenizer.ggml.normalizer.lowercase (default true) and
        .strip_accents (default: lowercase), llama.cpp's normalizer options.
    add_space_prefix: tokenizer.ggml.add_space_prefix (default false): decode then drops the
        first token's leading space.
    (tokenizer.ggml.add_sep_token changes nothing: llama.cpp's WPM session adds CLS and SEP
    with add_special whatever the add_* keys say.)
    """

    lowercase: bool = True
    strip_accents: bool = True
    add_space_prefix: bool = False


@dataclass(frozen=True, eq=False, repr=False)
class TokenizerSpec:
    source: str
    file_format: FileFormat
    algorithm: Algorithm
    rules: ReferenceRules
    vocab: Vocab
    # The SentencePiece family's normalizer and decoder; None for byte-level BPE.
    normalizer: CharsMapNormalizerSpec | None
    decoder: SentencePieceDecoderSpec | None
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
    # Byte-level BPE: what its file says (merges or ranks, pre-tokenizer, BOS rules).
    byte_level: ByteLevelSpec | None = None
    # Options the file was loaded with (pre=, encoding=, ...): a pickle reloads it the same way.
    load_options: LoadOptions = field(default_factory=lambda: LoadOptions())
    # A tokenizer.json's components (toksmith.hf.components.HfTokenizerSpec); None otherwise.
    hf: object | None = None
    # A GGUF "bert" (WPM) vocabulary's options; None otherwise.
    wordpiece: LlamaWordPieceOptions | None = None
    # An RWKV vocabulary's token bytes and trie (toksmith.formats.rwkv.RwkvSpec); None otherwise.
    rwkv: object | None = None
    # A tokenizer.json whose ids are not 0..n-1 (toksmith.hf.sparse_ids.SparseIds): `vocab`
    # and `hf` hold them renumbered 0..n-1, this maps them back; None for every other file.
    sparse_ids: object | None = None

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
