"""tokenizer.json's simple normalizers and pre-tokenizers, each alone, vs tokenizers 0.23.

Normalizers (Strip, Prepend, Replace by a string, ByteLevel, Nmt) against
`normalize_str`, pre-tokenizers (Digits, CharDelimiterSplit, FixedLength, UnicodeScripts,
ByteLevel) against `pre_tokenize_str`, on every corpus line and on edge cases: empty
and whitespace-only texts, LONG_RUNS, every kind of Unicode whitespace, invalid UTF-8
(bytes: repaired as Python's decode("utf-8", "replace") does, as the pipeline does
first). Where a normalizer says the text starts late (its first character comes from
after the input's first), tokenizers' first offset must start past 0 too.
"""
from __future__ import annotations

import pytest
import tokenizers
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from tests.conftest import LONG_RUNS
from tests.parity.comparison import Comparison
from toksmith._core import hf_normalizers as hn
from toksmith._core import hf_pretokenizers as hp
from toksmith._core.stage_sequences import NormalizerSequence
from toksmith._core.utf8_repair import PythonUtf8Repair
from toksmith.hf import components as c
from toksmith.hf.native_normalizers import replace_stage
from toksmith.pretokenizers.tiktoken_encodings import TiktokenPattern

AGAINST = f"tokenizers {tokenizers.__version__}"

# Every code point Unicode or Python calls whitespace, and the controls and spaces Nmt maps.
SPACES = "".join(sorted({chr(c) for c in range(0x3001) if chr(c).isspace()}
                        | {"\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u200b", "\u200c", "\u200d", "\u200e",
                           "\u200f", "\u2028", "\u2029", "\u202f", "\u205f", "\u2581", "\ufeff", "\ufffd"}))
EDGE_CASES = ["", " ", "  ", "\t\n", SPACES, "a" + SPACES + "b", SPACES + "a" + SPACES, "\x01\x02a\x7f\x8f",
              "\x9fb", "x\x0by", "ab", "aab", "aaab", "12٣४½²a", "½", "xéx", "x\u0301", "の ー ア 日本", " a",
              "  aa  ", "\u3000日本", "Ωa1 ", "a\U0010ffff\U000e0001", *LONG_RUNS]


def _replace(pattern: str, content: str):
    """The stage the pipeline builds for Replace(String(pattern), content)."""
    hf = c.HfTokenizerSpec(source="test.json", model=c.WordLevelModel(vocab={"a": 0}))
    return replace_stage(hf, c.Replace(c.StringPattern(pattern), content), "$.normalizer")


def _lines(corpus_lines) -> list[str]:
    return [line for lines in corpus_lines.values() for line in lines] + EDGE_CASES


NORMALIZERS = {
    "Strip": (normalizers.Strip(), hn.HfStrip(True, True)),
    "Strip-left": (normalizers.Strip(left=True, right=False), hn.HfStrip(True, False)),
    "Strip-right": (normalizers.Strip(left=False, right=True), hn.HfStrip(False, True)),
    "Prepend": (normalizers.Prepend("▁"), hn.HfPrepend("▁")),
    "Prepend-long": (normalizers.Prepend("<p> "), hn.HfPrepend("<p> ")),
    "Replace-space": (normalizers.Replace(" ", "▁"), _replace(" ", "▁")),
    "Replace-drop": (normalizers.Replace("a", ""), _replace("a", "")),
    "Replace-repeats": (normalizers.Replace("aa", "b"), _replace("aa", "b")),
    "Replace-longer": (normalizers.Replace("the", "THE THE"), _replace("the", "THE THE")),
    "Replace-multibyte": (normalizers.Replace("日本", "に"), _replace("日本", "に")),
    "Replace-self-overlap": (normalizers.Replace("abab", "x"), _replace("abab", "x")),
    "Replace-empty-pattern": (normalizers.Replace("", "-"), _replace("", "-")),
    "ByteLevel": (normalizers.ByteLevel(), hn.HfByteLevelNormalizer()),
    "Nmt": (normalizers.Nmt(), hn.HfNmt()),
}


