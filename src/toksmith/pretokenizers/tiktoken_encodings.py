"""OpenAI's tiktoken encodings: pattern splitter, special tokens, and how to recognise a rank file.

Read from tiktoken 0.14.0's `tiktoken_ext/openai_public.py`. A `.tiktoken` rank file holds
only the mergeable ranks; the pattern and the special tokens come from here:

    >>> enc = ENCODINGS["cl100k_base"]
    >>> enc.pattern, enc.special_tokens["<|endoftext|>"]
    (<TiktokenPattern.CL100K: ...>, 100257)
    >>> [e.name for e in encodings_for_rank_file(b"...file bytes...")]   # by sha256
    []

Unicode tables: tiktoken's patterns run on Rust's `regex` crate (1.13 via fancy-regex
0.19; tiktoken 0.14.0's wheel links regex-syntax 0.8.11, Unicode 16.0.0), and toksmith's
table (_core/unicode_tiktoken.pxi) is generated from that crate's own tables
(tools/gen_unicode_tables.py), not from Python's newer Unicode: code points added after
Unicode 16 (U+1ACF, U+A7CE, ...) are unassigned for tiktoken, so punctuation-like.
tests/parity/test_unicode_code_point_scan.py checks every code point against tiktoken.
llama.cpp presets use llama.cpp's own tables instead.

Where the splitters share semantics: r50k/p50k/gpt2's pattern and llama.cpp's GPT-2
splitter agree except for the Unicode tables. cl100k differs from llama.cpp's Llama 3
splitter in two places: a whitespace run that reaches the end of the text is one piece
(\\s++$ comes first), and the contractions are case-insensitive with Unicode folding
('ſ' U+017F matches s). o200k differs from llama.cpp's GPT4O pre type, which loses the
upper/lower case distinction of non-ASCII letters in its collapsed text.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


class TiktokenPattern(enum.Enum):
    """tiktoken's three pre-tokenizer patterns (the value is the pattern, for messages and tests)."""

    R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
    CL100K = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
              r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
    O200K = "|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ])

    def build_splitter(self):
        """The native splitter (toksmith._core.pretok_tiktoken) for this pattern."""
        from toksmith._core import pretok_tiktoken

        cls = {TiktokenPattern.R50K: pretok_tiktoken.R50kSplitter,
               TiktokenPattern.CL100K: pretok_tiktoken.Cl100kSplitter,
               TiktokenPattern.O200K: pretok_tiktoken.O200kSplitter}[self]
        return cls()


@dataclass(frozen=True)
class RankFile:
    """The official rank file of an encoding: how to recognise it."""

    file_name: str
    sha256: str
    size: int
    n_ranks: int


@dataclass(frozen=True)
class TiktokenEncoding:
    """One encoding of openai_public.py: pattern, special tokens {text: id}, rank file."""

    name: str
    pattern: TiktokenPattern
    special_tokens: dict[str, int] = field(hash=False)
    rank_file: RankFile
    explicit_n_vocab: Optional[int] = None


R50K_RANKS = RankFile("r50k_base.tiktoken",
                      "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930", 835_554, 50_256)
P50K_RANKS = RankFile("p50k_base.tiktoken",
                      "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069", 836_186, 50_280)
CL100K_RANKS = RankFile("cl100k_base.tiktoken",
                        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7", 1_681_126, 100_256)
O200K_RANKS = RankFile("o200k_base.tiktoken",
                       "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d", 3_613_922, 199_998)

_O200K_SPECIALS = {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}
_HARMONY_SPECIALS = {
    **_O200K_SPECIALS,
    "<|startoftext|>": 199998,
    "<|endoftext|>": 199999,
    "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|reserved_200004|>": 200004,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010,
    "<|reserved_200011|>": 200011,
    "<|call|>": 200012,
} | {f"<|reserved_{i}|>": i for i in range(200013, 201088)}

# Parity: tiktoken_ext/openai_public.py ENCODING_CONSTRUCTORS (gpt2 reads the same ranks as
# r50k_base from GPT-2's original vocab.bpe/encoder.json).
ENCODINGS: dict[str, TiktokenEncoding] = {
    "gpt2": TiktokenEncoding("gpt2", TiktokenPattern.R50K, {ENDOFTEXT: 50256}, R50K_RANKS, 50257),
    "r50k_base": TiktokenEncoding("r50k_base", TiktokenPattern.R50K, {ENDOFTEXT: 50256}, R50K_RANKS, 50257),
    "p50k_base": TiktokenEncoding("p50k_base", TiktokenPattern.R50K, {ENDOFTEXT: 50256}, P50K_RANKS, 50281),
    "p50k_edit": TiktokenEncoding("p50k_edit", TiktokenPattern.R50K,
                                  {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
                                  P50K_RANKS),
    "cl100k_base": TiktokenEncoding("cl100k_base", TiktokenPattern.CL100K,
                                    {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259,
                                     FIM_SUFFIX: 100260, ENDOFPROMPT: 100276}, CL100K_RANKS),
    "o200k_base": TiktokenEncoding("o200k_base", TiktokenPattern.O200K, _O200K_SPECIALS, O200K_RANKS),
    "o200k_harmony": TiktokenEncoding("o200k_harmony", TiktokenPattern.O200K, _HARMONY_SPECIALS, O200K_RANKS),
}


def encoding_by_name(name: str) -> TiktokenEncoding:
    """The encoding called `name` (ValueError listing the known names otherwise)."""
    try:
        return ENCODINGS[name]
    except KeyError:
        raise ValueError(f"unknown tiktoken encoding {name!r}; known: {', '.join(ENCODINGS)}") from None


def encodings_for_rank_file(data: bytes) -> list[TiktokenEncoding]:
    """Encodings whose official rank file is exactly `data` (by size, then sha256); [] if none.

    Several encodings share a file (r50k_base/gpt2, p50k_base/p50k_edit,
    o200k_base/o200k_harmony): pick by file name or `encoding=` among them.
    """
    sized = [e for e in ENCODINGS.values() if e.rank_file.size == len(data)]
    if not sized:
        return []
    import hashlib          # here, not at the top: it loads OpenSSL (3 ms)
    digest = hashlib.sha256(data).hexdigest()
    return [e for e in sized if e.rank_file.sha256 == digest]


def encoding_for_file_name(file_name: str) -> Optional[TiktokenEncoding]:
    """The encoding a rank file's name stands for ("cl100k_base.tiktoken" -> cl100k_base)."""
    stem = file_name.rsplit("/", 1)[-1]
    if stem.endswith(".tiktoken"):
        stem = stem[: -len(".tiktoken")]
    return ENCODINGS.get(stem)
