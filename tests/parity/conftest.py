"""Fixtures shared by the parity tests: the Unigram models the suite trains once per session."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.parity.trained_models import UNIGRAM_CONFIGS, train, write_training_text

# The sentencepiece Unigram .model files of the fixture set.
UNIGRAM_FIXTURE_MODELS = (
    "spm/sentencepiece_test_model.model",
    "spm/sentencepiece_test_ja_model.model",
    "spm/t5_base_japanese_spiece.model",
)


@pytest.fixture(scope="session")
def trained_unigram_models(fixtures, tmp_path_factory) -> dict[str, Path]:
    """One sentencepiece Unigram model per option set of UNIGRAM_CONFIGS, trained on the corpora."""
    out = tmp_path_factory.mktemp("spm_unigram")
    text = write_training_text(fixtures, out / "train.txt")
    return {name: train(name, options, "unigram", text, out) for name, options in UNIGRAM_CONFIGS.items()}
