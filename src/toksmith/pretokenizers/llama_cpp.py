"""llama.cpp's BPE pre-tokenizers: every `tokenizer.ggml.pre` name, its type, regexes and flags.

Everything here is read from llama.cpp as vendored by llama-cpp-python 0.3.36
(`src/llama-vocab.cpp`): the name -> type chain of `llama_vocab::impl::load`, the flags
it sets next to each name, and the regex list of the `llm_tokenizer_bpe` constructor.
Strings from files become `PreType` members here, at the boundary:

    >>> spec = pre_tokenizer_spec("llama-bpe")
    >>> spec.pre_type, spec.ignore_merges, spec.add_bos
    (<PreType.LLAMA3: 1>, True, True)
    >>> splitter = spec.build_splitter()   # a toksmith._core.pretok_llama.LlamaSplitter

Text reaches the splitter as valid UTF-8: llama.cpp decodes the text with
unicode_cpts_from_utf8, which turns every byte that does not start a well-formed
sequence (lead/trail bit patterns only) into U+FFFD and re-encodes each codepoint, so a
step before the pre-tokenizer must rewrite the text the same way: `llama_clean_utf8`.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

from toksmith.errors import UnsupportedModelError


class PreType(enum.IntEnum):
    """LLAMA_VOCAB_PRE_TYPE_* of llama-vocab.h (same numbers)."""

    DEFAULT = 0
    LLAMA3 = 1
    DEEPSEEK_LLM = 2
    DEEPSEEK_CODER = 3
    FALCON = 4
    MPT = 5
    STARCODER = 6
    GPT2 = 7
    REFACT = 8
    COMMAND_R = 9
    STABLELM2 = 10
    QWEN2 = 11
    OLMO = 12
    DBRX = 13
    SMAUG = 14
    PORO = 15
    CHATGLM3 = 16
    CHATGLM4 = 17
    VIKING = 18
    JAIS = 19
    TEKKEN = 20
    SMOLLM = 21
    CODESHELL = 22
    BLOOM = 23
    GPT3_FINNISH = 24
    EXAONE = 25
    CHAMELEON = 26
    MINERVA = 27
    DEEPSEEK3_LLM = 28
    GPT4O = 29
    SUPERBPE = 30
    TRILLION = 31
    BAILINGMOE = 32
    LLAMA4 = 33
    PIXTRAL = 34
    SEED_CODER = 35
    HUNYUAN = 36
    KIMI_K2 = 37
    HUNYUAN_DENSE = 38
    GROK_2 = 39
    GRANITE_DOCLING = 40
    MINIMAX_M2 = 41
    AFMOE = 42
    SOLAR_OPEN = 43
    YOUTU = 44
    EXAONE_MOE = 45
    QWEN35 = 46
    TINY_AYA = 47
    JOYAI_LLM = 48
    JAIS2 = 49
    GEMMA4 = 50
    SARVAM_MOE = 51
    MINICPM5 = 52
    WHITESPACE = 53
    GRANITE_EMB_MULTI = 54
    MELLUM2 = 55
    LAGUNA = 56
    HY_V4 = 57
    SPARK2_5 = 58
    UFAKZEKA = 59


class BpeModelKind(enum.Enum):
    """`tokenizer.ggml.model` values llama.cpp loads as its BPE vocab type."""

    GPT2 = "gpt2"
    HYBRIDDNA = "hybriddna"
    WHITESPACE = "whitespace"
    GEMMA4 = "gemma4"


@dataclass(frozen=True)
class PreTokenizerSpec:
    """What llama.cpp's load sets for one pre name (on top of the BPE defaults).

    Defaults are llama.cpp's for a BPE vocab: add_space_prefix=False,
    escape_whitespaces=False, clean_spaces=True, ignore_merges=False, add_bos/add_eos
    False (the file's tokenizer.ggml.add_bos_token/add_eos_token keys override add_bos,
    add_eos and add_sep afterwards, except that GEMMA4 forces add_bos on).
    """

    name: str
    pre_type: PreType
    ignore_merges: bool = False
    clean_spaces: bool = True
    add_bos: bool = False
    add_eos: bool = False
    add_sep: bool = False
    add_space_prefix: bool = False
    escape_whitespaces: bool = False
    no_bos_token: bool = False        # special_bos_id = LLAMA_TOKEN_NULL (chatglm)
    bert_lowercase: Optional[bool] = None  # normalizer_opts.lowercase forced (whitespace)

    @property
    def regexes(self) -> tuple[str, ...]:
        return regexes_for(self.pre_type)

    @property
    def byte_encode(self) -> bool:
        """GPT-2 byte<->unicode mapping of pieces (False: raw UTF-8 pieces)."""
        return self.pre_type not in _RAW_UTF8_TYPES

    @property
    def force_add_bos(self) -> bool:
        """llama.cpp sets add_bos after reading the file's key (Gemma 4 workaround)."""
        return self.pre_type == PreType.GEMMA4

    def build_splitter(self):
        """The native splitter for this pre type (a LlamaSplitter)."""
        from toksmith._core.pretok_llama import LlamaSplitter

        return LlamaSplitter(self.regexes)


