"""Unigram parity with the sentencepiece package, on every line of every fixture corpus.

Compared per line: ids of encode (one call per line), ids of encode_batch,
pieces of tokenize (every 25th line), the decoded text of sentencepiece's ids and the
invalid UTF-8 lines (tests/parity/compare.py).
"""
from __future__ import annotations

import pytest

import toksmith
from tests.conftest import fixture_file
from tests.parity.conftest import UNIGRAM_FIXTURE_MODELS
from tests.parity.compare import compare_corpora
from tests.parity.trained_models import UNIGRAM_CONFIGS

import sentencepiece as spm

FIXTURE_MODELS = UNIGRAM_FIXTURE_MODELS


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
