"""GGUF ``tokenizer.ggml.model = "hybriddna"`` against llama.cpp itself
(tests/llama_cpp_reference.py).

The vocabulary is the GPT-2 fixture GGUF with ``<dna>``, ``</dna>``, ``<oov>`` and the
4^6 = 4096 k-mers appended, as llama.cpp's converter (conversion/base.py
_set_vocab_hybriddna) writes a HybridDNATokenizer: each k-mer's text carries the marker
U+E000 (so "CCCCCC" stays distinct from a BPE token of that text), the k-mers are the
block right after ``<oov>`` and are NORMAL tokens, and the tags are added tokens: CONTROL
(special) here, USER_DEFINED in a variant (split out even without parse_special). More
variants: no ``<oov>`` (llama.cpp falls back to plain BPE), and the gemma4 pre-tokenizer
(spaces become U+2581 before the session, so inside a region a space is 3 bytes).

Texts: seeded random mixes of corpus snippets and DNA regions (mixed case, non-ACGT
letters and other characters, lengths not a multiple of 6, empty regions, unterminated,
nested and adjacent tags, special-token texts inside and around regions, invalid UTF-8
inside regions), with every (add_special, parse_special) pair; decode of llama.cpp's ids
with both skip_special values and decode_bytes against llama_detokenize.
"""
from __future__ import annotations

import itertools
import random

import pytest

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import fixture_file
from tests.gguf_copy import copy_gguf_with_tokens
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import compare_decodes, compare_encodes, llama_cpp_survives

BASE = "gguf/ggml-vocab-gpt-2.gguf"
NORMAL, CONTROL, USER_DEFINED = 1, 3, 4   # GGUF token types
MARKER = "\ue000"
KMERS = ["".join(p) + MARKER for p in itertools.product("ACGT", repeat=6)]
FLAGS = ((False, False), (True, True), (True, False), (False, True))

# name -> (tags appended before the k-mers, their token type, keys changed)
VARIANTS = {
    "control-tags": (["<dna>", "</dna>", "<oov>"], CONTROL, {}),
    "user-defined-tags": (["<dna>", "</dna>", "<oov>"], USER_DEFINED, {}),
    "no-oov-fallback": (["<dna>", "</dna>"], CONTROL, {}),
    "gemma4-pre": (["<dna>", "</dna>", "<oov>"], CONTROL, {"tokenizer.ggml.pre": "gemma4"}),
}


def hybriddna_gguf(fixtures, target, name: str) -> str:
    tags, tag_type, changes = VARIANTS[name]
    return copy_gguf_with_tokens(fixture_file(fixtures, BASE), target, tags + KMERS,
                                 [tag_type] * len(tags) + [NORMAL] * len(KMERS),
                                 {"tokenizer.ggml.model": "hybriddna", **changes})


def dna_region(rnd: random.Random) -> str:
    """A region's content: DNA letters in mixed case, sometimes other characters."""
    length = rnd.choice([0, 1, 5, 6, 7, 11, 12, 13, 18, 25, rnd.randint(0, 80)])
    pool = "ACGTacgt" * 6 + "NnRYUX-. \n" + "é日"
    return "".join(rnd.choice(pool) for _ in range(length))


def dna_texts(corpus_lines, seed: int, count: int) -> list[str]:
    rnd = random.Random(seed)
    snippets = [line for lines in corpus_lines.values() for line in lines[:40]]
    pieces = ["<dna>", "</dna>", "<|endoftext|>", "<DNA>", "<dna", "dna>", "<oov>", " ", "\n", ""]
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rnd.randint(1, 6)):
            kind = rnd.random()
            if kind < 0.5:
                parts.append("<dna>" + dna_region(rnd) + rnd.choice(["</dna>", "</dna>", "</dna>", ""]))
            elif kind < 0.75:
                snippet = rnd.choice(snippets)
                at = rnd.randint(0, len(snippet))
                parts.append(snippet[at:at + rnd.randint(0, 40)])
            else:
                parts.append(rnd.choice(pieces))
        texts.append("".join(parts))
    return texts + [
        "", "<dna>", "</dna>", "<dna></dna>", "<dna></dna><dna></dna>", "<dna>ACGTAC</dna><dna>gtacgt</dna>",
        "Hi <dna>ACGTACgtacNN</dna> there", "<dna>acgtac<dna>gg</dna></dna>", "<dna>AC", "<dna>ACGTACG",
        "x<dna>" + "acgt" * 500 + "</dna>y", "<dna>AC GT\tAC\nGT  ACGT</dna>", "<dna>ÀÉ日本ACGT</dna>",
        "<|endoftext|><dna>ac<|endoftext|>gt</dna>", "<dna><|endoftext|></dna>", "<dna><oov></dna>",
        "CCCCCC <dna>CCCCCC</dna> CCCCCC", "<dna>cccccc", "<<dna>>ACGTAC<</dna>>",
    ]


INVALID_UTF8_IN_REGIONS = [b"<dna>AC\xffGT</dna>", b"<dna>\xc3</dna>x\xff", b"\xe2\x82<dna>ACGTAC\x80\x80",
                           b"<dna>\xf0\x9f\xa6\x99ACG</dna>", b"<dna>acgt\xc0\xafacgt</dna>"]


@pytest.fixture(scope="module")
def texts(corpus_lines) -> list[str]:
    return dna_texts(corpus_lines, seed=6, count=400)


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")   # llama.cpp warns too
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_hybriddna_matches_llama_cpp(fixtures, tmp_path, texts, invalid_utf8_lines, name):
    path = hybriddna_gguf(fixtures, tmp_path / f"{name}.gguf", name)
    ref = llama_cpp_reference.LlamaCppVocab(path)
    # one invalid UTF-8 line (F4 90 80 80) aborts llama.cpp; today 1 left out
    raw_texts = [t.encode("utf-8") for t in texts] + INVALID_UTF8_IN_REGIONS + [
        b"<dna>" + raw + b"</dna>" for raw in llama_cpp_survives(invalid_utf8_lines, at_most=1)]
    check = Comparison(f"tokenizer.ggml.model='hybriddna' ({name}) on the GPT-2 vocabulary + 4096 k-mers: "
                       f"{len(raw_texts)} texts x {len(FLAGS)} flag pairs (encode, encode_batch; decode x2 and "
                       f"decode_bytes of llama.cpp's ids)", against="llama.cpp")
    try:
        tok = toksmith.load(path)
        assert tok.vocab_size == ref.n_tokens
        for ids in compare_encodes(check, tok, ref, raw_texts, flags=FLAGS, decode=False):
            compare_decodes(check, tok, ref, ids)
        dna_ids = ref.tokenize(b"<dna>ACGTACgtacNN", False, False)
    finally:
        ref.close()
    check.finish(at_least=5 * len(FLAGS) * len(raw_texts))
    # The variants really take both paths: k-mers (<oov> included), or plain BPE as fallback.
    n_base = tok.vocab_size - len(KMERS) - len(VARIANTS[name][0])
    kmer_ids = [i for i in dna_ids if i >= n_base]
    if name == "control-tags":
        assert kmer_ids == dna_ids and len(dna_ids) == 3 and tok.decode(dna_ids[1:2]) == "ACGTAC"
    elif name == "user-defined-tags":
        assert kmer_ids == dna_ids[:1], "a user-defined <dna> is split out before the session sees it"
    elif name == "no-oov-fallback":
        assert kmer_ids == [], "without <oov> the region is plain BPE"
