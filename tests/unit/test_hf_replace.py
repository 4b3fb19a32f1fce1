"""The Replace normalizer stage for literal patterns (LiteralReplace) vs HF tokenizers'
`normalizers.Replace`: String patterns, and Regex patterns that are one literal character
repeated (`c+`, `c{m,}`); any other pattern runs on the Oniguruma matcher (HfReplace).
"""
from __future__ import annotations

import random

import pytest
import tokenizers
from tokenizers import Regex, models, normalizers

import toksmith
from tests.conftest import LONG_RUNS
from toksmith._core.hf_replace import LiteralReplace
from toksmith.hf.native_normalizers import _REPEATED_CHAR

CASES = [("string", " ", "_"), ("string", "ab", "X"), ("string", "a", ""), ("string", "\u2581", " "),
         ("string", "aa", "b"), ("string", ".", "\u2581\u2581"), ("regex", " {2,}", " "), ("regex", "a+", "-"),
         ("regex", "x{3,}", "Y"), ("regex", "\u2581{2,}", "\u2581"), ("regex", " +", ""), ("regex", r"\.+", "."),
         ("regex", r"\ {2,}", "_")]


def _pair(kind: str, pattern: str, content: str):
    if kind == "string":
        return LiteralReplace(pattern.encode(), content.encode(), 0), normalizers.Replace(pattern, content)
    m = _REPEATED_CHAR.fullmatch(pattern)
    ours = LiteralReplace(m["char"][-1].encode(), content.encode(), 1 if m["plus"] else int(m["min"]))
    return ours, normalizers.Replace(Regex(pattern), content)


@pytest.mark.parametrize("kind,pattern,content", CASES)
def test_random_texts(kind, pattern, content):
    ours, ref = _pair(kind, pattern, content)
    rnd = random.Random(pattern)
    for _ in range(3000):
        text = "".join(rnd.choice(" ab.x\u2581\u00e9") for _ in range(rnd.randrange(0, 40)))
        assert ours.normalize_text(text) == ref.normalize_str(text), repr(text)
    for text in LONG_RUNS:
        assert ours.normalize_text(text) == ref.normalize_str(text)


def test_corpus_lines(corpus_lines):
    ours, ref = _pair("regex", " {2,}", " ")
    for lines in corpus_lines.values():
        for line in lines:
            assert ours.normalize_text(line) == ref.normalize_str(line)


@pytest.mark.parametrize("pattern", [r"\s+", "a|b", "[ab]+", " {2,5}", "ab+", "(a)+", "a*", r"\n+", ""])
def test_other_patterns_run_on_the_oniguruma_matcher(tmp_path, pattern):
    # patterns LiteralReplace does not take go to the Oniguruma-exact matcher (HfReplace)
    ref = tokenizers.Tokenizer(models.Unigram([("<unk>", 0.0), ("a", -1.0), ("_", -2.0)], unk_id=0))
    ref.normalizer = normalizers.Replace(Regex(pattern) if pattern else "", "_")
    ref.save(str(tmp_path / "t.json"))
    tok = toksmith.load(tmp_path / "t.json")
    assert type(tok.engine.normalizer.members[-1]).__name__ == "HfReplace"
    rnd = random.Random(pattern)
    for _ in range(1000):
        text = "".join(rnd.choice(" ab\n\u00e9") for _ in range(rnd.randrange(0, 20)))
        assert tok.encode(text) == ref.encode(text).ids, repr(text)


def test_bad_arguments():
    with pytest.raises(ValueError, match="empty"):
        LiteralReplace(b"", b"x")
    with pytest.raises(ValueError, match="one character"):
        LiteralReplace(b"ab", b"x", 2)
