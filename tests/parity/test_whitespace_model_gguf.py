"""GGUF ``tokenizer.ggml.model = "whitespace"`` and ``tokenizer.ggml.pre = "whitespace"``
against llama.cpp itself (tests/llama_cpp_reference.py).

Copies of the GPT-2 fixture GGUF (written with the `gguf` package, tests/gguf_copy.py):

- model "whitespace" with pre "whitespace" (what convert_hf_to_gguf writes for
  jina-embeddings-v2-base-zh), with the tokenizer.ggml.normalizer.lowercase key absent
  (llama.cpp: false for that pre) and true;
- model "whitespace" with the file's own pre "gpt-2" (lowercase absent: llama.cpp's
  default, true; and false), with "llama3" (ignore_merges, add_bos) and with "gemma4"
  (spaces escaped to U+2581 before the session, raw UTF-8 pieces, add_bos forced);

each on every line of tricky_strings.txt, the first lines of every corpus (a seeded
quarter with a special-token text spliced in) and some long runs, with every
(add_special, parse_special) pair, the invalid UTF-8 lines as bytes, and decode of
llama.cpp's ids (both skip_special values) and decode_bytes against llama_detokenize.

- model "gpt2" with pre "whitespace": llama.cpp aborts the process (GGML_ASSERT in
  find_bpe_rank) on every pre-token of two characters or more holding a space; toksmith
  raises ReferenceAbortsError on exactly those texts. The lines toksmith encodes are
  compared with llama.cpp, and llama.cpp is seen dying on the lines toksmith refuses, in a
  child process (tests/parity/reference_worker.py).
"""
from __future__ import annotations

import pytest

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import LONG_RUNS, fixture_file, multilingual_sample
from tests.gguf_copy import copy_gguf
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import (compare_decodes, compare_encodes, llama_cpp_survives, special_texts_of,
                                            spliced)
from tests.parity.reference_worker import ReferenceWorker

BASE = "gguf/ggml-vocab-gpt-2.gguf"
LINES_PER_CORPUS = 60
FLAGS = ((False, False), (True, True), (True, False), (False, True))
LOWERCASE = "tokenizer.ggml.normalizer.lowercase"

# name -> the keys changed in the copy of the GPT-2 GGUF
WHITESPACE_MODELS = {
    "pre-whitespace": {"tokenizer.ggml.model": "whitespace", "tokenizer.ggml.pre": "whitespace"},
    "pre-whitespace-lowercase": {"tokenizer.ggml.model": "whitespace", "tokenizer.ggml.pre": "whitespace",
                                 LOWERCASE: True},
    "pre-gpt-2": {"tokenizer.ggml.model": "whitespace"},
    "pre-gpt-2-no-lowercase": {"tokenizer.ggml.model": "whitespace", LOWERCASE: False},
    "pre-llama3": {"tokenizer.ggml.model": "whitespace", "tokenizer.ggml.pre": "llama3"},
    "pre-gemma4": {"tokenizer.ggml.model": "whitespace", "tokenizer.ggml.pre": "gemma4"},
}


@pytest.fixture(scope="module")
def sample(fixtures, corpus_lines) -> list[str]:
    lines = multilingual_sample(corpus_lines, LINES_PER_CORPUS) + LONG_RUNS
    lines += ["ÀÉÎ İstanbul ΣΑΣ ǅǈ Ⅻ ⓐⒶ", "x\u0085y\u1680z\u200bw\ufeffv\x1cu\x1f", "HeLLo   WORLD\t\tFOO\n\nbar  "]
    return spliced(lines, special_texts_of(fixture_file(fixtures, BASE)), seed=8)


def compare(check: Comparison, tok, ref, lines, invalid_utf8_lines) -> None:
    """encode and encode_batch for every flag pair, decode x2 and decode_bytes of llama.cpp's ids
    with (True, True); the invalid UTF-8 lines with (False, False) and (True, True)."""
    wanted = compare_encodes(check, tok, ref, lines, flags=FLAGS, decode=False)
    compare_decodes(check, tok, ref, wanted[FLAGS.index((True, True))])
    # one invalid UTF-8 line (F4 90 80 80) aborts llama.cpp; today 1 left out
    raws = llama_cpp_survives(invalid_utf8_lines, at_most=1)
    compare_encodes(check, tok, ref, raws, flags=FLAGS[:2], decode=False, label="invalid UTF-8")


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")   # llama.cpp warns too
@pytest.mark.parametrize("name", sorted(WHITESPACE_MODELS))
def test_whitespace_model_matches_llama_cpp(fixtures, tmp_path, sample, invalid_utf8_lines, name):
    path = copy_gguf(fixture_file(fixtures, BASE), tmp_path / f"{name}.gguf", WHITESPACE_MODELS[name])
    ref = llama_cpp_reference.LlamaCppVocab(path)
    check = Comparison(f"tokenizer.ggml.model='whitespace' ({name}) on the GPT-2 vocabulary: {len(sample)} lines x "
                       f"{len(FLAGS)} flag pairs (encode, encode_batch; decode x2 and decode_bytes of llama.cpp's ids "
                       f"with (True, True)) and the invalid UTF-8 lines x 2", against="llama.cpp")
    try:
        tok = toksmith.load(path)
        assert tok.vocab_size == ref.n_tokens
        compare(check, tok, ref, sample, invalid_utf8_lines)
    finally:
        ref.close()
    check.finish(at_least=2 * len(FLAGS) * len(sample))


