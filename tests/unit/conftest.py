"""Fixtures shared by the unit tests: the embedded tokenizer and sentencepiece on the same file."""
from __future__ import annotations

import pytest
import sentencepiece as spm

import toksmith


@pytest.fixture(scope="module")
def tok():
    return toksmith.load_embedded("sentencepiece-demo")


@pytest.fixture(scope="module")
def sp():
    return spm.SentencePieceProcessor(model_file=toksmith.embedded_model_path("sentencepiece-demo"))
