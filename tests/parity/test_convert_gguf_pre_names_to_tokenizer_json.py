"""GGUF -> tokenizer.json for every llama.cpp byte-level pre-tokenizer the writer accepts.

writers/split_equivalence.ONIGURUMA_VERIFIED_PRE_TYPES lists the llama.cpp pre types whose
regexes, written as tokenizers Split steps, cut text as llama.cpp's own splitter does. The
fixture GGUFs cover six of its regex lists (test_convert_gguf_to_tokenizer_json.py); for every
other regex list, a copy of the GPT-2 fixture GGUF under one pre name of that list is written
as tokenizer.json and loaded by tokenizers 0.23.3, then compared:
- with toksmith on the GGUF on every distinct corpus line, special texts spliced: a comparison
  of toksmith with itself (reported "vs toksmith on the GGUF (itself ...)"); toksmith's
  splitter of each pre name is compared with llama.cpp in test_llama_cpp_pre_names.py;
- with llama.cpp itself on the multilingual sample only (tricky_strings.txt and the first 60
  lines of each other corpus, about 930 lines): the full corpora through llama.cpp's
  std::regex splitters take minutes per name, too long for CI (the closing note of issue 11
  has that run).
add_special is off on both sides (the GPT-2 vocabulary adds nothing); parse_special is on
(tokenizers always splits out its special added tokens).
The pre types measured to cut otherwise are refused (test_unverified_pre_names_are_refused).
"""
from __future__ import annotations

import pytest
import tokenizers

import toksmith
from tests import llama_cpp_reference
from tests.conftest import fixture_file, multilingual_sample
from tests.gguf_copy import copy_gguf
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import special_texts_of, spliced
from tests.parity.pre_names import one_name_per_regex_list

BASE = "gguf/ggml-vocab-gpt-2.gguf"
UNVERIFIED = ("deepseek-llm", "youtu", "tiny_aya", "kimi-k2", "afmoe")


@pytest.fixture(scope="module")
def texts(fixtures, corpus_lines) -> list[str]:
    specials = special_texts_of(fixture_file(fixtures, BASE))
    out: list[str] = []
    for corpus, lines in corpus_lines.items():
        out += spliced(lines, specials, seed=len(corpus))
    return out


def test_every_verified_regex_list_is_compared():
    names = one_name_per_regex_list()
    assert len(names) >= 15
    assert not set(names) & set(UNVERIFIED)


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
@pytest.mark.parametrize("pre", one_name_per_regex_list())
def test_pre_name_written_as_tokenizer_json(fixtures, corpus_lines, tmp_path, texts, pre):
    path = copy_gguf(fixture_file(fixtures, BASE), tmp_path / f"{pre}.gguf", {"tokenizer.ggml.pre": pre})
    tok = toksmith.load(path)
    written = tmp_path / "tokenizer.json"
    tok.save(written)
    hf = tokenizers.Tokenizer.from_file(str(written))
    distinct = list(dict.fromkeys(texts))
    label = f"convert ggml-vocab-gpt-2.gguf with pre={pre!r} -> tokenizer.json, ids by tokenizers on the written file"
    with Comparison(f"{label} (distinct corpus lines)",
                    against="toksmith on the GGUF (itself; its splitter vs llama.cpp: test_llama_cpp_pre_names.py)") as own:
        own.all(distinct, ours=[e.ids for e in hf.encode_batch(distinct, add_special_tokens=False)],
                theirs=tok.encode_batch(distinct, add_special=False, parse_special=True))
    sample = multilingual_sample(corpus_lines, 60)
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        with Comparison(f"{label} (multilingual sample: tricky_strings.txt + 60 lines of each corpus)",
                        against="llama.cpp on the GGUF") as check:
            check.all(sample, ours=[e.ids for e in hf.encode_batch(sample, add_special_tokens=False)],
                      theirs=[ref.tokenize(text.encode("utf-8"), False, True) for text in sample])
    finally:
        ref.close()


@pytest.mark.parametrize("pre", UNVERIFIED)
def test_unverified_pre_names_are_refused(fixtures, tmp_path, pre):
    path = copy_gguf(fixture_file(fixtures, BASE), tmp_path / f"{pre}.gguf", {"tokenizer.ggml.pre": pre})
    with pytest.raises(toksmith.UnsupportedConversionError, match="not verified to cut as llama.cpp"):
        toksmith.load(path).save(tmp_path / "tokenizer.json")
    assert not (tmp_path / "tokenizer.json").exists()
