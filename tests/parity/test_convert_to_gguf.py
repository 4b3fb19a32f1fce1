"""Vocab-only GGUFs written by toksmith, checked with the references themselves.

- GGUF -> GGUF: every fixture GGUF and the GGUFs the tests build (RWKV, PLaMo-2,
  whitespace, gemma4, hybriddna) written back hold the same metadata, read by the `gguf`
  package's GGUFReader (every key in order, its GGUF types, the raw bytes of every value),
  and llama.cpp gives the same ids and text on the written file as on the original.
- sentencepiece .model -> GGUF: sentencepiece on the .model against llama.cpp on the
  written GGUF, every corpus line (documented disagreements below).
- RWKV .txt -> GGUF: see the section further down; tokenizer.json -> GGUF:
  tests/parity/test_convert_tokenizer_json_to_gguf.py.

Reported through tests/parity/comparison.py: one line per comparison kind (ids, decode,
toksmith on the written file against itself on the original), each counting the comparisons
made, naming the reference, with the allowed differences (tests/parity/excuses/
conversions_gguf.py) and their bounds.
"""
from __future__ import annotations

import functools
import itertools

import gguf
import pytest
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

import toksmith
from tests import llama_cpp_reference
from tests.conftest import fixture_file
from tests.gguf_reference import read_metadata
from tests.parity.comparison import Comparison
from tests.parity.excuses.conversions_gguf import (LLAMA_CPP_KEEPS_LEADING_SPACES, SENTENCEPIECE_REPLACES_INVALID_BYTES,
                                                   SENTENCEPIECE_STRIPS_TRAILING_U2581,
                                                   UNIGRAM_EQUAL_SCORE_SEGMENTATION, EncodeCase)
from tests.parity.gguf_compare import compare_llama_cpp_on_both, gguf_fields
from tests.parity.llama_cpp_compare import llama_cpp_ids, special_texts_of, spliced
from tests.plamo2_gguf import sentencepiece_pieces, write_plamo2_gguf
from tests.rwkv_gguf import rwkv_world_tokens, write_rwkv_world_gguf
from tests.unit import gguf_writer

GGUF_FIXTURES = ("bert-bge", "deepseek-coder", "falcon", "gpt-2", "llama-bpe", "llama-spm", "mpt",
                 "nomic-bert-moe", "phi-3", "qwen2", "refact", "starcoder")


# ------------------------------------------------------------------ GGUF -> GGUF

# Fixtures small enough for GGUFReader (it takes seconds per 50k tokens): the written file's
# fields are compared with it; every fixture's written file is compared byte for byte.
READER_CHECKED = ("bert-bge",)


def check_llama_cpp_round_trip(original, written, texts: list[str], label: str) -> None:
    with Comparison(f"convert {label} -> gguf, toksmith on the written file", against="itself (on the original)") as own:
        own.all(texts, ours=toksmith.load(written).encode_batch(texts), theirs=toksmith.load(original).encode_batch(texts))
    compare_llama_cpp_on_both(original, written, spliced(texts, special_texts_of(original), seed=len(label)), label)


# The fixture GGUFs llama.cpp ships without a golden .inp file (its own models/ has none for them).
WITHOUT_GOLDEN_INPUTS = ("nomic-bert-moe",)


def golden_texts(fixtures, name: str) -> list[str]:
    if name in WITHOUT_GOLDEN_INPUTS:
        return []
    path = fixture_file(fixtures, f"gguf/ggml-vocab-{name}.gguf.inp")
    return path.read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")[:-1]


@pytest.mark.parametrize("name", GGUF_FIXTURES)
def test_gguf_fixture_written_back_is_the_same_file(fixtures, corpus_lines, tmp_path, name):
    """llama.cpp's converter writes a vocab-only file as header + key/values, no padding:
    written back, every fixture is the same bytes (so the same keys, types and values)."""
    original = fixture_file(fixtures, f"gguf/ggml-vocab-{name}.gguf")
    written = toksmith.load(original).save(tmp_path / "written.gguf")
    assert written.read_bytes() == original.read_bytes()
    if name in READER_CHECKED:
        assert gguf_fields(written) == gguf_fields(original)
    texts = golden_texts(fixtures, name) + corpus_lines["tricky_strings.txt"]
    check_llama_cpp_round_trip(original, written, texts, original.name)


