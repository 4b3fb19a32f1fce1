"""The Oniguruma-exact matcher of tokenizer.json's Split and Replace (toksmith.hf.native_regex):
semantics that decide parity, each checked against tokenizers itself; what it refuses (by
JSON path); long inputs; pickling; the DFA and the passes agree."""
from __future__ import annotations

import json
import pickle
import random
import re

import pytest
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

import toksmith
from tests.regex_reference import BEHAVIORS, char_offsets, marker_for, reference_matches
from toksmith._core.hf_regex_stages import SPLIT_ISOLATED, SPLIT_REMOVED, HfReplace, HfSplit
from toksmith._core.linear_regex import LinearRegex
from toksmith.hf.native_regex import compiled_pattern
from toksmith.hf.onig_regex import compile_onig
from toksmith.pretokenizers.backtrack_program import RegexUnsupported

# (pattern, text): each a rule of Oniguruma or of onig's find_iter that a naive engine gets wrong
SEMANTICS = [
    (r"a|(?=c)", "abc"),                     # an empty match not right after a match is kept
    (r"\d*", "a1bbb2"),                      # ... one right after a match is skipped
    (r"(?:a*)*", "aab"), (r"(?:a?)*", "aab"),  # Oniguruma's quantifier reductions
    (r"(?:a+?)+", "baaax"), (r"(?:a+?)*", "baaax"), (r"(?:a??)*", "aa"),
    (r"x{3,1}", "xxxxx"), (r"x{3,1}x", "xxx"),  # a reversed interval is possessive
    (r"\d{1,3}+", "ab12345c"), (r"\d{2}?", "12345"), (r"\d{2,3}?", "12345"), (r"a{,2}", "aaaaa"),
    (r"a{ 2}", "a{ 2}"), (r"a**", "aaa"), (r"a{2}{3}", "aaaaaaa"),
    (r"a++a", "aaa"), (r"(?>a+)a", "aaa"), (r"(?>a|ab)c", "abc"), (r"[ab]*+b", "aab"),
    (r"^", "a\nb\n"), (r"$", "a\nb\n"), (r"a$", "a\r\n"), (r"\Z", "a\n\n"), (r"\A.|.\z", "ab\ncd"),
    (r".", "a\nb\r"), (r"(?m).", "a\nb"), (r"\N|\O", "a\nb"), (r"\R", "a\r\nb\nc\rd\x85e"),
    (r"\b", "ab cd"), (r"\B", "ab  cd"), (r"\b\w", "héllo wörld"),
    (r"a(?i)b|c", "abACaB"), (r"(?i)k", "kK\u212a"), (r"(?i)s", "sSſ"), (r"(?i)[^k]", "\u212ak"),
    (r"(?i)\p{Lu}", "aA"), (r"(?i)[^\p{Lu}]", "aAb1"), (r"(?i)[^[:upper:]]", "aAb1"), (r"(?i)[A-Z]", "aAb1"),
    (r"[a-z&&[^aeiou]]+", "hello"), (r"[a-z&&]", "a"), (r"[]a]+", "a]b"), (r"[\w-]+", "a-b c"),
    (r"\h+", "xaF09gG"), (r"\s+", "\x1c\x85\xa0\u200b\u2028 \t"), (r"\w+", "a_\u200d\u0301b"),
    (r"\p{^L}+", "ab12"), (r"\P{^L}+", "ab12"), (r"\p{white-space}+", " \n"),
    (r"(?x) a b # c", "ab"), (r"(?#x)a", "a"), (r"\-\~\#\&\ ", "-~#& "), (r"\x41\x{42}\u0043\101\o{104}", "ABCAD"),
    (r"\cA\C-b\M-a", "\x01\x02\xe1"), (r"(?<=a+)b", "aab"), (r"(?<=a|bc)d", "adbcdxd"), (r"(?<!\w)a", "ba a"),
    (r"(?<=\b)a", "a ba"), (r"(?<=[é]{2}+)é", "ééé"), (r"(?<=a|\bbc)d", "ad bcd"), (r"(?>a|ab)*c|a", "abacaab"),
    (r"()", "ab"), (r"a|", "ab"), (r"|a", "ab"),
]


@pytest.mark.parametrize("pattern,text", SEMANTICS)
def test_semantics_match_tokenizers(pattern, text):
    mark = marker_for(text)
    want, marked = reference_matches(pattern, text, mark)
    regex = compiled_pattern("Regex", pattern)
    assert char_offsets(text, regex.find_matches(text.encode())) == want
    assert HfReplace(regex, mark.encode()).normalize_text(text) == marked
    for behavior in BEHAVIORS:
        for invert in (False, True):
            ref = [p for p, _ in pre_tokenizers.Split(Regex(pattern), behavior, invert=invert).pre_tokenize_str(text)]
            got = [p.decode() for p in HfSplit(regex, BEHAVIORS.index(behavior), invert).split_text(text.encode())]
            assert got == ref, (behavior, invert)


@pytest.mark.parametrize("pattern,construct", [
    (r"(a)\1", "back-reference"), (r"(?<n>a)\k<n>", "back-reference"), (r"\Ga", r"\G"), (r"a\Kb", r"\K"),
    (r"(?y{w})\X", "word text segments"), (r"(?<=\X)a", "look-behind"), (r"(?~abc)", "absent operator"), (r"(?:a|)*", "empty string"), (r"(?:a?b?)+", "empty string"),
    (r"(?i)straße", "case folding"), (r"(?i)ss", "case folding"), (r"(?i)[\p{L}]", "case folding"),
    (r"(?i)[\p{Lu}]", "case folding"), (r"(?i)[[:upper:]]", "case folding"),
    (r"(?<=\ba?)x", "look-behind"), (r"(?<=\R)", "look-behind"), (r"(?<=é?+)é", "look-behind"),
    (r"(?<![a-z]*?[\s\p{L}]*+|-)x", "look-behind"), (r"(?W)\w", "option"), (r"(?L)a|ab", "option"),
    (r"\p{Age=1.1}", "property"),
])
def test_unsupported_constructs_are_named(pattern, construct):
    with pytest.raises(RegexUnsupported, match=re.escape(construct)):
        compiled_pattern("Regex", pattern)


