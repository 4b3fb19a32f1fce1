"""read_hf_json against tokenizer.json files that `tokenizers` itself writes.

Every component type and option of tokenizers 0.23 is set through tokenizers' own Python API,
serialized with `Tokenizer.to_str()`, read back with `read_hf_json`, and the dataclass fields
are compared with the values given to the API (never with our own output). The fixture files
parse with counts checked against their JSON.
"""
from __future__ import annotations

import base64
import gzip
import json

import pytest
from tokenizers import AddedToken as HfAddedToken
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from tests.conftest import fixture_file
from toksmith.hf import components as c
from toksmith.hf.reader import read_hf_json

VOCAB = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "a": 3, "b": 4, "ab": 5, "##b": 6, "c": 7, "abc": 8}
B = c.SplitBehavior


def wordlevel() -> Tokenizer:
    return Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))


def roundtrip(tok: Tokenizer) -> c.HfTokenizerSpec:
    return read_hf_json(tok.to_str().encode(), "tok.json")


def with_part(section: str, component) -> c.HfTokenizerSpec:
    tok = wordlevel()
    setattr(tok, section, component)
    return roundtrip(tok)


# ---------------------------------------------------------------------- normalizers

CHARSMAP = bytes([8, 0, 0, 0]) + bytes(8) + b"x\0"     # trie of 8 bytes, then the strings

NORMALIZER_CASES = {
    "BertNormalizer-defaults": (normalizers.BertNormalizer(), c.BertNormalizer()),
    "BertNormalizer-options": (
        normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False),
        c.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)),
    "BertNormalizer-strip_accents-false": (normalizers.BertNormalizer(strip_accents=False),
                                           c.BertNormalizer(strip_accents=False)),
    "ByteLevel": (normalizers.ByteLevel(), c.ByteLevelNormalizer()),
    "Lowercase": (normalizers.Lowercase(), c.Lowercase()),
    "NFC": (normalizers.NFC(), c.NFC()),
    "NFD": (normalizers.NFD(), c.NFD()),
    "NFKC": (normalizers.NFKC(), c.NFKC()),
    "NFKD": (normalizers.NFKD(), c.NFKD()),
    "Nmt": (normalizers.Nmt(), c.Nmt()),
    "StripAccents": (normalizers.StripAccents(), c.StripAccents()),
    "Precompiled": (normalizers.Precompiled(CHARSMAP), c.Precompiled(CHARSMAP)),
    "Prepend": (normalizers.Prepend("\u2581"), c.Prepend("\u2581")),
    "Replace-string": (normalizers.Replace("a", "b"), c.Replace(c.StringPattern("a"), "b")),
    "Replace-regex": (normalizers.Replace(Regex(r"\s{2,}"), " "), c.Replace(c.RegexPattern(r"\s{2,}"), " ")),
    "Strip-both": (normalizers.Strip(), c.Strip(True, True)),
    "Strip-left": (normalizers.Strip(left=True, right=False), c.Strip(left=True, right=False)),
    "Strip-right": (normalizers.Strip(left=False, right=True), c.Strip(left=False, right=True)),
    "Sequence": (normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]),
                 c.NormalizerSequence((c.NFKC(), c.Lowercase()))),
    "Sequence-empty": (normalizers.Sequence([]), c.NormalizerSequence(())),
}


@pytest.mark.parametrize("case", NORMALIZER_CASES)
def test_normalizer(case):
    component, expected = NORMALIZER_CASES[case]
    assert with_part("normalizer", component).normalizer == expected


# ---------------------------------------------------------------------- pre-tokenizers

