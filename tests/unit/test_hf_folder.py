"""Model folders: the spec read_folder builds equals the tokenizer `tokenizers` builds as
transformers' GPT2Converter / BertConverter do, serialized and read back with read_hf_json."""
from __future__ import annotations

import json
import shutil
from dataclasses import fields

import pytest
from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

import toksmith
from tests.conftest import fixture_file
from toksmith.hf import components as c
from toksmith.hf.folder import FolderKind, read_folder, resolve_folder
from toksmith.hf.reader import read_hf_json


def assert_specs_equal(ours: c.HfTokenizerSpec, theirs: c.HfTokenizerSpec) -> None:
    for f in fields(c.HfTokenizerSpec):
        if f.name in ("source", "model"):
            continue
        a, b = getattr(ours, f.name), getattr(theirs, f.name)
        if isinstance(a, c.TemplateProcessing):
            assert (a.single, a.pair, a.special_tokens) == (b.single, b.pair, b.special_tokens), f.name
        else:
            assert a == b, f.name
    assert type(ours.model) is type(theirs.model)
    for f in fields(type(ours.model)):
        assert getattr(ours.model, f.name) == getattr(theirs.model, f.name), f.name


def gpt2_reference(folder, add_prefix_space=False) -> c.HfTokenizerSpec:
    """transformers convert_slow_tokenizer.GPT2Converter.converted, with GPT2TokenizerFast's specials."""
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    lines = (folder / "merges.txt").read_text(encoding="utf-8").split("\n")[1:-1]
    merges = [tuple(line.split()) for line in lines]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, dropout=None, continuing_subword_prefix="",
                               end_of_word_suffix="", fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    return read_hf_json(tok.to_str(), "reference.json")


def test_gpt2_fixture_folder(fixtures):
    folder = fixture_file(fixtures, "hf/gpt2/vocab.json").parent
    assert resolve_folder(folder) == (FolderKind.GPT2, folder / "vocab.json")
    spec = read_folder(folder)
    assert len(spec.model.merges) == 50000 and len(spec.model.vocab) == 50257
    assert_specs_equal(spec, gpt2_reference(folder))


def test_gpt2_add_prefix_space_from_config(fixtures, tmp_path):
    src = fixture_file(fixtures, "hf/gpt2/vocab.json").parent
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(src / name, tmp_path / name)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"add_prefix_space": True}))
    assert_specs_equal(read_folder(tmp_path), gpt2_reference(tmp_path, add_prefix_space=True))


def bert_reference(folder, lowercase=True) -> c.HfTokenizerSpec:
    """transformers convert_slow_tokenizer.BertConverter.converted, with BertTokenizerFast's specials."""
    tokens = (folder / "vocab.txt").read_text(encoding="utf-8").split("\n")
    vocab = {t: i for i, t in enumerate(tokens[:-1] if tokens[-1] == "" else tokens)}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None,
                                                lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")])
    return read_hf_json(tok.to_str(), "reference.json")


@pytest.mark.parametrize("config, lowercase", [(None, True), ({"do_lower_case": True}, True),
                                               ({"do_lower_case": False}, False)])
def test_bert_folder(fixtures, tmp_path, config, lowercase):
    shutil.copy(fixture_file(fixtures, "hf/all-MiniLM-L6-v2/vocab.txt"), tmp_path / "vocab.txt")
    if config is not None:
        (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    assert resolve_folder(tmp_path) == (FolderKind.BERT, tmp_path / "vocab.txt")
    assert_specs_equal(read_folder(tmp_path), bert_reference(tmp_path, lowercase))


def test_bert_folder_matches_the_fixture_tokenizer_json(fixtures, tmp_path):
    """all-MiniLM-L6-v2 ships both: the folder read from vocab.txt equals its own tokenizer.json."""
    folder = fixture_file(fixtures, "hf/all-MiniLM-L6-v2/vocab.txt").parent
    for name in ("vocab.txt", "tokenizer_config.json"):
        shutil.copy(folder / name, tmp_path / name)
    shipped = read_hf_json((folder / "tokenizer.json").read_bytes(), "tokenizer.json")
    ours = read_folder(tmp_path)
    assert_specs_equal(ours, c.HfTokenizerSpec(**{**{f.name: getattr(shipped, f.name) for f in fields(shipped)},
                                                  "has_truncation": False, "has_padding": False,
                                                  "pad_token": None}))


def test_resolution_order(tmp_path):
    steps = [("vocab.txt", "vocab.txt"), ("vocab.json", "vocab.txt"), ("merges.txt", "vocab.json"),
             ("spiece.model", "spiece.model"), ("tokenizer.model", "tokenizer.model"),
             ("tokenizer.json", "tokenizer.json")]
    for added, chosen in steps:
        (tmp_path / added).write_text("")
        assert resolve_folder(tmp_path)[1].name == chosen, added


@pytest.mark.parametrize("files, message", [
    ({}, "no tokenizer in this folder"),
    ({"vocab.json": "{", "merges.txt": ""}, r"vocab\.json: \$: malformed JSON"),
    ({"vocab.json": '{"a": 0}', "merges.txt": "#version: 0.2\na b c\n"}, r"merges\.txt: line 2"),
    ({"vocab.json": '{"a": 0, "b": 1}', "merges.txt": "#version: 0.2\na b\n"}, r"merges\.txt: merge 1"),
    ({"vocab.json": '{"a": 0, "b": 0}', "merges.txt": ""}, r"vocab\.json: \$\['b'\]: duplicate id"),
    ({"vocab.txt": "[UNK]\n[CLS]\n[SEP]\n[UNK]\n"}, r"vocab\.txt: line 4: duplicate token"),
    ({"vocab.txt": "a\nb\n"}, r"vocab\.txt: \[UNK\] is not in the vocab"),
    ({"vocab.txt": "[UNK]\n[CLS]\n[SEP]\n", "tokenizer_config.json": '{"do_lower_case": "no"}'},
     r"tokenizer_config\.json: \$\.do_lower_case"),
    ({"vocab.txt": b"[UNK]\n\xff\n"}, r"vocab\.txt: not UTF-8"),
])
def test_bad_folder(tmp_path, files, message):
    for name, content in files.items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(toksmith.ModelFormatError, match=message):
        read_folder(tmp_path)