def _names(pre_type: PreType, names: tuple[str, ...], **flags) -> dict[str, PreTokenizerSpec]:
    return {name: PreTokenizerSpec(name, pre_type, **flags) for name in names}


# Parity: llama.cpp llama_vocab::impl::load, the tokenizer_pre chain (same order, same flags).
# (A file's tokenizer.ggml.add_space_prefix / remove_extra_whitespaces keys are read after.)
PRE_NAMES: dict[str, PreTokenizerSpec] = {
    **_names(PreType.DEFAULT, ("default",)),
    **_names(PreType.MINICPM5, ("minicpm5",), ignore_merges=True),
    **_names(PreType.LLAMA3, ("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
                              "lfm2", "jina-v5-nano"), ignore_merges=True, add_bos=True),
    **_names(PreType.DEEPSEEK_LLM, ("deepseek-llm",), clean_spaces=False),
    **_names(PreType.DEEPSEEK_CODER, ("deepseek-coder",), clean_spaces=False),
    **_names(PreType.DEEPSEEK3_LLM, ("deepseek-v3",), clean_spaces=False),
    **_names(PreType.SPARK2_5, ("spark2_5",), clean_spaces=False),
    **_names(PreType.YOUTU, ("youtu",), clean_spaces=False, ignore_merges=True),
    **_names(PreType.FALCON, ("falcon",)),
    **_names(PreType.MPT, ("mpt",)),
    **_names(PreType.STARCODER, ("starcoder",)),
    **_names(PreType.GPT2, ("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
                            "a.x-4.0", "mellum", "modern-bert")),
    **_names(PreType.JAIS2, ("jais-2",)),
    **_names(PreType.GEMMA4, ("gemma4", "granite-embed-multi-311m"), escape_whitespaces=True),
    **_names(PreType.SARVAM_MOE, ("sarvam-moe",), escape_whitespaces=True, clean_spaces=False),
    **_names(PreType.GPT2, ("jina-v1-en", "jina-v2-code", "roberta-bpe"), add_sep=True),
    **_names(PreType.WHITESPACE, ("whitespace",), bert_lowercase=False),
    **_names(PreType.REFACT, ("refact",)),
    **_names(PreType.COMMAND_R, ("command-r",), clean_spaces=False),
    **_names(PreType.QWEN2, ("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2"), clean_spaces=False),
    **_names(PreType.QWEN35, ("qwen35",), clean_spaces=False),
    **_names(PreType.STABLELM2, ("stablelm2",)),
    **_names(PreType.OLMO, ("olmo",)),
    **_names(PreType.DBRX, ("dbrx",)),
    **_names(PreType.SMAUG, ("smaug-bpe",)),
    **_names(PreType.PORO, ("poro-chat",), clean_spaces=False),
    **_names(PreType.CHATGLM4, ("chatglm-bpe",), no_bos_token=True),
    **_names(PreType.CHATGLM4, ("glm4", "glm5"), no_bos_token=True, ignore_merges=True),
    **_names(PreType.VIKING, ("viking",), clean_spaces=False),
    **_names(PreType.JAIS, ("jais",)),
    **_names(PreType.TEKKEN, ("tekken",), clean_spaces=False, ignore_merges=True, add_bos=True),
    **_names(PreType.SMOLLM, ("smollm",), clean_spaces=False),
    **_names(PreType.CODESHELL, ("codeshell",)),
    **_names(PreType.BLOOM, ("bloom",)),
    **_names(PreType.GPT3_FINNISH, ("gpt3-finnish",)),
    **_names(PreType.EXAONE, ("exaone",)),
    **_names(PreType.GPT2, ("exaone4",)),
    **_names(PreType.EXAONE_MOE, ("exaone-moe",)),
    **_names(PreType.CHAMELEON, ("chameleon",), add_bos=True, clean_spaces=False),
    **_names(PreType.MINERVA, ("minerva-7b",)),
    **_names(PreType.QWEN2, ("megrez",)),
    **_names(PreType.GPT4O, ("gpt-4o", "llama4", "kanana2", "talkie"), clean_spaces=False),
    **_names(PreType.GRANITE_EMB_MULTI, ("granite-embed-multi-97m",), clean_spaces=False, ignore_merges=True),
    **_names(PreType.TINY_AYA, ("tiny_aya", "cohere2moe"), clean_spaces=False),
    **_names(PreType.SUPERBPE, ("superbpe",), clean_spaces=False),
    **_names(PreType.TRILLION, ("trillion",), clean_spaces=False),
    **_names(PreType.GRANITE_DOCLING, ("granite-docling",), clean_spaces=False),
    **_names(PreType.BAILINGMOE, ("bailingmoe", "bailingmoe2", "llada-moe"), clean_spaces=False),
    **_names(PreType.SEED_CODER, ("seed-coder",), clean_spaces=False),
    **_names(PreType.HUNYUAN, ("hunyuan",), clean_spaces=False),
    **_names(PreType.HUNYUAN_DENSE, ("hunyuan-dense",), clean_spaces=False),
    **_names(PreType.HY_V4, ("hy_v4",), clean_spaces=False),
    **_names(PreType.JOYAI_LLM, ("joyai-llm",), clean_spaces=False),
    **_names(PreType.KIMI_K2, ("kimi-k2",), clean_spaces=False),
    **_names(PreType.UFAKZEKA, ("ufakzeka",), clean_spaces=False),
    **_names(PreType.GROK_2, ("grok-2",), clean_spaces=False),
    **_names(PreType.AFMOE, ("afmoe",), clean_spaces=False),
    **_names(PreType.LAGUNA, ("laguna",), clean_spaces=False),
    **_names(PreType.MINIMAX_M2, ("minimax-m2",), clean_spaces=False),
    **_names(PreType.SOLAR_OPEN, ("solar-open",), clean_spaces=False),
    **_names(PreType.MELLUM2, ("mellum2",)),
}

