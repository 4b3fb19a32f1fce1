"""tiktoken rank files (.tiktoken, and Llama 3's original tokenizer.model).

A rank file holds one ``base64(token) rank`` line per token and nothing else: the
pre-tokenizer pattern and the special tokens come from the encoding. Files of
OpenAI's encodings (and Llama 3's) are recognised by their sha256, else by their
file name, or named with ``encoding=``; any other rank file takes ``pattern=`` and
``special_tokens=``::

    >>> spec = read_tiktoken("cl100k_base.tiktoken")        # doctest: +SKIP
    >>> spec.encoding, spec.pattern                            # doctest: +SKIP
    ('cl100k_base', <SplitPattern.CL100K: 'cl100k'>)
    >>> read_tiktoken("mine.tiktoken", pattern=SplitPattern.O200K,
    ...               special_tokens={"<|end|>": 1000})     # doctest: +SKIP
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from toksmith._core.rank_file import RankFileError, missing_ranks, missing_single_bytes, parse_rank_file
from toksmith.errors import ModelFormatError
from toksmith.formats.bounded_read import read_model_file
from toksmith.spec import ByteLevelSpec, FileFormat, SplitPattern
from toksmith.vocab import ByteLevelVocab, MergeOrder

# Parity: tiktoken_ext/openai_public.py (tiktoken 0.14.0) r50k_pat_str, cl100k_base, o200k_base;
# Llama 3: meta-llama/llama3 tokenizer.py pat_str.
PATTERN_REGEX: dict[SplitPattern, str] = {
    SplitPattern.R50K: r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    SplitPattern.CL100K: r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    SplitPattern.O200K: "|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]),
    SplitPattern.LLAMA3: r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
}

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX, FIM_MIDDLE, FIM_SUFFIX = "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True)
class KnownEncoding:
    """An encoding whose rank file is recognised: its pattern and special tokens."""

    name: str
    file_sha256: str            # of the rank file it reads
    n_ranks: int                # lines of that file
    pattern: SplitPattern
    special_tokens: dict[str, int]


def _o200k_harmony_specials() -> dict[str, int]:
    # Parity: tiktoken_ext/openai_public.py o200k_harmony
    named = {"<|startoftext|>": 199998, ENDOFTEXT: 199999, "<|reserved_200000|>": 200000,
             "<|reserved_200001|>": 200001, "<|return|>": 200002, "<|constrain|>": 200003,
             "<|reserved_200004|>": 200004, "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007,
             "<|message|>": 200008, "<|reserved_200009|>": 200009, "<|reserved_200010|>": 200010,
             "<|reserved_200011|>": 200011, "<|call|>": 200012}
    return {ENDOFTEXT: 199999, ENDOFPROMPT: 200018} | named | {
        f"<|reserved_{i}|>": i for i in range(200013, 201088)}


def _llama3_specials() -> dict[str, int]:
    # Parity: meta-llama/llama3 llama/tokenizer.py Tokenizer.__init__ (num_reserved_special_tokens = 256)
    names = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
             "<|reserved_special_token_1|>", "<|reserved_special_token_2|>", "<|reserved_special_token_3|>",
             "<|start_header_id|>", "<|end_header_id|>", "<|reserved_special_token_4|>", "<|eot_id|>"]
    names += [f"<|reserved_special_token_{i}|>" for i in range(5, 256 - 5)]
    return {name: 128000 + i for i, name in enumerate(names)}


R50K_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
P50K_SHA256 = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
# Meta-Llama-3 original/tokenizer.model (the first 128000 tokens of llama.cpp's llama-bpe vocabulary)
LLAMA3_SHA256 = "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"

# Parity: tiktoken_ext/openai_public.py ENCODING_CONSTRUCTORS ("gpt2" reads other files).
KNOWN_ENCODINGS: dict[str, KnownEncoding] = {e.name: e for e in (
    KnownEncoding("r50k_base", R50K_SHA256, 50256, SplitPattern.R50K, {ENDOFTEXT: 50256}),
    KnownEncoding("p50k_base", P50K_SHA256, 50280, SplitPattern.R50K, {ENDOFTEXT: 50256}),
    KnownEncoding("p50k_edit", P50K_SHA256, 50280, SplitPattern.R50K,
                  {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}),
    KnownEncoding("cl100k_base", CL100K_SHA256, 100256, SplitPattern.CL100K,
                  {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260,
                   ENDOFPROMPT: 100276}),
    KnownEncoding("o200k_base", O200K_SHA256, 199998, SplitPattern.O200K,
                  {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}),
    KnownEncoding("o200k_harmony", O200K_SHA256, 199998, SplitPattern.O200K, _o200k_harmony_specials()),
    KnownEncoding("llama3", LLAMA3_SHA256, 128000, SplitPattern.LLAMA3, _llama3_specials()),
)}
# The encoding a file is taken for when only its sha256 is known (two encodings share a file).
ENCODING_OF_SHA256 = {R50K_SHA256: "r50k_base", P50K_SHA256: "p50k_base", CL100K_SHA256: "cl100k_base",
                      O200K_SHA256: "o200k_base", LLAMA3_SHA256: "llama3"}

_RANK_LINE = re.compile(rb"[A-Za-z0-9+/]+={0,2}[ \t]+[0-9]+(?:\r?\n|\Z)")


def looks_like_rank_file(head: bytes) -> bool:
    """Whether the first bytes of a file are rank-file lines (the first two, or one short file).

    >>> looks_like_rank_file(b"IQ== 0\\nIg== 1\\nIw== 2\\n"), looks_like_rank_file(b"\\x0a\\x05<unk>")
    (True, False)
    """
    at = 0
    for _ in range(2):
        match = _RANK_LINE.match(head, at)
        if match is None:
            return False
        at = match.end()
        if at == len(head):
            return True
    return True


def read_tiktoken(path: str | os.PathLike, *, encoding: str | None = None,
                  pattern: SplitPattern | str | None = None,
                  special_tokens: dict[str, int] | None = None) -> ByteLevelSpec:
    """Read a rank file (see the module docstring for how its encoding is chosen)."""
    data = read_model_file(path)
    return parse_tiktoken(data, os.fspath(path), encoding=encoding, pattern=pattern,
                          special_tokens=special_tokens)


def parse_tiktoken(data: bytes, source: str = "<bytes>", *, encoding: str | None = None,
                   pattern: SplitPattern | str | None = None,
                   special_tokens: dict[str, int] | None = None) -> ByteLevelSpec:
    """Read a rank file's bytes; `source` names it in errors (and by its name, its encoding)."""
    try:
        texts = parse_rank_file(data)
    except RankFileError as e:
        where = f"line {e.line}: " if e.line else ""
        raise ModelFormatError(source, f"not a valid tiktoken rank file: {where}{e.detail}") from None
    known = _known_encoding(data, source, encoding, len(texts) - len(missing_ranks(texts)))
    _check_single_bytes(texts, source)
    if pattern is None:
        if known is None:
            raise ModelFormatError(source, "a rank file of no known encoding: give its pre-tokenizer "
                                           "with pattern= (a SplitPattern or a regex) and its special "
                                           f"tokens with special_tokens= (known encodings: "
                                           f"{', '.join(KNOWN_ENCODINGS)})")
        pattern = known.pattern
    else:
        pattern = _pattern(pattern)
    if special_tokens is None:
        special_tokens = dict(known.special_tokens) if known is not None else {}
    specials = _checked_specials(special_tokens, texts, source)
    vocab = ByteLevelVocab(texts=texts, merge_order=MergeOrder.TOKEN_RANK,
                           # Parity: tiktoken CoreBPE encode_ordinary: a piece that is a token is one id.
                           ignore_merges=True, special_tokens=specials)
    return ByteLevelSpec(source=source, file_format=FileFormat.TIKTOKEN, vocab=vocab, pattern=pattern,
                         encoding=known.name if known is not None else None, source_data=data)