def _file(tmp_path, normalizer=None, pre_tokenizer=None):
    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    data = json.loads(tok.to_str())
    data["normalizer"] = normalizer
    data["pre_tokenizer"] = pre_tokenizer
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_refusal_names_the_json_path(tmp_path):
    bad = {"type": "Split", "pattern": {"Regex": r"(\w)\1"}, "behavior": "Isolated", "invert": False}
    path = _file(tmp_path, pre_tokenizer={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"String": " "}, "behavior": "Removed", "invert": False}, bad]})
    with pytest.raises(toksmith.UnsupportedModelError, match=r"\$\.pre_tokenizer\.pretokenizers\[1\]\.pattern\.Regex"
                                                             r".*back-reference"):
        toksmith.load(path)
    path = _file(tmp_path, normalizer={"type": "Replace", "pattern": {"Regex": r"a\Kb"}, "content": "x"})
    with pytest.raises(toksmith.UnsupportedModelError, match=r"\$\.normalizer\.pattern\.Regex.*\\K"):
        toksmith.load(path)


def test_split_and_replace_in_a_whole_file_match_tokenizers(tmp_path):
    # Replace and Split by regexes in front of a WordLevel model: loaded through the pipeline,
    # every text gives tokenizers' ids
    path = _file(tmp_path, normalizer={"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
                 pre_tokenizer={"type": "Split", "pattern": {"Regex": r"\s+"}, "behavior": "Removed", "invert": False})
    ref = Tokenizer.from_file(str(path))
    tok = toksmith.load(path)
    rnd = random.Random(4)
    for _ in range(2000):
        text = "".join(rnd.choice(["a", " ", "  ", "\n", "b", "aa", "\u3000"]) for _ in range(rnd.randrange(12)))
        assert tok.encode(text) == ref.encode(text).ids, repr(text)


@pytest.mark.parametrize("pattern,text,content", [
    (" {2,}", "  hello", " "), (" {2,}", " hello", " "), ("a", "aab", ""), ("", "ab", "X"), ("ab", "abc", "X"),
    ("a", "abc", "XY"), ("b|", "abc", "X"), ("a|(?=b)", "ab", ""), ("éé", "ééa", "X"), ("x", "abc", ""),
])
def test_replace_reports_a_late_start_as_tokenizers_aligns(pattern, text, content):
    # Parity: the first normalized character's alignment (NormalizedString::replace) is the
    # first token's start offset (tokenizers slices the normalized text by it: Metaspace "first")
    ref = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    ref.normalizer = normalizers.Replace(Regex(pattern), content)
    want = ref.encode(text).offsets[0][0] > 0
    assert HfReplace(compiled_pattern("Regex", pattern), content.encode()).starts_late(text.encode()) == want


@pytest.mark.parametrize("pattern", [r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
                                     r"a*b|a", r"(?:a|aa)+c", r"(?=(\d{3})+(?!\d))", r"(?<=a)a|\b\w", r"(?>a|ab)*c|a"])
@pytest.mark.parametrize("unit", ["a", " ", "\n", "0123456789", "日本語", "ab"])
def test_long_runs(pattern, unit):
    regex = compiled_pattern("Regex", pattern)
    text = unit * (20000 // len(unit))
    mark = marker_for(text)
    try:
        want, _ = reference_matches(pattern, text, mark)
    except BaseException as exc:        # Oniguruma's retry limit: tokenizers panics
        assert "retry-limit" in str(exc)
    else:
        assert char_offsets(text, regex.find_matches(text.encode())) == want
    big = (unit * (1_000_000 // len(unit))).encode()
    assert HfSplit(regex, SPLIT_ISOLATED, False).count_pieces(big) >= 1     # no hang, no deep stack


def test_dfa_and_passes_agree(corpus_lines):
    from tests.real_patterns import REAL_PATTERNS
    from tests.conftest import multilingual_sample
    texts = multilingual_sample(corpus_lines, 30)
    for pattern in REAL_PATTERNS.values():
        program = compile_onig(pattern)
        fast, slow = LinearRegex(program, pattern), LinearRegex(program, pattern, use_dfa=False)
        for text in texts:
            assert fast.find_matches(text.encode()) == slow.find_matches(text.encode()), (pattern, text)


def test_stages_pickle():
    regex = compiled_pattern("Regex", r"\s+(?!\S)|\s+")
    split = pickle.loads(pickle.dumps(HfSplit(regex, SPLIT_REMOVED, True)))
    assert split.split_text(b"a  b c") == HfSplit(regex, SPLIT_REMOVED, True).split_text(b"a  b c")
    replace = pickle.loads(pickle.dumps(HfReplace(regex, b"_")))
    assert replace.normalize_text("a  b c") == HfReplace(regex, b"_").normalize_text("a  b c") == "a__b_c"
    assert pickle.loads(pickle.dumps(regex)).dfa_size == regex.dfa_size


def test_string_patterns_are_literals():
    # Parity: tokenizers compiles {"String": s} as regex::escape(s); "" matches everywhere
    for text, pattern in [("a.b*c", "."), ("a.b*c", "*"), ("x[y]z", "[y]"), ("ab", "")]:
        want = normalizers.Replace(pattern, "_").normalize_str(text)
        assert HfReplace(compiled_pattern("String", pattern), b"_").normalize_text(text) == want
