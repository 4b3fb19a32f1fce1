"""Metaspace with prepend_scheme "first" behind random normalizer sequences, vs tokenizers.

tokenizers prepends the replacement only to a pre-token whose original offset starts at 0
(pre_tokenizers/metaspace.rs: `offsets_original().0 == 0`), so whether the normalizers
dropped or replaced the text's first characters decides the ids. toksmith carries that as
a flag (NORMALIZED_LATE_START) through its normalizer sequence; this test draws seeded
sequences of Replace (by a string, by a regex, to nothing or to longer text), Strip,
Prepend, Lowercase, NFKC, Nmt and Precompiled (sentencepiece's nmt_nfkc charsmap, which
drops control characters such as ESC: tokenizers then aligns the next character with the
text's start), and texts built to start with what they change, and
compares ids with a character-level model that knows every character (so only the
pre-tokens decide).

A stage that makes several characters of the first one (Prepend, NFKC's "ﬁ" -> "fi", a
Replace by longer content, Lowercase's "İ") gives them all the first character's
alignment, and a later stage that drops only some of them leaves the text starting at
offset 0 (test_start_expanded_then_removed); the random pipelines mix such stages freely.
"""
from __future__ import annotations

import random

import tokenizers
from tokenizers import Regex, models, normalizers, pre_tokenizers

import toksmith
from sentencepiece import sentencepiece_model_pb2 as pb
from tests.conftest import fixture_file
from tests.parity.comparison import Comparison

PIPELINES = 3000
TOKENIZERS = f"tokenizers {tokenizers.__version__}"
PIECES = ["a", "aa", "b", " ", "  ", "\t", "x", "日", "本", "é", "É", "ﬁ", "\u00a0", "\u200b", "▁", "ab", "-",
          "İ", "e\u0301", "\u0301", "\u3000", "\x1b", "\x01", "ｱ", "①", "\u00ad"]
CONTENTS = ["", "a", "▁", " ", "yy", "日本", "-"]


def _random_normalizer(rng: random.Random, kind: int, charsmap: bytes):
    if kind == 10:
        return normalizers.Precompiled(charsmap)
    if kind == 0:
        return normalizers.Replace(rng.choice(PIECES), rng.choice(CONTENTS))
    if kind == 1:
        # (no pattern that matches the empty string: after such a Replace, tokenizers 0.23.3
        # panics in a later stage on some texts, index out of bounds in its alignments)
        pattern = rng.choice([r"\s+", r"a+", r"^.", r"[ab]", r" {2,}", r"x|日本", r"\p{M}+"])
        return normalizers.Replace(Regex(pattern), rng.choice(CONTENTS))
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
    if kind == 7:
        return normalizers.StripAccents()
    if kind == 8:
        return rng.choice([normalizers.NFD(), normalizers.NFKD(), normalizers.NFC()])
    return normalizers.BertNormalizer(clean_text=rng.random() < 0.5, handle_chinese_chars=rng.random() < 0.7,
                                      strip_accents=rng.choice([None, True, False]), lowercase=rng.random() < 0.5)


def _texts(rng: random.Random) -> list[str]:
    texts = ["", " ", "a", "ab", "aab b", "  a b", "\u200ba", "▁a", "ﬁx", "Éa", "日本語 x", "x日本"]
    for _ in range(60):
        texts.append("".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 8))))
    return texts


def test_metaspace_first_behind_random_normalizers(tmp_path, fixtures):
    proto = pb.ModelProto()
    proto.ParseFromString(fixture_file(fixtures, "spm/t5_base_japanese_spiece.model").read_bytes())
    charsmap = proto.normalizer_spec.precompiled_charsmap      # sentencepiece's nmt_nfkc
    rng = random.Random(20261124)
    check = Comparison(f"Metaspace(first) behind {PIPELINES} random normalizer sequences, ids", against=TOKENIZERS)
    for case in range(PIPELINES):
        sequence = [_random_normalizer(rng, rng.randrange(11), charsmap) for _ in range(rng.randrange(1, 5))]
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
            check.one((text, sequence, pre), ours.encode(text, add_special=False),
                      ref.encode(text, add_special_tokens=False).ids)
    check.finish(at_least=PIPELINES)


def test_start_expanded_then_removed(tmp_path):
    normalizer = normalizers.Sequence([normalizers.Prepend(" "), normalizers.Replace(Regex(" {2,}"), "-")])
    ref = tokenizers.Tokenizer(models.BPE({"▁": 0, "-": 1, "x": 2}, []))
    ref.normalizer = normalizer
    ref.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    ref.save(str(tmp_path / "t.json"))
    # tokenizers: "-" comes from the input's first character, so "▁" is prepended
    want = ref.encode(" x", add_special_tokens=False).ids
    assert want[0] == 0                               # the reference prepends it, as said above
    assert toksmith.load(tmp_path / "t.json").encode(" x", add_special=False) == want
