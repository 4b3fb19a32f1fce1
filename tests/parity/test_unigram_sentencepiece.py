"""Unigram parity with the sentencepiece package, on every line of every fixture corpus.

Compared per line: ids of encode (one call per line), ids of encode_batch,
pieces of tokenize, and the decoded text of the ids.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import toksmith
from tests.conftest import fixture_file
from tests.parity.compare import compare_corpora
from tests.parity.trained_models import UNIGRAM_CONFIGS, train, write_training_text

import sentencepiece as spm

FIXTURE_MODELS = (
    "spm/sentencepiece_test_model.model",
    "spm/sentencepiece_test_ja_model.model",
    "spm/t5_base_japanese_spiece.model",
)


@pytest.fixture(scope="session")
def trained_unigram_models(fixtures, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("spm_unigram")
    text = write_training_text(fixtures, out / "train.txt")
    return {name: train(name, options, "unigram", text, out) for name, options in UNIGRAM_CONFIGS.items()}


@pytest.mark.parametrize("model", FIXTURE_MODELS)
def test_fixture_model_parity(fixtures, corpus_lines, invalid_utf8_lines, model):
    path = fixture_file(fixtures, model)
    compare_corpora(toksmith.load(path), spm.SentencePieceProcessor(model_file=str(path)),
                    corpus_lines, invalid_utf8_lines, model)


@pytest.mark.parametrize("name", sorted(UNIGRAM_CONFIGS))
def test_trained_model_parity(trained_unigram_models, corpus_lines, invalid_utf8_lines, name):
    path = trained_unigram_models[name]
    compare_corpora(toksmith.load(path), spm.SentencePieceProcessor(model_file=str(path)),
                    corpus_lines, invalid_utf8_lines, f"trained unigram {name}")
