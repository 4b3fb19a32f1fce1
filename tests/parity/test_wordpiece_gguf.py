"""GGUF "bert" (llama.cpp WPM) vocabularies against llama.cpp itself (tests/llama_cpp_reference.py).

- llama.cpp's golden ``ggml-vocab-bert-bge.gguf.inp``/``.out`` (46 cases);
- every corpus line, a seeded quarter with a special-token text spliced in, with all four
  (add_special, parse_special) combinations through encode and encode_batch, and decode of
  llama.cpp's ids with both skip_special values and decode_bytes against llama_detokenize,
  for the BGE file and for copies of it with the normalizer options and add_space_prefix
  switched (the `gguf` writer changes the keys; the vocabulary stays the real one);
- the invalid UTF-8 lines and seeded random broken byte strings as bytes; seeded random
  strings over the whole code space;
- texts aimed at each of llama.cpp's preprocessing rules (controls, U+FFFD, accents, CJK,
  ASCII and non-ASCII symbols, words longer than HF's 100-character limit);
- vocabularies with tokens the converter never writes (tests/parity/llama_cpp_compare.py
  holds the comparisons);
- seeded random id lists decoded, and stream_decoder in several chunkings, against
  llama_detokenize.
"""
from __future__ import annotations

import itertools
import random

import pytest

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import fixture_file, report
from tests.gguf_copy import copy_gguf, copy_gguf_with_tokens
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import (compare_corpora, compare_decodes, compare_encodes, compare_golden,
                                            golden_cases, llama_cpp_survives, special_texts_of)

BGE = "gguf/ggml-vocab-bert-bge.gguf"
FLAGS = list(itertools.product((False, True), repeat=2))   # (add_special, parse_special)
# Copies of the BGE file with llama.cpp's WPM options changed (None: the file as it is).
VARIANTS = {
    "bge": {},
    "cased": {"tokenizer.ggml.normalizer.lowercase": False},
    "lowercase-keep-accents": {"tokenizer.ggml.normalizer.strip_accents": False},
    "strip-accents-only": {"tokenizer.ggml.normalizer.lowercase": False,
                           "tokenizer.ggml.normalizer.strip_accents": True},
    "space-prefix-no-bos-flag": {"tokenizer.ggml.add_space_prefix": True, "tokenizer.ggml.add_bos_token": False,
                                 "tokenizer.ggml.add_eos_token": True, "tokenizer.ggml.eos_token_id": 102},
}
# Each of llama.cpp's preprocess rules: \p{C} and U+0000/U+FFFD dropped, accents (one-to-one
# NFD), CJK and ASCII-symbol isolation, non-ASCII symbols kept in words, Unicode whitespace,
# long words (llama.cpp has no max_input_chars_per_word), "##" and "▁" typed in the text.
PROBES = [
    "a\x00b c\ufffdd e\u200bf g\u00adh", "\x07bell\x1f unit\x7fdel", "Ünïcödé ÀÉÎÕÜ ǅ ǈ Ω ﬁ ℌ Ⅻ",
    "café naïve coöperate résumé", "中文字符和日本語のテキスト、한국어", "𠀀𪜀𫝀𫠠𬺰 豈 丽",
    "a+b=c <tag> $5 ^caret `tick` |pipe| ~tilde", "€100 ©2024 ™ → ∑ ≠ ☃ 😀 👍🏽",
    "tab\tnew\nline\rcr\u00a0nbsp\u2003em\u3000ideo\u2028ls", "x" * 150 + " " + "anti" * 40,
    "##ing ▁hello ▁ ▁▁ a▁b", "Hello, World! It's a test... Don't 'quote' \"double\"",
    "ǰ̌ Å Å ﬀ İstanbul ı ΣΑΣ Ꙃ", "",  "   ", "ab\u0301\u0327c",
]


def bge_variant(fixtures, tmp_path_factory, name: str):
    path = fixture_file(fixtures, BGE)
    if not VARIANTS[name]:
        return path
    return copy_gguf(path, tmp_path_factory.mktemp("wpm") / f"bge-{name}.gguf", VARIANTS[name])


