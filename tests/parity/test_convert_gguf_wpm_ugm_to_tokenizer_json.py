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
- the round trip GGUF -> tokenizer.json -> GGUF (writers/gguf_from_own_wordpiece_json.py,
  gguf_from_own_unigram_json.py): the original's tokenizer.ggml.* keys, read with the `gguf`
  package's GGUFReader, come back with the same types and bytes but for the keys listed in
  ROUND_TRIP_CHANGES (and why), and llama.cpp gives the same ids and text on the written GGUF
  as on the original on the multilingual sample (special texts spliced, every flag); a json
  with a normalizer step removed is no longer toksmith's own form and is refused.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import tokenizers

import toksmith
from tests import llama_cpp_reference
from tests.conftest import multilingual_sample
from tests.gguf_copy import copy_gguf, copy_gguf_with_tokens
from tests.gguf_reference import read_metadata
from tests.parity.comparison import Comparison
from tests.parity.excuses.conversions_gguf import LLAMA_CPP_KEEPS_SPACE_AFTER_BOS
from tests.parity.gguf_compare import compare_llama_cpp_on_both, gguf_fields
from tests.parity.gguf_to_json_compare import compare_with_llama_cpp
from tests.parity.llama_cpp_compare import gguf_path, special_texts_of, spliced
from toksmith.errors import UnsupportedConversionError
from toksmith.hf import components as c
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
    got = [e.ids for e in written.encode_batch(texts, add_special_tokens=True)]
    with Comparison(f"convert ggml-vocab-bert-bge.gguf ({name}) -> tokenizer.json, code points, ids by tokenizers "
                    f"on the written file", against="llama.cpp on the GGUF") as check:
        check.all(texts, ours=got, theirs=[ref.tokenize(text.encode(), True, False) for text in texts])


# With add_space_prefix, llama.cpp keeps the first word's space after dropping [CLS] (the
# multilingual sample is the same with or without TOKSMITH_PARITY_SAMPLE >= 200).
VARIANT_DECODE_BOUNDS = {"space-prefix": {LLAMA_CPP_KEEPS_SPACE_AFTER_BOS: 600}}   # today 581


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
@pytest.mark.parametrize("name", [n for n in WPM_VARIANTS if n != "bge"])
def test_wpm_variants_on_corpus_sample(fixtures, corpus_lines, tmp_path, name):
    sample = {"sample": multilingual_sample(corpus_lines, per_corpus=200)}
    compare_with_llama_cpp(_variant(fixtures, tmp_path, name), sample, tmp_path / "tokenizer.json",
                           f"ggml-vocab-bert-bge.gguf ({name}, multilingual sample)",
                           decode_excuses=VARIANT_DECODE_BOUNDS.get(name))


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
    got = [e.ids for e in written.encode_batch(texts, add_special_tokens=True)]
    with Comparison("convert ggml-vocab-nomic-bert-moe.gguf -> tokenizer.json, code points, ids by tokenizers "
                    "on the written file", against="llama.cpp on the GGUF") as check:
        check.all(texts, ours=got, theirs=[ref.tokenize(text.encode(), True, False) for text in texts])


# The round trip GGUF -> tokenizer.json -> GGUF: tokenizer.ggml.* keys of the original that do
# not come back, keys that are new, keys whose value differs (everything else, tokens, scores
# and token types included, is the same GGUF types and bytes). Why:
# - padding/mask/seperator(UGM)/cls ids, token_type_count (UGM): tokenizer.json has no roles
#   for them (and llama.cpp's tokenizer uses none: cls_token_id is no key llama.cpp reads,
#   bge's BOS 101 comes from llama.cpp's "bert" defaults); a UGM token_type_count is a model
#   parameter the json does not hold;
# - bos_token_id (WPM): the template's [CLS] is written as BOS, the key llama.cpp reads;
# - pre (WPM): found as the converter finds it, by the hash of the check text's ids; bge's
#   "bert-bge" hash is of transformers' BertTokenizer ids, which differ from llama.cpp's WPM
#   on that text; those ids hash to the converter's "jina-v2-en" (llama.cpp reads
#   tokenizer.ggml.pre for BPE only).
# The new and differing values are checked exactly (_assert_changed_values).
# The pre name found by hash per WPM variant: the uncased ids of the check text hash to the
# converter's "jina-v2-en"; cased ones to no known name ("default").
PRE_FOUND_BY_HASH = {"bge": b"jina-v2-en", "lowercase-keep-accents": b"jina-v2-en", "space-prefix": b"jina-v2-en",
                     "cased": b"default", "strip-accents-only": b"default"}
