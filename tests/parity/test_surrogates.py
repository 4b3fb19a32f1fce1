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
from tests.conftest import fixture_file
from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import SENTENCEPIECE, TIKTOKEN, TOKENIZERS
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
    check = Comparison(f"{name}: texts with surrogates (str: encode, encode_batch, allowed_special='all', "
                       f"tokenize; bytes: encode)", against=TIKTOKEN)
    want_ordinary = enc.encode_ordinary_batch(texts, num_threads=1)
    want_special = enc.encode_batch(texts, allowed_special="all", num_threads=1)
    check.all(texts, ours=[tok.encode(text, parse_special=False) for text in texts], theirs=want_ordinary,
              what="encode_ordinary")
    check.all(texts, ours=tok.encode_batch(texts, parse_special=False), theirs=want_ordinary,
              what="encode_ordinary_batch")
    check.all(texts, ours=[tok.encode(text, parse_special=True) for text in texts], theirs=want_special,
              what="allowed_special='all'")
    check.all(texts, ours=tok.encode_batch(texts, parse_special=True, num_threads=2), theirs=want_special,
              what="batch allowed_special='all'")
    check.all(texts, ours=[tok.tokenize(text) for text in texts],
              theirs=[[tok.id_to_piece(t) for t in ids] for ids in want_ordinary], what="tokenize")
    raw = [text.encode("utf-8", "surrogatepass") for text in texts]
    check.all(raw, ours=[tok.encode(b) for b in raw],
              theirs=[enc.encode_ordinary(b.decode("utf-8", "replace")) for b in raw], what="bytes")
    check.finish()


def test_rank_file_pair_is_one_character(fixtures):
    """The issue's cases: o200k reads a lone surrogate as U+FFFD and a pair as its emoji."""
    tok = toksmith.load(fixture_file(fixtures, "tiktoken/o200k_base.tiktoken"))
    enc = encoding("o200k_base", fixtures)
    assert enc.encode("\ud800") == enc.encode("\ufffd") and enc.encode("\ud83d\ude00") == enc.encode("\U0001f600")
    check = Comparison("o200k_base: a lone surrogate and a surrogate pair", against=TIKTOKEN)
    check.all(["\ud800", "\ud83d\ude00"], ours=[tok.encode("\ud800"), tok.encode("\ud83d\ude00")],
              theirs=[enc.encode("\ud800"), enc.encode("\ud83d\ude00")])
    check.finish()


def _refusing_entry_points(tok, text):
    """Each of toksmith's str entry points on `text`, as callables."""
    return {"encode": lambda: tok.encode(text), "encode(parse_special)": lambda: tok.encode(text, parse_special=True),
            "encode_batch": lambda: tok.encode_batch(["ok", text]), "tokenize": lambda: tok.tokenize(text)}


REFUSED = "refused: UnicodeEncodeError, surrogates not allowed"


def refusal(call) -> str:
    """REFUSED when `call()` raises UnicodeEncodeError naming surrogates, else what it did."""
    try:
        result = call()
    except UnicodeEncodeError as error:
        return REFUSED if "surrogates not allowed" in str(error) else f"UnicodeEncodeError {error}"
    except Exception as error:          # another error is a mismatch, shown as such
        return f"{type(error).__name__}: {error}"
    return f"returned {result!r}"


def _expect_refused(tok, texts, reference_refuses, check: Comparison) -> None:
    """Assert the reference refuses each text; compare every toksmith entry point's refusal."""
    for text in texts:
        with pytest.raises(Exception) as ref_error:
            reference_refuses(text)
        assert not isinstance(ref_error.value, AssertionError), check.against
        for entry, call in _refusing_entry_points(tok, text).items():
            check.one((entry, text), refusal(call), REFUSED)


def test_tokenizer_json_refuses_surrogates_like_tokenizers(fixtures):
    path = fixture_file(fixtures, "hf/all-MiniLM-L6-v2/tokenizer.json")
    ref = tokenizers.Tokenizer.from_file(str(path))
    tok = toksmith.load(path)
    check = Comparison("tokenizer.json: (text with surrogates, entry point) refused",
                       against=f"{TOKENIZERS} (Tokenizer.encode refuses)")
    _expect_refused(tok, SURROGATE_TEXTS, lambda text: ref.encode(text), check)
    for text in SURROGATE_TEXTS:
        with pytest.raises(Exception):
            ref.encode("ok", text)
        check.one(("encode(pair=)", text), refusal(lambda: tok.encode("ok", pair=text)), REFUSED)
    check.finish()


@pytest.mark.parametrize("relative", ["spm/llama2_tokenizer.model", "spm/sentencepiece_test_model.model"])
def test_sentencepiece_refuses_surrogates_like_sentencepiece(fixtures, relative):
    path = fixture_file(fixtures, relative)
    ref = spm.SentencePieceProcessor(model_file=str(path))
    tok = toksmith.load(path)
    check = Comparison(f"{relative}: (text with surrogates, entry point) refused",
                       against=f"{SENTENCEPIECE} (SentencePieceProcessor.encode refuses)")
    _expect_refused(tok, SURROGATE_TEXTS, lambda text: ref.encode(text), check)
    check.finish()


@pytest.mark.parametrize("relative", ["gguf/ggml-vocab-llama-bpe.gguf", "gguf/ggml-vocab-llama-spm.gguf",
                                      "gguf/ggml-vocab-bert-bge.gguf"])
def test_gguf_refuses_surrogates_like_llama_cpp(fixtures, relative):
    """llama.cpp tokenizes bytes: a str reaches it as str.encode("utf-8"), which refuses."""
    path = fixture_file(fixtures, relative)
    vocab = llama_cpp_reference.load_vocab(path)
    tok = toksmith.load(path)
    check = Comparison(f"{relative}: (text with surrogates, entry point) refused",
                       against="llama.cpp (llama_tokenize's UTF-8 input refuses)")
    _expect_refused(tok, SURROGATE_TEXTS, lambda text: vocab.tokenize(text.encode("utf-8"), True, False), check)
    check.finish()


def test_rwkv_refuses_surrogates_like_the_rwkv_package(fixtures):
    path = fixture_file(fixtures, "rwkv/rwkv_vocab_v20230424.txt")
    ref = TRIE_TOKENIZER(str(path))
    tok = toksmith.load(path)
    check = Comparison("rwkv: (text with surrogates, entry point) refused",
                       against="the rwkv package (TRIE_TOKENIZER.encode refuses)")
    _expect_refused(tok, SURROGATE_TEXTS, lambda text: ref.encode(text), check)
    check.finish()
