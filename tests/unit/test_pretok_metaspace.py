"""The Metaspace pre-tokenizer stage alone vs HF tokenizers'
`pre_tokenizers.Metaspace(...).pre_tokenize_str`, for every prepend scheme, split on and
off and several replacement characters: corpus lines, edge cases and long runs.
"""
from __future__ import annotations

import pytest
from tokenizers import pre_tokenizers

from tests.conftest import LONG_RUNS, multilingual_sample
from toksmith._core.pretok_metaspace import PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER, MetaspacePreTokenizer

SCHEMES = {"always": PREPEND_ALWAYS, "first": PREPEND_FIRST, "never": PREPEND_NEVER}
REPLACEMENTS = ["\u2581", "_", " ", "\u00e9", "\U0001F999", "\u2582"]
EDGES = ["", " ", "   ", " a", "a ", "  a  b  ", "Hey  friend!", "\u2581", "\u2581\u2581 x", "x\u2581", "\t\n",
         "\u00e9\u2581\u00e9 \u00e9", "\u2582\u2581", "\U0001F999 \U0001F999\U0001F999", "a" * 50, *LONG_RUNS]


def _ours(pretok: MetaspacePreTokenizer, text: str, at_input_start: bool = True) -> list[str]:
    return [p.decode("utf-8") for p in pretok.split_text(text.encode("utf-8"), at_input_start=at_input_start)]


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@pytest.mark.parametrize("split", [True, False])
@pytest.mark.parametrize("replacement", REPLACEMENTS)
def test_edges(scheme, split, replacement):
    ours = MetaspacePreTokenizer(replacement, SCHEMES[scheme], split)
    ref = pre_tokenizers.Metaspace(replacement=replacement, prepend_scheme=scheme, split=split)
    for text in EDGES:
        assert _ours(ours, text) == [p for p, _ in ref.pre_tokenize_str(text)], (text[:30],)


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@pytest.mark.parametrize("split", [True, False])
def test_corpus_lines(corpus_lines, scheme, split):
    ours = MetaspacePreTokenizer("\u2581", SCHEMES[scheme], split)
    ref = pre_tokenizers.Metaspace(prepend_scheme=scheme, split=split)
    for line in multilingual_sample(corpus_lines, 1500):
        assert _ours(ours, line) == [p for p, _ in ref.pre_tokenize_str(line)], line[:80]


def test_first_prepends_only_at_the_input_start():
    # tokenizers: offsets_original().0 == 0 (tests/parity/test_hf_unigram.py checks it after
    # added tokens through whole files)
    first = MetaspacePreTokenizer("\u2581", PREPEND_FIRST, True)
    assert _ours(first, "a b", at_input_start=False) == ["a", "\u2581b"]
    assert _ours(first, "a b", at_input_start=True) == ["\u2581a", "\u2581b"]
    always = MetaspacePreTokenizer("\u2581", PREPEND_ALWAYS, True)
    assert _ours(always, "a b", at_input_start=False) == ["\u2581a", "\u2581b"]


def test_replacement_is_one_character():
    with pytest.raises(ValueError, match="one character"):
        MetaspacePreTokenizer("ab", PREPEND_ALWAYS, True)
    with pytest.raises(ValueError, match="prepend scheme"):
        MetaspacePreTokenizer("_", 7, True)
    assert MetaspacePreTokenizer("\U0001F999", PREPEND_NEVER, False).replacement == "\U0001F999"


def test_invalid_utf8_is_copied_not_crashed_on():
    # the pipeline repairs text before this stage; alone, stray bytes (even the replacement's
    # lead byte) are kept and only spaces become the replacement
    pretok = MetaspacePreTokenizer("\u2581", PREPEND_ALWAYS, True)
    assert pretok.split_text(b"a \xff\xe2 b\xe2\x96") == [b"\xe2\x96\x81a", b"\xe2\x96\x81\xff\xe2", b"\xe2\x96\x81b\xe2\x96"]
    assert pretok.split_text(b"\xe2" * 1000 + b" " * 1000)[0] == b"\xe2\x96\x81" + b"\xe2" * 1000
