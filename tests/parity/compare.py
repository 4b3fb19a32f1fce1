"""Shared parity check: a toksmith tokenizer against a reference on every corpus line.

``compare_corpora(tok, ref, ...)`` needs from ``ref`` what a sentencepiece
``SentencePieceProcessor`` offers: ``encode(list_of_lines)``, ``encode(line)``,
``encode(list_of_lines, out_type=str)``, ``encode(raw_bytes)`` and ``decode(list_of_ids)``;
and from ``tok``: ``encode``, ``encode_batch``, ``tokenize`` and ``decode`` (wrap a tokenizer
whose defaults differ, as tests/parity/test_ugm_gguf.py does for GGUF).
"""
from __future__ import annotations

from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import SENTENCEPIECE

PIECES_EVERY = 25       # tokenize is compared on every 25th line (the same code path as encode)


def compare_corpora(tok, sp, corpus_lines, invalid_utf8_lines, label: str, *,
                    against: str = SENTENCEPIECE) -> None:
    """Assert identical ids (encode and encode_batch), decodes of the reference's ids, pieces of
    every 25th line and ids of the invalid UTF-8 lines; report the comparisons made."""
    check = Comparison(f"{label} (encode, encode_batch, decode of the reference's ids, pieces of every "
                       f"{PIECES_EVERY}th line, invalid UTF-8)", against=against)
    for corpus, lines in corpus_lines.items():
        expected = sp.encode(lines)
        check.all(lines, ours=tok.encode_batch(lines), theirs=expected, what=f"{corpus} encode_batch")
        check.all(lines, ours=[tok.encode(line) for line in lines], theirs=expected, what=f"{corpus} encode")
        check.all(lines, ours=[tok.decode(ids) for ids in expected], theirs=sp.decode(expected),
                  what=f"{corpus} decode")
        sample = lines[::PIECES_EVERY]
        check.all(sample, ours=[tok.tokenize(line) for line in sample], theirs=sp.encode(sample, out_type=str),
                  what=f"{corpus} pieces")
    invalid = list(invalid_utf8_lines)
    check.all(invalid, ours=[tok.encode(raw) for raw in invalid], theirs=[sp.encode(raw) for raw in invalid],
              what="invalid UTF-8")
    check.finish()
