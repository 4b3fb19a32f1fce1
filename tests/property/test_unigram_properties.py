"""Property tests: toksmith's Unigram against sentencepiece on generated input.

For random Unicode text, random bytes and mixes of the tricky fixture
strings: encoding never raises, ids equal sentencepiece's, and decoding
gives sentencepiece's decode of its ids. Models: the embedded one (nmt_nfkc,
byte fallback, needs no fixtures) and two fixture models (nfkc English,
T5 Japanese).
"""
from __future__ import annotations

import pytest

import toksmith
from tests.conftest import fixture_file

import sentencepiece as spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MODELS = ("embedded", "spm/sentencepiece_test_model.model", "spm/t5_base_japanese_spiece.model")

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# Characters that exercise normalization and whitespace handling, mixed into
# the generated text so they show up far more often than in uniform draws.
INTERESTING = [
    " ", "  ", "\t", "\n", "\r", "\x0b", "\x0c", "\x00", "\x1f", "\x7f", "\x85", "\xa0", "\u1680", "\u2000",
    "\u2003", "\u200b", "\u200c", "\u200d", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff",
    "\u2581", "\u2581\u2581", "\u0301", "\u0308", "\u0327", "\u20dd", "\u3099", "\u309a", "e\u0301",
    "ｶ", "ﾞ", "Ａ", "１", "①", "㍻", "ﬁ", "ℌ", "Å", "Ω", "Ǆ", "ß", "İ", "ı",
    "😀", "👍🏽", "👨\u200d👩\u200d👧", "🇯🇵", "\U0001f3f4\U000e0067\U000e0062\U000e007f", "\U00020000",
    "\U0010fffd", "\ue000", "\ufffd", "\ufffe", "<s>", "</s>", "<unk>", "<0x41>",
]

# Pieces of text: single characters from several ranges, or an interesting snippet.
# codec="utf-8" keeps lone surrogates out (a str holding one has no UTF-8 form).
CHUNKS = st.one_of(
    st.characters(codec="utf-8"),                                  # any scalar value
    st.characters(codec="utf-8", max_codepoint=0x7F),              # ASCII incl. controls and NUL
    st.characters(codec="utf-8", categories=("Zs", "Zl", "Zp", "Cc", "Cf", "Mn", "Me", "Mc")),
    st.characters(codec="utf-8", min_codepoint=0x10000),           # astral
    st.sampled_from(INTERESTING),
)
TEXT = st.one_of(st.text(alphabet=st.characters(codec="utf-8"), max_size=40),
                 st.lists(CHUNKS, max_size=40).map("".join))


@pytest.fixture(scope="module", params=MODELS)
def pair(request):
    """(toksmith tokenizer, sentencepiece processor) for one model file."""
    if request.param == "embedded":
        path = toksmith.embedded_model_path("sentencepiece-demo")
    else:
        path = str(fixture_file(request.getfixturevalue("fixtures"), request.param))
    return toksmith.load(path), spm.SentencePieceProcessor(model_file=path)


def check(tok, sp, text) -> None:
    ids = tok.encode(text)
    want = sp.encode(text)
    assert ids == want
    assert tok.decode(ids) == sp.decode(want)


@SETTINGS
@given(text=TEXT)
def test_random_text(pair, text):
    tok, sp = pair
    check(tok, sp, text)
    assert tok.tokenize(text) == sp.encode(text, out_type=str)


@SETTINGS
@given(raw=st.binary(max_size=64))
def test_random_bytes(pair, raw):
    tok, sp = pair
    check(tok, sp, raw)


@SETTINGS
@given(raw=st.lists(st.one_of(st.binary(max_size=6), TEXT.map(lambda t: t.encode("utf-8"))), max_size=6)
       .map(b"".join))
def test_text_with_invalid_utf8_mixed_in(pair, raw):
    tok, sp = pair
    check(tok, sp, raw)


@SETTINGS
@given(texts=st.lists(TEXT, max_size=6), num_threads=st.sampled_from([None, 1, 2, 3]))
def test_batch(pair, texts, num_threads):
    tok, sp = pair
    assert tok.encode_batch(texts, num_threads=num_threads) == sp.encode(texts)


@SETTINGS
@given(data=st.data())
def test_tricky_string_mixtures(pair, tricky_strings, data):
    tok, sp = pair
    parts = data.draw(st.lists(st.one_of(st.sampled_from(tricky_strings), TEXT), max_size=4))
    check(tok, sp, data.draw(st.sampled_from(["", " ", "\n"])).join(parts))


def test_every_tricky_string(pair, tricky_strings, invalid_utf8_lines):
    tok, sp = pair
    for text in tricky_strings:
        check(tok, sp, text)
        assert tok.tokenize(text) == sp.encode(text, out_type=str), text
    for raw in invalid_utf8_lines:
        check(tok, sp, raw)
