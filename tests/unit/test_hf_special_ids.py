"""Special tokens and special ids of tokenizer.json files, model folders and trained
tokenizers (issue 30, item 11), and that every kind of tokenizer reports them.

Expected values come from the references: transformers' AutoTokenizer on the fixture
folders (offline), tokenizers' own model and added tokens, and the GGUF twin of
MiniLM (ggml-vocab-bert-bge.gguf, the same BERT vocabulary read by llama.cpp's rules).
SpecialIds has no cls field: a CLS token is reported as bos, as llama.cpp stores it.
"""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest

import toksmith
from tests.conftest import fixture_file
from toksmith.special_tokens import SplitWhen

os.environ.setdefault("HF_HUB_OFFLINE", "1")       # transformers must never reach the network
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROLES = ("unk", "bos", "eos", "pad", "sep", "mask")
FOLDERS = ("hf/all-MiniLM-L6-v2", "hf/gpt2", "hf/rut5-large")
TOKENIZER_JSONS = ("hf/all-MiniLM-L6-v2/tokenizer.json", "hf/rut5-large/tokenizer.json", "hf/llama3/tokenizer.json.gz")
OTHER_FILES = ("gguf/ggml-vocab-bert-bge.gguf", "gguf/ggml-vocab-phi-3.gguf", "spm/llama2_tokenizer.model",
               "tiktoken/cl100k_base.tiktoken", "rwkv/rwkv_vocab_v20230424.txt")


def _path(fixtures, tmp_path, relative: str):
    if relative.endswith(".gz"):
        plain = tmp_path / os.path.basename(relative)[:-3]
        plain.write_bytes(gzip.decompress(fixture_file(fixtures, relative).read_bytes()))
        return plain
    full = fixtures / relative
    if full.is_dir():
        return full
    return fixture_file(fixtures, relative)


def _trained(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world, hello tokenizers\n" * 50 + "the quick brown fox\n" * 20)
    return toksmith.train_bpe([str(corpus)], 300)


def _trained_like(tmp_path):
    """train_bpe(like=) on a BPE tokenizer.json with a [BOS] $A [EOS] template."""
    import tokenizers
    from tokenizers import models, pre_tokenizers, processors
    like = tokenizers.Tokenizer(models.BPE(unk_token="<unk>"))
    like.pre_tokenizer = pre_tokenizers.Whitespace()
    like.add_special_tokens(["<unk>", "<s>", "</s>"])
    like.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 1), ("</s>", 2)])
    like.save(str(tmp_path / "like.json"))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world, hello tokenizers\n" * 50 + "the quick brown fox\n" * 20)
    return toksmith.train_bpe([str(corpus)], 100, like=str(tmp_path / "like.json"),
                              special_tokens=["<unk>", "<s>", "</s>"])


def test_train_bpe_like_result_names_its_specials(tmp_path):
    import tokenizers
    tok = _trained_like(tmp_path)
    _assert_reports_specials(tok)
    tok.save(tmp_path / "trained.json")
    ref = tokenizers.Tokenizer.from_file(str(tmp_path / "trained.json"))
    assert tok.special_ids == toksmith.SpecialIds(unk=ref.token_to_id(ref.model.unk_token),
                                                  bos=ref.token_to_id("<s>"), eos=ref.token_to_id("</s>"))
    assert ref.encode("hello").ids == [tok.special_ids.bos, *ref.encode("hello", add_special_tokens=False).ids,
                                       tok.special_ids.eos]


def _assert_reports_specials(tok):
    info = tok.describe()
    json.dumps(info)
    assert info["special_ids"] == tok.special_ids.as_dict()
    assert isinstance(tok.special_tokens, tuple)
    for token in tok.special_tokens:
        assert 0 <= token.id < tok.vocab_size
        if token.split is not SplitWhen.NEVER:
            # What inspect says is split out really is: the text alone gives its id.
            assert tok.encode(token.text, add_special=False, parse_special=True) == [token.id], token


@pytest.mark.parametrize("relative", FOLDERS + TOKENIZER_JSONS + OTHER_FILES + ("embedded", "trained"))
def test_every_kind_reports_special_tokens_and_ids(fixtures, tmp_path, relative):
    if relative == "embedded":
        tok = toksmith.load("o200k_base")
    elif relative == "trained":
        tok = _trained(tmp_path)
    else:
        tok = toksmith.load(_path(fixtures, tmp_path, relative))
    _assert_reports_specials(tok)


@pytest.mark.parametrize("folder", FOLDERS)
def test_folder_special_ids_match_transformers(fixtures, folder):
    import transformers
    path = fixtures / folder
    want = transformers.AutoTokenizer.from_pretrained(str(path))
    got = toksmith.load(path).special_ids
    compared = 0
    for role in ROLES:
        expected = getattr(want, f"{role}_token_id")
        if role == "bos" and expected is None:
            expected = want.cls_token_id
        assert getattr(got, role) == expected, (folder, role)
        compared += 1
    assert compared == len(ROLES)


def test_minilm_special_ids_match_its_gguf_twin(fixtures):
    twin = toksmith.load(fixture_file(fixtures, "gguf/ggml-vocab-bert-bge.gguf")).special_ids
    assert toksmith.load(fixtures / "hf/all-MiniLM-L6-v2").special_ids == twin
    # The tokenizer.json alone names no [MASK] role; every role it does name agrees.
    alone = toksmith.load(fixture_file(fixtures, "hf/all-MiniLM-L6-v2/tokenizer.json")).special_ids
    assert alone.as_dict() == {k: v for k, v in twin.as_dict().items() if k != "mask"}


@pytest.mark.parametrize("relative", TOKENIZER_JSONS)
def test_tokenizer_json_unk_and_pad_match_the_references(fixtures, tmp_path, relative):
    import tokenizers
    import transformers
    path = _path(fixtures, tmp_path, relative)
    ref = tokenizers.Tokenizer.from_file(str(path))
    got = toksmith.load(path).special_ids
    model = json.loads(path.read_bytes())["model"]
    if model["type"] == "Unigram":
        assert got.unk == model.get("unk_id")
    else:
        unk = getattr(ref.model, "unk_token", None)
        assert got.unk == (ref.token_to_id(unk) if unk is not None else None)
    assert got.pad == transformers.PreTrainedTokenizerFast(tokenizer_file=str(path)).pad_token_id


@pytest.mark.parametrize("relative", TOKENIZER_JSONS)
def test_special_tokens_are_the_added_tokens(fixtures, tmp_path, relative):
    import tokenizers
    path = _path(fixtures, tmp_path, relative)
    ref = tokenizers.Tokenizer.from_file(str(path))
    tok = toksmith.load(path)
    added = {(i, t.content, t.special) for i, t in ref.get_added_tokens_decoder().items()}
    listed = {(t.id, t.text, t.split is SplitWhen.PARSE_SPECIAL) for t in tok.special_tokens
              if t.split is not SplitWhen.NEVER}
    assert listed == added
    assert len(added) > 0


def test_inspect_a_model_folder(fixtures):
    folder = fixtures / "hf/all-MiniLM-L6-v2"
    result = subprocess.run([sys.executable, "-m", "toksmith.cli", "inspect", str(folder), "--json"],
                            capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    info = json.loads(result.stdout)
    assert info["special_ids"] == {"unk": 100, "bos": 101, "pad": 0, "sep": 102, "mask": 103}
    assert {t["text"] for t in info["special_tokens"]} == {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
