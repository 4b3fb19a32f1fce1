"""Extended grapheme clusters (toksmith._core.graphemes) as unicode-segmentation 1.13.3 finds
them, checked against the `regex` module's \\X where both use the same Unicode version
(17.0.0: the generator's check), and against the generator's tables.

The segmentation is also checked against HF tokenizers' Precompiled normalizer itself, for
every code point in many contexts (tests/unit/test_hf_precompiled.py and
tests/parity/test_hf_precompiled.py): that is the reference; \\X is a second opinion.
"""
from __future__ import annotations

import random

import pytest
import regex

from tests.pinned_versions import require_pinned
from tools.gen_grapheme_props import UNICODE_17_MARKS, props_table
from toksmith._core.graphemes import CATEGORY_NAMES, INCB_EXTEND, INCB_LINKER, char_props, grapheme_clusters

SAMPLES = {
    "crlf": ["\r\n", "\r\r\n\n", "a\r\nb", "\n\r"],
    "combining marks": ["e\u0301", "e\u0301\u0302\u0303", "\u0301", "\n\u0301", "\u00a9\u0301", "a\u0488",
                        "\u0915\u0947", "\u0e01\u0e31", "\uac00\u0301"],
    "hangul": ["\u1100\u1161\u11a8", "\u1100\u1100\u1161", "\uac00\u11a8", "\uac01\u11a8\u11a8", "\u1161\u1100",
               "\u11a8\u1161", "\uac00\u1161"],
    "emoji": ["\U0001F469\u200d\U0001F469\u200d\U0001F467", "\U0001F44D\U0001F3FB", "\U0001F469\U0001F3FD\u200d\U0001F4BB",
              "a\u200d\U0001F469", "\U0001F469\u200d\u200d\U0001F469", "\u00a9\u0301\u200d\u00a9"],
    "flags": ["\U0001F1EB\U0001F1F7", "\U0001F1EB\U0001F1F7\U0001F1E9", "\U0001F1EB" * 5, "a\U0001F1EB\U0001F1F7"],
    "indic conjuncts": ["\u0915\u094d\u0937", "\u0915\u094d\u200d\u0937", "\u0915\u093c\u094d\u0937",
                        "\u0915\u094d\u094d\u0937", "\u0915\u0937", "\u094d\u0915", "\u0915\u094d"],
    "prepend": ["\u0600a", "\u0600\n", "\u0600\u0301", "\u0d4ek"],
}


# \X and the generator's tables follow the `regex` release the test extras pin (Unicode 17.0.0,
# unicode-segmentation's version): 2026.11.15 and later moved to another Unicode version.
WHY_PINNED_REGEX = "its \\X follows Unicode 17.0.0, unicode-segmentation 1.13.3's version"


def require_pinned_regex() -> None:
    require_pinned("regex", WHY_PINNED_REGEX)


def _regex_has_this_unicode() -> bool:
    return all(regex.match(r"\p{Grapheme_Cluster_Break=Extend}|\p{Grapheme_Cluster_Break=SpacingMark}", chr(cp))
               for cp in UNICODE_17_MARKS)


def test_pinned_regex_has_unicode_17():
    """The pin's reason holds: the pinned regex knows the marks Unicode 17.0.0 added."""
    require_pinned_regex()
    assert _regex_has_this_unicode(), "the pinned regex release lacks Unicode 17.0.0's marks: pin another"


@pytest.mark.parametrize("family", sorted(SAMPLES))
def test_synthetic_sequences_match_regex(family):
    require_pinned_regex()
    for text in SAMPLES[family]:
        assert grapheme_clusters(text) == regex.findall(r"\X", text), (family, text)


def test_random_mixtures_match_regex():
    require_pinned_regex()
    pool = [c for text in SAMPLES.values() for s in text for c in s] + list("ab \t") + ["\U0001F3FB", "\u200c"]
    rnd = random.Random(7)
    for _ in range(20000):
        text = "".join(rnd.choice(pool) for _ in range(rnd.randrange(1, 12)))
        assert grapheme_clusters(text) == regex.findall(r"\X", text), repr(text)


def test_corpora_match_regex(corpus_lines):
    require_pinned_regex()
    for lines in corpus_lines.values():
        for line in lines:
            assert grapheme_clusters(line) == regex.findall(r"\X", line), repr(line[:80])


def test_bytes_in_bytes_out():
    assert grapheme_clusters("e\u0301x".encode()) == ["e\u0301".encode(), b"x"]
    assert grapheme_clusters("") == []
    with pytest.raises(ValueError, match="UTF-8"):
        grapheme_clusters(b"a\xffb")


def test_table_is_the_generators():
    # the committed .pxi is what tools/gen_grapheme_props.py derives from this regex module
    require_pinned_regex()
    expected = props_table()
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        assert char_props(chr(cp)) == expected.get(cp, 0), f"U+{cp:04X}"


def test_props_of_some_characters():
    assert CATEGORY_NAMES[char_props("\u094d") & 15] == "Extend" and char_props("\u094d") & INCB_LINKER
    assert CATEGORY_NAMES[char_props("\u0915")] == "InCB_Consonant"
    assert char_props("\u0301") & INCB_EXTEND
    assert CATEGORY_NAMES[char_props("\U0001F469")] == "Extended_Pictographic"
    assert CATEGORY_NAMES[char_props("\r")] == "CR" and CATEGORY_NAMES[char_props("a")] == "Any"