def built_gguf(fixtures, tmp_path, kind: str):
    """A GGUF of a tokenizer type no fixture has, as the other parity tests build it (RWKV,
    PLaMo-2) or from GPT-2's tokens and merges (read and written with struct, tests/unit/gguf_writer)."""
    target = tmp_path / f"{kind}.gguf"
    if kind == "rwkv":
        return write_rwkv_world_gguf(fixture_file(fixtures, "rwkv/rwkv_vocab_v20230424.txt"), target)
    if kind == "plamo2":
        pieces = sentencepiece_pieces(fixture_file(fixtures, "spm/t5_base_japanese_spiece.model"))
        return write_plamo2_gguf(target, pieces, pads=12)
    meta = read_metadata(fixture_file(fixtures, "gguf/ggml-vocab-gpt-2.gguf"))
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    pre = {"hybriddna": "gpt-2"}.get(kind, kind)
    if kind == "hybriddna":
        kmers = ["".join(p) + "\ue000" for p in itertools.product("ACGT", repeat=3)]
        tokens = tokens + [t.encode() for t in ["<dna>", "</dna>", "<oov>"] + kmers]
        types = types + [3, 3, 3] + [1] * len(kmers)
    return gguf_writer.write_gguf(target, [
        gguf_writer.str_kv("general.architecture", "gpt2"), gguf_writer.str_kv("tokenizer.ggml.model", kind),
        gguf_writer.str_kv("tokenizer.ggml.pre", pre), gguf_writer.strings_kv("tokenizer.ggml.tokens", tokens),
        gguf_writer.i32s_kv("tokenizer.ggml.token_type", types),
        gguf_writer.strings_kv("tokenizer.ggml.merges", meta["tokenizer.ggml.merges"]),
        gguf_writer.u32_kv("tokenizer.ggml.bos_token_id", 50256), gguf_writer.bool_kv("tokenizer.ggml.add_bos_token", True)])


@pytest.mark.parametrize("kind", ["rwkv", "plamo2", "whitespace", "gemma4", "hybriddna"])
def test_built_gguf_written_back_keeps_its_metadata(fixtures, corpus_lines, tmp_path, kind):
    """The written file is the original's bytes up to where gguf-py's write_tensors_to_file
    pads the built file to its alignment (zeros): the same keys, types and values."""
    original = built_gguf(fixtures, tmp_path, kind)
    written = toksmith.load(original).save(tmp_path / "written.gguf")
    data, before = written.read_bytes(), open(original, "rb").read()
    assert before[:len(data)] == data and before[len(data):] == bytes(len(before) - len(data))
    assert len(before) - len(data) < gguf.GGUF_DEFAULT_ALIGNMENT
    if kind == "plamo2":
        assert gguf_fields(written) == gguf_fields(original)
    texts = corpus_lines["tricky_strings.txt"] + ["<dna>ACGTAC</dna> x", "Hello\u2581world"]
    check_llama_cpp_round_trip(original, written, texts, f"{kind} GGUF")


def test_pre_override_is_written(fixtures, tmp_path):
    """A tokenizer loaded with pre= saves that pre-tokenizer: it loads back tokenizing the same way."""
    tok = toksmith.load(fixture_file(fixtures, "gguf/ggml-vocab-qwen2.gguf"), pre="qwen35")
    written = tok.save(tmp_path / "qwen35.gguf")
    assert read_metadata(written)["tokenizer.ggml.pre"] == b"qwen35"
    text = "r\u00e9sum\u00e9 Vie\u0302\u0301t Nam"
    assert toksmith.load(written).encode(text) == tok.encode(text)
    assert llama_cpp_reference.load_vocab(written).tokenize(text.encode(), False, False) == \
        tok.encode(text, add_special=False)


