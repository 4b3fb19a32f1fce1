"""Allowed differences of the sentencepiece, tiktoken and training parity tests.

Used by test_train_unigram_sentencepiece.py (pieces and held-out segmentations of a trained
Unigram model, the tokenizer.json it writes in tokenizers), test_tiktoken_patterns.py (random
patterns toksmith refuses) and test_train_bpe_random.py (vocabulary sizes below the alphabet).
Each test bounds each excuse it uses with today's count and a small margin.
"""
from __future__ import annotations

from dataclasses import dataclass

from tests.parity.comparison import Excuse

SENTENCEPIECE = "sentencepiece 0.2.3"
SENTENCEPIECE_TRAINER = "sentencepiece 0.2.3's trainer (spm_train)"
TIKTOKEN = "tiktoken 0.14.0"
TOKENIZERS = "tokenizers 0.23.3"


@dataclass(frozen=True)
class HeldOutLine:
    """A held-out line, with the pieces only one of the two trained vocabularies holds."""

    text: str
    only_ours: frozenset = frozenset()
    only_theirs: frozenset = frozenset()

    def __repr__(self) -> str:
        return repr(self.text)


def _is_reordering(ours, theirs) -> bool:
    return list(ours) != list(theirs) and sorted(ours) == sorted(theirs)


UNIGRAM_TIE_REORDERED = Excuse(
    "UNIGRAM_TIE_REORDERED",
    allows="the two segmentations hold exactly the same pieces in another order (equal multisets, "
           "so equal total Unigram score): a tie that tokenizers 0.23.3 (models/unigram lattice "
           "viterbi) and sentencepiece 0.2.3 (unigram_model.cc EncodeOptimized) break each its own "
           "way, as two trainings' models do on the same pieces",
    applies=lambda case, ours, theirs: _is_reordering(ours, theirs),
    allowed=("www", [7, 9], [9, 7]), refused=("www", [7, 9], [9, 8]))


PIECE_KEPT_BY_ONE_TRAINER = Excuse(
    "PIECE_KEPT_BY_ONE_TRAINER",
    allows="a piece (the case) is in one trained Unigram vocabulary and not in the other (ours/theirs: "
           "whether each vocabulary holds it): toksmith sums the EM expected counts in fixed point, "
           "sentencepiece 0.2.3 (unigram_model_trainer.cc) in float per thread, so pieces whose "
           "scores nearly tie at a pruning cut can be kept by one trainer only",
    applies=lambda case, ours, theirs: isinstance(ours, bool) and isinstance(theirs, bool) and ours != theirs,
    allowed=("\u2581ww", True, False), refused=("\u2581ww", True, "kept"))


HELD_OUT_PIECE_ONE_VOCAB_LACKS = Excuse(
    "HELD_OUT_PIECE_ONE_VOCAB_LACKS",
    allows="a held-out line's pieces under two trained Unigram models differ, and one segmentation "
           "uses a piece the other trained vocabulary lacks (a PIECE_KEPT_BY_ONE_TRAINER piece)",
    applies=lambda case, ours, theirs: list(ours) != list(theirs) and bool(
        set(ours) & case.only_ours or set(theirs) & case.only_theirs),
    allowed=(HeldOutLine("www", frozenset({"w"})), ["w", "ww"], ["www"]),
    refused=(HeldOutLine("www", frozenset({"x"})), ["w", "ww"], ["www"]))


HELD_OUT_SHARED_PIECES_OTHER_SCORES = Excuse(
    "HELD_OUT_SHARED_PIECES_OTHER_SCORES",
    allows="a held-out line's pieces under two trained Unigram models differ, every piece of both "
           "segmentations is in both vocabularies, and they are not a reordering of each other: the "
           "two trainers gave the shared pieces different scores (the fixed point vs float EM sums of "
           "PIECE_KEPT_BY_ONE_TRAINER)",
    applies=lambda case, ours, theirs: list(ours) != list(theirs) and not _is_reordering(ours, theirs)
    and not (set(ours) & case.only_ours or set(theirs) & case.only_theirs),
    allowed=(HeldOutLine("irte"), ["ir", "te"], ["i", "rte"]),
    refused=(HeldOutLine("irte", frozenset({"ir"})), ["ir", "te"], ["i", "rte"]))


PATTERN_REFUSED = "refused (RegexUnsupported)"

TIKTOKEN_PATTERN_REFUSED = Excuse(
    "TIKTOKEN_PATTERN_REFUSED",
    allows="toksmith refuses with RegexUnsupported (naming the construct) a random pattern that "
           "tiktoken 0.14.0 compiles: the exact-or-refuse rule for fancy-regex constructs toksmith "
           "cannot run as fancy-regex does (ours: the refusal, theirs: 'accepted')",
    applies=lambda case, ours, theirs: theirs == "accepted" and isinstance(ours, str)
    and ours.startswith(PATTERN_REFUSED + ": "),
    allowed=("(?<=a+)b", PATTERN_REFUSED + ": look-behind of several lengths", "accepted"),
    refused=("(?<=a+)b", "refused (ValueError): bad pattern", "accepted"))


VOCAB_BELOW_ALPHABET = "refused: vocab_size smaller than the special tokens and the alphabet"

VOCAB_SIZE_BELOW_ALPHABET_REFUSED = Excuse(
    "VOCAB_SIZE_BELOW_ALPHABET_REFUSED",
    allows="tokenizers 0.23.3's BpeTrainer returns more tokens than vocab_size (its special tokens and "
           "whole alphabet, trainers/bpe.rs) where toksmith raises ValueError 'smaller than the special "
           "tokens and the alphabet' (case: the vocab_size; theirs: the number of tokens returned)",
    applies=lambda case, ours, theirs: ours == VOCAB_BELOW_ALPHABET and isinstance(theirs, int)
    and theirs > case,
    allowed=(100, VOCAB_BELOW_ALPHABET, 130), refused=(100, VOCAB_BELOW_ALPHABET, 100))
