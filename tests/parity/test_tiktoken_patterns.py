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
from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import PATTERN_REFUSED, TIKTOKEN, TIKTOKEN_PATTERN_REFUSED

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
    # fancy-regex keeps one flag state: "(?i)" inside a capturing or atomic group lasts past
    # it, inside "(?:...)" it does not
    "flag-scope": r"""(?:(?i)t)h|((?i)i)t|(?>s(?i))e|\h{2,}|a{,2}b|\p{L}|\s+|.""",
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
    check = Comparison(f"pattern {name!r}: corpora sample, tricky strings, fuzz, every code point (encode_batch; "
                       f"encode on the first 200; a special token)", against=TIKTOKEN)
    check.all(texts, ours=tok.encode_batch(texts, parse_special=False), theirs=want, what="encode_batch")
    singles = texts[:200]
    check.all(singles, ours=[tok.encode(text) for text in singles], theirs=want[:200], what="encode")
    special_text = "a<|endoftext|>b"
    check.one(special_text, tok.encode(special_text, parse_special=True),
              enc.encode(special_text, allowed_special="all"), what="parse_special")
    check.finish()


# The pieces of random patterns are compared with tiktoken's: the ranks hold every byte run
# of the text, so each of tiktoken's pieces is one id and its boundaries show.
_ATOMS = ["a", "b", "s", "k", "A", "'", " ", "\\n", "é", ".", "[ab]", "[^a\\s]", "[a-z]", "\\s", "\\S", "\\w",
          "\\W", "\\d", "\\D", "\\h", "\\p{L}", "\\p{Lu}", "\\p{Ll}", "\\P{N}", "\\pL", "[\\p{L}\\d]",
          "[^\\p{L}]", "\\x41", "\\u00e9", "\\.", "a{,2}"]
_CHARS = ["a", "b", "A", "B", " ", "\n", "é", "É", "ſ", "s", "S", "K", "k", "1", "٣", ".", "!", "'", "\u0301",
          "\u212a"]


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    def piece(d: int) -> str:
        r = rng.random()
        if d > 3 or r < 0.35:
            node = rng.choice(_ATOMS)
        elif r < 0.42:
            return rng.choice(["^", "$", "\\b", "\\B", "\\A", "\\z", "(?i)", "(?-i)"])
        elif r < 0.58:
            node = rng.choice(["(?:", "(", "(?i:", "(?>"]) + alternation(d + 1) + ")"
        elif r < 0.68:
            return rng.choice(["(?=", "(?!"]) + alternation(d + 1) + ")"
        elif r < 0.74:
            return rng.choice(["(?<=", "(?<!"]) + rng.choice(_ATOMS[:20]) + ")"
        else:
            node = "(" + alternation(d + 1) + ")"
        if rng.random() < 0.45:
            node += rng.choice(["*", "+", "?", "{2}", "{1,3}", "{2,}", "{0,2}"]) + rng.choice(["", "", "?", "+"])
        return node

    def alternation(d: int) -> str:
        return "|".join("".join(piece(d) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 3)))

    # every branch ends in one character, so that most patterns cannot match the empty string
    return "|".join(alternation(depth) + rng.choice(_ATOMS[:20]) for _ in range(rng.randint(1, 3)))


def _tiktoken_pieces(pattern: str, text: str) -> list[bytes]:
    data = text.encode()
    ranks = {bytes([b]): b for b in range(256)}
    for i in range(len(data)):
        for j in range(i + 2, len(data) + 1):
            ranks.setdefault(data[i:j], len(ranks))
    enc = tiktoken.Encoding(name="pieces", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    by_id = {v: k for k, v in ranks.items()}
    return [by_id[t] for t in enc.encode_ordinary(text)]


def test_random_patterns_split_like_tiktoken():
    from toksmith.pretokenizers.backtrack_program import RegexUnsupported
    from toksmith.pretokenizers.fancy_regex import tiktoken_splitter
    rng = random.Random("random patterns")
    patterns = Comparison("random tiktoken patterns: accepted by tiktoken, accepted by toksmith", against=TIKTOKEN,
                          excuses={TIKTOKEN_PATTERN_REFUSED: 96})     # today 89 of 110
    pieces = Comparison("random tiktoken patterns: (pattern, text) pieces", against=TIKTOKEN)
    tiktoken_panics = tiktoken_refuses = 0
    for _ in range(200):
        pattern = _random_pattern(rng)
        try:
            tiktoken.Encoding(name="check", pat_str=pattern, mergeable_ranks={b"a": 0}, special_tokens={})
        except BaseException:       # tiktoken refuses the pattern: nothing to compare
            tiktoken_refuses += 1
            continue
        try:
            splitter = tiktoken_splitter(pattern)
        except RegexUnsupported as refusal:
            patterns.one(pattern, f"{PATTERN_REFUSED}: {refusal}", "accepted")
            continue
        patterns.one(pattern, "accepted", "accepted")
        for _ in range(16):
            text = "".join(rng.choice(_CHARS) for _ in range(rng.randint(1, 12)))
            try:
                want = _tiktoken_pieces(pattern, text)
            except BaseException:   # tiktoken panics on this text (an empty match)
                tiktoken_panics += 1
                continue
            pieces.one((pattern, text), splitter.split_text(text.encode()), want)
    report(f"random tiktoken patterns: {tiktoken_refuses} of 200 patterns refused by tiktoken and "
           f"{tiktoken_panics} (pattern, text) on which it panics, not compared")
    patterns.finish()
    pieces.finish()


@pytest.mark.parametrize("pattern, construct", [
    (r"(\w)\1", "back-reference"),
    (r"\w+\Z", "\\Z"),
    (r"(?m)^\w+", "the flag 'm'"),
    (r"[[:alpha:]]+", "POSIX class"),
    (r"[\w&&[^\d]]+", "class operation"),
    (r"\p{Egyptian_Hieroglyphs}+|\s", "Egyptian_Hieroglyphs"),
    (r"(?<=\w+)x|\w", "look-behind of several lengths"),
    (r"\w*", "can match the empty string"),
    (r"a{x}|b", "no quantifier"),
])
def test_patterns_that_cannot_run_exactly_are_refused_naming_the_construct(fixtures, pattern, construct):
    with pytest.raises(toksmith.UnsupportedFeatureError, match="tiktoken") as err:
        toksmith.load(fixture_file(fixtures, "tiktoken/cl100k_base.tiktoken"), pattern=pattern,
                      special_tokens=SPECIALS)
    assert construct in str(err.value) and "cl100k_base.tiktoken" in str(err.value)


@pytest.mark.parametrize("pattern, problem", [
    ("(a|b", "a missing ')'"), ("a)|b", "an unmatched ')'"), ("[a-", "an unterminated [...]"),
    ("*a", "a quantifier without a target"), ("a\\", "a trailing backslash"), ("[z-a]", "end is before its start"),
])
def test_malformed_patterns_are_value_errors_as_in_tiktoken(fixtures, pattern, problem):
    with pytest.raises(BaseException):      # tiktoken refuses them too (pyo3 ValueError)
        tiktoken.Encoding(name="bad", pat_str=pattern, mergeable_ranks={b"a": 0}, special_tokens={})
    with pytest.raises(ValueError, match="pattern= is not a valid regex") as err:
        toksmith.load(fixture_file(fixtures, "tiktoken/cl100k_base.tiktoken"), pattern=pattern,
                      special_tokens=SPECIALS)
    assert problem in str(err.value) and not isinstance(err.value, NotImplementedError)
