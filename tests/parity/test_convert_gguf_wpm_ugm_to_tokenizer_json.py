"""GGUF WPM ("bert") and UGM ("t5") vocabularies written as tokenizer.json: what the corpus
test (test_convert_gguf_to_tokenizer_json.py, every corpus line of bert-bge and
nomic-bert-moe) does not cover.

- WPM, against llama.cpp on the GGUF: code points (U+D800..U+DFFF aside) inside a word and
  alone, doubled: every second one through the BGE file, every eighth one through copies with
  llama.cpp's normalizer options switched (tests/gguf_copy.py changes the keys, the
  vocabulary stays the real one); and the multilingual corpus sample through those copies
  with the corpus test's flags, splicing and decode (compare_with_llama_cpp).
- UGM, against llama.cpp: every eighth code point alone and after a letter, through
  nomic-bert-moe (all of them: 0 mismatches, measured once; too slow for CI).
- refusals: what tokenizers cannot express is refused, naming it, and nothing is written.
- the round trip GGUF -> tokenizer.json -> GGUF: the tokenizer.json -> GGUF writers
  (writers/gguf_wordpiece_json.py, gguf_unigram_json.py) take only the pipelines the
  transformers converters write (BertNormalizer + BertPreTokenizer + "##" WordPiece;
  Precompiled + Metaspace Unigram), so they refuse the written files: no equivalent GGUF
  comes back. Checked: a clean refusal, no file.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import tokenizers

import toksmith
from tests import llama_cpp_reference
from tests.conftest import multilingual_sample, report
from tests.gguf_copy import copy_gguf, copy_gguf_with_tokens
from tests.parity.test_byte_bpe_gguf import gguf_path
from tests.parity.test_convert_gguf_to_tokenizer_json import compare_with_llama_cpp, report_line
from toksmith.errors import UnsupportedConversionError
from toksmith.tokenizer import Tokenizer
from toksmith.vocab import TokenType
from toksmith.writers.tokenizer_json import write_tokenizer_json

# llama.cpp's WPM options ({}: the BGE file as it is), and every how many code points are swept.
WPM_VARIANTS = {
    "bge": ({}, 2),
    "cased": ({"tokenizer.ggml.normalizer.lowercase": False}, 8),
    "lowercase-keep-accents": ({"tokenizer.ggml.normalizer.strip_accents": False}, 8),
    "strip-accents-only": ({"tokenizer.ggml.normalizer.lowercase": False,
                            "tokenizer.ggml.normalizer.strip_accents": True}, 8),
    "space-prefix": ({"tokenizer.ggml.add_space_prefix": True}, 8),
}
UGM_STRIDE = 8


def _variant(fixtures, tmp_path, name: str):
    changes, _ = WPM_VARIANTS[name]
    bge = gguf_path(fixtures, "bert-bge")
    return Path(copy_gguf(bge, tmp_path / f"{name}.gguf", changes)) if changes else bge


@pytest.mark.parametrize("name", list(WPM_VARIANTS))
def test_wpm_every_code_point(fixtures, tmp_path, name):
    path = _variant(fixtures, tmp_path, name)
    written = tokenizers.Tokenizer.from_str(write_tokenizer_json(toksmith.load(path).spec).decode("utf-8"))
    ref = llama_cpp_reference.load_vocab(path)
    stride = WPM_VARIANTS[name][1]
    first = list(WPM_VARIANTS).index(name) % stride    # the variants sweep different code points
    points = [cp for cp in range(first, 0x110000, stride) if not 0xD800 <= cp <= 0xDFFF]
    texts = [f"x{chr(cp)}y {chr(cp)}{chr(cp)}" for cp in points]
    got = written.encode_batch(texts, add_special_tokens=True)
    bad = [f"U+{cp:04X}: {g.ids} != {ref.tokenize(text.encode(), True, False)}"
           for cp, text, g in zip(points, texts, got) if g.ids != ref.tokenize(text.encode(), True, False)]
    report(f"convert ggml-vocab-bert-bge.gguf ({name}) -> tokenizer.json, code points: {len(texts)} lines, "
           f"{len(bad)} mismatches")
    assert not bad, "\n".join(bad[:10])


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
@pytest.mark.parametrize("name", [n for n in WPM_VARIANTS if n != "bge"])
def test_wpm_variants_on_corpus_sample(fixtures, corpus_lines, tmp_path, name):
    sample = {"sample": multilingual_sample(corpus_lines, per_corpus=200)}
    compared, explained, mismatches = compare_with_llama_cpp(_variant(fixtures, tmp_path, name), sample,
                                                             tmp_path / "tokenizer.json")
    report(report_line(f"ggml-vocab-bert-bge.gguf ({name}, multilingual sample)", compared, explained))
    assert not mismatches, "\n".join(mismatches[:10])


def _refused(spec, match: str, tmp_path) -> None:
    with pytest.raises(UnsupportedConversionError, match=match):
        write_tokenizer_json(spec)
    target = tmp_path / "never-written.json"
    with pytest.raises(UnsupportedConversionError, match=match):
        Tokenizer(spec).save(target)                # refused before any file is touched
    assert not target.exists()


def _with_token(spec, token_id: int, text: str, token_type: TokenType):
    """`spec` with one token's text and type changed (in memory: copying the 6.8 MB nomic GGUF
    with the gguf writer takes half a minute)."""
    vocab = spec.vocab
    pieces = list(vocab.pieces)
    pieces[token_id] = text.encode("utf-8")
    types = bytearray(vocab.types)
    types[token_id] = token_type
    return replace(spec, vocab=replace(vocab, pieces=type(vocab.pieces)(pieces), types=bytes(types)),
                   token_attributes=None)


def test_refusals(fixtures, tmp_path):
    nomic = toksmith.load(gguf_path(fixtures, "nomic-bert-moe")).spec
    unused = nomic.vocab.types.index(TokenType.UNUSED)
    _refused(_with_token(nomic, unused, "<my-token>", TokenType.USER_DEFINED),
             "USER_DEFINED tokens in a UGM vocabulary", tmp_path)
    _refused(replace(nomic, normalizer=replace(nomic.normalizer, remove_extra_whitespaces=False)),
             "add_space_prefix without remove_extra_whitespaces", tmp_path)
    # a character inside a token that is no token of its own: tokenizers' unknown cost would matter
    _refused(_with_token(nomic, unused, "\u2581x\U0001d11e", TokenType.NORMAL),
             "characters of tokens that are no single-character token", tmp_path)
    bge = Path(copy_gguf_with_tokens(gguf_path(fixtures, "bert-bge"), tmp_path / "wpm-user-defined.gguf",
                                     ["<my-token>"], [TokenType.USER_DEFINED], {}))
    _refused(toksmith.load(bge).spec, "USER_DEFINED tokens in a WPM vocabulary", tmp_path)


@pytest.fixture(scope="module")
def nomic_json(fixtures, tmp_path_factory):
    """nomic-bert-moe written as tokenizer.json once (writing 250k exact scores takes ~20 s)."""
    return toksmith.load(gguf_path(fixtures, "nomic-bert-moe")).save(tmp_path_factory.mktemp("nomic") / "tokenizer.json")


def test_ugm_code_points(fixtures, nomic_json):
    written = tokenizers.Tokenizer.from_file(str(nomic_json))
    ref = llama_cpp_reference.load_vocab(gguf_path(fixtures, "nomic-bert-moe"))
    points = [cp for cp in range(0, 0x110000, UGM_STRIDE) if not 0xD800 <= cp <= 0xDFFF]
    texts = [f"{chr(cp)} x{chr(cp)}" for cp in points]
    got = written.encode_batch(texts, add_special_tokens=True)
    bad = [f"U+{cp:04X}: {g.ids} != {ref.tokenize(text.encode(), True, False)}"
           for cp, text, g in zip(points, texts, got) if g.ids != ref.tokenize(text.encode(), True, False)]
    report(f"convert ggml-vocab-nomic-bert-moe.gguf -> tokenizer.json, code points: {len(texts)} lines, "
           f"{len(bad)} mismatches")
    assert not bad, "\n".join(bad[:10])


@pytest.mark.parametrize("name", ["bert-bge", "nomic-bert-moe"])
def test_round_trip_to_gguf_is_refused(fixtures, tmp_path, request, name):
    source = toksmith.load(gguf_path(fixtures, name))
    json_path = (request.getfixturevalue("nomic_json") if name == "nomic-bert-moe"
                 else source.save(tmp_path / "tokenizer.json"))
    written = toksmith.load(json_path)
    text = "Hello world, café 한국어 <s> [CLS] " + "x" * 300
    assert written.encode(text) == source.encode(text)
    with pytest.raises(UnsupportedConversionError, match="vocab-only GGUF"):
        written.save(tmp_path / "back.gguf")
    assert not (tmp_path / "back.gguf").exists()
