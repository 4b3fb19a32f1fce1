"""Rank files loaded with a split pattern of their own (``load(path, pattern=REGEX, ...)``)
against tiktoken built with the same ranks and pattern (``tiktoken.Encoding(pat_str=...)``).

Patterns: Qwen's (lookahead), a DeepSeek-like one (literal CJK ranges, \\p{P}/\\p{S}), a
possessive/atomic one in r50k's style, and made-up ones with look-behind, lazy loops, case
folding of classes and properties, anchors and text left unmatched (dropped by both). Each is
compared on a sample of every fixture corpus, the tricky strings, fuzzed texts and every
code point (in runs of 64) through encode and encode_batch.
"""
from __future__ import annotations

import random

import pytest
import tiktoken
import tiktoken.load

import toksmith
from tests.conftest import fixture_file, report
from tests.parity.test_spm_bpe_gguf import fail_on

# Parity: Qwen (tokenization_qwen.py PAT_STR).
QWEN_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
DEEPSEEK_LIKE = (r"""\p{N}{1,3}|[一-龥\u3040-ゟ゠-ヿ]+|[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"""
                 r"""|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
PATTERNS = {
    "qwen": QWEN_PATTERN,
    "deepseek-like": DEEPSEEK_LIKE,
    "possessive": r"""(?i:'s|'t)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    "look-behind": r"""(?<=[a-z])[A-Z]\p{Ll}*|(?<![\p{L}])\p{L}+|\p{L}+?(?=ing\b)|\p{L}+|\d+|\s+(?!\S)|\s+|[^\s\w]+""",
    "case-folded": r"""(?i)[a-f]+|\p{Lu}+|(?-i:\p{Ll})+|\P{L}""",
    "atomic-lazy": r"""(?>\s+)(?=\S)|\w{2,4}?\b|\w+|[^\w\s]{1,2}|\x{3000}|\s""",
    "drops-text": r"""\p{L}+|\p{N}{1,3}|[\r\n]+|^\s+|\s+$""",
}
SPECIALS = {"<|endoftext|>": 100257}


@pytest.fixture(scope="module")
def ranks(fixtures):
    return tiktoken.load.load_tiktoken_bpe(str(fixture_file(fixtures, "tiktoken/cl100k_base.tiktoken")))


def sample_texts(corpus_lines, tricky_strings) -> list[str]:
    texts = [line for lines in corpus_lines.values() for line in lines[:150]] + list(tricky_strings)
    rng = random.Random("patterns")
    alphabet = list("aAbZ zs'S1२٣\n\r\t.,!é日本ᾼǅſKİı") + ["\u3000", "\u0301", "ing", "IT'S", "  "]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 30))) for _ in range(600)]
    code_points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    texts += ["".join(code_points[k:k + 64]) for k in range(0, len(code_points), 64)]
    return texts


@pytest.mark.parametrize("name", list(PATTERNS))
def test_pattern_splits_like_tiktoken(fixtures, corpus_lines, tricky_strings, ranks, name):
    pattern = PATTERNS[name]
    tok = toksmith.load(fixture_file(fixtures, "tiktoken/cl100k_base.tiktoken"), pattern=pattern,
                        special_tokens=SPECIALS)
    enc = tiktoken.Encoding(name=name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=SPECIALS)
    texts = sample_texts(corpus_lines, tricky_strings)
    want = enc.encode_ordinary_batch(texts, num_threads=2)
    got = tok.encode_batch(texts, parse_special=False)
    mismatches = [f"{text[:60]!r}: ours {ours[:20]}, tiktoken {theirs[:20]}"
                  for text, ours, theirs in zip(texts, got, want) if ours != theirs]
    singles = texts[:200]
    mismatches += [f"encode {text[:60]!r}" for text, theirs in zip(singles, want) if tok.encode(text) != theirs]
    special_text = "a<|endoftext|>b"
    assert tok.encode(special_text, parse_special=True) == enc.encode(special_text, allowed_special="all")
    report(f"pattern {name!r} vs tiktoken: {len(texts) + len(singles) + 1} texts (corpora sample, tricky strings, "
           f"fuzz, every code point), {len(mismatches)} mismatches")
    fail_on(mismatches)


@pytest.mark.parametrize("pattern, construct", [
    (r"(\w)\1", "back-reference"),
    (r"\w+\Z", "\\Z"),
    (r"(?m)^\w+", "the flag 'm'"),
    (r"[[:alpha:]]+", "POSIX class"),
    (r"[\w&&[^\d]]+", "class operation"),
    (r"\p{Egyptian_Hieroglyphs}+|\s", "Egyptian_Hieroglyphs"),
    (r"(?<=\w+)x|\w", "look-behind of several lengths"),
    (r"\w*", "can match the empty string"),
    (r"a{,3}|b", "no quantifier"),
])
def test_patterns_that_cannot_run_exactly_are_refused_naming_the_construct(fixtures, pattern, construct):
    with pytest.raises(toksmith.UnsupportedFeatureError, match="tiktoken") as err:
        toksmith.load(fixture_file(fixtures, "tiktoken/cl100k_base.tiktoken"), pattern=pattern,
                      special_tokens=SPECIALS)
    assert construct in str(err.value) and "cl100k_base.tiktoken" in str(err.value)