@pytest.mark.parametrize("name", NORMALIZERS)
def test_normalizer_matches_tokenizers(corpus_lines, name):
    ref, mine = NORMALIZERS[name]
    lines = _lines(corpus_lines) + ["abababab", "ababa", "the the", "日本日本語"]
    check = Comparison(f"tokenizer.json normalizer {name} alone (normalize_str), every corpus line and edge cases",
                       against=AGAINST)
    check.all(lines, ours=[mine.normalize_text(line) for line in lines],
              theirs=[ref.normalize_str(line) for line in lines])
    check.finish()


@pytest.mark.parametrize("name", NORMALIZERS)
def test_normalizer_repairs_like_python_first(invalid_utf8_lines, name):
    ref, mine = NORMALIZERS[name]
    repaired = NormalizerSequence([PythonUtf8Repair(), mine])
    check = Comparison(f"tokenizer.json normalizer {name} after the UTF-8 repair, invalid UTF-8 lines", against=AGAINST)
    check.all(invalid_utf8_lines, ours=[repaired.normalize_text(raw) for raw in invalid_utf8_lines],
              theirs=[ref.normalize_str(raw.decode("utf-8", "replace")) for raw in invalid_utf8_lines])
    check.finish()
    for raw in invalid_utf8_lines:
        mine.normalize_text(raw)      # never crashes on bytes as they are


def test_whitespace_is_rusts_on_every_code_point():
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    ref = normalizers.Strip(left=True, right=False)
    mine = hn.HfStrip(True, False)
    check = Comparison("Strip(left): the list of code points it strips (one list over every code point)",
                       against=AGAINST)
    check.one("every code point + 'x'", [c for c in points if mine.normalize_text(c + "x") == "x"],
              [c for c in points if ref.normalize_str(c + "x") == "x"])
    check.finish()


@pytest.mark.parametrize("name", ["Strip", "Strip-left", "Replace-drop", "Replace-repeats", "Replace-multibyte",
                                  "Nmt", "Prepend", "Replace-empty-pattern"])
def test_late_start_matches_tokenizers_offsets(name):
    # A model that has every character: tokenizers' first token starts where the first
    # normalized character came from.
    ref_normalizer, mine = NORMALIZERS[name]
    texts = EDGE_CASES + ["aab", "aaab", "abc", "日本語", "\x01a", " a", "\u3000 b"]
    alphabet = sorted({c for t in texts for c in ref_normalizer.normalize_str(t)} | {"x"})
    ref = Tokenizer(models.BPE({c: i for i, c in enumerate(alphabet)}, []))
    ref.normalizer = ref_normalizer
    check = Comparison(f"normalizer {name}: starts late, or normalizes to nothing (no first offset)",
                       against=f"{AGAINST} (first offset past 0)")
    for text in texts:
        enc = ref.encode(text)
        theirs = enc.offsets[0][0] > 0 if enc.ids else None
        check.one(text, hn.starts_late(mine, text) if mine.normalize_text(text) else None, theirs)
    check.finish()


