"""Byte-level BPE model stage vs llama.cpp, one pre-token at a time.

The real pre-tokenizers come with the pipeline; here each candidate piece (a corpus
line split by the GPT-2 and Llama 3 regexes with the `regex` module) is kept for a
vocabulary only when that vocabulary's own llama.cpp regexes (llama-vocab.cpp
llm_tokenizer_bpe) leave it whole, and when it holds no user-defined token text
(llama.cpp splits those out before BPE). llama.cpp then tokenizes the piece alone:
its result is the BPE of that one pre-token.
"""
from __future__ import annotations

import random

import pytest
import regex

from tests import llama_cpp_reference
from tests.conftest import fixture_file
from tests.parity.byte_bpe_pieces import GPT2, LLAMA3, VOCABS, gguf_copy, whole_under
from tests.parity.comparison import Comparison
from toksmith._core.wire import parse_gguf_metadata
from toksmith.formats.gguf import llama_cpp_token_pieces, read_byte_level_gguf
from toksmith.vocab import TokenType

LINES_PER_CORPUS = 400


@pytest.fixture(scope="module")
def candidate_pieces(corpus_lines) -> list[str]:
    lines = []
    for name, corpus in corpus_lines.items():
        lines += corpus if name == "tricky_strings.txt" else random.Random(name).sample(
            corpus, min(LINES_PER_CORPUS, len(corpus)))
    pieces = {}
    for expr in (LLAMA3[0], GPT2[0]):
        for line in lines:
            pieces.update(dict.fromkeys(regex.findall(expr, line)))
    return list(pieces)


@pytest.mark.parametrize("name", list(VOCABS))
def test_pieces_match_llama_cpp(fixtures, candidate_pieces, name):
    path = fixture_file(fixtures, f"gguf/ggml-vocab-{name}.gguf")
    spec = read_byte_level_gguf(path)
    model = spec.vocab.build_model()
    ref = llama_cpp_reference.load_vocab(path)
    user_defined = [spec.vocab.texts[i].decode("utf-8", "replace")
                    for i, kind in enumerate(spec.vocab.types) if kind == TokenType.USER_DEFINED]
    pieces = [p for p in candidate_pieces
              if whole_under(p, VOCABS[name]) and not any(u in p for u in user_defined)]
    assert len(pieces) > 5000
    with Comparison(f"byte-level BPE model stage (encode_pieces), {name}: one pre-token each",
                    against="llama.cpp") as check:
        check.all(pieces, ours=model.encode_pieces([p.encode() for p in pieces]),
                  theirs=[ref.tokenize(p.encode(), add_special=False, parse_special=False) for p in pieces])


def test_merges_naming_unknown_tokens_are_kept_as_llama_cpp_keeps_them(fixtures, tmp_path):
    # llama.cpp neither refuses nor skips a merge whose parts or result are no tokens:
    # the pair merges by its rank and a result that is no token falls back to bytes.
    src = fixture_file(fixtures, "gguf/ggml-vocab-gpt-2.gguf")
    meta = parse_gguf_metadata(open(src, "rb").read())[2]
    merges = [b"\xc4\xa0 t", b"h e", b"q \xc3\xa6", b"Z Z", b"\xc4\xa0t he", b"zz z"] + meta["tokenizer.ggml.merges"]
    out = tmp_path / "odd-merges.gguf"
    gguf_copy(src, out, **{"tokenizer.ggml.merges": merges})
    spec = read_byte_level_gguf(out)
    model = spec.vocab.build_model()
    ref = llama_cpp_reference.load_vocab(out)
    pieces = [" the", " theZZ", "ZZ", "zzz", "qæ", " Theqæ", " t", "he"]
    with Comparison("byte-level BPE model stage, gpt-2 copy with merges naming unknown tokens",
                    against="llama.cpp") as check:
        check.all(pieces, ours=[model.encode_piece(p.encode()) for p in pieces],
                  theirs=[ref.tokenize(p.encode(), add_special=False, parse_special=False) for p in pieces])


