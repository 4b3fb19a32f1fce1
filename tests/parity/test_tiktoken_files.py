"""``.tiktoken`` rank files against tiktoken itself (tests/tiktoken_reference.py).

For the four fixture rank files (and the OpenAI encodings built on them), every corpus
line: ``encode(add_special=False, parse_special=False)`` is tiktoken's ``encode_ordinary``
and ``parse_special=True`` is ``encode(text, allowed_special="all")`` (with special-token
texts spliced into a seeded quarter of the lines), through encode and encode_batch;
``decode`` and ``decode_bytes`` of tiktoken's ids; texts made from the invalid UTF-8
cases (decoded with errors="replace"); seeded random id lists (partial UTF-8) decoded.
"""
from __future__ import annotations

import random

import pytest

import toksmith
from tests.conftest import fixture_file, report
from tests.parity.test_byte_bpe_gguf import spliced
from tests.parity.test_spm_bpe_gguf import fail_on
from tests.tiktoken_reference import RANK_FILES, encoding

ENCODINGS = ("r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony")
FILE_NAMED = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")   # recognised by file name


def load(fixtures, name: str):
    path = fixture_file(fixtures, f"tiktoken/{RANK_FILES[name]}.tiktoken")
    return toksmith.load(path) if name in FILE_NAMED else toksmith.load(path, encoding=name)


@pytest.mark.parametrize("name", ENCODINGS)
def test_corpora_match_tiktoken(fixtures, corpus_lines, invalid_utf8_lines, name):
    tok = load(fixtures, name)
    enc = encoding(name, fixtures)
    assert tok.vocab_size == enc.n_vocab
    specials = sorted(enc.special_tokens_set)
    mismatches = []
    compared = 0
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, specials, seed=len(corpus) + 1)
        expected_ordinary = enc.encode_ordinary_batch(texts, num_threads=1)
        got = tok.encode_batch(texts, add_special=False, parse_special=False)
        got_special = tok.encode_batch(texts, add_special=True, parse_special=True)
        for i, text in enumerate(texts):
            want = expected_ordinary[i]
            if got[i] != want or tok.encode(text, parse_special=False) != want:
                mismatches.append(f"{corpus}:{i + 1} encode_ordinary {text[:60]!r}\n  ours {got[i]}\n  tiktoken {want}")
                continue
            want_special = enc.encode(text, allowed_special="all")
            if got_special[i] != want_special:
                mismatches.append(f"{corpus}:{i + 1} allowed_special=all {text[:60]!r}\n  ours "
                                  f"{got_special[i]}\n  tiktoken {want_special}")
                continue
            if tok.decode(want_special) != enc.decode(want_special):
                mismatches.append(f"{corpus}:{i + 1} decode {text[:60]!r}")
            if tok.decode_bytes(want_special) != enc.decode_bytes(want_special):
                mismatches.append(f"{corpus}:{i + 1} decode_bytes {text[:60]!r}")
        compared += len(texts)
    for raw in invalid_utf8_lines:
        # tiktoken takes str only: bytes are what bytes.decode("utf-8", "replace") gives
        compared += 1
        text = raw.decode("utf-8", errors="replace")
        want = enc.encode_ordinary(text)
        if tok.encode(text, parse_special=False) != want or tok.encode(raw, parse_special=False) != want:
            mismatches.append(f"invalid UTF-8 {raw!r} (replaced): ours {tok.encode(raw)}, tiktoken {want}")
    report(f"{name} vs tiktoken: {compared} lines x (encode_ordinary, allowed_special='all', "
           f"decode, decode_bytes), {len(mismatches)} mismatches")
    fail_on(mismatches)


@pytest.mark.parametrize("name", ("r50k_base", "cl100k_base", "o200k_base", "o200k_harmony"))
def test_random_id_lists_decode_like_tiktoken(fixtures, name):
    tok = load(fixtures, name)
    enc = encoding(name, fixtures)
    rnd = random.Random(5)
    specials = [enc.encode_single_token(text) for text in enc.special_tokens_set]
    pool = list(range(256)) + specials
    mismatches = []
    refused = 0
    cases = 5000
    for _ in range(cases):
        ids = [rnd.choice(pool) if rnd.random() < 0.7 else rnd.randrange(enc.n_vocab)
               for _ in range(rnd.randint(0, 10))]
        try:
            want_bytes = enc.decode_bytes(ids)
        except KeyError:   # an id no token has (a gap below the special ids): both refuse it
            refused += 1
            with pytest.raises(toksmith.TokenIdError):
                tok.decode_bytes(ids)
            continue
        if tok.decode_bytes(ids) != want_bytes or tok.decode(ids) != enc.decode(ids):
            mismatches.append(f"decode({ids}): {tok.decode_bytes(ids)!r} != {want_bytes!r}")
    report(f"{name} random id lists vs tiktoken decode/decode_bytes: {cases} lists ({refused} "
           f"with an id no token has, refused by both), {len(mismatches)} mismatches")
    fail_on(mismatches)


@pytest.mark.parametrize("name", ("cl100k_base", "o200k_base"))
def test_embedded_encodings_match_tiktoken(fixtures, corpus_lines, name):
    """load("cl100k_base") / load("o200k_base") need no file: the package ships the ranks."""
    tok = toksmith.load(name)
    enc = encoding(name, fixtures)
    lines = [line for lines in corpus_lines.values() for line in lines[:300]]
    got = tok.encode_batch(lines, parse_special=True)
    mismatches = [f"{line[:60]!r}" for line, ids in zip(lines, got)
                  if ids != enc.encode(line, allowed_special="all")]
    report(f"embedded {name} vs tiktoken: {len(lines)} lines, {len(mismatches)} mismatches")
    fail_on(mismatches)


def test_o200k_harmony_shared_id_is_tiktokens_text(fixtures):
    """o200k_harmony gives 200018 two texts (<|endofprompt|>, <|reserved_200018|>): decode,
    decode_bytes, id_to_piece and stream decoding give the one tiktoken decodes; both texts
    encode to it and both are listed as special tokens, as tiktoken's special_tokens_set."""
    tok = load(fixtures, "o200k_harmony")
    enc = encoding("o200k_harmony", fixtures)
    ids = sorted(set(enc._special_tokens.values()))
    compared = 0
    for token_id in ids:
        want = enc.decode_single_token_bytes(token_id)
        assert tok.decode_bytes([token_id]) == want and tok.decode([token_id]) == enc.decode([token_id])
        assert tok.id_to_piece(token_id) == want.decode()
        stream = tok.stream_decoder()
        assert stream.feed(token_id) + stream.finish() == want.decode()
        compared += 1
    for text in enc.special_tokens_set:
        assert tok.encode(text, parse_special=True) == enc.encode(text, allowed_special="all")
        assert tok.piece_to_id(text) == enc.encode_single_token(text)
        compared += 2
    assert {t.text for t in tok.special_tokens} == enc.special_tokens_set
    report(f"o200k_harmony special ids and texts vs tiktoken: {compared} comparisons, 0 mismatches")
