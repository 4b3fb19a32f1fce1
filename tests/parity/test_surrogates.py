"""A str holding surrogates (lone, or a pair that a UTF-16 source left split) in every
format, against what that format's reference Python binding does with the same str.

- rank files: tiktoken 0.14's Encoding.encode / encode_ordinary / encode_batch catch
  UnicodeEncodeError and re-read the text as
  ``text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")``: a pair becomes
  its character, a lone surrogate U+FFFD. toksmith gives tiktoken's ids through encode,
  encode_batch and tokenize (the pieces of those ids), with and without special tokens.
  Bytes input holding a surrogate's 3-byte form is read as ``bytes.decode("utf-8",
  "replace")`` reads it (3 U+FFFD), the rule for all invalid UTF-8 in rank-file input.
- tokenizer.json, SentencePiece .model, GGUF and RWKV: each reference refuses such a str
  (tokenizers raises TypeError, sentencepiece RuntimeError; llama.cpp and the rwkv package
  take the UTF-8 bytes that ``str.encode("utf-8")`` refuses to make: llama-cpp-python's
  Llama.tokenize/create_completion path), so toksmith raises UnicodeEncodeError (a
  ValueError) naming the position, from every entry point (encode with and without
  parse_special, encode_batch, tokenize, encode(pair=) for tokenizer.json). llama-cpp-python's
  LlamaTokenizer.encode alone drops such characters (errors="ignore"); toksmith does not
  silently drop text.
"""
from __future__ import annotations

import random

import pytest
import sentencepiece as spm
import tokenizers
from rwkv.rwkv_tokenizer import TRIE_TOKENIZER   # the rwkv package

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import fixture_file, report
from tests.parity.test_spm_bpe_gguf import fail_on
from tests.tiktoken_reference import RANK_FILES, encoding

SURROGATE_TEXTS = ["\ud800", "\udfff", "\ud83d\ude00", "a\ud83d\ude00b", "\ud83d", "\ude00\ud83d",
                   "\ud800\ud800\udc00", "x\udc00\udc00y", "\U0001f600\ud800", "\ud800\U0001f600",
                   "héllo \ud83d wörld", "日本\udbff\udfff語", " \ud800 ", "\ud800<|endoftext|>\udc00",
                   "it\ud83d's 123\ude004 \ud83d\ude00\ud83d\ude00!"]
# Characters the fuzzed texts are drawn from: surrogates of both halves, pairs' halves,
# ASCII letters, digits, spaces and marks, Latin-1, CJK, an astral character.
ALPHABET = (["\ud83d", "\ude00", "\ud800", "\udc00", "\udbff", "\udfff", "a", "B", "'", "s", "1", " ",
             "\n", ".", "é", "日", "\U0001f600", "\u0301"])


def fuzzed_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 24))) for _ in range(count)]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_rank_files_read_surrogates_as_tiktoken_does(fixtures, name):
    path = fixture_file(fixtures, f"tiktoken/{RANK_FILES[name]}.tiktoken")
    tok = toksmith.load(path)
    enc = encoding(name, fixtures)
    texts = SURROGATE_TEXTS + fuzzed_texts(seed=len(name), count=400)
    mismatches = []
    compared = 0
    ordinary = tok.encode_batch(texts, parse_special=False)
    special = tok.encode_batch(texts, parse_special=True, num_threads=2)
    want_ordinary = enc.encode_ordinary_batch(texts, num_threads=1)
    want_special = enc.encode_batch(texts, allowed_special="all", num_threads=1)
    for i, text in enumerate(texts):
        compared += 1
        want = enc.encode_ordinary(text)
        assert want == want_ordinary[i]
        if tok.encode(text, parse_special=False) != want or ordinary[i] != want:
            mismatches.append(f"encode_ordinary {text!r}: ours {tok.encode(text)}, tiktoken {want}")
        want = enc.encode(text, allowed_special="all")
        if tok.encode(text, parse_special=True) != want or special[i] != want_special[i]:
            mismatches.append(f"allowed_special='all' {text!r}: ours {tok.encode(text, parse_special=True)}, "
                              f"tiktoken {want}")
        pieces = tok.tokenize(text)
        if pieces != [tok.id_to_piece(t) for t in enc.encode_ordinary(text)]:
            mismatches.append(f"tokenize {text!r}: {pieces}")
        raw = text.encode("utf-8", "surrogatepass")
        compared += 1
        if tok.encode(raw) != enc.encode_ordinary(raw.decode("utf-8", "replace")):
            mismatches.append(f"bytes {raw!r}: ours {tok.encode(raw)}")
    report(f"{name}: {compared} texts with surrogates (str: encode, encode_batch, allowed_special='all', "
           f"tokenize; bytes: encode) vs tiktoken, {len(mismatches)} mismatches")
    fail_on(mismatches)


