"""Each native stage of the BERT-style tokenizer.json pipelines alone, against the same
component of HF tokenizers 0.23.3 alone: normalizers (`normalize_str`), pre-tokenizers
(`pre_tokenize_str`) and the WordPiece / WordLevel models (`Model.tokenize`).

Texts: tricky sequences (marks out of canonical order, Hangul syllables and jamo,
compatibility forms, controls, exotic spaces), seeded random strings over the characters
where the stages differ, and the first lines of every fixture corpus (tests/parity/
test_hf_wordpiece.py runs the stages on every corpus line).
"""
from __future__ import annotations

import itertools
import json
import random
import unicodedata

import pytest
from tokenizers import models
from tokenizers import normalizers as N
from tokenizers import pre_tokenizers as P

from tests.conftest import LONG_RUNS, fixture_file, multilingual_sample
from toksmith._core import hf_regex_stages
from toksmith._core.unicode_normalizers import HfCharNormalizer, HfUnicodeNormalizer
from toksmith._core.bert_pretokenizers import HfBertPreTokenizer, HfPunctuation, HfRunsPreTokenizer
from toksmith._core.stage_sequences import NormalizerSequence, PreTokenizerSequence
from toksmith._core.wordpiece import WordLevel, WordPiece

TRICKY = [
    "", " ", "a\u0301", "e\u0302\u0323", "e\u0323\u0302", "a\u0301\u0323\u0308\u0327", "\u0301\u0301a",
    "\u1100\u1161\u11a8", "\uac00\u11a8", "\uac00\u11a7", "\u1100\u1161", "한국어 텍스트", "\u0958\u0959",
    "ﬁ ﬂ ㎏ ① ｆｕｌｌ ｗｉｄｔｈ", "Å Å Å", "\u1e9b\u0323", "ǅ ǈ ǋ İ ẞ ΣΑΣ", "\x00a\x01b\x7f\u200b\ufeffc\ufffd",
    "a\u0301\x00\u0323", "\u0301\u200b\u0323", "tab\there\nnew\rline\x0b\x0c\x1c", "\u00a0\u2009\u3000\u2028 x",
    "中文字符 and 日本語 テキスト", "\uf900\uf901 \U0002f800", "Ça va? Ñandú! Ægir.", "\U0001d165\U0001d16e",
    "क्षि \u0915\u093c", "ﷺ ﷻ", "x" * 120, "\u0345\u0301a\u0345", "\u0f73\u0f75\u0f81",
]

_CHARS = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
_MARKS = [c for c in _CHARS if unicodedata.combining(c)]
_DECOMPOSING = [c for c in _CHARS if unicodedata.decomposition(c)]
_POOLS = [_MARKS, _DECOMPOSING, [chr(cp) for cp in range(0x20, 0x7F)], list("\x00\t\n\r \u00a0\u3000\u200bİΣ"),
          [chr(cp) for cp in range(0x1100, 0x1200)] + [chr(cp) for cp in range(0xAC00, 0xAC40)],
          list("中文字日本語!?,.;:'\"()-_¿¡«»"), _CHARS]


def random_texts(seed: int, count: int) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(rnd.choice(_POOLS)) for _ in range(rnd.randint(1, 16))) for _ in range(count)]


@pytest.fixture(scope="module")
def texts(fixtures, corpus_lines) -> list[str]:
    tricky = [item["text"] for item in json.loads(fixture_file(fixtures, "corpus/tricky_strings.json")
                                                     .read_text(encoding="utf-8"))]
    return TRICKY + LONG_RUNS + tricky + random_texts(1, 5000) + multilingual_sample(corpus_lines, 150)


