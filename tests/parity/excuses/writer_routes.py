"""Allowed differences of tests/property/test_writer_routes.py that no parity file meets on
its corpora (the route test reuses the parity files' excuses otherwise).

Cases are tests/parity/spm_json_cases.SourceLine objects (a text of the source .model, with
`reserved_ids`, `control_ids`, `piece` from sentencepiece on the source and
`ids_by_both(text)`: sentencepiece's ids on the source and tokenizers' on the written file);
the examples below are plain attribute holders.
"""
from __future__ import annotations

from types import SimpleNamespace

from tests.parity.comparison import Excuse


def _reserved_piece_taken_from_text(case, ours, theirs) -> bool:
    taken = [case.piece(token) for token in case.reserved_ids if case.piece(token) in case.text]
    if not taken or any(token in case.control_ids for token in theirs):
        return False
    without = case.text
    for text in taken:
        without = without.replace(text, "")
    sentencepiece_ids, tokenizers_ids = case.ids_by_both(without)
    return sentencepiece_ids == tokenizers_ids


def _example(ids_without: tuple) -> SimpleNamespace:
    return SimpleNamespace(text="a <unk>", reserved_ids={0, 1}, control_ids={1}, piece={0: "<unk>", 1: "<s>"}.get,
                           ids_by_both={"a ": ids_without}.get)


UNIGRAM_TAKES_RESERVED_PIECE_FROM_TEXT = Excuse(
    "UNIGRAM_TAKES_RESERVED_PIECE_FROM_TEXT",
    allows="tokenizers 0.23.3's Unigram matches a CONTROL or UNKNOWN piece ('<s>', '<unk>') where the line "
           "holds its text (it matches every piece of its vocab; encode_special_tokens only stops the "
           "added-token split; with byte_fallback a matched '<unk>' fused with an unknown character next to it "
           "comes out as the bytes of both), sentencepiece 0.2.3 keeps those pieces out of its lattice: the line "
           "holds such a piece's text, sentencepiece's ids hold no CONTROL id, and on the line without those "
           "texts the two references give the same ids (the difference lies in them)",
    applies=_reserved_piece_taken_from_text,
    allowed=(_example(([5], [5])), [5, 0], [5, 3, 4]),
    refused=(_example(([5], [6])), [5, 0], [5, 3, 4]))