PRE_TOKENIZER_CASES = {
    "BertPreTokenizer": (pre_tokenizers.BertPreTokenizer(), c.BertPreTokenizer()),
    "ByteLevel-defaults": (pre_tokenizers.ByteLevel(), c.ByteLevel(True, True, True)),
    "ByteLevel-add_prefix_space": (pre_tokenizers.ByteLevel(add_prefix_space=False),
                                   c.ByteLevel(add_prefix_space=False)),
    "ByteLevel-trim_offsets": (pre_tokenizers.ByteLevel(trim_offsets=False), c.ByteLevel(trim_offsets=False)),
    "ByteLevel-use_regex": (pre_tokenizers.ByteLevel(use_regex=False), c.ByteLevel(use_regex=False)),
    "CharDelimiterSplit": (pre_tokenizers.CharDelimiterSplit("|"), c.CharDelimiterSplit("|")),
    "Digits": (pre_tokenizers.Digits(), c.Digits(False)),
    "Digits-individual": (pre_tokenizers.Digits(individual_digits=True), c.Digits(True)),
    "FixedLength": (pre_tokenizers.FixedLength(), c.FixedLength(5)),
    "FixedLength-length": (pre_tokenizers.FixedLength(length=3), c.FixedLength(3)),
    "Metaspace-defaults": (pre_tokenizers.Metaspace(), c.Metaspace("\u2581", c.PrependScheme.ALWAYS, True)),
    "Metaspace-replacement": (pre_tokenizers.Metaspace(replacement="_"), c.Metaspace(replacement="_")),
    "Metaspace-first": (pre_tokenizers.Metaspace(prepend_scheme="first"),
                        c.Metaspace(prepend_scheme=c.PrependScheme.FIRST)),
    "Metaspace-never": (pre_tokenizers.Metaspace(prepend_scheme="never"),
                        c.Metaspace(prepend_scheme=c.PrependScheme.NEVER)),
    "Metaspace-split": (pre_tokenizers.Metaspace(split=False), c.Metaspace(split=False)),
    "Punctuation": (pre_tokenizers.Punctuation(), c.Punctuation(B.ISOLATED)),
    "Split-string": (pre_tokenizers.Split("-", "removed"), c.Split(c.StringPattern("-"), B.REMOVED)),
    "Split-regex-invert": (pre_tokenizers.Split(Regex(r"\p{L}+"), "isolated", invert=True),
                           c.Split(c.RegexPattern(r"\p{L}+"), B.ISOLATED, invert=True)),
    "UnicodeScripts": (pre_tokenizers.UnicodeScripts(), c.UnicodeScripts()),
    "Whitespace": (pre_tokenizers.Whitespace(), c.Whitespace()),
    "WhitespaceSplit": (pre_tokenizers.WhitespaceSplit(), c.WhitespaceSplit()),
    "Sequence": (pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Digits(True)]),
                 c.PreTokenizerSequence((c.WhitespaceSplit(), c.Digits(True)))),
}
for _name, _api in [("removed", B.REMOVED), ("isolated", B.ISOLATED), ("merged_with_previous", B.MERGED_WITH_PREVIOUS),
                    ("merged_with_next", B.MERGED_WITH_NEXT), ("contiguous", B.CONTIGUOUS)]:
    PRE_TOKENIZER_CASES[f"Punctuation-{_name}"] = (pre_tokenizers.Punctuation(_name), c.Punctuation(_api))
    PRE_TOKENIZER_CASES[f"Split-{_name}"] = (pre_tokenizers.Split(Regex(r"\d"), _name),
                                             c.Split(c.RegexPattern(r"\d"), _api))


@pytest.mark.parametrize("case", PRE_TOKENIZER_CASES)
def test_pre_tokenizer(case):
    component, expected = PRE_TOKENIZER_CASES[case]
    assert with_part("pre_tokenizer", component).pre_tokenizer == expected


# ---------------------------------------------------------------------- decoders

DECODER_CASES = {
    "BPEDecoder": (decoders.BPEDecoder(), c.BpeDecoder("</w>")),
    "BPEDecoder-suffix": (decoders.BPEDecoder(suffix="_e"), c.BpeDecoder("_e")),
    "ByteFallback": (decoders.ByteFallback(), c.ByteFallback()),
    "ByteLevel": (decoders.ByteLevel(), c.ByteLevel()),
    "CTC": (decoders.CTC(), c.Ctc("<pad>", "|", True)),
    "CTC-options": (decoders.CTC(pad_token="[P]", word_delimiter_token="#", cleanup=False), c.Ctc("[P]", "#", False)),
    "Fuse": (decoders.Fuse(), c.Fuse()),
    "Metaspace": (decoders.Metaspace(replacement="_", prepend_scheme="first", split=False),
                  c.Metaspace("_", c.PrependScheme.FIRST, False)),
    "Replace": (decoders.Replace("\u2581", " "), c.Replace(c.StringPattern("\u2581"), " ")),
    "Replace-regex": (decoders.Replace(Regex("_+"), " "), c.Replace(c.RegexPattern("_+"), " ")),
    "Strip": (decoders.Strip(content=" ", left=1, right=2), c.StripDecoder(" ", 1, 2)),
    "WordPiece": (decoders.WordPiece(), c.WordPieceDecoder("##", True)),
    "WordPiece-options": (decoders.WordPiece(prefix="@@", cleanup=False), c.WordPieceDecoder("@@", False)),
    "Sequence": (decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()]),
                 c.DecoderSequence((c.ByteFallback(), c.Fuse()))),
}