@pytest.mark.parametrize("name", list(VOCABS))
def test_token_pieces_match_llama_cpp(fixtures, name):
    path = fixture_file(fixtures, f"gguf/ggml-vocab-{name}.gguf")
    spec = read_byte_level_gguf(path)
    ref = llama_cpp_reference.load_vocab(path)
    ids = range(ref.n_tokens)
    with Comparison(f"byte-level token pieces (llama_cpp_token_pieces), {name}: every token x special both ways",
                    against="llama.cpp (llama_token_to_piece)") as check:
        for special in (False, True):
            check.all(ids, ours=llama_cpp_token_pieces(spec, special=special),
                      theirs=[ref.token_to_piece(i, lstrip=0, special=special) for i in ids], what=f"special={special}")


def test_token_pieces_of_odd_texts_match_llama_cpp(fixtures, tmp_path):
    # NORMAL texts outside the byte map, invalid UTF-8, an overlong form; BYTE, UNUSED and
    # USER_DEFINED types: what llama.cpp prints for each.
    src = fixture_file(fixtures, "gguf/ggml-vocab-gpt-2.gguf")
    meta = parse_gguf_metadata(open(src, "rb").read())[2]
    tokens = list(meta["tokenizer.ggml.tokens"])
    types = meta["tokenizer.ggml.token_type"]
    odd = {1000: ("中".encode(), TokenType.NORMAL), 1001: (b"a b", TokenType.NORMAL),
           1002: (b"\xc1\x81x", TokenType.NORMAL), 1003: (b"q\xff", TokenType.NORMAL),
           1004: (b"<0x41>", TokenType.BYTE), 1005: (b"<0xzz>", TokenType.BYTE),
           1006: (b"hi  there", TokenType.USER_DEFINED), 1007: (b"<|gone|>", TokenType.UNUSED),
           1008: (b"\xf0\x9f\x98\x80", TokenType.NORMAL), 1009: (b"\xed\xa0\x80", TokenType.NORMAL)}
    for i, (text, kind) in odd.items():
        tokens[i] = text
        types[i] = kind
    out = tmp_path / "odd-texts.gguf"
    gguf_copy(src, out, **{"tokenizer.ggml.tokens": tokens, "tokenizer.ggml.token_type": types})
    spec = read_byte_level_gguf(out)
    ref = llama_cpp_reference.load_vocab(out)
    ids = list(odd) + [0, 50256]
    with Comparison("byte-level token pieces of odd texts and types (gpt-2 copy)",
                    against="llama.cpp (llama_token_to_piece)") as check:
        for special in (False, True):
            got = llama_cpp_token_pieces(spec, special=special)
            assert len(got) == ref.n_tokens, f"{len(got)} pieces for {ref.n_tokens} tokens"
            check.all(ids, ours=[got[i] for i in ids],
                      theirs=[ref.token_to_piece(i, lstrip=0, special=special) for i in ids], what=f"special={special}")


def test_gemma4_copy_matches_llama_cpp(fixtures, candidate_pieces, tmp_path):
    # tokenizer.ggml.model "gemma4": llama.cpp's BPE over raw UTF-8 characters (no byte map),
    # <0xXX> byte fallback. The gpt-2 vocabulary read that way: its texts are taken literally.
    src = fixture_file(fixtures, "gguf/ggml-vocab-gpt-2.gguf")
    meta = parse_gguf_metadata(open(src, "rb").read())[2]
    tokens = list(meta["tokenizer.ggml.tokens"])
    for i, b in enumerate(range(0x80, 0x100)):        # some byte tokens to fall back to
        tokens[40000 + i] = b"<0x%02X>" % b
    out = tmp_path / "gemma4-copy.gguf"
    gguf_copy(src, out, **{"tokenizer.ggml.model": "gemma4", "tokenizer.ggml.tokens": tokens})
    spec = read_byte_level_gguf(out)
    assert spec.pre == "gemma4" and spec.vocab.utf8_symbols
    model = spec.vocab.build_model()
    ref = llama_cpp_reference.load_vocab(out)
    # gemma4's pre-tokenizer cuts at newlines only and its normalizer turns spaces into U+2581:
    # pieces without either are one pre-token as they are
    pieces = [p for p in candidate_pieces if not any(c in p for c in " \n\r\t")] + ["\n\n", "\n"]
    with Comparison("byte-level BPE model stage (encode_pieces), gemma4 copy of gpt-2: one pre-token each",
                    against="llama.cpp") as check:
        check.all(pieces, ours=model.encode_pieces([p.encode() for p in pieces]),
                  theirs=[ref.tokenize(p.encode(), add_special=False, parse_special=False) for p in pieces])