# ------------------------------------------------------------------ sentencepiece .model -> GGUF

# The .model files llama.cpp can express, and the add_bos/add_eos their GGUF holds.
SPM_MODELS = {
    "llama2_tokenizer.model": (True, False),          # BPE -> "llama": llama.cpp's SPM adds BOS
    "sentencepiece_test_model.model": (False, True),  # Unigram -> "t5": llama.cpp's UGM adds EOS
    "sentencepiece_test_ja_model.model": (False, True),
    "t5_base_japanese_spiece.model": (False, True),
}


def decode_reference(model_path) -> spm.SentencePieceProcessor:
    """sentencepiece on the model with unk_surface "": sentencepiece renders <unk> as " \u2047 ",
    llama.cpp's detokenize (remove_special) as nothing, a disagreement of the references."""
    proto = pb.ModelProto()
    proto.ParseFromString(model_path.read_bytes())
    proto.trainer_spec.unk_surface = ""
    return spm.SentencePieceProcessor(model_proto=proto.SerializeToString())


# Allowed differences per model, each with its bound: today's count on the full corpora
# (TOKSMITH_PARITY_SAMPLE unset) and a small margin. The 22 invalid UTF-8 lines are a fixed set.
SPM_BOUNDS = {
    "llama2_tokenizer.model": {"ids": {SENTENCEPIECE_REPLACES_INVALID_BYTES: 22},           # today 22
                               "decode": {}},
    "sentencepiece_test_model.model": {"ids": {UNIGRAM_EQUAL_SCORE_SEGMENTATION: 8,           # today 6
                                               SENTENCEPIECE_STRIPS_TRAILING_U2581: 2},       # today 2
                                       "decode": {LLAMA_CPP_KEEPS_LEADING_SPACES: 16}},       # today 14
    "sentencepiece_test_ja_model.model": {"ids": {UNIGRAM_EQUAL_SCORE_SEGMENTATION: 26,       # today 23
                                                  SENTENCEPIECE_STRIPS_TRAILING_U2581: 2},    # today 2
                                          "decode": {LLAMA_CPP_KEEPS_LEADING_SPACES: 14}},    # today 12
    "t5_base_japanese_spiece.model": {"ids": {UNIGRAM_EQUAL_SCORE_SEGMENTATION: 55},         # today 50
                                      "decode": {LLAMA_CPP_KEEPS_LEADING_SPACES: 14}},        # today 12
}