def test_llama_cpp_golden_file(fixtures):
    cases = golden_cases(fixtures, BGE)
    assert len(cases) == 46
    tok = toksmith.load(fixture_file(fixtures, BGE))
    check = Comparison("ggml-vocab-bert-bge.gguf golden .inp/.out (46 texts, encode and encode_batch)",
                       against="llama.cpp")
    compare_golden(check, tok, cases, add_special=False)
    check.finish(at_least=2 * 46)


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")   # llama.cpp warns too
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_corpora_match_llama_cpp(fixtures, tmp_path_factory, corpus_lines, invalid_utf8_lines, variant):
    path = bge_variant(fixtures, tmp_path_factory, variant)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.LlamaCppVocab(path) if VARIANTS[variant] else llama_cpp_reference.load_vocab(path)
    check = Comparison(f"ggml-vocab-bert-bge.gguf ({variant}) every corpus line (a seeded quarter with a special "
                       f"text spliced in), the probes and the invalid UTF-8 lines x 4 flag combinations (encode, "
                       f"encode_batch; decode x2 and decode_bytes of llama.cpp's ids with parse_special)",
                       against="llama.cpp")
    try:
        assert tok.vocab_size == ref.n_tokens
        specials = special_texts_of(path)
        spliced_count = compare_corpora(check, tok, ref, corpus_lines, specials, flags=FLAGS)
        # one invalid UTF-8 line (F4 90 80 80) aborts llama.cpp; today 1 left out
        probes = PROBES + llama_cpp_survives(invalid_utf8_lines, at_most=1)
        compare_encodes(check, tok, ref, probes, flags=FLAGS, label="probe")
    finally:
        if VARIANTS[variant]:
            ref.close()
    report(f"  ggml-vocab-bert-bge.gguf ({variant}): {spliced_count} lines with a special text spliced in")
    check.finish(at_least=len(probes))


def test_random_invalid_utf8_matches_llama_cpp(fixtures):
    """Seeded random byte strings heavy in broken sequences: llama.cpp makes each byte that
    starts no sequence U+FFFD, which WPM drops; a decoded surrogate is \\p{C}, dropped too."""
    from tests.unit.test_utf8_repair import random_bytes
    path = fixture_file(fixtures, BGE)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    texts = llama_cpp_survives(random_bytes(5, 6000), at_most=9)   # today 6 left out
    with Comparison("ggml-vocab-bert-bge.gguf random invalid UTF-8 (encode, encode_batch)",
                    against="llama.cpp") as check:
        compare_encodes(check, tok, ref, texts, flags=[(False, False)])


def random_unicode(seed: int, count: int) -> list[str]:
    """Seeded random strings over the whole code space (surrogates excepted), weighted to the
    ranges where llama.cpp's WPM tables decide something: controls and format characters,
    letters with canonical decompositions, combining marks, cased letters, punctuation and
    symbols, CJK blocks, private use, unassigned code points, astral planes."""
    rnd = random.Random(seed)
    ranges = [(0x00, 0x7F), (0x80, 0x24F), (0x300, 0x36F), (0x370, 0x52F), (0x1E00, 0x1FFF),
              (0x2000, 0x2BFF), (0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3),
              (0xE000, 0xF8FF), (0xF900, 0xFFFF), (0x10000, 0x1FFFF), (0x20000, 0x2FA1F), (0x30000, 0x10FFFF)]
    out = []
    for _ in range(count):
        chars = []
        for _ in range(rnd.randint(0, 12)):
            lo, hi = rnd.choice(ranges)
            cp = rnd.randint(lo, hi)
            chars.append(" " if 0xD800 <= cp < 0xE000 else chr(cp))
        out.append("".join(chars))
    return out


@pytest.mark.parametrize("variant", ["bge", "cased", "lowercase-keep-accents"])
def test_random_unicode_matches_llama_cpp(fixtures, tmp_path_factory, variant):
    path = bge_variant(fixtures, tmp_path_factory, variant)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        with Comparison(f"ggml-vocab-bert-bge.gguf ({variant}) random Unicode strings (encode, encode_batch)",
                        against="llama.cpp") as check:
            compare_encodes(check, tok, ref, random_unicode(7, 20000), flags=[(False, False)])
    finally:
        ref.close()