PRETOKENIZERS = {
    "Digits": (pre_tokenizers.Digits(individual_digits=False), hp.HfDigits(False)),
    "Digits-individual": (pre_tokenizers.Digits(individual_digits=True), hp.HfDigits(True)),
    "CharDelimiterSplit-space": (pre_tokenizers.CharDelimiterSplit(" "), hp.HfCharDelimiterSplit(" ")),
    "CharDelimiterSplit-e": (pre_tokenizers.CharDelimiterSplit("e"), hp.HfCharDelimiterSplit("e")),
    "CharDelimiterSplit-multibyte": (pre_tokenizers.CharDelimiterSplit("の"), hp.HfCharDelimiterSplit("の")),
    "FixedLength": (pre_tokenizers.FixedLength(5), hp.HfFixedLength(5)),
    "FixedLength-1": (pre_tokenizers.FixedLength(1), hp.HfFixedLength(1)),
    "UnicodeScripts": (pre_tokenizers.UnicodeScripts(), hp.HfUnicodeScripts()),
    "ByteLevel": (pre_tokenizers.ByteLevel(add_prefix_space=False),
                  hp.HfByteLevel(add_prefix_space=False, splitter=TiktokenPattern.R50K.build_splitter())),
    "ByteLevel-prefix": (pre_tokenizers.ByteLevel(add_prefix_space=True),
                         hp.HfByteLevel(add_prefix_space=True, splitter=TiktokenPattern.R50K.build_splitter())),
    "ByteLevel-prefix-no-regex": (pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False),
                                  hp.HfByteLevel(add_prefix_space=True)),
    "ByteLevel-no-regex": (pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
                           hp.HfByteLevel(add_prefix_space=False)),
}


def _pieces(stage, text) -> list[str]:
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    return [p.decode("utf-8") for p in stage.split_text(data)]


@pytest.mark.parametrize("name", PRETOKENIZERS)
def test_pretokenizer_matches_tokenizers(corpus_lines, name):
    ref, mine = PRETOKENIZERS[name]
    lines = _lines(corpus_lines)
    check = Comparison(f"tokenizer.json pre-tokenizer {name} alone (pre_tokenize_str), every corpus line, edge cases "
                       "and invalid UTF-8 after the repair", against=AGAINST)
    check.all(lines, ours=[_pieces(mine, line) for line in lines],
              theirs=[[p for p, _ in ref.pre_tokenize_str(line)] for line in lines])
    raws = invalid_utf8_samples()
    check.all(raws, ours=[_pieces(mine, PythonUtf8Repair().normalize_text(raw)) for raw in raws],
              theirs=[[p for p, _ in ref.pre_tokenize_str(raw.decode("utf-8", "replace"))] for raw in raws],
              what="invalid UTF-8")
    check.finish()
    for raw in raws:
        mine.split_text(raw)          # bytes as they are: no crash


def invalid_utf8_samples() -> list[bytes]:
    return [b"\xff", b"a\xc3", b"\xe6\x97", b"a\x80b", b"\xed\xa0\x80x", b" \xf0\x9f\xa6 1", b"\xc0\xaf"]


def test_unicode_scripts_on_every_code_point():
    # every code point in order, and in two shuffled orders: the cuts tell the classes apart
    import random
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    ref, mine = PRETOKENIZERS["UnicodeScripts"]
    check = Comparison("UnicodeScripts pieces of every code point in one text, in order and 2 shuffled orders",
                       against=AGAINST)
    for seed in (None, 1, 2):
        if seed is not None:
            random.Random(seed).shuffle(points)
        text = "".join(points)
        check.one(f"order {seed}", _pieces(mine, text), [p for p, _ in ref.pre_tokenize_str(text)])
    check.finish()


def test_digits_on_every_code_point():
    everything = "a" + "a".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF) + "a"
    check = Comparison("Digits pieces of every code point in one text x individual_digits 2", against=AGAINST)
    for individual in (False, True):
        ref = pre_tokenizers.Digits(individual_digits=individual)
        check.one(f"individual_digits={individual}", _pieces(hp.HfDigits(individual), everything),
                  [p for p, _ in ref.pre_tokenize_str(everything)])
    check.finish()


def test_char_delimiter_split_drops_the_start():
    # a text that starts with the delimiter (or is nothing else) reports its start dropped
    stage = hp.HfCharDelimiterSplit("x")
    assert stage.split_text(b"xxab") == [b"ab"]
    assert stage.split_text(b"xxx") == []
    assert stage.split_text(b"") == []
    with pytest.raises(ValueError, match="one character"):
        hp.HfCharDelimiterSplit("ab")
    with pytest.raises(ValueError, match="at least 1"):
        hp.HfFixedLength(0)
