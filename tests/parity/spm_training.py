"""What the sentencepiece-trainer parity tests share (train_unigram, train_sentencepiece_bpe):
the train / held-out split of the fixture corpora, spm_train itself, and the checks of a
trained .model against sentencepiece.

>>> sp = sentencepiece_model(train_file, tmp_path, "bpe", 3000)   # doctest: +SKIP
"""
from __future__ import annotations

from pathlib import Path

import sentencepiece as spm

from tests.conftest import CORPUS_FILES, first_difference

TRAIN_LINES = 500           # first lines of each corpus trained on
HELD_OUT_LINES = 500        # the next lines, measured on


def split_corpora(corpus_lines) -> tuple[list[str], list[str]]:
    """(training lines, held-out lines): the first TRAIN_LINES of each corpus, the next ones."""
    train, held_out = [], []
    for name in CORPUS_FILES:
        lines = corpus_lines[name]
        train += lines[:TRAIN_LINES]
        held_out += lines[TRAIN_LINES:TRAIN_LINES + HELD_OUT_LINES]
    return train, held_out


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def sentencepiece_model(train_file, out_dir, model_type: str, vocab_size: int, **options) -> spm.SentencePieceProcessor:
    """sentencepiece's own trainer on the same file."""
    prefix = out_dir / "reference"
    spm.SentencePieceTrainer.train(input=str(train_file), model_prefix=str(prefix), model_type=model_type,
                                   vocab_size=vocab_size, num_threads=2, minloglevel=2, **options)
    return spm.SentencePieceProcessor(model_file=str(prefix) + ".model")


def assert_encodes_every_corpus_line(tok, sp: spm.SentencePieceProcessor, corpus_lines) -> int:
    """sentencepiece on the written .model and toksmith give the same ids and decodes on
    every line of every corpus; the number of lines."""
    total = 0
    for name in CORPUS_FILES:
        lines = corpus_lines[name]
        want = sp.encode(lines)
        got = tok.encode_batch(lines, add_special=False)
        bad = [i for i in range(len(lines)) if got[i] != want[i]]
        assert not bad, f"{name} line {bad[0]}: {first_difference(got[bad[0]], want[bad[0]])}"
        decoded = sp.decode(want)
        bad = [i for i in range(len(lines)) if tok.decode(want[i]) != decoded[i]]
        assert not bad, f"{name} line {bad[0]}: decode {tok.decode(want[bad[0]])!r} != {decoded[bad[0]]!r}"
        total += len(lines)
    return total


def tokens_per_byte(sp: spm.SentencePieceProcessor, lines: list[str]) -> float:
    return sum(map(len, sp.encode(lines))) / sum(len(line.encode("utf-8")) for line in lines)


def assert_encodes_sample(tok, sp: spm.SentencePieceProcessor, lines: list[str]) -> None:
    """The same ids and decodes on `lines` (the option-set tests' sample)."""
    want = sp.encode(lines)
    got = tok.encode_batch(lines, add_special=False)
    bad = [i for i in range(len(lines)) if got[i] != want[i]]
    assert not bad, f"line {bad[0]} {lines[bad[0]][:60]!r}: {first_difference(got[bad[0]], want[bad[0]])}"
    assert [tok.decode(ids) for ids in want] == sp.decode(want)