def _check_single_bytes(texts: list[bytes | None], source: str) -> None:
    """ModelFormatError naming the byte values no one-byte token holds.

    Parity: tiktoken byte_pair_encode (0.14) looks each part left after merging up in the
    ranks and panics when a single byte has none; so such a file has no encoding for
    every text holding that byte, and toksmith refuses it at load instead."""
    missing = missing_single_bytes(texts)
    if missing:
        raise ModelFormatError(source, f"not a usable rank file: no token for {len(missing)} of the 256 "
                                       f"single bytes ({_byte_ranges(missing)}); every byte needs a rank, "
                                       f"or a text holding it cannot be encoded (tiktoken panics on it)")


def _byte_ranges(values: list[int]) -> str:
    """Sorted byte values as hex ranges: [0, 1, 2, 0x80] -> "0x00-0x02, 0x80"."""
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ", ".join(f"0x{a:02X}" if a == b else f"0x{a:02X}-0x{b:02X}" for a, b in runs)


def _known_encoding(data: bytes, source: str, encoding: str | None, n_ranks: int) -> KnownEncoding | None:
    """The encoding of the file: named by `encoding`, recognised by sha256, or by file name."""
    import hashlib          # here, not at the top: it loads OpenSSL (3 ms)
    digest = hashlib.sha256(data).hexdigest()
    if encoding is not None:
        if encoding not in KNOWN_ENCODINGS:
            raise ValueError(f"encoding={encoding!r} is not one of: {', '.join(KNOWN_ENCODINGS)}")
        known = KNOWN_ENCODINGS[encoding]
        if digest != known.file_sha256:
            holds = ENCODING_OF_SHA256.get(digest)
            raise ModelFormatError(source, f"encoding={encoding!r} was asked for but the file "
                                           + (f"holds {holds}'s ranks" if holds else
                                              f"is not its rank file (sha256 {digest}, expected "
                                              f"{known.file_sha256})"))
        return known
    if digest in ENCODING_OF_SHA256:
        return KNOWN_ENCODINGS[ENCODING_OF_SHA256[digest]]
    stem = os.path.basename(source).split(".")[0]
    if stem in KNOWN_ENCODINGS:
        known = KNOWN_ENCODINGS[stem]
        # Same name, other bytes: a re-serialised file is fine, a cut or edited one is not.
        if n_ranks != known.n_ranks:
            raise ModelFormatError(source, f"named like {stem} but holds {n_ranks} ranks where "
                                           f"{stem} has {known.n_ranks}: truncated or modified?")
        return known
    return None


