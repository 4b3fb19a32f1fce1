"""Every ``tokenizer.ggml.pre`` name llama.cpp accepts, against llama.cpp itself.

For each name, a copy of the GPT-2 fixture GGUF with ``tokenizer.ggml.pre`` set to it
(written with the `gguf` package, tests/gguf_copy.py) must give llama.cpp's ids on a
multilingual sample: every line of tricky_strings.txt and the first lines of every
corpus (60 each) and the long runs of tests.conftest.LONG_RUNS, with add_special and
parse_special both off and both on: a sample, not every corpus line (llama.cpp took 27-94 s
per name and flag pair on the 159,440 corpus lines here, hours for the 90 names; the fixture
GGUFs' own pre names are compared on every line in test_byte_bpe_gguf.py). Likewise a copy
whose ``tokenizer.ggml.model`` is ``gemma4``. A name llama.cpp refuses is refused by toksmith too.
"""
from __future__ import annotations

import pytest

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import LONG_RUNS, fixture_file, multilingual_sample
from tests.gguf_copy import copy_gguf
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import compare_encodes
from toksmith.pretokenizers.llama_cpp import PRE_NAMES

BASE = "gguf/ggml-vocab-gpt-2.gguf"
LINES_PER_CORPUS = 60


@pytest.fixture(scope="module")
def sample(corpus_lines) -> list[str]:
    return multilingual_sample(corpus_lines, LINES_PER_CORPUS) + LONG_RUNS


SAMPLE = (f"sample of tricky_strings.txt, the first {LINES_PER_CORPUS} lines of each other corpus and "
          f"{len(LONG_RUNS)} long runs")


def compare(check: Comparison, tok, ref, lines) -> None:
    """encode_batch of each line, add_special and parse_special both off and both on."""
    compare_encodes(check, tok, ref, lines, flags=((False, False), (True, True)), decode=False, single=False)


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
        with Comparison(f"pre={pre!r} on the GPT-2 vocabulary, {SAMPLE} ({len(sample)} lines) x 2 flag pairs "
                        f"(encode_batch)", against="llama.cpp") as check:
            compare(check, tok, ref, sample)
    finally:
        ref.close()


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
def test_gemma4_model_matches_llama_cpp(fixtures, tmp_path, sample):
    path = copy_gguf(fixture_file(fixtures, BASE), tmp_path / "gemma4.gguf",
                     {"tokenizer.ggml.model": "gemma4", "tokenizer.ggml.pre": None})
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        tok = toksmith.load(path)
        with Comparison(f"tokenizer.ggml.model='gemma4' on the GPT-2 vocabulary, {SAMPLE} ({len(sample)} lines) "
                        f"x 2 flag pairs (encode_batch)", against="llama.cpp") as check:
            compare(check, tok, ref, sample)
    finally:
        ref.close()


def test_unknown_pre_name_is_refused_like_llama_cpp(fixtures, tmp_path):
    path = copy_gguf(fixture_file(fixtures, BASE), tmp_path / "bad.gguf",
                     {"tokenizer.ggml.pre": "no-such-pre"})
    with pytest.raises(ValueError, match="could not load"):
        llama_cpp_reference.LlamaCppVocab(path)
    with pytest.raises(toksmith.ModelFormatError, match="no-such-pre") as err:
        toksmith.load(path)
    assert "llama3" in str(err.value), "the error lists the known names"