@pytest.mark.parametrize("case", DECODER_CASES)
def test_decoder(case):
    component, expected = DECODER_CASES[case]
    assert with_part("decoder", component).decoder == expected


# ---------------------------------------------------------------------- post-processors

def _template_case():
    proc = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                         special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    S, T = c.TemplateSpecialToken, c.TemplateSequence
    return proc, c.TemplateProcessing(
        single=(S("[CLS]"), T(c.Sequence.A), S("[SEP]")),
        pair=(S("[CLS]"), T(c.Sequence.A), S("[SEP]"), T(c.Sequence.B, 1), S("[SEP]", 1)),
        special_tokens={"[CLS]": (1,), "[SEP]": (2,)})


def _template_processing_equal(a: c.TemplateProcessing, b: c.TemplateProcessing) -> bool:
    return (a.single, a.pair, a.special_tokens) == (b.single, b.pair, b.special_tokens)


POST_CASES = {
    "TemplateProcessing": _template_case(),
    "TemplateProcessing-multi-id": (
        processors.TemplateProcessing(single="$0 [X]", pair="$A [X] $B:1",
                                      special_tokens=[{"id": "[X]", "ids": [1, 2], "tokens": ["[CLS]", "[SEP]"]}]),
        c.TemplateProcessing(single=(c.TemplateSequence(c.Sequence.A), c.TemplateSpecialToken("[X]")),
                             pair=(c.TemplateSequence(c.Sequence.A), c.TemplateSpecialToken("[X]"),
                                   c.TemplateSequence(c.Sequence.B, 1)),
                             special_tokens={"[X]": (1, 2)})),
    "BertProcessing": (processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1)), c.BertProcessing(("[SEP]", 2), ("[CLS]", 1))),
    "RobertaProcessing": (processors.RobertaProcessing(("[SEP]", 2), ("[CLS]", 1)),
                          c.RobertaProcessing(("[SEP]", 2), ("[CLS]", 1), True, True)),
    "RobertaProcessing-options": (processors.RobertaProcessing(("[SEP]", 2), ("[CLS]", 1), trim_offsets=False,
                                                               add_prefix_space=False),
                                  c.RobertaProcessing(("[SEP]", 2), ("[CLS]", 1), False, False)),
    "ByteLevel": (processors.ByteLevel(), c.ByteLevel()),
    "ByteLevel-options": (processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
                          c.ByteLevel(False, False, False)),
    "Sequence": (processors.Sequence([processors.ByteLevel(trim_offsets=False),
                                      processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))]),
                 c.PostProcessorSequence((c.ByteLevel(trim_offsets=False),
                                          c.BertProcessing(("[SEP]", 2), ("[CLS]", 1))))),
}


@pytest.mark.parametrize("case", POST_CASES)
def test_post_processor(case):
    component, expected = POST_CASES[case]
    got = with_part("post_processor", component).post_processor
    if isinstance(expected, c.TemplateProcessing):
        assert _template_processing_equal(got, expected), got
    else:
        assert got == expected


# ---------------------------------------------------------------------- models

MERGES = [("a", "b"), ("ab", "c")]
BPE_VOCAB = {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "<unk>": 5, "<0x41>": 6}


def bpe_spec(**options) -> c.BpeModel:
    return roundtrip(Tokenizer(models.BPE(dict(BPE_VOCAB), list(MERGES), **options))).model


def test_bpe_defaults():
    m = bpe_spec()
    assert (m.vocab, m.merges) == (BPE_VOCAB, tuple(MERGES))
    assert (m.unk_token, m.continuing_subword_prefix, m.end_of_word_suffix) == (None, None, None)
    assert (m.fuse_unk, m.byte_fallback, m.ignore_merges) == (False, False, False)


@pytest.mark.parametrize("option, value, field", [
    ("unk_token", "<unk>", "unk_token"),
    ("end_of_word_suffix", "</w>", "end_of_word_suffix"),
    ("fuse_unk", True, "fuse_unk"),
    ("byte_fallback", True, "byte_fallback"),
    ("ignore_merges", True, "ignore_merges"),
])
def test_bpe_option(option, value, field):
    assert getattr(bpe_spec(**{option: value}), field) == value


def test_bpe_continuing_subword_prefix():
    vocab = {"a": 0, "##b": 1, "ab": 2}
    m = roundtrip(Tokenizer(models.BPE(vocab, [("a", "##b")], continuing_subword_prefix="##"))).model
    assert (m.continuing_subword_prefix, m.merges) == ("##", (("a", "##b"),))


