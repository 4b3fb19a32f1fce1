"""The typed intermediate between file loaders and the tokenizer pipeline.

A loader turns a file into one `TokenizerSpec`; `Tokenizer` compiles it.
Strings read from files become these enums and dataclasses at the loader.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from toksmith.decoders.sentencepiece import SentencePieceDecoderSpec
from toksmith.normalizers.charsmap import CharsMapNormalizerSpec
from toksmith.vocab import Vocab


class FileFormat(Enum):
    SENTENCEPIECE = "sentencepiece"
    GGUF = "gguf"


class Algorithm(Enum):
    UNIGRAM = "unigram"
    SPM_BPE = "spm-bpe"     # SentencePiece BPE: merges chosen by piece score


class ReferenceRules(Enum):
    """Whose rules decide details where reference implementations differ."""

    SENTENCEPIECE = "sentencepiece"
    LLAMA_CPP = "llama.cpp"


@dataclass(frozen=True, eq=False)
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