@pytest.mark.parametrize("name", SPM_MODELS)
def test_sentencepiece_model_to_gguf_matches_sentencepiece(fixtures, corpus_lines, invalid_utf8_lines,
                                                          tmp_path, name):
    """sentencepiece on the .model against llama.cpp on the written GGUF, every corpus line.

    Flags: add_special=True on every line (sentencepiece adds the BOS/EOS the GGUF's
    add_bos/add_eos say), add_special=False on tricky_strings.txt and the invalid UTF-8
    lines: llama.cpp's SPM and UGM sessions tokenize the text whatever add_special says and
    only put BOS/EOS around it. parse_special=False only: sentencepiece never parses
    control-token texts (a <s> in the text is text), which is llama.cpp's parse_special=False;
    a quarter of the lines carry a spliced <s>/</s>/<unk> text to check it.

    Documented disagreements of the two references on the source itself (the GGUF follows
    llama.cpp, which is all a GGUF can hold): excuses of tests/parity/excuses/conversions_gguf.py,
    bounded per model in SPM_BOUNDS:
    - UNIGRAM_EQUAL_SCORE_SEGMENTATION: llama.cpp sums piece scores in double, sentencepiece
      in float; where the segmentations differ both have as many pieces and the same float32
      total (a tie broken differently): lines with long runs of "-", "=", CJK.
    - SENTENCEPIECE_STRIPS_TRAILING_U2581: sentencepiece's remove_extra_whitespaces strips a
      trailing U+2581 after escaping spaces (a literal one too); llama.cpp's UGM strips only
      spaces (tricky_strings.txt line 110).
    - SENTENCEPIECE_REPLACES_INVALID_BYTES: invalid UTF-8: sentencepiece replaces each invalid
      byte with U+FFFD, llama.cpp's SPM falls back to the raw bytes' <0xXX> pieces.
    - decode (llama_detokenize with remove_special, on the add_special=False lines:
      tricky_strings.txt): <unk> prints nothing (sentencepiece: " \u2047 ", so the decode
      reference uses unk_surface ""); LLAMA_CPP_KEEPS_LEADING_SPACES: llama.cpp removes one
      leading space of the first token where sentencepiece removes every leading space before
      the first visible text (lines that start with U+2581 or with an <unk>).
    """
    model_path = fixture_file(fixtures, f"spm/{name}")
    add_bos, add_eos = SPM_MODELS[name]
    written = toksmith.load(model_path).save(tmp_path / f"{name}.gguf")
    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    sp_decode = decode_reference(model_path)
    ref = llama_cpp_reference.load_vocab(written)
    specials = [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if sp.is_control(i) or sp.is_unknown(i)]
    proto = pb.ModelProto()
    proto.ParseFromString(model_path.read_bytes())
    facts = {"unigram": proto.trainer_spec.model_type == pb.TrainerSpec.UNIGRAM,
             "scores": [sp.get_score(i) for i in range(sp.get_piece_size())]}
    against = f"sentencepiece {spm.__version__} on the .model"
    ids_check = Comparison(f"convert {name} -> gguf, ids by llama.cpp on the written file", against=against,
                           excuses=SPM_BOUNDS[name]["ids"])
    decode_check = Comparison(f"convert {name} -> gguf, decode by llama.cpp on the written file (add_special=False "
                              f"lines)", against=against, excuses=SPM_BOUNDS[name]["decode"])
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, specials, seed=len(corpus))
        for add_special in (True, False) if corpus == "tricky_strings.txt" else (True,):
            expected = sp.encode(texts, add_bos=add_special and add_bos, add_eos=add_special and add_eos)
            got = [ref.tokenize(text.encode("utf-8"), add_special, False) for text in texts]
            reference_on = functools.partial(llama_cpp_ids, ref, add_special=add_special)
            for i, text, ours, theirs in ids_check.pairs(range(len(texts)), texts, got, expected):
                ids_check.one(EncodeCase(text, reference_on=reference_on, **facts), ours, theirs,
                              what=f"{corpus}:{i + 1} add_special={add_special}")
                if not add_special:           # decode sentencepiece's ids (BOS/EOS-free) by both
                    decode_check.one(text, ref.detokenize(theirs, remove_special=True, unparse_special=False)
                                     .decode("utf-8", "replace"), sp_decode.decode(theirs), what=f"{corpus}:{i + 1} decode")
    reference_on = functools.partial(llama_cpp_ids, ref, add_special=False)
    for raw in invalid_utf8_lines:
        ids_check.one(EncodeCase("", reference_on=reference_on, extras={"raw": raw}, **facts),
                      ref.tokenize(raw, False, False), sp.encode(raw), what="invalid UTF-8")
    for check in (ids_check, decode_check):
        check.finish()


@pytest.mark.parametrize("name,missing", [
    ("hf_test_sentencepiece_bpe.model", "precompiled charsmap.*remove_extra_whitespaces.*no byte pieces"),
    ("llama2c_tok512.model", "remove_extra_whitespaces"),
])
def test_sentencepiece_bpe_llama_cpp_cannot_express_is_refused(fixtures, tmp_path, name, missing):
    """llama.cpp's SPM vocabulary applies no normalizer, and falls back to <0xXX> pieces where
    sentencepiece (without byte_fallback) gives <unk> (without them llama.cpp aborts)."""
    tok = toksmith.load(fixture_file(fixtures, f"spm/{name}"))
    target = tmp_path / "refused.gguf"
    target.write_bytes(b"old")
    with pytest.raises(toksmith.UnsupportedConversionError, match=missing) as caught:
        tok.save(target)
    assert name in str(caught.value) and "vocab-only GGUF" in str(caught.value)
    assert target.read_bytes() == b"old"


