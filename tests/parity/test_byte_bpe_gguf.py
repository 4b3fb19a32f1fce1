"""Byte-level BPE GGUF vocabularies against llama.cpp itself (tests/llama_cpp_reference.py).

- llama.cpp's golden ``.inp``/``.out`` files of every byte-level fixture GGUF (and the
  qwen35 pair, read from the qwen2 vocabulary with the pre-tokenizer forced to qwen35);
- every corpus line for each byte-level fixture GGUF, with a special-token text spliced
  into a seeded quarter of the lines, with (add_special, parse_special) = (False, False)
  and (True, True), through encode and encode_batch; the invalid UTF-8 lines as bytes;
- decode of llama.cpp's ids with both skip_special values against llama_detokenize, and
  decode_bytes against llama_detokenize's raw bytes.

decode(skip_special=False) is llama_detokenize(remove_special=False, unparse_special=True)
and decode(skip_special=True) is llama_detokenize(remove_special=True, unparse_special=False),
read as UTF-8 with errors="replace".
"""
from __future__ import annotations

import random

import pytest

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import report
from tests.gguf_copy import copy_gguf
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import (BYTE_LEVEL_GGUFS, compare_corpora, compare_decodes, compare_encodes,
                                            compare_golden, gguf_path, golden_cases, llama_cpp_survives,
                                            special_texts_of)

FLAGS = ((False, False), (True, True))   # (add_special, parse_special)


@pytest.mark.parametrize("name", BYTE_LEVEL_GGUFS)
def test_llama_cpp_golden_files(fixtures, name):
    cases = golden_cases(fixtures, f"gguf/ggml-vocab-{name}.gguf")
    assert len(cases) == 46
    tok = toksmith.load(gguf_path(fixtures, name))
    check = Comparison(f"ggml-vocab-{name}.gguf golden .inp/.out (46 texts, encode and encode_batch)",
                       against="llama.cpp")
    compare_golden(check, tok, cases, add_special=False, parse_special=False)
    check.finish(at_least=2 * 46)


def test_qwen35_golden_file_with_forced_pre(fixtures, tmp_path):
    """The qwen35 pair goes with the qwen2 vocabulary read with pre="qwen35"."""
    cases = golden_cases(fixtures, "gguf/ggml-vocab-qwen35.gguf")   # no GGUF of its own: .inp/.out only
    assert len(cases) == 50
    tok = toksmith.load(gguf_path(fixtures, "qwen2"), pre="qwen35")
    with Comparison("ggml-vocab-qwen35.gguf golden .inp/.out (qwen2 vocabulary, pre=qwen35; encode)",
                    against="llama.cpp") as check:
        check.all([text for text, _ in cases], ours=[tok.encode(text, add_special=False) for text, _ in cases],
                  theirs=[want for _, want in cases])
    # pre= is really applied: on combining marks qwen35 (letters with \p{M}) and qwen2 differ,
    # and each matches llama.cpp reading a copy of the file with that pre name.
    copy = copy_gguf(gguf_path(fixtures, "qwen2"), tmp_path / "qwen35.gguf", {"tokenizer.ggml.pre": "qwen35"})
    qwen35_ref = llama_cpp_reference.LlamaCppVocab(copy)
    qwen2_ref = llama_cpp_reference.load_vocab(gguf_path(fixtures, "qwen2"))
    plain = toksmith.load(gguf_path(fixtures, "qwen2"))
    differ = 0
    try:
        for text in ("ภาษาไทย สวัสดีครับ", "مَرْحَبًا", "नमस्ते दुनिया", "cafe\u0301 de\u0301ja\u0300"):
            forced, default = tok.encode(text, add_special=False), plain.encode(text, add_special=False)
            assert forced == qwen35_ref.tokenize(text.encode(), False, False)
            assert default == qwen2_ref.tokenize(text.encode(), False, False)
            differ += forced != default
    finally:
        qwen35_ref.close()
    assert differ, "no text told qwen35 from qwen2: the test would not see pre= ignored"


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")   # llama.cpp warns too
@pytest.mark.parametrize("name", BYTE_LEVEL_GGUFS)
def test_corpora_match_llama_cpp(fixtures, corpus_lines, invalid_utf8_lines, name):
    path = gguf_path(fixtures, name)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    assert tok.vocab_size == ref.n_tokens
    specials = special_texts_of(path)
    check = Comparison(f"ggml-vocab-{name}.gguf every corpus line (a seeded quarter with a special text spliced "
                       f"in) and the invalid UTF-8 lines, (add_special, parse_special) = (False, False) and "
                       f"(True, True) (encode, encode_batch; decode x2 and decode_bytes of llama.cpp's ids "
                       f"with parse_special)", against="llama.cpp")
    spliced_count = compare_corpora(check, tok, ref, corpus_lines, specials, flags=FLAGS)
    # one invalid UTF-8 line (F4 90 80 80) aborts llama.cpp; today 1 left out
    raws = llama_cpp_survives(invalid_utf8_lines, at_most=1)
    compare_encodes(check, tok, ref, raws, flags=FLAGS, decode=False, label="invalid UTF-8")
    report(f"  ggml-vocab-{name}.gguf: {spliced_count} lines with a special text spliced in")
    check.finish(at_least=len(raws))


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe"])
def test_random_invalid_utf8_matches_llama_cpp(fixtures, name):
    """Seeded random byte strings heavy in broken sequences (llama.cpp decodes each
    structurally and makes every byte that starts no sequence U+FFFD)."""
    from tests.unit.test_utf8_repair import random_bytes
    path = gguf_path(fixtures, name)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    texts = llama_cpp_survives(random_bytes(3, 6000), at_most=8)   # today 5 left out
    with Comparison(f"ggml-vocab-{name}.gguf random invalid UTF-8 (encode_batch)", against="llama.cpp") as check:
        check.all(texts, ours=tok.encode_batch(texts, add_special=False),
                  theirs=[ref.tokenize(raw, False, False) for raw in texts])


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe"])
def test_random_id_lists_decode_like_detokenize(fixtures, name):
    """Seeded random id lists, weighted to single-byte tokens (partial UTF-8) and specials."""
    path = gguf_path(fixtures, name)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    n = tok.vocab_size
    pool = list(range(256)) + list(range(n - 300, n))
    rnd = random.Random(11)
    id_lists = [[rnd.choice(pool) if rnd.random() < 0.7 else rnd.randrange(n) for _ in range(rnd.randint(0, 10))]
                for _ in range(3000)]
    with Comparison(f"ggml-vocab-{name}.gguf random id lists (decode x2, decode_bytes)",
                    against="llama.cpp (llama_detokenize)") as check:
        compare_decodes(check, tok, ref, id_lists)
