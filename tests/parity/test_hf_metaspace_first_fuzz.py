"""Metaspace with prepend_scheme "first" behind random normalizer sequences, vs tokenizers.

tokenizers prepends the replacement only to a pre-token whose original offset starts at 0
(pre_tokenizers/metaspace.rs: `offsets_original().0 == 0`), so whether the normalizers
dropped or replaced the text's first characters decides the ids. toksmith carries that as
a flag (NORMALIZED_LATE_START) through its normalizer sequence; this test draws seeded
sequences of Replace (by a string, by a regex, to nothing or to longer text), Strip,
Prepend, Lowercase, NFKC and Nmt, and texts built to start with what they change, and
compares ids with a character-level model that knows every character (so only the
pre-tokens decide).

Known gap (test_start_expanded_then_removed): the flag says only "the first character
was dropped", not how many of the following characters still come from the input's first
character. After a stage that makes several characters of the first one (Prepend, NFKC's
"ﬁ" -> "fi", ByteLevel), a later stage that drops or replaces some of those is taken
as a late start where tokenizers still aligns the text with offset 0. The random
pipelines below therefore put no stage that drops text after one that expands it.
"""
from __future__ import annotations

import random

import pytest
import tokenizers
from tokenizers import Regex, models, normalizers, pre_tokenizers

import toksmith
from tests.conftest import report

PIECES = ["a", "aa", "b", " ", "  ", "\t", "x", "日", "本", "é", "É", "ﬁ", "\u00a0", "\u200b", "▁", "ab", "-"]
CONTENTS = ["", "a", "▁", " ", "yy", "日本", "-"]


def _expands(normalizer) -> bool:
    """The stage may make several characters of one (Prepend, NFKC's "ﬁ", a Replace by
    longer content): the known gap when a later stage drops part of them."""
    if isinstance(normalizer, normalizers.Replace):
        return len(normalizer.content) > 1
    return isinstance(normalizer, (normalizers.Prepend, normalizers.NFKC, normalizers.Lowercase))


def _drops(normalizer) -> bool:
    """The stage may drop or replace the text's first characters."""
    return isinstance(normalizer, (normalizers.Replace, normalizers.Strip, normalizers.Nmt,
                                   normalizers.StripAccents))


def _random_normalizer(rng: random.Random, kind: int):
    if kind == 0:
        return normalizers.Replace(rng.choice(PIECES), rng.choice(CONTENTS))
    if kind == 1:
        return normalizers.Replace(Regex(rng.choice([r"\s+", r"a+", r"^.", r"[ab]", r" {2,}", r"x|日本"])),
                                   rng.choice(CONTENTS))
    if kind == 2:
        return normalizers.Strip(left=rng.random() < 0.7, right=rng.random() < 0.5)
    if kind == 3:
        return normalizers.Prepend(rng.choice(["▁", "a", " "]))
    if kind == 4:
        return normalizers.Lowercase()
    if kind == 5:
        return normalizers.NFKC()
    if kind == 6:
        return normalizers.Nmt()
    return normalizers.StripAccents()


def _texts(rng: random.Random) -> list[str]:
    texts = ["", " ", "a", "ab", "aab b", "  a b", "\u200ba", "▁a", "ﬁx", "Éa", "日本語 x", "x日本"]
    for _ in range(60):
        texts.append("".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 8))))
    return texts


def test_metaspace_first_behind_random_normalizers(tmp_path):
    rng = random.Random(20261124)
    cases = compared = 0
    for case in range(1000):
        sequence, expanded = [], False
        for _ in range(rng.randrange(1, 4)):
            stage = _random_normalizer(rng, rng.randrange(8))
            if expanded and _drops(stage):
                continue        # the known gap (module docstring)
            sequence.append(stage)
            expanded = expanded or _expands(stage)
        texts = _texts(rng)
        normalizer = normalizers.Sequence(sequence)
        pre = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=rng.random() < 0.5)
        # Every character the pipeline can produce is a token of the model.
        alphabet = {"▁"}
        for text in texts:
            alphabet |= set(normalizer.normalize_str(text))
        vocab = {c: i for i, c in enumerate(sorted(alphabet))}
        ref = tokenizers.Tokenizer(models.BPE(vocab, []))
        ref.normalizer = normalizer
        ref.pre_tokenizer = pre
        path = tmp_path / f"case{case}.json"
        ref.save(str(path))
        ours = toksmith.load(path)
        for text in texts:
            want = ref.encode(text, add_special_tokens=False).ids
            assert ours.encode(text, add_special=False) == want, (sequence, pre, text)
            compared += 1
        cases += 1
    report(f"Metaspace(first) behind random normalizer sequences vs tokenizers: {cases} pipelines, "
           f"{compared} texts: 0 mismatches")


@pytest.mark.xfail(strict=True, reason="known gap (module docstring): a start made of several characters of "
                                       "the first is taken as a late start once a later stage drops part of it")
def test_start_expanded_then_removed(tmp_path):
    normalizer = normalizers.Sequence([normalizers.Prepend(" "), normalizers.Replace(Regex(" {2,}"), "-")])
    ref = tokenizers.Tokenizer(models.BPE({"▁": 0, "-": 1, "x": 2}, []))
    ref.normalizer = normalizer
    ref.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    ref.save(str(tmp_path / "t.json"))
    # tokenizers: "-" comes from the input's first character, so "▁" is prepended
    assert toksmith.load(tmp_path / "t.json").encode(" x", add_special=False) == \
        ref.encode(" x", add_special_tokens=False).ids