def test_refused_normalizer_would_tokenize_differently(fixtures, tmp_path):
    """Why llama2c_tok512.model is refused: the file llama.cpp's converter writes for it (the
    same keys without the refusal) tokenizes runs of spaces unlike sentencepiece, which
    removes extra whitespace."""
    from toksmith.writers.gguf_binary import encode_gguf
    from toksmith.writers.gguf_keys import header_entries, special_id_entries, special_ids_of
    from toksmith.writers.gguf_sentencepiece import vocabulary_entries
    model_path = fixture_file(fixtures, "spm/llama2c_tok512.model")
    spec = toksmith.load(model_path).spec
    lossy = tmp_path / "lossy.gguf"
    lossy.write_bytes(encode_gguf(header_entries("llama", "lossy") + vocabulary_entries(spec, "llama")
                                  + special_id_entries(special_ids_of(spec.vocab.special))))
    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    text = "  Hello   world  "
    assert llama_cpp_reference.load_vocab(lossy).tokenize(text.encode(), False, False) != sp.encode(text)


# ------------------------------------------------------------------ RWKV .txt -> GGUF

def test_rwkv_txt_to_gguf_matches_the_rwkv_package(fixtures, corpus_lines, invalid_utf8_lines, tmp_path):
    """The rwkv package's TRIE_TOKENIZER on the .txt against llama.cpp on the written GGUF,
    every corpus line. The GGUF holds the tokens the converter writes (tests/rwkv_gguf.py).
    Flags: llama.cpp's RWKV vocabulary adds no BOS/EOS (add_special provably changes
    nothing), and the rwkv package has no special tokens: parse_special=False."""
    from rwkv.rwkv_tokenizer import TRIE_TOKENIZER
    from toksmith.errors import InexactConversionWarning
    txt = fixture_file(fixtures, "rwkv/rwkv_vocab_v20230424.txt")
    # exact=False: llama.cpp reads the text "<s>" (and "[PAD65535]") as tokens, the rwkv package
    # does not (test_convert_exact_or_refuse.py); no corpus line holds them.
    with pytest.warns(InexactConversionWarning):
        written = toksmith.load(txt).save(tmp_path / "rwkv.gguf", exact=False)
    converter_tokens, converter_types = rwkv_world_tokens(txt)
    meta = read_metadata(written)
    assert meta["tokenizer.ggml.tokens"] == converter_tokens and meta["tokenizer.ggml.token_type"] == converter_types
    assert (meta["tokenizer.ggml.bos_token_id"], meta["tokenizer.ggml.eot_token_id"]) == (0, 261)
    trie, ref = TRIE_TOKENIZER(str(txt)), llama_cpp_reference.load_vocab(written)
    against = "the rwkv package's TRIE_TOKENIZER on the .txt"
    ids_check = Comparison(f"convert {txt.name} -> gguf, ids by llama.cpp on the written file", against=against)
    decode_check = Comparison(f"convert {txt.name} -> gguf, decode by llama.cpp on the written file", against=against)
    for corpus, lines in corpus_lines.items():
        for i, line in enumerate(lines):
            want = trie.encode(line)
            ids_check.one(line, ref.tokenize(line.encode("utf-8"), True, False), want, what=f"{corpus}:{i + 1}")
            decode_check.one(line, ref.detokenize(want, True, False), trie.decodeBytes(want), what=f"{corpus}:{i + 1}")
    for raw in invalid_utf8_lines:
        ids_check.one(raw, ref.tokenize(raw, True, False), trie.encodeBytes(raw), what="invalid UTF-8")
    for check in (ids_check, decode_check):
        check.finish()
