"""What the sentencepiece-trainer parity tests share (train_unigram, train_sentencepiece_bpe):
the train / held-out split of the fixture corpora, spm_train itself, and the checks of a
trained .model against sentencepiece.

>>> sp = sentencepiece_model(train_file, tmp_path, "bpe", 3000)   # doctest: +SKIP
"""
from __future__ import annotations

from pathlib import Path

import sentencepiece as spm

from tests.conftest import CORPUS_FILES, fixture_file
from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import SENTENCEPIECE, SENTENCEPIECE_TRAINER, HeldOutLine

TRAIN_LINES = 500           # first lines of each corpus trained on
HELD_OUT_LINES = 500        # the next lines, measured on


def split_corpora(fixtures: Path) -> tuple[list[str], list[str]]:
    """(training lines, held-out lines): the first TRAIN_LINES of each corpus, the next ones.
    Read from the files (TOKSMITH_PARITY_SAMPLE, which shortens corpus_lines, would leave no
    held-out line)."""
    train, held_out = [], []
    for name in CORPUS_FILES:
        lines = fixture_file(fixtures, f"corpus/{name}").read_bytes().decode("utf-8").split("\n")
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


def assert_encodes_every_corpus_line(tok, sp: spm.SentencePieceProcessor, corpus_lines, label: str) -> int:
    """sentencepiece on the written .model and toksmith give the same ids and decodes on
    every line of every corpus; the comparisons made (reported as `label`)."""
    check = Comparison(f"{label} .model, ids and decodes of every corpus line", against=SENTENCEPIECE)
    for name in CORPUS_FILES:
        lines = corpus_lines[name]
        want = sp.encode(lines)
        check.all(lines, ours=tok.encode_batch(lines, add_special=False), theirs=want, what=f"{name} ids")
        check.all(lines, ours=[tok.decode(ids) for ids in want], theirs=sp.decode(want), what=f"{name} decode")
    check.finish()
    return check.compared


def tokens_per_byte(sp: spm.SentencePieceProcessor, lines: list[str]) -> float:
    return sum(map(len, sp.encode(lines))) / sum(len(line.encode("utf-8")) for line in lines)


def assert_encodes_sample(tok, sp: spm.SentencePieceProcessor, lines: list[str], label: str) -> int:
    """The same ids and decodes on `lines` (the option-set tests' sample); the comparisons made."""
    check = Comparison(f"{label} .model, ids and decodes of {len(lines)} sample lines", against=SENTENCEPIECE)
    want = sp.encode(lines)
    check.all(lines, ours=tok.encode_batch(lines, add_special=False), theirs=want, what="ids")
    check.all(lines, ours=[tok.decode(ids) for ids in want], theirs=sp.decode(want), what="decode")
    check.finish()
    return check.compared


def compare_vocabularies(ours: spm.SentencePieceProcessor, ref: spm.SentencePieceProcessor, label: str,
                         excuses: dict | None = None) -> float:
    """Every piece of either trained model: is it in both vocabularies? The share of the
    reference's pieces ours holds too."""
    our_pieces, ref_pieces = set(pieces_of(ours)), pieces_of(ref)
    union = ref_pieces + sorted(our_pieces - set(ref_pieces))
    check = Comparison(f"{label} pieces kept (every piece of either model)", against=SENTENCEPIECE_TRAINER,
                       excuses=excuses or {})
    check.all(union, ours=[p in our_pieces for p in union], theirs=[p in ref_pieces for p in union])
    check.finish()
    return len(our_pieces & set(ref_pieces)) / len(ref_pieces)


def compare_held_out(ours: spm.SentencePieceProcessor, ref: spm.SentencePieceProcessor, held_out: list[str],
                     label: str, excuses: dict | None = None) -> None:
    """The pieces of every held-out line under the two trained models (both run by sentencepiece)."""
    only_ours = frozenset(set(pieces_of(ours)) - set(pieces_of(ref)))
    only_theirs = frozenset(set(pieces_of(ref)) - set(pieces_of(ours)))
    cases = [HeldOutLine(line, only_ours, only_theirs) for line in held_out]
    check = Comparison(f"{label} pieces of {len(held_out)} held-out lines (each trainer's model run by sentencepiece)",
                       against=SENTENCEPIECE_TRAINER, excuses=excuses or {})
    check.all(cases, ours=ours.encode(held_out, out_type=str), theirs=ref.encode(held_out, out_type=str))
    check.finish()


def pieces_of(sp: spm.SentencePieceProcessor) -> list[str]:
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