# A BPE file without tokenizer.ggml.pre (llama.cpp warns and uses 'default').
MISSING_PRE = PRE_NAMES["default"]

# Pre types whose pieces are raw UTF-8 (byte_encode = false in the constructor).
_RAW_UTF8_TYPES = frozenset({PreType.GEMMA4, PreType.SARVAM_MOE, PreType.WHITESPACE})


class BpeSession(enum.Enum):
    """Which llama.cpp tokenizer session runs a BPE model's raw text fragments."""

    # llm_tokenizer_bpe_session: pre-tokenizer regexes, then BPE per piece
    STANDARD = enum.auto()
    # llm_tokenizer_whitespace_session: the text is cut at every whitespace codepoint
    # (llama.cpp's set), the whitespace is DROPPED, each segment lower-cased with
    # unicode_tolower when normalizer_opts.lowercase, then STANDARD runs per segment.
    # toksmith: _core/whitespace_session.pyx (LlamaCppLowercase, WhitespaceSegments).
    WHITESPACE_SEGMENTS = enum.auto()
    # llm_tokenizer_hybriddna_session: text inside <dna>...</dna> becomes the <dna> id,
    # upper-cased 6-mers looked up as kmer + marker suffix (<oov> if absent; a short last
    # k-mer is padded with 'A'), then </dna>; text outside runs STANDARD. Falls back to
    # STANDARD for the whole text when <dna>, </dna> or <oov> is missing from the vocab.
    # toksmith: _core/dna_regions.pyx (DnaRegionSplitter).
    DNA_KMERS = enum.auto()


@dataclass(frozen=True)
class BpeModelSpec:
    """Defaults llama.cpp sets for a BPE `tokenizer.ggml.model` before reading the file's keys."""

    kind: BpeModelKind
    default_bos_id: Optional[int]
    default_eos_id: Optional[int]
    session: BpeSession = BpeSession.STANDARD
    forced_pre: Optional[str] = None      # gemma4: the file's tokenizer.ggml.pre is ignored
    merges_optional_for_pre: Optional[str] = None  # kimi-k2 loads without merges
    strip_kmer_marker: bool = False       # hybriddna: k-mer texts lose their marker suffix (id_to_token)


# Parity: llama-vocab.cpp dna_kmer_marker (U+E000, a private-use codepoint)
DNA_KMER_MARKER = "\ue000"
DNA_KMER_LENGTH = 6

BPE_MODELS: dict[str, BpeModelSpec] = {
    "gpt2": BpeModelSpec(BpeModelKind.GPT2, 11, 11, merges_optional_for_pre="kimi-k2"),
    "hybriddna": BpeModelSpec(BpeModelKind.HYBRIDDNA, 11, 11, BpeSession.DNA_KMERS,
                              merges_optional_for_pre="kimi-k2", strip_kmer_marker=True),
    "whitespace": BpeModelSpec(BpeModelKind.WHITESPACE, 11, 11, BpeSession.WHITESPACE_SEGMENTS,
                               merges_optional_for_pre="kimi-k2"),
    "gemma4": BpeModelSpec(BpeModelKind.GEMMA4, None, None, forced_pre="gemma4"),
}