def _pattern(pattern: SplitPattern | str) -> SplitPattern | str:
    if isinstance(pattern, SplitPattern):
        return pattern
    if not isinstance(pattern, str) or not pattern:
        raise TypeError(f"pattern must be a SplitPattern or a non-empty regex string, not {pattern!r}")
    for known, regex in PATTERN_REGEX.items():
        if pattern == regex:
            return known
    try:
        return SplitPattern(pattern)     # "cl100k", "o200k", ...
    except ValueError:
        return pattern


def _checked_specials(special_tokens: dict[str, int], texts: list[bytes | None],
                      source: str) -> dict[bytes, int]:
    """{UTF-8 text: id} of special tokens, none taking a rank's id. Two texts may share an id
    (tiktoken's o200k_harmony gives 200018 to <|endofprompt|> and <|reserved_200018|>)."""
    if not isinstance(special_tokens, dict):
        raise TypeError(f"special_tokens must be a dict {{text: id}}, not {type(special_tokens).__name__}")
    out: dict[bytes, int] = {}
    for text, token_id in special_tokens.items():
        if not isinstance(text, str) or not text:
            raise TypeError(f"special_tokens keys must be non-empty strings, not {text!r}")
        if not isinstance(token_id, int) or isinstance(token_id, bool) or not 0 <= token_id < 1 << 31:
            raise ValueError(f"special_tokens[{text!r}] = {token_id!r} is not an id from 0 to 2**31 - 1")
        if token_id < len(texts) and texts[token_id] is not None:
            raise ModelFormatError(source, f"special token {text!r} has id {token_id}, which is the rank "
                                           f"of the token {texts[token_id]!r} in the file")
        out[text.encode("utf-8")] = token_id
    return out
