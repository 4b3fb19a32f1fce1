"""Conversions between references whose Unicode tables differ (issue 30, items 1 + 3).

llama.cpp classifies code points with its own (older) unicode-data.cpp; tiktoken and
tokenizers with Unicode 16 (regex-syntax 0.8.11 / Oniguruma). Same regex rules, different
sets: U+1C89 is a letter for tokenizers and tiktoken, no letter for llama.cpp. Each route is
checked on the code points where the tables differ (toksmith.writers.class_tables picks the
inputs; the expected ids come from the references), in the contexts the splitters look at:
alone, between letters, before and after an apostrophe, between digits, after a space.

- GGUF (byte-level) -> tokenizer.json: exact (the classes are spelled as llama.cpp's sets):
  llama.cpp on the GGUF vs tokenizers on the written file, 0 mismatches.
- tokenizer.json / rank file -> GGUF, GGUF -> rank file: refused by default; the file written
  with exact=False is read otherwise by the target's reference on those texts.
"""
from __future__ import annotations

import warnings

import pytest
import tiktoken
import tokenizers

import toksmith
from tests import llama_cpp_reference, tiktoken_reference
from tests.conftest import fixture_file, report
from tests.gguf_copy import copy_gguf
from tests.parity.comparison import Comparison
from tests.parity.hf_reference import gpt2_folder_reference
from tests.parity.pre_names import one_name_per_regex_list
from toksmith.errors import InexactConversionWarning, UnsupportedConversionError
from toksmith.writers.class_tables import CATEGORY_CLASSES, SPACE_CLASS, Reference, class_difference

CONTEXTS = ("{}", "a{}b", "{}'s", "x'{}", "1{}2", " {}x", "{}{}")
# Every 211th code point besides: the places where the tables agree stay agreed.
SPREAD_STEP = 211


def differing_code_points(other: Reference) -> list[int]:
    """Every code point some class llama.cpp's splitters read puts otherwise than `other`."""
    out: set[int] = set()
    for name in CATEGORY_CLASSES + (SPACE_CLASS,):
        try:
            only_llama, only_other = class_difference(name, other)
        except ValueError:   # tiktoken has no \p{P} / \p{S} table: its patterns read none
            continue
        for lo, hi in only_llama + only_other:
            out.update(range(lo, hi + 1))
    return sorted(out)


def probe_texts(other: Reference) -> list[str]:
    spread = [cp for cp in range(0x80, 0x110000, SPREAD_STEP) if not 0xD800 <= cp < 0xE000]
    cps = differing_code_points(other) + spread
    return [context.replace("{}", chr(cp)) for context in CONTEXTS for cp in cps]


def llama_cpp_ids(vocab, texts: list[str]) -> list[list[int]]:
    return [vocab.tokenize(text.encode(), add_special=False, parse_special=False) for text in texts]


def assert_reason_shown(label: str, against: str, texts: list[str], got: list, want: list) -> None:
    """A file written with exact=False is read otherwise by its reference on some probes (the
    refusal's reason): reported with the comparisons made, and at least one must differ."""
    check = Comparison(label, against=against)
    check.all(texts, ours=got, theirs=want)
    report(f"{check.report_line()} (expected: the refusal's reason)")
    assert check.mismatch_count > 0, f"{label}: no probe differs, the refusal has no reason"


def save_approximately(tok, path) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok.save(path, exact=False)
    messages = [str(w.message) for w in caught if issubclass(w.category, InexactConversionWarning)]
    assert len(messages) == 1, messages
    return messages[0]


def test_differing_code_points_are_there():
    """The premise: the tables differ (4302 letters, 80 numbers, ... in Unicode 16 only)."""
    assert 0x1C89 in differing_code_points(Reference.ONIGURUMA)
    assert 0x1C89 in differing_code_points(Reference.TIKTOKEN)


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe", "qwen2", "deepseek-coder"])
def test_gguf_to_tokenizer_json_exact_on_table_differences(fixtures, tmp_path, name):
    gguf = fixture_file(fixtures, f"gguf/ggml-vocab-{name}.gguf")
    path = tmp_path / "tokenizer.json"
    toksmith.load(gguf).save(path)        # exact: no exact=False needed
    written = tokenizers.Tokenizer.from_file(str(path))
    vocab = llama_cpp_reference.load_vocab(gguf)
    texts = probe_texts(Reference.ONIGURUMA)
    want = llama_cpp_ids(vocab, texts)
    with Comparison(f"GGUF {name} -> tokenizer.json, Unicode-table probes, ids by tokenizers on the written file",
                    against="llama.cpp on the GGUF") as check:
        check.all(texts, ours=[e.ids for e in written.encode_batch(texts, add_special_tokens=False)], theirs=want)
    # toksmith reads the rewritten patterns as llama.cpp does
    with Comparison(f"GGUF {name} -> tokenizer.json, Unicode-table probes, toksmith on the written file",
                    against="llama.cpp on the GGUF") as check:
        check.all(texts, ours=toksmith.load(path).encode_batch(texts, add_special=False), theirs=want)


