"""`toksmith.train_bpe` vs tokenizers' BpeTrainer (train_from_iterator) on seeded random
small corpora and option sets: vocab sizes from a third of the full vocabulary to past it,
min_frequency, max_token_length (0 included), special tokens that are also characters,
initial_alphabet; ByteLevel, Split + ByteLevel, Metaspace and Whitespace pipelines.
"""
from __future__ import annotations

import json
import random

import pytest
from tokenizers import Tokenizer as HfTokenizer
from tokenizers.trainers import BpeTrainer

import toksmith
from tests.conftest import multilingual_sample
from tests.parity.bpe_training_pipelines import compare_trained_json, write_pipeline
from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import (TOKENIZERS, VOCAB_BELOW_ALPHABET,
                                                        VOCAB_SIZE_BELOW_ALPHABET_REFUSED)

CASES = 40


@pytest.mark.parametrize("seed", [1, 2])
def test_random_corpora_and_options(fixtures, corpus_lines, tmp_path, seed):
    rng = random.Random(seed)
    likes = {name: write_pipeline(name, fixtures, tmp_path) for name in ("gpt2", "llama3", "metaspace", "whitespace")}
    lines = multilingual_sample(corpus_lines, 200)
    trainings = Comparison(f"train_bpe on random corpora/options (seed {seed}): vocabulary, merges, added tokens",
                           against=f"{TOKENIZERS} BpeTrainer (train_from_iterator)")
    refusals = Comparison(f"train_bpe on random corpora/options (seed {seed}): vocab_size below the alphabet",
                          against=f"{TOKENIZERS} BpeTrainer (train_from_iterator)",
                          excuses={VOCAB_SIZE_BELOW_ALPHABET_REFUSED: 3})    # today 1 (each seed)
    for case in range(CASES // 2):
        name = rng.choice(sorted(likes))
        texts = rng.sample(lines, rng.randint(1, 300))
        if rng.random() < 0.3:
            texts = [t * rng.randint(1, 5) for t in texts]
        options = {}
        if rng.random() < 0.5:
            options["min_frequency"] = rng.randint(0, 5)
        if rng.random() < 0.4:
            options["max_token_length"] = rng.randint(0, 8)
        if rng.random() < 0.3:
            options["special_tokens"] = rng.sample(["<s>", "</s>", "a", "<|endoftext|>", "é"], 2)
        if rng.random() < 0.3:
            options["initial_alphabet"] = rng.sample(list("xyzé€😀"), 3)
        full = HfTokenizer.from_file(str(likes[name]))
        full.train_from_iterator(texts, BpeTrainer(vocab_size=10 ** 6, show_progress=False, **options))
        n = full.get_vocab_size(with_added_tokens=False)
        size = rng.randint(max(1, n // 3), n + 10)
        ref = HfTokenizer.from_file(str(likes[name]))
        ref.train_from_iterator(texts, BpeTrainer(vocab_size=size, show_progress=False, **options))
        want = json.loads(HfTokenizer.from_str(ref.to_str()).to_str())
        if len(want["model"]["vocab"]) > size:
            # tokenizers returns its special tokens and alphabet whole; toksmith refuses
            refusals.one(size, _trained_or_refused(texts, size, likes[name], options), len(want["model"]["vocab"]))
        else:
            tok = toksmith.train_bpe(iter(texts), size, like=str(likes[name]), **options)
            path = tmp_path / f"{case}.json"
            tok.save(str(path))
            compare_trained_json(trainings, json.loads(path.read_text(encoding="utf-8")), want)
    trainings.finish()
    refusals.finish(at_least=0)      # a seed may draw no size below the alphabet


def _trained_or_refused(texts, size, like, options):
    """VOCAB_BELOW_ALPHABET where train_bpe refuses the size, else the number of tokens it trained."""
    try:
        return toksmith.train_bpe(iter(texts), size, like=str(like), **options).vocab_size
    except ValueError as error:
        if "smaller than the special tokens and the alphabet" in str(error):
            return VOCAB_BELOW_ALPHABET
        raise