def _bert_pairs():
    for clean, chinese, strip, lower in itertools.product((False, True), (False, True), (None, False, True),
                                                          (False, True)):
        yield (f"BertNormalizer(clean_text={clean}, handle_chinese_chars={chinese}, strip_accents={strip}, "
               f"lowercase={lower})",
               N.BertNormalizer(clean_text=clean, handle_chinese_chars=chinese, strip_accents=strip, lowercase=lower),
               HfCharNormalizer.bert(clean_text=clean, handle_chinese_chars=chinese, strip_accents=strip,
                                     lowercase=lower))


NORMALIZER_PAIRS = [
    ("NFD", N.NFD(), HfUnicodeNormalizer("NFD")),
    ("NFKD", N.NFKD(), HfUnicodeNormalizer("NFKD")),
    ("NFC", N.NFC(), HfUnicodeNormalizer("NFC")),
    ("NFKC", N.NFKC(), HfUnicodeNormalizer("NFKC")),
    ("Lowercase", N.Lowercase(), HfCharNormalizer.lowercase_only()),
    ("StripAccents", N.StripAccents(), HfCharNormalizer.strip_accents_only()),
    ("Sequence[NFD, Lowercase, StripAccents]", N.Sequence([N.NFD(), N.Lowercase(), N.StripAccents()]),
     NormalizerSequence([HfUnicodeNormalizer("NFD"), HfCharNormalizer.lowercase_only(),
                         HfCharNormalizer.strip_accents_only()])),
    ("Sequence[NFKC, Lowercase]", N.Sequence([N.NFKC(), N.Lowercase()]),
     NormalizerSequence([HfUnicodeNormalizer("NFKC"), HfCharNormalizer.lowercase_only()])),
    *_bert_pairs(),
]


@pytest.mark.parametrize("name,ref,ours", NORMALIZER_PAIRS, ids=[p[0] for p in NORMALIZER_PAIRS])
def test_normalizer_alone_matches_tokenizers(texts, name, ref, ours):
    for text in texts:
        assert ours.normalize_text(text) == ref.normalize_str(text), (name, text[:80])


def test_long_runs_of_marks_stay_exact_and_fast():
    # a run of 20000 non-starters in alternating classes: sorted in linear time
    text = "a" + "\u0301\u0323" * 10000 + "b" + "\u0308" * 5000
    for name, ref, ours in NORMALIZER_PAIRS[:4]:
        assert ours.normalize_text(text) == ref.normalize_str(text), name


def _split_code(behavior: str) -> int:
    """tokenizers' behavior name -> the code HfPunctuation takes."""
    return getattr(hf_regex_stages, "SPLIT_" + behavior.upper())


