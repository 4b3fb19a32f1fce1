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
from tests.conftest import fixture_file
from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import TIKTOKEN
from tests.parity.llama_cpp_compare import spliced
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
    check = Comparison(f"{name} every corpus line (encode_ordinary through encode and encode_batch, "
                       f"allowed_special='all', decode and decode_bytes of tiktoken's ids) and invalid UTF-8",
                       against=TIKTOKEN)
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, specials, seed=len(corpus) + 1)
        want = enc.encode_ordinary_batch(texts, num_threads=1)
        check.all(texts, ours=tok.encode_batch(texts, add_special=False, parse_special=False), theirs=want,
                  what=f"{corpus} encode_batch ordinary")
        check.all(texts, ours=[tok.encode(text, parse_special=False) for text in texts], theirs=want,
                  what=f"{corpus} encode ordinary")
        want_special = enc.encode_batch(texts, allowed_special="all", num_threads=1)
        check.all(texts, ours=tok.encode_batch(texts, add_special=True, parse_special=True), theirs=want_special,
                  what=f"{corpus} allowed_special='all'")
        check.all(texts, ours=[tok.decode(ids) for ids in want_special],
                  theirs=enc.decode_batch(want_special, num_threads=1), what=f"{corpus} decode")
        check.all(texts, ours=[tok.decode_bytes(ids) for ids in want_special],
                  theirs=enc.decode_bytes_batch(want_special, num_threads=1), what=f"{corpus} decode_bytes")
    # tiktoken takes str only: bytes are what bytes.decode("utf-8", "replace") gives
    invalid = list(invalid_utf8_lines)
    want = [enc.encode_ordinary(raw.decode("utf-8", errors="replace")) for raw in invalid]
    check.all(invalid, ours=[tok.encode(raw.decode("utf-8", errors="replace"), parse_special=False)
                             for raw in invalid], theirs=want, what="invalid UTF-8 replaced")
    check.all(invalid, ours=[tok.encode(raw, parse_special=False) for raw in invalid], theirs=want,
              what="invalid UTF-8 bytes")
    check.finish()


NO_SUCH_ID = "refused: an id no token has"


def decoded_or_refused(decode, ids):
    """decode(ids), or NO_SUCH_ID where it refuses an id no token has (tiktoken: KeyError,
    toksmith: TokenIdError)."""
    try:
        return decode(ids)
    except (KeyError, toksmith.TokenIdError):
        return NO_SUCH_ID


@pytest.mark.parametrize("name", ("r50k_base", "cl100k_base", "o200k_base", "o200k_harmony"))
def test_random_id_lists_decode_like_tiktoken(fixtures, name):
    tok = load(fixtures, name)
    enc = encoding(name, fixtures)
    rnd = random.Random(5)
    specials = [enc.encode_single_token(text) for text in enc.special_tokens_set]
    pool = list(range(256)) + specials
    cases = [[rnd.choice(pool) if rnd.random() < 0.7 else rnd.randrange(enc.n_vocab)
              for _ in range(rnd.randint(0, 10))] for _ in range(5000)]
    check = Comparison(f"{name} random id lists (decode_bytes, decode; an id no token has refused by both)",
                       against=TIKTOKEN)
    check.all(cases, ours=[decoded_or_refused(tok.decode_bytes, ids) for ids in cases],
              theirs=[decoded_or_refused(enc.decode_bytes, ids) for ids in cases], what="decode_bytes")
    check.all(cases, ours=[decoded_or_refused(tok.decode, ids) for ids in cases],
              theirs=[decoded_or_refused(enc.decode, ids) for ids in cases], what="decode")
    check.finish()


@pytest.mark.parametrize("name", ("cl100k_base", "o200k_base"))
def test_embedded_encodings_match_tiktoken(fixtures, corpus_lines, name):
    """load("cl100k_base") / load("o200k_base") need no file: the package ships the ranks."""
    tok = toksmith.load(name)
    enc = encoding(name, fixtures)
    lines = [line for lines in corpus_lines.values() for line in lines[:300]]
    check = Comparison(f"embedded {name}: the first 300 lines of every corpus, allowed_special='all'",
                       against=TIKTOKEN)
    check.all(lines, ours=tok.encode_batch(lines, parse_special=True),
              theirs=enc.encode_batch(lines, allowed_special="all", num_threads=1))
    check.finish()


def test_o200k_harmony_shared_id_is_tiktokens_text(fixtures):
    """o200k_harmony gives 200018 two texts (<|endofprompt|>, <|reserved_200018|>): decode,
    decode_bytes, id_to_piece and stream decoding give the one tiktoken decodes; both texts
    encode to it and both are listed as special tokens, as tiktoken's special_tokens_set."""
    tok = load(fixtures, "o200k_harmony")
    enc = encoding("o200k_harmony", fixtures)
    ids = sorted(set(enc._special_tokens.values()))
    check = Comparison("o200k_harmony special ids and texts", against=TIKTOKEN)
    for token_id in ids:
        want = enc.decode_single_token_bytes(token_id)
        check.one(token_id, tok.decode_bytes([token_id]), want, what="decode_bytes")
        check.one(token_id, tok.decode([token_id]), enc.decode([token_id]), what="decode")
        check.one(token_id, tok.id_to_piece(token_id), want.decode(), what="id_to_piece")
        stream = tok.stream_decoder()
        check.one(token_id, stream.feed(token_id) + stream.finish(), want.decode(), what="stream decode")
    for text in sorted(enc.special_tokens_set):
        check.one(text, tok.encode(text, parse_special=True), enc.encode(text, allowed_special="all"), what="encode")
        check.one(text, tok.piece_to_id(text), enc.encode_single_token(text), what="piece_to_id")
    check.one("special tokens", {t.text for t in tok.special_tokens}, enc.special_tokens_set, what="special_tokens")
    check.finish()
