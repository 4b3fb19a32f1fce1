"""stream_decoder() of every byte-level fixture GGUF against llama.cpp's llama_detokenize.

For each GGUF of tests/parity/test_byte_bpe_gguf.py (six of them run llama.cpp's clean_spaces
passes in decode, qwen2 and deepseek-coder do not), llama.cpp tokenizes (add_special and
parse_special on) a multilingual sample: every line of tricky_strings.txt, the first lines of
every corpus, the corpus lines that hold a pattern the passes rewrite (" .", " '", ...),
texts made for the passes, and the invalid-UTF-8 strings of tricky_invalid_utf8.bin. Its ids
are fed to the stream in chunks of 1, 2, 3 and 7 ids and in two random chunkings; the
concatenated text must be llama_detokenize's, read as UTF-8 with errors="replace", for
skip_special both ways (remove_special=skip_special, unparse_special=not skip_special).
Then random id lists (single bytes that break UTF-8, the characters the passes look at, the
last 300 ids where the special tokens are, any id) likewise.
"""
from __future__ import annotations

import random
import re

import pytest

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import multilingual_sample, parity_sample
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import BYTE_LEVEL_GGUFS, gguf_path, llama_cpp_survives
from tests.parity.stream_compare import CHUNK_SIZES, PASS_BYTES, compare_streams, pass_texts

LINES_PER_CORPUS = 60
PASS_LINES_PER_CORPUS = 150
# what llama.cpp's clean_spaces passes rewrite: a space before ?!., or an apostrophe
PASS_PATTERN = re.compile(r" [?!.,']")


@pytest.fixture(scope="module")
def sample(corpus_lines) -> list[str]:
    lines = multilingual_sample(corpus_lines, LINES_PER_CORPUS)
    for name, corpus in corpus_lines.items():
        if name != "tricky_strings.txt":
            lines += [line for line in corpus[LINES_PER_CORPUS:] if PASS_PATTERN.search(line)][:PASS_LINES_PER_CORPUS]
    return lines + pass_texts()


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
@pytest.mark.parametrize("name", BYTE_LEVEL_GGUFS)
def test_stream_matches_llama_detokenize(fixtures, sample, invalid_utf8_lines, name):
    path = gguf_path(fixtures, name)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    rnd = random.Random(name)
    inputs = [line.encode("utf-8") for line in sample]
    inputs += llama_cpp_survives(invalid_utf8_lines, at_most=1)   # today 1 left out (F4 90 80 80)
    patterned = sum(bool(PASS_BYTES.search(raw)) for raw in inputs)
    # TOKSMITH_PARITY_SAMPLE shortens the corpora, and with them the lines that hold a pattern
    assert patterned > (1000 if parity_sample() is None else 100), "the sample should give the clean-up passes work"
    check = Comparison(f"ggml-vocab-{name}.gguf stream_decoder of llama.cpp's ids for {len(inputs)} texts "
                       f"({patterned} with a pattern the clean-up passes rewrite) x 2 skip_special x "
                       f"{len(CHUNK_SIZES) + 2} chunkings", against="llama.cpp (llama_detokenize)")
    for raw in inputs:
        compare_streams(check, tok, ref, ref.tokenize(raw, True, True), rnd)
    check.finish(at_least=12 * len(inputs))


@pytest.mark.parametrize("name", BYTE_LEVEL_GGUFS)
def test_random_ids_stream_like_llama_detokenize(fixtures, name):
    path = gguf_path(fixtures, name)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    n = ref.n_tokens
    single = {}
    for i in range(n):
        piece = ref.token_to_piece(i, 0, False)
        if len(piece) == 1:
            single.setdefault(piece[0], i)
    # some vocabularies have no token for bytes UTF-8 never holds (C0, C1, F5-FF)
    high = [single[b] for b in range(0x80, 0x100) if b in single]
    assert len(high) >= 110
    pool = [single[b] for b in b" '.,?!smtdrvelx"] * 3 + high + list(range(n - 300, n))
    rnd = random.Random(5)
    cases = 2000
    check = Comparison(f"ggml-vocab-{name}.gguf stream_decoder, {cases} random id lists x 2 skip_special x "
                       f"{len(CHUNK_SIZES) + 2} chunkings", against="llama.cpp (llama_detokenize)")
    for _ in range(cases):
        ids = [rnd.choice(pool) if rnd.random() < 0.8 else rnd.randrange(n) for _ in range(rnd.randint(0, 16))]
        compare_streams(check, tok, ref, ids, rnd)
    check.finish(at_least=2 * cases)