def test_bpe_dropout_zero_is_no_dropout():
    assert bpe_spec(dropout=0.0).merges == tuple(MERGES)


def test_bpe_merges_legacy_strings_and_pairs_agree():
    data = json.loads(Tokenizer(models.BPE(dict(BPE_VOCAB), list(MERGES))).to_str())
    assert data["model"]["merges"] == [list(m) for m in MERGES]      # tokenizers 0.23 writes pairs
    data["model"]["merges"] = ["#version: 0.2"] + [" ".join(m) for m in MERGES]
    assert Tokenizer.from_str(json.dumps(data)).to_str() == Tokenizer(models.BPE(dict(BPE_VOCAB), list(MERGES))).to_str()
    assert read_hf_json(json.dumps(data), "t.json").model.merges == tuple(MERGES)


def test_wordpiece():
    tok = Tokenizer(models.WordPiece(VOCAB, unk_token="[CLS]", continuing_subword_prefix="@@",
                                     max_input_chars_per_word=7))
    m = roundtrip(tok).model
    assert isinstance(m, c.WordPieceModel)
    assert (m.vocab, m.unk_token, m.continuing_subword_prefix, m.max_input_chars_per_word) == (VOCAB, "[CLS]", "@@", 7)


def test_wordpiece_defaults():
    m = roundtrip(Tokenizer(models.WordPiece(VOCAB))).model
    assert (m.unk_token, m.continuing_subword_prefix, m.max_input_chars_per_word) == ("[UNK]", "##", 100)


def test_wordlevel():
    m = roundtrip(wordlevel()).model
    assert isinstance(m, c.WordLevelModel) and (m.vocab, m.unk_token) == (VOCAB, "[UNK]")


@pytest.mark.parametrize("unk_id, byte_fallback", [(None, False), (0, False), (1, True)])
def test_unigram(unk_id, byte_fallback):
    vocab = [("<unk>", 0.0), ("a", -1.5), ("b", -2.25), ("ab", -3.0)]
    m = roundtrip(Tokenizer(models.Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback))).model
    assert isinstance(m, c.UnigramModel)
    assert (m.vocab, m.unk_id, m.byte_fallback) == (tuple(vocab), unk_id, byte_fallback)


# ---------------------------------------------------------------------- added tokens

@pytest.mark.parametrize("option", ["special", "single_word", "lstrip", "rstrip", "normalized"])
@pytest.mark.parametrize("value", [True, False])
def test_added_token_option(option, value):
    tok = wordlevel()
    tok.add_tokens([HfAddedToken("<x>", **{option: value})])
    (added,) = roundtrip(tok).added_tokens
    hf = tok.get_added_tokens_decoder()[len(VOCAB)]
    assert (added.id, added.content) == (len(VOCAB), "<x>")
    assert getattr(added, option) == value == getattr(hf, option)
    for other in ("special", "single_word", "lstrip", "rstrip", "normalized"):
        assert getattr(added, other) == getattr(hf, other)


def test_added_tokens_ids_as_tokenizers_gives_them():
    tok = wordlevel()
    tok.add_special_tokens(["[CLS]", "<s>"])          # [CLS] is in the vocab: keeps id 1
    tok.add_tokens(["<t>"])
    spec = roundtrip(tok)
    assert [(t.id, t.content, t.special) for t in spec.added_tokens] == [
        (tok.token_to_id(t), t, s) for t, s in [("[CLS]", True), ("<s>", True), ("<t>", False)]]


# ---------------------------------------------------------------------- truncation / padding

def test_truncation_and_padding_flags():
    tok = wordlevel()
    assert (roundtrip(tok).has_truncation, roundtrip(tok).has_padding) == (False, False)
    tok.enable_truncation(max_length=8)
    assert (roundtrip(tok).has_truncation, roundtrip(tok).has_padding) == (True, False)
    tok.enable_padding()
    assert (roundtrip(tok).has_truncation, roundtrip(tok).has_padding) == (True, True)


def test_null_components_are_none():
    spec = roundtrip(wordlevel())
    assert (spec.normalizer, spec.pre_tokenizer, spec.post_processor, spec.decoder) == (None, None, None, None)


# ---------------------------------------------------------------------- legacy forms tokenizers accepts

