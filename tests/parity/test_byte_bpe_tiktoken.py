"""Byte-level BPE model stage vs tiktoken, one pre-token at a time, on the four rank files.

Pieces: every line of every corpus split with the encoding's own pattern by the `regex`
module (the real pre-tokenizers come with the pipeline), plus long one-piece inputs.
tiktoken's CoreBPE.encode_single_piece is the reference for each distinct piece.
"""
from __future__ import annotations

import pytest
import regex
import tiktoken

from tests.conftest import fixture_file
from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import TIKTOKEN
from tests.unit.test_tiktoken_files import tiktoken_constructor
from toksmith.formats.tiktoken import read_tiktoken

ENCODINGS = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")


@pytest.mark.parametrize("name", ENCODINGS)
def test_corpus_pieces_match_tiktoken(fixtures, corpus_lines, name):
    constructor = tiktoken_constructor(name, fixtures)
    encoding = tiktoken.Encoding(name=name, pat_str=constructor["pat_str"],
                                 mergeable_ranks=constructor["mergeable_ranks"],
                                 special_tokens=constructor["special_tokens"])
    model = read_tiktoken(fixture_file(fixtures, f"tiktoken/{name}.tiktoken")).vocab.build_model()
    pattern = regex.compile(constructor["pat_str"])
    pieces = {}
    for lines in corpus_lines.values():
        for line in lines:
            pieces.update(dict.fromkeys(pattern.findall(line)))
    raw = [p.encode("utf-8") for p in pieces]
    check = Comparison(f"byte-level BPE model stage, {name}: every distinct pre-token of every corpus line",
                       against=f"{TIKTOKEN} (CoreBPE.encode_single_piece)")
    check.all(raw, ours=model.encode_pieces(raw), theirs=[encoding._core_bpe.encode_single_piece(p) for p in raw])
    check.finish()


@pytest.mark.parametrize("unit", ["a", " ", "\n", "7", "中", "😀", "ab ", "é"])
def test_long_single_pieces_match_tiktoken(fixtures, unit):
    name = "cl100k_base"
    constructor = tiktoken_constructor(name, fixtures)
    encoding = tiktoken.Encoding(name=name, pat_str=constructor["pat_str"],
                                 mergeable_ranks=constructor["mergeable_ranks"],
                                 special_tokens=constructor["special_tokens"])
    model = read_tiktoken(fixture_file(fixtures, f"tiktoken/{name}.tiktoken")).vocab.build_model()
    pieces = [(unit * n).encode("utf-8") for n in (33, 101, 5000)]
    check = Comparison(f"byte-level BPE model stage, {name}: {unit!r} repeated 33, 101 and 5000 times",
                       against=f"{TIKTOKEN} (CoreBPE.encode_single_piece)")
    check.all(pieces, ours=[model.encode_piece(p) for p in pieces],
              theirs=[encoding._core_bpe.encode_single_piece(p) for p in pieces])
    check.finish()


@pytest.mark.parametrize("name", ENCODINGS)
def test_invalid_utf8_pieces_match_tiktoken(fixtures, invalid_utf8_lines, name):
    constructor = tiktoken_constructor(name, fixtures)
    encoding = tiktoken.Encoding(name=name, pat_str=constructor["pat_str"],
                                 mergeable_ranks=constructor["mergeable_ranks"],
                                 special_tokens=constructor["special_tokens"])
    model = read_tiktoken(fixture_file(fixtures, f"tiktoken/{name}.tiktoken")).vocab.build_model()
    pieces = [p for p in invalid_utf8_lines if p] + [b"\xff" * 40, b"\xe4\xb8" * 50, b"\x80abc\xc3"]
    check = Comparison(f"byte-level BPE model stage, {name}: invalid UTF-8 pieces",
                       against=f"{TIKTOKEN} (CoreBPE.encode_single_piece)")
    check.all(pieces, ours=[model.encode_piece(p) for p in pieces],
              theirs=[encoding._core_bpe.encode_single_piece(p) for p in pieces])
    check.finish()
