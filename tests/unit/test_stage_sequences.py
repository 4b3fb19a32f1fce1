"""NormalizerSequence and PreTokenizerSequence run their members in order.

Checked against running the members one after the other in Python, on stages that
exist independently of the sequences (llama.cpp's lower-casing and space escaping,
tiktoken's and llama.cpp's splitters).
"""
from __future__ import annotations

import pytest

from toksmith._core.hf_normalizers import HfPrepend, HfStrip, starts_late
from toksmith._core.hf_replace import LiteralReplace
from toksmith._core.normalizer import EscapeSpacesNormalizer, Normalizer
from toksmith._core.pretok_llama import LlamaSplitter
from toksmith._core.pretok_tiktoken import Cl100kSplitter, R50kSplitter
from toksmith._core.stage_sequences import NormalizerSequence, PreTokenizerSequence
from toksmith._core.whitespace_session import LlamaCppLowercase
from toksmith.pretokenizers.llama_cpp import PreType, regexes_for

TEXTS = ["", "a", "Hello World", "  two  spaces ", "ÀÉÎ ÕÜ straße", "日本語 テキスト 123456",
         "don't STOP 'til", "a\u00a0b\u3000c\td\ne", "x" * 1000 + " Y" * 500, "🦙🦙 Emoji 😀"]


def _normalized(stage, text: str) -> str:
    return stage.normalize_text(text.encode("utf-8"))


def _as_str(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


@pytest.mark.parametrize("text", TEXTS)
def test_normalizer_sequence_is_its_members_in_turn(text):
    members = [LlamaCppLowercase(), EscapeSpacesNormalizer(add_prefix=True)]
    expected = text
    for member in members:
        expected = _as_str(_normalized(member, expected))
    assert _as_str(_normalized(NormalizerSequence(members), text)) == expected


@pytest.mark.parametrize("text", TEXTS)
def test_normalizer_sequence_order_matters(text):
    # escaping first turns spaces into U+2581, which lower-casing keeps: same as in turn
    members = [EscapeSpacesNormalizer(add_prefix=False), LlamaCppLowercase()]
    expected = text
    for member in members:
        expected = _as_str(_normalized(member, expected))
    assert _as_str(_normalized(NormalizerSequence(members), text)) == expected


def test_normalizer_sequence_of_unchanged_members():
    # members that change nothing (the base Normalizer copies) leave the text as it is
    seq = NormalizerSequence([Normalizer(), Normalizer()])
    assert _normalized(seq, "Keep Me") == "Keep Me"


def test_sequence_members_must_be_stages():
    with pytest.raises(TypeError, match="Normalizer"):
        NormalizerSequence([object()])
    with pytest.raises(TypeError, match="PreTokenizer"):
        PreTokenizerSequence(["not a stage"])


def _split_in_turn(members, text: bytes) -> list[bytes]:
    pieces = [text]
    for member in members:
        pieces = [p for piece in pieces for p in member.split_text(piece)]
    return pieces


@pytest.mark.parametrize("text", TEXTS)
def test_pretokenizer_sequence_splits_every_piece_of_the_last(text):
    members = [LlamaSplitter(regexes_for(PreType.LLAMA3)), R50kSplitter()]
    data = text.encode("utf-8")
    assert PreTokenizerSequence(members).split_text(data) == _split_in_turn(members, data)


@pytest.mark.parametrize("text", TEXTS)
def test_pretokenizer_sequence_nested(text):
    inner = PreTokenizerSequence([Cl100kSplitter(), R50kSplitter()])
    members = [inner, LlamaSplitter(regexes_for(PreType.GPT2))]
    data = text.encode("utf-8")
    assert PreTokenizerSequence(members).split_text(data) == _split_in_turn(
        [Cl100kSplitter(), R50kSplitter(), LlamaSplitter(regexes_for(PreType.GPT2))], data)


def test_normalizer_sequence_reports_unchanged_text():
    # llama.cpp's lower-casing reports "unchanged" for text without capitals; a sequence of
    # such members does too, and normalize_text then returns the input itself
    seq = NormalizerSequence([LlamaCppLowercase(), LlamaCppLowercase()])
    assert _as_str(_normalized(seq, "already lower")) == "already lower"
    assert _as_str(_normalized(seq, "MiXeD")) == "mixed"


@pytest.mark.parametrize("members,text,late", [
    # Prepend(" ") makes "  x" of " x", all aligned with " "; the run "  " -> "-" takes the
    # alignment of its last byte, still the first character: not late. Each case checked
    # with tokenizers 0.23.3 (Metaspace prepend_scheme "first" prepends exactly when not
    # late); tests/parity/test_hf_metaspace_first_fuzz.py compares whole pipelines.
    (lambda: [HfPrepend(" "), LiteralReplace(b" ", b"-", 2)], " x", False),
    (lambda: [HfPrepend("ab"), HfStrip(True, False), LiteralReplace(b"a", b"", 0)], "x", False),
    (lambda: [LiteralReplace(b"a", b"yy", 0), LiteralReplace(b"y", b"", 0)], "ab", True),
    (lambda: [HfStrip(True, False), HfPrepend("-")], "  x", True),
])
def test_track_start_follows_the_first_characters_alignment(members, text, late):
    assert starts_late(NormalizerSequence(members(), track_start=True), text) is late
