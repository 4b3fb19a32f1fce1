"""Allowed differences of the GGUF parity tests (tests/parity/test_ugm_gguf.py, test_mutated_models.py, ...).

Each states exactly the difference it allows and the reference behaviour behind it; the tests
give each an upper bound from today's full-corpus count.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tests.parity.comparison import Excuse


@dataclass(frozen=True)
class ScoredText:
    """A text with the vocabulary it was encoded with: each id's piece text and score."""

    text: str
    pieces: list
    scores: list


def _exact_total(case: ScoredText, ids) -> Fraction:
    return sum((Fraction(case.scores[i]) for i in ids), Fraction(0))


def _is_exact_tie(case: ScoredText, ours, theirs) -> bool:
    return (ours != theirs and len(ours) == len(theirs)
            and b"".join(case.pieces[i] for i in ours) == b"".join(case.pieces[i] for i in theirs)
            and _exact_total(case, ours) == _exact_total(case, theirs))


_TIE_VOCAB = dict(pieces=[b"a", b"bc", b"ab", b"c"], scores=[-1.0, -2.0, -2.0, -1.0])

UGM_EXACT_TIE = Excuse(
    "UGM_EXACT_TIE",
    allows="another segmentation of the same text into as many pieces whose scores sum to exactly the same "
           "total (summed as exact fractions of the stored float32 scores): llama.cpp's UGM (toksmith's "
           "llama.cpp rules) sums path scores in double, sentencepiece 0.2.3 in float, so exact ties can be "
           "broken differently",
    applies=_is_exact_tie,
    allowed=(ScoredText("abc", **_TIE_VOCAB), [0, 1], [2, 3]),
    refused=(ScoredText("abc", pieces=_TIE_VOCAB["pieces"], scores=[-1.0, -2.0, -2.0000002, -1.0]), [0, 1], [2, 3]))


# ---------------------------------------------------------------- mutated model files (test_mutated_models.py)
#
# A verdict on a mutated file is its ids on the sample texts (a list, one id list per text), a
# `Rejected` (the loader refused the file, with its reason), or `DiedTokenizing` (the reference
# loaded the file and then crashed on a text).

@dataclass(frozen=True, eq=False)
class Rejected:
    """A loader refused the file. Two rejections agree when each gives a reason."""

    reason: str

    def __eq__(self, other) -> bool:
        return isinstance(other, Rejected) and bool(self.reason) and bool(other.reason)

    __hash__ = object.__hash__


@dataclass(frozen=True)
class DiedTokenizing:
    """The reference (in a child process) loaded the file and died on one of the texts."""

    status: object


def _stricter(pattern: str):
    import re
    compiled = re.compile(pattern)
    return lambda case, ours, theirs: (isinstance(ours, Rejected) and isinstance(theirs, list)
                                       and compiled.search(ours.reason) is not None)


_LOADED = [[1, 2], [3]]

STRICTER_WORD_OR_CHAR_MODEL = Excuse(
    "STRICTER_WORD_OR_CHAR_MODEL",
    allows="toksmith refuses a .model whose trainer_spec.model_type is WORD or CHAR (not implemented: "
           "'SentencePiece WORD/CHAR models are not supported yet') where sentencepiece 0.2.3 loads it",
    applies=_stricter(r"^SentencePiece (WORD|CHAR) models are not supported yet"),
    allowed=("x.model", Rejected("SentencePiece CHAR models are not supported yet (supported: ...)"), _LOADED),
    refused=("x.model", Rejected("SentencePiece CHAR models are not supported yet"), Rejected("bad model")))

STRICTER_NO_UNKNOWN_PIECE = Excuse(
    "STRICTER_NO_UNKNOWN_PIECE",
    allows="toksmith refuses a model without exactly one UNKNOWN piece ('no UNKNOWN piece', 'a SentencePiece/"
           "Unigram model needs an unknown piece') where the reference loads it",
    applies=_stricter(r"^(no UNKNOWN piece|a (SentencePiece|Unigram) model needs an unknown piece)"),
    allowed=("x.model", Rejected("a Unigram model needs an unknown piece"), _LOADED),
    refused=("x.model", Rejected("unknown piece 7 is not valid UTF-8"), _LOADED))

STRICTER_BYTE_PIECE_TEXT = Excuse(
    "STRICTER_BYTE_PIECE_TEXT",
    allows="toksmith refuses a BYTE piece whose text is not <0xXX> ('byte piece N is ..., expected <0xXX>'), "
           "which sentencepiece 0.2.3 / llama.cpp load",
    applies=_stricter(r"^byte piece \d+ is .*, expected <0xXX>"),
    allowed=("x.gguf", Rejected("byte piece 2 is b'</s>', expected <0xXX>"), _LOADED),
    refused=("x.gguf", Rejected("byte piece 2 is b'</s>', expected <0xXX>"), DiedTokenizing(-6)))