def pre_tokenizer_spec(name: Optional[str], *, source: str = "<pre>") -> PreTokenizerSpec:
    """The spec of a `tokenizer.ggml.pre` value; None or '' (key absent) gives 'default'.

    An unknown name is an UnsupportedModelError (a ModelFormatError) listing the known names.
    """
    if not name:
        return MISSING_PRE
    spec = PRE_NAMES.get(name)
    if spec is None:
        raise UnsupportedModelError(
            source, f"tokenizer.ggml.pre: unknown pre-tokenizer {name!r}; known: {', '.join(sorted(PRE_NAMES))}")
    return spec


def bpe_model_spec(model: str, *, source: str = "<model>") -> BpeModelSpec:
    """The spec of a BPE `tokenizer.ggml.model` value (gpt2, hybriddna, whitespace, gemma4)."""
    spec = BPE_MODELS.get(model)
    if spec is None:
        raise UnsupportedModelError(
            source, f"tokenizer.ggml.model: {model!r} is not a BPE model; known: {', '.join(sorted(BPE_MODELS))}")
    return spec


def regexes_for(pre_type: PreType) -> tuple[str, ...]:
    """llama.cpp's regex list for a pre type (types without a case use the default list)."""
    return REGEXES.get(pre_type, _DEFAULT)


def llama_clean_utf8(text: bytes) -> bytes:
    """Rewrite `text` the way llama.cpp's tokenizer sees it before pre-tokenizing.

    Parity: llama.cpp unicode_cpts_from_utf8 + unicode_cpt_to_utf8: sequences are
    decoded by their lead/trail bit patterns only; a byte that does not start one becomes
    U+FFFD (one per byte); overlong forms come back in their shortest form. A codepoint
    past U+10FFFF (lead F4..F7) makes llama.cpp throw (std::invalid_argument from
    unicode_cpt_to_utf8); here its lead byte becomes U+FFFD and the rest is read again.
    Native (pretok_common.llama_clean_utf8_into, nogil, no copy when nothing changes): the
    engine's normalizer stage for llama.cpp BPE models should call that.

        >>> llama_clean_utf8(b"a\\xffb\\xc0\\x80")
        b'a\\xef\\xbf\\xbdb\\x00'
    """
    from toksmith._core.pretok_llama import clean_utf8

    return clean_utf8(text)