PRE_TOKENIZER_PAIRS = [
    ("BertPreTokenizer", P.BertPreTokenizer(), HfBertPreTokenizer()),
    ("Whitespace", P.Whitespace(), HfRunsPreTokenizer.whitespace()),
    ("WhitespaceSplit", P.WhitespaceSplit(), HfRunsPreTokenizer.whitespace_split()),
    *[(f"Punctuation({b})", P.Punctuation(behavior=b), HfPunctuation(_split_code(b)))
      for b in ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")],
    ("Sequence[WhitespaceSplit, Punctuation(merged_with_next)]",
     P.Sequence([P.WhitespaceSplit(), P.Punctuation(behavior="merged_with_next")]),
     PreTokenizerSequence([HfRunsPreTokenizer.whitespace_split(),
                           HfPunctuation(hf_regex_stages.SPLIT_MERGED_WITH_NEXT)])),
    ("Sequence[Punctuation(removed), Whitespace]", P.Sequence([P.Punctuation(behavior="removed"), P.Whitespace()]),
     PreTokenizerSequence([HfPunctuation(hf_regex_stages.SPLIT_REMOVED), HfRunsPreTokenizer.whitespace()])),
]


@pytest.mark.parametrize("name,ref,ours", PRE_TOKENIZER_PAIRS, ids=[p[0] for p in PRE_TOKENIZER_PAIRS])
def test_pre_tokenizer_alone_matches_tokenizers(texts, name, ref, ours):
    for text in texts + ["a!!b", "!!a", "a!!", "!", "a ! b", "¿Qué? ¡Sí!", "...", "x,y;z"]:
        want = [piece for piece, _ in ref.pre_tokenize_str(text)]
        got = [piece.decode("utf-8") for piece in ours.split_text(text.encode("utf-8"))]
        assert got == want, (name, text[:80])


def test_pre_tokenizers_drop_what_they_remove():
    for pretok in (HfBertPreTokenizer(), HfRunsPreTokenizer.whitespace(), HfRunsPreTokenizer.whitespace_split()):
        assert pretok.split_text(b"  a b ") == [b"a", b"b"]
        assert pretok.split_text(b" \t\n ") == []
        assert pretok.split_text(b"ab") == [b"ab"]
    assert HfPunctuation(hf_regex_stages.SPLIT_REMOVED).split_text(b"!a,b!") == [b"a", b"b"]
    assert HfPunctuation(hf_regex_stages.SPLIT_REMOVED).split_text(b"!?") == []


# ---------------------------------------------------------------------- models

@pytest.fixture(scope="module")
def minilm_vocab(fixtures) -> dict[str, int]:
    data = json.loads(fixture_file(fixtures, "hf/all-MiniLM-L6-v2/tokenizer.json").read_text(encoding="utf-8"))
    return data["model"]["vocab"]


def _words(texts) -> list[str]:
    bert, pretok = N.BertNormalizer(), P.BertPreTokenizer()
    words = []
    for text in texts:
        words += [w for w, _ in pretok.pre_tokenize_str(bert.normalize_str(text))]
    return words


def _native(model_cls, vocab: dict[str, int], **kwargs):
    return model_cls([k.encode("utf-8") for k in vocab], list(vocab.values()), **kwargs)


@pytest.mark.parametrize("prefix,max_chars", [("##", 100), ("##", 5), ("", 100), ("@@", 12)])
def test_wordpiece_alone_matches_tokenizers(texts, minilm_vocab, prefix, max_chars):
    vocab = dict(minilm_vocab)
    if prefix != "##":
        vocab = {(prefix + k[2:] if k.startswith("##") else k): i for k, i in vocab.items()}
        vocab = {k: i for k, i in vocab.items() if k}
    ref = models.WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix=prefix,
                           max_input_chars_per_word=max_chars)
    ours = _native(WordPiece, vocab, unk_id=vocab["[UNK]"], prefix=prefix.encode(), max_input_chars_per_word=max_chars)
    for word in _words(texts) + ["x" * 101, "é" * 60, "##ing", "un##", "a" * 5, "ab" * 3]:
        assert ours.encode_text(word.encode("utf-8")) == [t.id for t in ref.tokenize(word)], word[:80]


def test_wordpiece_without_unk_fails_like_tokenizers(minilm_vocab):
    vocab = {k: i for k, i in minilm_vocab.items() if k != "[UNK]"}
    ref = models.WordPiece(vocab, unk_token="[UNK]")
    ours = _native(WordPiece, vocab, unk_id=-1)
    assert ours.encode_text(b"hello") == [t.id for t in ref.tokenize("hello")]
    with pytest.raises(Exception, match="Missing"):
        ref.tokenize("\u2603\u2603")
    with pytest.raises(ValueError, match="unk token"):
        ours.encode_text("\u2603\u2603".encode())


def test_wordlevel_alone_matches_tokenizers(texts, minilm_vocab):
    ref = models.WordLevel(minilm_vocab, unk_token="[UNK]")
    ours = _native(WordLevel, minilm_vocab, unk_id=minilm_vocab["[UNK]"])
    for word in _words(texts):
        assert ours.encode_text(word.encode("utf-8")) == [t.id for t in ref.tokenize(word)], word[:80]
    bare = _native(WordLevel, {"a": 0}, unk_id=-1)
    assert bare.encode_text(b"a") == [0]
    with pytest.raises(ValueError, match="unk token"):
        bare.encode_text(b"b")
