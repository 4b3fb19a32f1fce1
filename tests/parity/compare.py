"""Shared parity check: a toksmith tokenizer against a reference on every corpus line.

``compare_corpora(tok, ref, ...)`` needs from ``ref`` what a sentencepiece
``SentencePieceProcessor`` offers: ``encode(list_of_lines)``, ``encode(line)``,
``encode(line, out_type=str)``, ``encode(raw_bytes)`` and ``decode(ids)``; and from
``tok``: ``encode``, ``encode_batch``, ``tokenize`` and ``decode`` (wrap a tokenizer
whose defaults differ, as tests/parity/test_ugm_gguf.py does for GGUF).
"""
from __future__ import annotations

from tests.conftest import report


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
