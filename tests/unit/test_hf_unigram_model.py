"""The HF Unigram model stage (HfUnigram) vs HF tokenizers' models.Unigram, through files
with no normalizer and no pre-tokenizer: ties, unknown runs, byte fallback, every piece
(special ones too) a candidate, and the word cache shared by several models on a thread.
"""
from __future__ import annotations

import random

import pytest
import tokenizers
from tokenizers import models

import toksmith
from toksmith._core.errors import ModelDataError
from toksmith._core.hf_unigram import HfUnigram

ALPHABET = "ab \u00e9x<>/"
VOCAB = [("<unk>", 0.0), ("a", -2.0), ("b", -2.0), ("ab", -4.0), ("ba", -3.5), ("aab", -6.0), ("<a>", -1.0),
         (" ", -3.0), (" a", -4.5), ("xx", -30.0), ("\u00e9\u00e9", -1.0), ("<0x78>", -9.0), ("<0xC3>", -9.0),
         ("<0xA9>", -9.0), ("<0x3C>", -9.0)]


def _load(tmp_path, vocab, unk_id=0, byte_fallback=False):
    ref = tokenizers.Tokenizer(models.Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback))
    path = tmp_path / f"u{len(vocab)}{unk_id}{byte_fallback}.json"
    ref.save(str(path))
    return toksmith.load(path), tokenizers.Tokenizer.from_file(str(path))


@pytest.mark.parametrize("byte_fallback", [False, True])
def test_random_texts(tmp_path, byte_fallback):
    tok, ref = _load(tmp_path, VOCAB, byte_fallback=byte_fallback)
    rnd = random.Random(byte_fallback)
    for _ in range(20000):
        text = "".join(rnd.choice(ALPHABET) for _ in range(rnd.randrange(0, 14)))
        assert tok.encode(text) == ref.encode(text).ids, repr(text)


def test_scores_with_ties_and_positive_scores(tmp_path):
    rnd = random.Random(5)
    pieces = sorted({"".join(rnd.choice("abc") for _ in range(rnd.randrange(1, 5))) for _ in range(60)})
    for trial in range(20):
        vocab = [("<unk>", 0.0)] + [(p, float(rnd.choice([-1, -2, -3, 1.5, -0.5, 0]))) for p in pieces]
        tok, ref = _load(tmp_path, vocab, unk_id=0 if trial % 2 else None)
        for _ in range(500):
            text = "".join(rnd.choice("abcd") for _ in range(rnd.randrange(1, 12)))
            try:
                want = ref.encode(text).ids
            except Exception:
                with pytest.raises(ValueError, match="unk_id"):
                    tok.encode(text)
                continue
            assert tok.encode(text) == want, (trial, text)


def test_two_models_on_one_thread_keep_their_own_words(tmp_path):
    one, ref_one = _load(tmp_path, VOCAB)
    two, ref_two = _load(tmp_path, [("<unk>", 0.0), ("ab", -1.0), ("a", -1.0), ("b", -1.0)], unk_id=0)
    for text in ["ab", "ba", "ab ab", "aab"] * 3:
        assert one.encode(text) == ref_one.encode(text).ids
        assert two.encode(text) == ref_two.encode(text).ids


def test_model_checks():
    with pytest.raises(ModelDataError, match="empty"):
        HfUnigram([], [], -1, False)
    with pytest.raises(ModelDataError, match="unk_id"):
        HfUnigram([b"a"], [0.0], 3, False)
    with pytest.raises(ModelDataError, match="already defined"):
        HfUnigram([b"a", b"a"], [0.0, 0.0], 0, False)
    assert HfUnigram([b"", b"a"], [0.0, -1.0], 0, True).n_pieces == 2     # an empty piece is never a candidate