def test_gguf_to_tokenizer_json_and_back_stays_exact(fixtures, tmp_path):
    """The written tokenizer.json's spelled classes are llama.cpp's: it converts back to a GGUF
    by default, and llama.cpp reads that GGUF as the original on the probes."""
    gguf = fixture_file(fixtures, "gguf/ggml-vocab-gpt-2.gguf")
    toksmith.load(gguf).save(tmp_path / "tokenizer.json")
    toksmith.load(tmp_path / "tokenizer.json").save(tmp_path / "back.gguf")
    texts = probe_texts(Reference.ONIGURUMA)
    want = llama_cpp_ids(llama_cpp_reference.load_vocab(gguf), texts)
    with Comparison("GGUF gpt-2 -> tokenizer.json -> GGUF, Unicode-table probes, llama.cpp on the written file",
                    against="llama.cpp on the original") as check:
        check.all(texts, ours=llama_cpp_ids(llama_cpp_reference.load_vocab(tmp_path / "back.gguf"), texts), theirs=want)


def test_tokenizer_json_to_gguf_refused_where_tables_differ(fixtures, tmp_path):
    tok = toksmith.load(fixture_file(fixtures, "hf/gpt2/vocab.json").parent)
    with pytest.raises(UnsupportedConversionError, match=r"\\p\{L\} differs .*U\+1C89"):
        tok.save(tmp_path / "gpt2.gguf")
    note = save_approximately(tok, tmp_path / "gpt2.gguf")
    assert "\\p{L}" in note and "\\p{N}" in note
    texts = probe_texts(Reference.ONIGURUMA)
    want = [e.ids for e in gpt2_folder_reference(fixtures).encode_batch(texts, add_special_tokens=False)]
    got = llama_cpp_ids(llama_cpp_reference.load_vocab(tmp_path / "gpt2.gguf"), texts)
    assert_reason_shown("tokenizer.json gpt2 -> GGUF (exact=False), llama.cpp on the written file",
                        "tokenizers on the source", texts, got, want)


def test_rank_file_to_gguf_refused_where_tables_differ(fixtures, tmp_path):
    tok = toksmith.load(fixture_file(fixtures, "tiktoken/r50k_base.tiktoken"))
    with pytest.raises(UnsupportedConversionError, match=r"\\p\{L\} differs .*tiktoken"):
        tok.save(tmp_path / "r50k.gguf")
    save_approximately(tok, tmp_path / "r50k.gguf")
    texts = probe_texts(Reference.TIKTOKEN)
    enc = tiktoken_reference.encoding("r50k_base", fixtures)
    want = [enc.encode_ordinary(t) for t in texts]
    got = llama_cpp_ids(llama_cpp_reference.load_vocab(tmp_path / "r50k.gguf"), texts)
    assert_reason_shown("r50k_base -> GGUF (exact=False), llama.cpp on the written file",
                        f"tiktoken {tiktoken.__version__} on the rank file", texts, got, want)


def test_gguf_to_rank_file_refused_where_tables_differ(fixtures, tmp_path):
    gguf = fixture_file(fixtures, "gguf/ggml-vocab-gpt-2.gguf")
    tok = toksmith.load(gguf)
    with pytest.raises(UnsupportedConversionError, match=r"\\p\{L\} differs .*tiktoken"):
        tok.save(tmp_path / "gpt2.tiktoken")
    save_approximately(tok, tmp_path / "gpt2.tiktoken")
    # The written ranks are r50k_base's, which tiktoken reads with r50k's pattern and tables.
    ranks = tiktoken.load.load_tiktoken_bpe(str(tmp_path / "gpt2.tiktoken"))
    r50k = tiktoken_reference.encoding("r50k_base", fixtures)
    enc = tiktoken.Encoding("written", pat_str=r50k._pat_str, mergeable_ranks=ranks, special_tokens={})
    texts = probe_texts(Reference.TIKTOKEN)
    want = llama_cpp_ids(llama_cpp_reference.load_vocab(gguf), texts)
    got = [enc.encode_ordinary(t) for t in texts]
    assert_reason_shown("GGUF gpt-2 -> rank file (exact=False), tiktoken on the written file",
                        "llama.cpp on the GGUF", texts, got, want)


def packed_probes(other: Reference, step: int) -> list[str]:
    """Every `step`-th differing code point, all contexts in one text (keeps llama.cpp's
    std::regex splitters to seconds)."""
    return [" ".join(context.replace("{}", chr(cp)) for context in CONTEXTS)
            for cp in differing_code_points(other)[::step]]


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
@pytest.mark.parametrize("pre", one_name_per_regex_list())
def test_other_pre_names_to_tokenizer_json_exact_on_table_differences(fixtures, tmp_path, pre):
    """Every other regex list the writer accepts, on the GPT-2 vocabulary under that pre name."""
    path = copy_gguf(fixture_file(fixtures, "gguf/ggml-vocab-gpt-2.gguf"), tmp_path / f"{pre}.gguf",
                     {"tokenizer.ggml.pre": pre})
    toksmith.load(path).save(tmp_path / "tokenizer.json")
    written = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    texts = packed_probes(Reference.ONIGURUMA, step=4)
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        want = llama_cpp_ids(ref, texts)
    finally:
        ref.close()
    with Comparison(f"GGUF gpt-2 vocabulary as {pre!r} -> tokenizer.json, Unicode-table probes, ids by tokenizers "
                    f"on the written file", against="llama.cpp on the GGUF") as check:
        check.all(texts, ours=[e.ids for e in written.encode_batch(texts, add_special_tokens=False)], theirs=want)
