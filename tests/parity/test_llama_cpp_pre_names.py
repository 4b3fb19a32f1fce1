"""Every ``tokenizer.ggml.pre`` name llama.cpp accepts, against llama.cpp itself.

For each name, a copy of the GPT-2 fixture GGUF with ``tokenizer.ggml.pre`` set to it
(written with the `gguf` package, tests/gguf_copy.py) must give llama.cpp's ids on a
multilingual sample: every line of tricky_strings.txt and the first lines of every
corpus, with add_special and parse_special both off and both on. Likewise a copy whose
``tokenizer.ggml.model`` is ``gemma4``. A name llama.cpp refuses is refused by toksmith too.
"""
from __future__ import annotations

import pytest

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import LONG_RUNS, fixture_file, multilingual_sample, report
from tests.gguf_copy import copy_gguf
from tests.parity.test_spm_bpe_gguf import fail_on
from toksmith.pretokenizers.llama_cpp import PRE_NAMES

BASE = "gguf/ggml-vocab-gpt-2.gguf"
LINES_PER_CORPUS = 60


@pytest.fixture(scope="module")
def sample(corpus_lines) -> list[str]:
    return multilingual_sample(corpus_lines, LINES_PER_CORPUS) + LONG_RUNS


def compare(tok, ref, lines) -> list[str]:
    mismatches = []
    for flags in ((False, False), (True, True)):
        got = tok.encode_batch(lines, add_special=flags[0], parse_special=flags[1])
        for line, ids in zip(lines, got):
            want = ref.tokenize(line.encode("utf-8"), *flags)
            if ids != want:
                mismatches.append(f"{flags} {line[:50]!r}\n  ours {ids[:20]}\n  llama.cpp {want[:20]}")
    return mismatches


# "whitespace": under a gpt2 model llama.cpp aborts the process on every pre-token of two
# characters or more with a space, which most sample lines have; it is compared in a child
# process in test_whitespace_model_gguf.py (with tokenizer.ggml.model "whitespace" too).
COMPARED_PRE_NAMES = sorted(name for name in PRE_NAMES if name != "whitespace")


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
@pytest.mark.parametrize("pre", COMPARED_PRE_NAMES)
def test_pre_name_matches_llama_cpp(fixtures, tmp_path, sample, pre):
    path = copy_gguf(fixture_file(fixtures, BASE), tmp_path / f"{pre}.gguf", {"tokenizer.ggml.pre": pre})
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        tok = toksmith.load(path)
        assert tok.vocab_size == ref.n_tokens
        mismatches = compare(tok, ref, sample)
    finally:
        ref.close()
    report(f"pre={pre!r} on the GPT-2 vocabulary vs llama.cpp: {len(sample)} lines x 2 flag "
           f"combinations, {len(mismatches)} mismatches")
    fail_on(mismatches)


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
def test_gemma4_model_matches_llama_cpp(fixtures, tmp_path, sample):
    path = copy_gguf(fixture_file(fixtures, BASE), tmp_path / "gemma4.gguf",
                     {"tokenizer.ggml.model": "gemma4", "tokenizer.ggml.pre": None})
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        tok = toksmith.load(path)
        mismatches = compare(tok, ref, sample)
    finally:
        ref.close()
    report(f"tokenizer.ggml.model='gemma4' on the GPT-2 vocabulary vs llama.cpp: {len(sample)} "
           f"lines x 2, {len(mismatches)} mismatches")
    fail_on(mismatches)


def test_unknown_pre_name_is_refused_like_llama_cpp(fixtures, tmp_path):
    path = copy_gguf(fixture_file(fixtures, BASE), tmp_path / "bad.gguf",
                     {"tokenizer.ggml.pre": "no-such-pre"})
    with pytest.raises(ValueError, match="could not load"):
        llama_cpp_reference.LlamaCppVocab(path)
    with pytest.raises(toksmith.ModelFormatError, match="no-such-pre") as err:
        toksmith.load(path)
    assert "llama3" in str(err.value), "the error lists the known names"