_LLAMA3 = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_JAIS2 = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}",
)
_DBRX = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_DEEPSEEK_LLM = (
    '[\r\n]',
    '\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+',
    '\\s?[!-/:-~！-／：-～‘-‟\u3000-。]+',
    '\\s+$',
    '[一-龥ࠀ-一가-\ud7ff]+',
    '\\p{N}+',
)
_DEEPSEEK3_LLM = (
    '\\p{N}{1,3}',
    '[一-龥\u3040-ゟ゠-ヿ]+',
    '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',
)
_SPARK2_5 = (
    '\\p{N}{1,3}',
    '[一-龥\u3040-ゟ゠-ヿ]+',
    '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+',
    '\\p{N}',
)
_YOUTU = (
    '[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥\u3040-ゟ゠-ヿ]+',
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_DEEPSEEK_CODER = (
    '[\r\n]',
    '\\s?\\p{L}+',
    '\\s?\\p{P}+',
    '[一-龥ࠀ-一가-\ud7ff]+',
    '\\p{N}',
)
_FALCON = (
    '[\\p{P}\\$\\+<=>\\^~\\|`]+',
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    '[0-9][0-9][0-9]',
)
_STARCODER = (
    '\\p{N}',
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
)
_GPT2 = (
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
)
_STABLELM2 = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_QWEN35 = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_PORO = (
    ' ?[^(\\s|.,!?…。，、।۔،)]+',
)
_CHATGLM4 = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_VIKING = (
    ' ?[^(\\s|.,!?…。，、।۔،)]+',
    '\\p{N}',
)
_TEKKEN = (
    '[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',
)
_CHAMELEON = (
    '<sentinel:[0-9]+>',
    '(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z',
    '([\\t\\n]|    |  )',
    '\\p{N}',
    '[\\p{P}!-/:-@\\[-`{-~]',
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
)
_GPT4O = (
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_GRANITE_EMB_MULTI = (
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_TINY_AYA = (
    '\\d{1,3}(?=(?:\\d{3})*\\b)',
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_KIMI_K2 = (
    '\\p{Han}+',
)
_SUPERBPE = (
    '\\p{N}+',
    '(?=(\\d{3})+(?!\\d))',
)
_BAILINGMOE = (
    "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
)
_SEED_CODER = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_UFAKZEKA = (
    '[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',
)
_GROK_2 = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_AFMOE = (
    '\\p{AFMoE_digits}',
    '[一-鿿㐀-䶿豈-\ufaff\u3040-ゟ゠-ヿ･-ﾟ⼀-\u2fdfเ-\u0e7f\u0e80-\u0effក-\u17ffက-႟ꩠ-ꩿꧠ-\ua9ff가-\ud7afᄀ-ᇿ]+',
    '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',
)
_LAGUNA = (
    '[^\\n]+|[\\n]+',
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_EXAONE_MOE = (
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
)
_GEMMA4 = (
    '[^\\n]+|[\\n]+',
)
_SARVAM_MOE = (
    '[^\\n]+|[\\n]+',
)
_MINICPM5 = (
    '\\p{N}{1,3}',
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
)
_WHITESPACE = (
    '\\S+',
)
_DEFAULT = (
    '[\\p{P}\\$\\+<=>\\^~\\|]+',
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    '\\p{N}+',
    '[0-9][0-9][0-9]',
)
REGEXES: dict[PreType, tuple[str, ...]] = {
    PreType.LLAMA3: _LLAMA3,
    PreType.JAIS2: _JAIS2,
    PreType.DBRX: _DBRX,
    PreType.SMAUG: _DBRX,
    PreType.DEEPSEEK_LLM: _DEEPSEEK_LLM,
    PreType.DEEPSEEK3_LLM: _DEEPSEEK3_LLM,
    PreType.HUNYUAN_DENSE: _DEEPSEEK3_LLM,
    PreType.JOYAI_LLM: _DEEPSEEK3_LLM,
    PreType.HY_V4: _DEEPSEEK3_LLM,
    PreType.SPARK2_5: _SPARK2_5,
    PreType.YOUTU: _YOUTU,
    PreType.DEEPSEEK_CODER: _DEEPSEEK_CODER,
    PreType.FALCON: _FALCON,
    PreType.STARCODER: _STARCODER,
    PreType.REFACT: _STARCODER,
    PreType.COMMAND_R: _STARCODER,
    PreType.SMOLLM: _STARCODER,
    PreType.CODESHELL: _STARCODER,
    PreType.EXAONE: _STARCODER,
    PreType.MINERVA: _STARCODER,
    PreType.MELLUM2: _STARCODER,
    PreType.GPT2: _GPT2,
    PreType.MPT: _GPT2,
    PreType.OLMO: _GPT2,
    PreType.JAIS: _GPT2,
    PreType.TRILLION: _GPT2,
    PreType.GRANITE_DOCLING: _GPT2,
    PreType.STABLELM2: _STABLELM2,
    PreType.QWEN2: _STABLELM2,
    PreType.HUNYUAN: _STABLELM2,
    PreType.SOLAR_OPEN: _STABLELM2,
    PreType.QWEN35: _QWEN35,
    PreType.PORO: _PORO,
    PreType.BLOOM: _PORO,
    PreType.GPT3_FINNISH: _PORO,
    PreType.CHATGLM4: _CHATGLM4,
    PreType.VIKING: _VIKING,
    PreType.TEKKEN: _TEKKEN,
    PreType.CHAMELEON: _CHAMELEON,
    PreType.GPT4O: _GPT4O,
    PreType.MINIMAX_M2: _GPT4O,
    PreType.GRANITE_EMB_MULTI: _GRANITE_EMB_MULTI,
    PreType.TINY_AYA: _TINY_AYA,
    PreType.KIMI_K2: _KIMI_K2,
    PreType.SUPERBPE: _SUPERBPE,
    PreType.BAILINGMOE: _BAILINGMOE,
    PreType.SEED_CODER: _SEED_CODER,
    PreType.UFAKZEKA: _UFAKZEKA,
    PreType.GROK_2: _GROK_2,
    PreType.AFMOE: _AFMOE,
    PreType.LAGUNA: _LAGUNA,
    PreType.EXAONE_MOE: _EXAONE_MOE,
    PreType.GEMMA4: _GEMMA4,
    PreType.SARVAM_MOE: _SARVAM_MOE,
    PreType.MINICPM5: _MINICPM5,
    PreType.WHITESPACE: _WHITESPACE,
    PreType.DEFAULT: _DEFAULT,
}