def test_rank_file_pair_is_one_character(fixtures):
    """The issue's cases: o200k reads a lone surrogate as U+FFFD and a pair as its emoji."""
    tok = toksmith.load(fixture_file(fixtures, "tiktoken/o200k_base.tiktoken"))
    enc = encoding("o200k_base", fixtures)
    assert tok.encode("\ud800") == enc.encode("\ud800") == enc.encode("\ufffd")
    assert tok.encode("\ud83d\ude00") == enc.encode("\ud83d\ude00") == enc.encode("\U0001f600")


def _refusing_entry_points(tok, text):
    """Each of toksmith's str entry points on `text`, as callables."""
    return {"encode": lambda: tok.encode(text), "encode(parse_special)": lambda: tok.encode(text, parse_special=True),
            "encode_batch": lambda: tok.encode_batch(["ok", text]), "tokenize": lambda: tok.tokenize(text)}


def _expect_refused(tok, texts, reference_refuses, label: str) -> int:
    """Assert the reference and every toksmith entry point refuse each text; the comparisons made."""
    compared = 0
    for text in texts:
        with pytest.raises(Exception) as ref_error:
            reference_refuses(text)
        assert not isinstance(ref_error.value, AssertionError), label
        for entry, call in _refusing_entry_points(tok, text).items():
            with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
                call()
            compared += 1
    return compared


def test_tokenizer_json_refuses_surrogates_like_tokenizers(fixtures):
    path = fixture_file(fixtures, "hf/all-MiniLM-L6-v2/tokenizer.json")
    ref = tokenizers.Tokenizer.from_file(str(path))
    tok = toksmith.load(path)
    compared = _expect_refused(tok, SURROGATE_TEXTS, lambda text: ref.encode(text), "tokenizers")
    for text in SURROGATE_TEXTS:
        with pytest.raises(Exception):
            ref.encode("ok", text)
        with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
            tok.encode("ok", pair=text)
        compared += 1
    report(f"tokenizer.json: {compared} (text, entry point) refusals, as tokenizers.Tokenizer.encode refuses")


@pytest.mark.parametrize("relative", ["spm/llama2_tokenizer.model", "spm/sentencepiece_test_model.model"])
def test_sentencepiece_refuses_surrogates_like_sentencepiece(fixtures, relative):
    path = fixture_file(fixtures, relative)
    ref = spm.SentencePieceProcessor(model_file=str(path))
    tok = toksmith.load(path)
    compared = _expect_refused(tok, SURROGATE_TEXTS, lambda text: ref.encode(text), "sentencepiece")
    report(f"{relative}: {compared} (text, entry point) refusals, as SentencePieceProcessor.encode refuses")


@pytest.mark.parametrize("relative", ["gguf/ggml-vocab-llama-bpe.gguf", "gguf/ggml-vocab-llama-spm.gguf",
                                      "gguf/ggml-vocab-bert-bge.gguf"])
def test_gguf_refuses_surrogates_like_llama_cpp(fixtures, relative):
    """llama.cpp tokenizes bytes: a str reaches it as str.encode("utf-8"), which refuses."""
    path = fixture_file(fixtures, relative)
    vocab = llama_cpp_reference.load_vocab(path)
    tok = toksmith.load(path)
    compared = _expect_refused(tok, SURROGATE_TEXTS,
                               lambda text: vocab.tokenize(text.encode("utf-8"), True, False), "llama.cpp")
    report(f"{relative}: {compared} (text, entry point) refusals, as llama_tokenize's UTF-8 input refuses")


def test_rwkv_refuses_surrogates_like_the_rwkv_package(fixtures):
    path = fixture_file(fixtures, "rwkv/rwkv_vocab_v20230424.txt")
    ref = TRIE_TOKENIZER(str(path))
    tok = toksmith.load(path)
    compared = _expect_refused(tok, SURROGATE_TEXTS, lambda text: ref.encode(text), "rwkv")
    report(f"rwkv: {compared} (text, entry point) refusals, as TRIE_TOKENIZER.encode refuses")