LEGACY = {
    # Metaspace before prepend_scheme: add_prefix_space true (always) and str_rep.
    "Metaspace-add_prefix_space": ("pre_tokenizer",
                                   {"type": "Metaspace", "replacement": "_", "add_prefix_space": True, "str_rep": "_"}),
    "Metaspace-add_prefix_space-false-never": ("pre_tokenizer", {"type": "Metaspace", "replacement": "_",
                                               "add_prefix_space": False, "prepend_scheme": "never"}),
    "BertNormalizer-no-strip_accents": ("normalizer", {"type": "BertNormalizer", "clean_text": True,
                                        "handle_chinese_chars": False, "lowercase": True}),
    "Bert-tagged-name": ("normalizer", {"type": "Bert", "clean_text": True, "handle_chinese_chars": True,
                                        "lowercase": False, "strip_accents": None}),
    "RobertaProcessing-without-options-is-Bert": (
        "post_processor", {"type": "RobertaProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]}),
    "ByteLevel-without-use_regex": ("pre_tokenizer", {"type": "ByteLevel", "add_prefix_space": False,
                                                      "trim_offsets": True}),
    "model-without-type": ("model", {"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}),
    "Precompiled-base64": ("normalizer", {"type": "Precompiled",
                                          "precompiled_charsmap": base64.b64encode(CHARSMAP).decode()}),
}


@pytest.mark.parametrize("case", LEGACY)
def test_legacy_form_reads_as_tokenizers_reads_it(case):
    """tokenizers loads the legacy form and writes it back in today's form; both read the same."""
    section, value = LEGACY[case]
    data = json.loads(wordlevel().to_str())
    data[section] = value
    legacy = json.dumps(data)
    modern = Tokenizer.from_str(legacy).to_str()
    assert json.loads(modern)[section] != value or case == "Precompiled-base64"
    ours, theirs = read_hf_json(legacy, "t.json"), read_hf_json(modern, "t.json")
    got, want = getattr(ours, section), getattr(theirs, section)
    if section == "model":
        assert (type(got), got.vocab, got.merges) == (type(want), want.vocab, want.merges)
    else:
        assert got == want


# ---------------------------------------------------------------------- the fixture files

def _load_fixture(fixtures, tmp_path, relative: str) -> tuple[bytes, dict]:
    path = fixture_file(fixtures, relative)
    if relative.endswith(".gz"):
        out = tmp_path / "tokenizer.json"
        out.write_bytes(gzip.decompress(path.read_bytes()))
        path = out
    data = path.read_bytes()
    return data, json.loads(data)


@pytest.mark.parametrize("relative, model_type", [
    ("hf/llama3/tokenizer.json.gz", c.BpeModel),
    ("hf/all-MiniLM-L6-v2/tokenizer.json", c.WordPieceModel),
    ("hf/rut5-large/tokenizer.json", c.UnigramModel),
])
def test_fixture_file(fixtures, tmp_path, relative, model_type):
    data, raw = _load_fixture(fixtures, tmp_path, relative)
    spec = read_hf_json(data, relative)
    model = raw["model"]
    assert type(spec.model) is model_type
    assert len(spec.model.vocab) == len(model["vocab"])
    if model_type is c.BpeModel:
        assert len(spec.model.merges) == len(model["merges"])
        first = model["merges"][0]
        assert spec.model.merges[0] == (tuple(first) if isinstance(first, list) else tuple(first.split(" ")))
        assert spec.model.ignore_merges == model.get("ignore_merges", False)
    if model_type is c.UnigramModel:
        assert spec.model.unk_id == model["unk_id"]
        assert spec.model.vocab[5] == tuple(model["vocab"][5])
    assert [(t.id, t.content, t.special, t.single_word, t.lstrip, t.rstrip, t.normalized) for t in spec.added_tokens] \
        == [(t["id"], t["content"], t["special"], t["single_word"], t["lstrip"], t["rstrip"], t["normalized"])
            for t in raw["added_tokens"]]
    hf = Tokenizer.from_str(data.decode())
    assert all(hf.token_to_id(t.content) == t.id for t in spec.added_tokens)
    for section in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        part = getattr(spec, section)
        assert (part is None) == (raw[section] is None)
        if part is not None:
            assert _type_name(part) == raw[section]["type"], section
    assert (spec.has_truncation, spec.has_padding) == (raw["truncation"] is not None, raw["padding"] is not None)


def _type_name(part) -> str:
    names = {c.NormalizerSequence: "Sequence", c.PreTokenizerSequence: "Sequence", c.DecoderSequence: "Sequence",
             c.PostProcessorSequence: "Sequence", c.WordPieceDecoder: "WordPiece"}
    return names.get(type(part), type(part).__name__)