ROUND_TRIP_CHANGES = {
    "bert-bge": ({"tokenizer.ggml.cls_token_id", "tokenizer.ggml.mask_token_id", "tokenizer.ggml.padding_token_id"},
                 {"tokenizer.ggml.bos_token_id"}, {"tokenizer.ggml.pre"}),
    "nomic-bert-moe": ({"tokenizer.ggml.mask_token_id", "tokenizer.ggml.padding_token_id",
                        "tokenizer.ggml.seperator_token_id", "tokenizer.ggml.token_type_count"}, set(), set()),
}


def _tokenizer_fields(path) -> dict:
    return {key: rest for key, *rest in gguf_fields(path) if key.startswith("tokenizer.ggml.")}


def _json_of(name, fixtures, tmp_path, request):
    source = toksmith.load(gguf_path(fixtures, name))
    return (request.getfixturevalue("nomic_json") if name == "nomic-bert-moe"
            else source.save(tmp_path / "tokenizer.json"))


@pytest.mark.parametrize("name", ["bert-bge", "nomic-bert-moe"])
def test_round_trip_to_gguf(fixtures, corpus_lines, tmp_path, request, name):
    original = gguf_path(fixtures, name)
    back = toksmith.load(_json_of(name, fixtures, tmp_path, request)).save(tmp_path / "back.gguf")
    want, got = _tokenizer_fields(original), _tokenizer_fields(back)
    missing, extra, differing = ROUND_TRIP_CHANGES[name]
    assert set(want) - set(got) == missing
    assert set(got) - set(want) == extra
    assert {key for key in want.keys() & got.keys() if want[key] != got[key]} == differing
    _assert_changed_values(original, back, differing | extra, "bge")
    texts = spliced(multilingual_sample(corpus_lines, per_corpus=200), special_texts_of(original), seed=len(name))
    compare_llama_cpp_on_both(original, back, texts, f"ggml-vocab-{name}.gguf -> tokenizer.json")


@pytest.mark.parametrize("name", [n for n in WPM_VARIANTS if n != "bge"])
def test_wpm_variant_round_trip_to_gguf(fixtures, tmp_path, name):
    """llama.cpp's normalizer / add_space_prefix keys come back (the rest as for bge)."""
    original = _variant(fixtures, tmp_path, name)
    back = toksmith.load(toksmith.load(original).save(tmp_path / "tokenizer.json")).save(tmp_path / "back.gguf")
    want, got = _tokenizer_fields(original), _tokenizer_fields(back)
    missing, extra, differing = ROUND_TRIP_CHANGES["bert-bge"]
    assert (set(want) - set(got), set(got) - set(want)) == (missing, extra)
    assert {key for key in want.keys() & got.keys() if want[key] != got[key]} == differing
    _assert_changed_values(original, back, differing | extra, name)


def _assert_changed_values(original, back, keys: set[str], variant: str) -> None:
    """The keys of ROUND_TRIP_CHANGES that come back otherwise hold exactly the values it says."""
    before, after = read_metadata(original), read_metadata(back)
    for key in keys:
        if key == "tokenizer.ggml.pre":
            assert after[key] == PRE_FOUND_BY_HASH[variant], after[key]
        elif key == "tokenizer.ggml.bos_token_id":
            assert after[key] == before["tokenizer.ggml.cls_token_id"], (after[key], before["tokenizer.ggml.cls_token_id"])
        else:
            raise AssertionError(f"{key} changed, ROUND_TRIP_CHANGES does not say to what")


def _without_normalizer_step(spec, kind):
    """`spec` (a tokenizer.json's) with the first normalizer step of type `kind` removed."""
    steps = list(spec.hf.normalizer.normalizers)
    steps.remove(next(step for step in steps if isinstance(step, kind)))
    return replace(spec, hf=replace(spec.hf, normalizer=c.NormalizerSequence(tuple(steps))))


@pytest.mark.parametrize("name, step", [("bert-bge", c.Replace), ("nomic-bert-moe", c.Prepend)])
def test_modified_json_to_gguf_is_refused(fixtures, tmp_path, request, name, step):
    """A json that is no longer toksmith's writing of a GGUF takes the transformers-style
    routes, which refuse it: no file."""
    spec = _without_normalizer_step(toksmith.load(_json_of(name, fixtures, tmp_path, request)).spec, step)
    with pytest.raises(UnsupportedConversionError, match="vocab-only GGUF"):
        Tokenizer(spec).save(tmp_path / "back.gguf")
    assert not (tmp_path / "back.gguf").exists()