def test_lowercase_key_changes_the_ids(fixtures, tmp_path):
    """The lowercase setting is really applied: with it, capitals get the ids of their
    lower-case forms, and each file matches llama.cpp."""
    ids = {}
    for name in ("pre-whitespace", "pre-whitespace-lowercase"):
        path = copy_gguf(fixture_file(fixtures, BASE), tmp_path / f"{name}.gguf", WHITESPACE_MODELS[name])
        ref = llama_cpp_reference.LlamaCppVocab(path)
        try:
            ids[name] = toksmith.load(path).encode("HELLO Wörld ΣΑΣ", add_special=False)
            assert ids[name] == ref.tokenize("HELLO Wörld ΣΑΣ".encode(), False, False)
        finally:
            ref.close()
    assert ids["pre-whitespace"] != ids["pre-whitespace-lowercase"]
    lower = copy_gguf(fixture_file(fixtures, BASE), tmp_path / "l.gguf", WHITESPACE_MODELS["pre-whitespace"])
    assert ids["pre-whitespace-lowercase"] == toksmith.load(lower).encode("hello wörld σασ", add_special=False)


def test_bad_lowercase_key_is_refused_like_llama_cpp(fixtures, tmp_path):
    path = copy_gguf(fixture_file(fixtures, BASE), tmp_path / "bad.gguf",
                     {"tokenizer.ggml.model": "whitespace", LOWERCASE: "yes"})
    with pytest.raises(ValueError, match="could not load"):
        llama_cpp_reference.LlamaCppVocab(path)
    with pytest.raises(toksmith.ModelFormatError, match="normalizer.lowercase"):
        toksmith.load(path)


def test_whitespace_pre_under_gpt2_model_refuses_what_llama_cpp_aborts_on(fixtures, tmp_path, sample):
    path = copy_gguf(fixture_file(fixtures, BASE), tmp_path / "gpt2-ws.gguf", {"tokenizer.ggml.pre": "whitespace"})
    tok = toksmith.load(path)
    requests, refused = [], []
    for line in sample + ["a b c", "a\n\nb", "a  b", "x \u3000y", "a\n b", "a\t\tb", " ", "  "]:
        for add_special, parse_special in ((False, False), (True, True)):
            try:
                ids = tok.encode(line, add_special=add_special, parse_special=parse_special)
            except toksmith.ReferenceAbortsError:
                refused.append((line, add_special, parse_special))
                continue
            requests.append((line, add_special, parse_special, ids))
    assert len(refused) > 10 and len(requests) > 100, "the sample has both kinds of lines"
    check = Comparison(f"tokenizer.ggml.pre='whitespace' under model 'gpt2': {len(requests)} texts toksmith encodes "
                       f"(ids), {min(len(refused), 40)} of the {len(refused)} it refuses (llama.cpp must die on "
                       f"each)", against="llama.cpp (in a child process)")
    with ReferenceWorker() as worker:
        answer, want = worker.tokenize("llama.cpp", path, [
            (line.encode("utf-8"), {"add_special": a, "parse_special": p}) for line, a, p, _ in requests])
        assert answer == "ok", "llama.cpp died on a text toksmith encodes"
        check.all(requests, ours=[ids for *_, ids in requests], theirs=want, what="ids")
        # One child per refused text (the first 40): each must die in llama.cpp's tokenizer.
        for line, a, p in refused[:40]:
            answer, _ = worker.tokenize("llama.cpp", path, [(line.encode("utf-8"),
                                                             {"add_special": a, "parse_special": p})])
            verdict = "aborts" if answer == "died tokenizing" else f"answered {answer!r}"
            check.one((line, a, p), "aborts", verdict, what="toksmith refuses (ReferenceAbortsError), llama.cpp")
    check.finish(at_least=len(requests))