STRICTER_PIECE_NOT_UTF8 = Excuse(
    "STRICTER_PIECE_NOT_UTF8",
    allows="toksmith refuses a piece whose text is not valid UTF-8 ('piece N ... is not valid UTF-8') where the "
           "reference loads it",
    applies=_stricter(r"^piece \d+ .* is not valid UTF-8"),
    allowed=("x.model", Rejected("piece 351 b'\\xe2\\x96\\x81th\\xe1t' is not valid UTF-8"), _LOADED),
    refused=("x.model", Rejected("byte piece 351 is b'\\xe1', expected <0xXX>"), _LOADED))

REFERENCE_DIED_TOKENIZING = Excuse(
    "REFERENCE_DIED_TOKENIZING",
    allows="the reference (llama.cpp) loaded the file and then crashed on one of the texts (e.g. an SPM vocabulary "
           "with a character that has no token and no byte token): a reference bug with no verdict to compare; "
           "toksmith's ids or ModelFormatError for that file are not compared",
    applies=lambda case, ours, theirs: isinstance(theirs, DiedTokenizing) and isinstance(ours, (list, Rejected)),
    allowed=("x.gguf", _LOADED, DiedTokenizing(-6)),
    refused=("x.gguf", _LOADED, Rejected("llama.cpp could not load")))

STRICTER_NUL_IN_PIECE = Excuse(
    "STRICTER_NUL_IN_PIECE",
    allows="toksmith refuses a piece whose text holds a NUL character ('piece N ... includes a NUL character') "
           "where sentencepiece 0.2.3 loads it",
    applies=_stricter(r"^piece \d+ .* includes a NUL character"),
    allowed=("x.model", Rejected("piece 9 b'\\x00' includes a NUL character"), _LOADED),
    refused=("x.model", Rejected("piece 9 b'\\x00' includes a NUL character"), Rejected("sentencepiece: bad")))

STRICTER_NAN_SCORE = Excuse(
    "STRICTER_NAN_SCORE",
    allows="toksmith refuses a BPE piece scored NaN ('piece N ... has score NaN: merge order is undefined') where "
           "sentencepiece 0.2.3 loads it",
    applies=_stricter(r"^piece \d+ .* has score NaN: merge order is undefined"),
    allowed=("x.model", Rejected("piece 7 b're' has score NaN: merge order is undefined (toksmith refuses it; "
                                 "sentencepiece loads it)"), _LOADED),
    refused=("x.model", Rejected("piece 7 b're' has score inf"), _LOADED))

STRICTER_TRUNCATED_MODEL = Excuse(
    "STRICTER_TRUNCATED_MODEL",
    allows="toksmith refuses a .model that ends right after a piece with no trainer_spec or normalizer_spec "
           "('the file ends at byte N of N right after piece N ... looks truncated'), which sentencepiece 0.2.3 loads",
    applies=_stricter(r"^the file ends at byte \d+ of \d+ right after piece \d+, with no trainer_spec or "
                      r"normalizer_spec"),
    allowed=("x.model", Rejected("the file ends at byte 62 of 62 right after piece 5, with no trainer_spec or "
                                 "normalizer_spec: the file looks truncated"), _LOADED),
    refused=("x.model", Rejected("the file ends at byte 62 of 62 inside piece 5"), _LOADED))

STRICTER_SHORT_CHARSMAP = Excuse(
    "STRICTER_SHORT_CHARSMAP",
    allows="toksmith refuses a precompiled_charsmap shorter than its own header says ('charsmap of N bytes is too "
           "short for its N-byte header'), which sentencepiece 0.2.3 loads",
    applies=_stricter(r"^precompiled_charsmap: charsmap of \d+ bytes is too short for its \d+-byte header"),
    allowed=("x.model", Rejected("precompiled_charsmap: charsmap of 3 bytes is too short for its 4-byte header"),
             _LOADED),
    refused=("x.model", Rejected("precompiled_charsmap: the double array is empty"), _LOADED))

STRICTER_PIECE_TYPE = Excuse(
    "STRICTER_PIECE_TYPE",
    allows="toksmith refuses a piece whose type is outside sentencepiece's enum ('piece N ... has type N, expected "
           "N..N'), which sentencepiece 0.2.3 loads",
    applies=_stricter(r"^piece \d+ .* has type -?\d+, expected \d+\.\.\d+"),
    allowed=("x.model", Rejected("piece 1 b'<s>' has type 9, expected 1..6"), _LOADED),
    refused=("x.model", Rejected("piece 1 b'<s>' has type 9, expected 1..6"), DiedTokenizing(-6)))
