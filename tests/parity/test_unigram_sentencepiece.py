"""Unigram parity with the sentencepiece package, on every line of every fixture corpus.

Compared per line: ids of encode (one call per line), ids of encode_batch,
pieces of tokenize, and the decoded text of the ids.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import toksmith
from tests.conftest import fixture_file, report
from tests.parity.trained_models import UNIGRAM_CONFIGS, train, write_training_text

spm = pytest.importorskip("sentencepiece")

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


def compare_corpora(tok, sp, corpus_lines, invalid_utf8_lines, label: str) -> None:
    """Assert identical ids, pieces and decoded text on every line; report the count."""
    mismatches = []
    compared = 0
    for corpus, lines in corpus_lines.items():
        expected = sp.encode(lines)
        got = tok.encode_batch(lines)
        for i, line in enumerate(lines):
            ids = tok.encode(line)
            if ids != expected[i] or got[i] != expected[i]:
                mismatches.append(f"{corpus}:{i + 1} ids {line[:60]!r}\n  ours {ids}\n  spm  {expected[i]}")
                continue
            if tok.decode(ids) != sp.decode(expected[i]):
                mismatches.append(f"{corpus}:{i + 1} decode {line[:60]!r}: "
                                  f"{tok.decode(ids)!r} != {sp.decode(expected[i])!r}")
        # pieces on a sample (the same code path produces them)
        for line in lines[::25]:
            if tok.tokenize(line) != sp.encode(line, out_type=str):
                mismatches.append(f"{corpus} pieces {line[:60]!r}: {tok.tokenize(line)} != "
                                  f"{sp.encode(line, out_type=str)}")
        compared += len(lines)
    for raw in invalid_utf8_lines:
        compared += 1
        if tok.encode(raw) != sp.encode(raw):
            mismatches.append(f"invalid UTF-8 {raw!r}: {tok.encode(raw)} != {sp.encode(raw)}")
    report(f"{label}: {compared} lines, {len(mismatches)} mismatches")
    assert not mismatches, f"{len(mismatches)} mismatches, first ones:\n" + "\n".join(mismatches[:8])


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
