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
from tests.conftest import LONG_RUNS, fixture_file, multilingual_sample, report
from tests.gguf_copy import copy_gguf
from tests.parity.reference_worker import ReferenceWorker
from tests.parity.test_byte_bpe_gguf import aborts_llama_cpp, special_texts_of, spliced
from tests.parity.test_spm_bpe_gguf import fail_on, reference_decode

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


def compare(tok, ref, lines, invalid_utf8_lines) -> tuple[int, list[str]]:
    """Ids for every flag pair, decode and decode_bytes; returns (comparisons, mismatches)."""
    mismatches = []
    compared = 0
    for add_special, parse_special in FLAGS:
        got_batch = tok.encode_batch(lines, add_special=add_special, parse_special=parse_special)
        for line, batch in zip(lines, got_batch):
            want = ref.tokenize(line.encode("utf-8"), add_special, parse_special)
            got = tok.encode(line, add_special=add_special, parse_special=parse_special)
            compared += 1
            if got != want or batch != want:
                mismatches.append(f"({add_special}, {parse_special}) {line[:50]!r}\n  ours {got[:20]}\n"
                                  f"  llama.cpp {want[:20]}")
                continue
            if (add_special, parse_special) != (True, True):
                continue
            for skip in (False, True):
                expected = reference_decode(ref, want, skip)
                if tok.decode(want, skip_special=skip) != expected:
                    mismatches.append(f"decode(skip_special={skip}) {line[:50]!r}: "
                                      f"{tok.decode(want, skip_special=skip)!r} != {expected!r}")
            if tok.decode_bytes(want) != ref.detokenize(want, remove_special=False, unparse_special=True):
                mismatches.append(f"decode_bytes {line[:50]!r}")
    for raw in invalid_utf8_lines:
        if aborts_llama_cpp(raw):
            continue
        for add_special, parse_special in ((False, False), (True, True)):
            compared += 1
            want = ref.tokenize(raw, add_special, parse_special)
            got = tok.encode(raw, add_special=add_special, parse_special=parse_special)
            if got != want:
                mismatches.append(f"invalid UTF-8 {raw[:40]!r}: ours {got[:20]}, llama.cpp {want[:20]}")
    return compared, mismatches


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")   # llama.cpp warns too
@pytest.mark.parametrize("name", sorted(WHITESPACE_MODELS))
def test_whitespace_model_matches_llama_cpp(fixtures, tmp_path, sample, invalid_utf8_lines, name):
    path = copy_gguf(fixture_file(fixtures, BASE), tmp_path / f"{name}.gguf", WHITESPACE_MODELS[name])
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        tok = toksmith.load(path)
        assert tok.vocab_size == ref.n_tokens
        compared, mismatches = compare(tok, ref, sample, invalid_utf8_lines)
    finally:
        ref.close()
    report(f"tokenizer.ggml.model='whitespace' ({name}) on the GPT-2 vocabulary vs llama.cpp: "
           f"{len(sample)} lines x {len(FLAGS)} flag pairs + invalid UTF-8 lines = {compared} "
           f"comparisons (decode x2 and decode_bytes with parse_special), {len(mismatches)} mismatches")
    fail_on(mismatches)


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
    mismatches = []
    with ReferenceWorker() as worker:
        answer, want = worker.tokenize("llama.cpp", path, [
            (line.encode("utf-8"), {"add_special": a, "parse_special": p}) for line, a, p, _ in requests])
        assert answer == "ok", "llama.cpp died on a text toksmith encodes"
        mismatches += [f"({a}, {p}) {line[:50]!r}\n  ours {ids[:20]}\n  llama.cpp {w[:20]}"
                       for (line, a, p, ids), w in zip(requests, want) if ids != w]
        # One child per refused text (the first 40): each must die in llama.cpp's tokenizer.
        for line, a, p in refused[:40]:
            answer, _ = worker.tokenize("llama.cpp", path, [(line.encode("utf-8"),
                                                             {"add_special": a, "parse_special": p})])
            if answer != "died tokenizing":
                mismatches.append(f"toksmith refused {line[:50]!r} ({a}, {p}) but llama.cpp answered {answer!r}")
    report(f"tokenizer.ggml.pre='whitespace' under model 'gpt2' vs llama.cpp: {len(requests)} texts "
           f"encoded and compared, {len(refused)} refused ({min(len(refused), 40)} seen aborting "
           f"llama.cpp), {len(mismatches)} mismatches")
    fail_on(mismatches)