def test_random_id_lists_decode_like_detokenize(fixtures):
    """Seeded random id lists, heavy in specials ([CLS], [SEP], [PAD], [unusedN]) and punctuation
    (llama_detokenize's clean_spaces passes work on " ." " 's" ...)."""
    path = fixture_file(fixtures, BGE)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    n = tok.vocab_size
    # specials and unused, "▁'", "▁s", "▁t", "▁.", "▁,", "▁?", "▁!", "s", "t", "re", "ll"
    pool = list(range(0, 110)) + [tok.piece_to_id(p) for p in
                                  ("▁'", "▁s", "▁t", "▁m", "▁d", "▁re", "▁ve", "▁ll", "▁.", "▁,", "▁?", "▁!",
                                   "s", "t", "re", "ve", "ll", "▁the", "▁a")]
    assert None not in pool
    rnd = random.Random(23)
    cases = 3000
    id_lists = [[rnd.choice(pool) if rnd.random() < 0.7 else rnd.randrange(n) for _ in range(rnd.randint(0, 10))]
                for _ in range(cases)]
    with Comparison("ggml-vocab-bert-bge.gguf random id lists (decode x2, decode_bytes)",
                    against="llama.cpp (llama_detokenize)") as check:
        compare_decodes(check, tok, ref, id_lists)


def test_odd_vocabularies_match_llama_cpp(fixtures, tmp_path):
    """Tokens the converter never writes but a file may hold, each decided by llama.cpp's greedy
    match over the whole vocabulary: a lone "▁" (a word may start with it and go on with
    continuation pieces), a continuation spelled with "▁" inside, a USER_DEFINED text (split
    out before the session), a CONTROL one; and no unknown-id key (the default 100 holds)."""
    src = fixture_file(fixtures, BGE)
    extra = ["▁", "zq▁x", "<user>", "<ctl>", "qqqqqqqqqq"]
    path = copy_gguf_with_tokens(src, tmp_path / "odd.gguf", extra, [1, 1, 4, 3, 1],
                                 {"tokenizer.ggml.unknown_token_id": None})
    tok = toksmith.load(path)
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        texts = ["zq▁x zqzq▁x", "ab<user>cd <ctl> x", "qqqqqqqqqqqqqqqqqqqqqqq", "▁▁ ▁ ▁word", "ü▁x",
                 "<user><user> [CLS] [SEP][MASK]"] + PROBES
        with Comparison("copy of ggml-vocab-bert-bge.gguf with odd tokens x 4 flag combinations (encode, "
                        "encode_batch; decode x2 and decode_bytes with parse_special)", against="llama.cpp") as check:
            compare_encodes(check, tok, ref, texts, flags=FLAGS)
    finally:
        ref.close()


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
def test_stream_matches_llama_detokenize(fixtures, corpus_lines, invalid_utf8_lines):
    """stream_decoder() in chunks of 1, 2, 3, 7 ids and two random chunkings, against
    llama_detokenize (WPM runs its clean_spaces passes, which hold text back between chunks)."""
    from tests.conftest import multilingual_sample
    from tests.parity.stream_compare import PASS_BYTES, compare_streams, pass_texts
    path = fixture_file(fixtures, BGE)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    rnd = random.Random(3)
    inputs = [line.encode("utf-8") for line in multilingual_sample(corpus_lines, 60) + pass_texts() + PROBES]
    inputs += llama_cpp_survives(invalid_utf8_lines, at_most=1)   # today 1 left out (F4 90 80 80)
    patterned = sum(bool(PASS_BYTES.search(raw)) for raw in inputs)
    check = Comparison(f"ggml-vocab-bert-bge.gguf stream_decoder, {len(inputs)} texts ({patterned} with a pattern "
                       f"the clean-up passes rewrite) x 2 skip_special x 6 chunkings",
                       against="llama.cpp (llama_detokenize)")
    for raw in inputs:
        compare_streams(check, tok, ref, ref.tokenize(raw, True, True), rnd)
    check.finish(at_least=12 * len(inputs))
