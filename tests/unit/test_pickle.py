"""Pickling and copying tokenizers: by source bytes, deterministic, identical behaviour.

A pickled tokenizer carries the bytes of its file (a GGUF's header and metadata
only, never its tensors) and its load options, not the path: the copy works
where the file does not exist. The same file always pickles to the same bytes,
so `datasets` can fingerprint a captured tokenizer.
"""
from __future__ import annotations

import copy
import dataclasses
import itertools
import os
import pickle
import shutil
import warnings

import numpy as np
import pytest

import gguf
import toksmith
from tests.conftest import fixture_file
from toksmith import ReferenceRules

MODELS = [
    ("spm/t5_base_japanese_spiece.model", None),            # Unigram
    ("spm/llama2_tokenizer.model", None),                   # SPM-BPE
    ("gguf/ggml-vocab-llama-spm.gguf", None),               # llama.cpp SPM
    ("gguf/ggml-vocab-nomic-bert-moe.gguf", None),          # llama.cpp UGM
    ("gguf/ggml-vocab-nomic-bert-moe.gguf", ReferenceRules.SENTENCEPIECE),
]
COPIES = {
    "pickle": lambda tok: pickle.loads(pickle.dumps(tok)),
    "pickle-protocol-2": lambda tok: pickle.loads(pickle.dumps(tok, protocol=2)),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}
SPECIAL_TEXTS = ["<s>Hello</s> world", "<unk> <pad> </s>", " <s> leading space"]


def _load(fixtures, relative, rules):
    path = fixture_file(fixtures, relative)
    return toksmith.load(path) if rules is None else toksmith.load(path, rules=rules)


def assert_same_behaviour(got, want, lines, *, same_source=True):
    assert type(got) is type(want)
    assert got.spec.rules is want.spec.rules
    assert got.vocab_size == want.vocab_size
    if same_source:
        assert repr(got) == repr(want)
        assert got.describe() == want.describe()
    ids = want.encode_batch(lines)
    assert got.encode_batch(lines) == ids
    assert [got.encode(line) for line in lines[:200]] == ids[:200]
    assert [got.decode(i) for i in ids] == [want.decode(i) for i in ids]
    assert [got.tokenize(line) for line in lines[:200]] == [want.tokenize(line) for line in lines[:200]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the double-BOS warning of "<s>..." with add_special
        for text, add_special in itertools.product(SPECIAL_TEXTS, (False, True)):
            assert (got.encode(text, add_special=add_special, parse_special=True)
                    == want.encode(text, add_special=add_special, parse_special=True))
            assert got.tokenize(text, parse_special=True) == want.tokenize(text, parse_special=True)


@pytest.fixture(scope="module")
def lines(corpus_lines):
    return corpus_lines["man_en.txt"][:400] + corpus_lines["man_ja.txt"][:400] + corpus_lines["tricky_strings.txt"]


@pytest.mark.parametrize("how", list(COPIES))
@pytest.mark.parametrize("relative, rules", MODELS)
def test_copies_behave_identically(fixtures, lines, relative, rules, how):
    tok = _load(fixtures, relative, rules)
    twin = COPIES[how](tok)
    assert twin is not tok
    assert_same_behaviour(twin, tok, lines)


@pytest.mark.parametrize("relative, rules", MODELS)
def test_pickle_is_deterministic(fixtures, relative, rules):
    first = pickle.dumps(_load(fixtures, relative, rules))
    tok = _load(fixtures, relative, rules)
    tok.encode_batch(["warm the caches", "日本語"] * 50)
    assert pickle.dumps(tok) == first
    assert pickle.dumps(tok) == first
    assert pickle.dumps(pickle.loads(first)) == first


def test_rules_change_the_pickle(fixtures):
    path = fixture_file(fixtures, "gguf/ggml-vocab-nomic-bert-moe.gguf")
    assert (pickle.dumps(toksmith.load(path))
            != pickle.dumps(toksmith.load(path, rules=ReferenceRules.SENTENCEPIECE)))


@pytest.mark.parametrize("relative", ["spm/llama2_tokenizer.model", "gguf/ggml-vocab-llama-spm.gguf"])
def test_pickle_needs_no_file(fixtures, lines, tmp_path, relative):
    path = tmp_path / os.path.basename(relative)
    shutil.copyfile(fixture_file(fixtures, relative), path)
    tok = toksmith.load(path)
    data = pickle.dumps(tok)
    path.unlink()
    assert_same_behaviour(pickle.loads(data), tok, lines)


def test_embedded_tokenizer_pickles():
    tok = toksmith.load_embedded("sentencepiece-demo")
    twin = pickle.loads(pickle.dumps(tok))
    texts = ["Hello, world", "日本語のテキスト", "naïve café " * 30]
    assert twin.encode_batch(texts) == tok.encode_batch(texts)
    assert copy.deepcopy(tok).tokenize(texts[2]) == tok.tokenize(texts[2])


def test_tokenizer_without_source_bytes_says_why_it_cannot_pickle():
    # A spec built in memory carries no file bytes (a loaded one does, and pickles).
    spec = dataclasses.replace(toksmith.load_embedded("sentencepiece-demo").spec, source_data=None)
    with pytest.raises(TypeError, match="toksmith.load"):
        pickle.dumps(toksmith.Tokenizer(spec))


# ----------------------------------------------------------------- GGUF with tensors

TENSOR_BYTES = 4 << 20
TENSOR_PATTERN = bytes(range(3, 256, 4))   # 64 bytes that no tokenizer metadata holds


def _gguf_with_a_tensor(source, path):
    """`source`'s metadata plus one 4 MiB tensor, written by the gguf package."""
    reader = gguf.GGUFReader(source)
    writer = gguf.GGUFWriter(path, reader.fields["general.architecture"].contents())
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        vtype = field.types[0]
        sub_type = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, field.contents(), vtype, sub_type)
    pattern = np.frombuffer(TENSOR_PATTERN * (TENSOR_BYTES // len(TENSOR_PATTERN)), dtype=np.float32)
    writer.add_tensor("token_embd.weight", pattern.reshape(1024, -1))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_gguf_pickle_holds_no_tensor_data(fixtures, lines, tmp_path):
    vocab_only = fixture_file(fixtures, "gguf/ggml-vocab-llama-spm.gguf")
    model = _gguf_with_a_tensor(vocab_only, tmp_path / "model.gguf")
    assert len(gguf.GGUFReader(model).tensors) == 1
    assert os.path.getsize(model) > TENSOR_BYTES

    tok = toksmith.load(model)
    data = pickle.dumps(tok)
    assert len(data) < os.path.getsize(vocab_only) + 4096
    assert TENSOR_PATTERN not in data
    twin = pickle.loads(data)
    assert_same_behaviour(twin, tok, lines)
    assert_same_behaviour(twin, toksmith.load(vocab_only), lines, same_source=False)

    # What the pickle carries is a GGUF of its own: all the metadata, no tensors.
    _cls, payload, *_ = tok.__reduce__()[1]
    (tmp_path / "payload.gguf").write_bytes(payload)
    carried = gguf.GGUFReader(tmp_path / "payload.gguf")
    original = gguf.GGUFReader(model)
    assert len(carried.tensors) == 0
    assert ({k: f.contents() for k, f in carried.fields.items() if not k.startswith("GGUF.")}
            == {k: f.contents() for k, f in original.fields.items() if not k.startswith("GGUF.")})


# ----------------------------------------------------------------- model folders (issue 30, item 15)

def _model_folder(fixtures, tmp_path, kind: str):
    """A GPT-2 folder (vocab.json + merges.txt) or a BERT one (vocab.txt): no tokenizer.json."""
    if kind == "gpt2":
        names, source = ("vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json"), "hf/gpt2"
    else:
        names, source = ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json"), "hf/all-MiniLM-L6-v2"
    folder = tmp_path / kind
    folder.mkdir()
    for name in names:
        shutil.copy(fixture_file(fixtures, f"{source}/{name}"), folder / name)
    return folder


def _encode_lines(tok, lines):
    return [tok.encode(line) for line in lines]


@pytest.mark.parametrize("kind", ["gpt2", "bert"])
def test_model_folder_tokenizers_pickle_by_their_tokenizer_json(fixtures, lines, tmp_path, kind):
    folder = _model_folder(fixtures, tmp_path, kind)
    tok = toksmith.load(folder)
    assert tok.spec.source_data is None          # read from several files
    data = pickle.dumps(tok)
    assert pickle.dumps(tok) == data             # deterministic
    shutil.rmtree(folder)                        # the copy needs no file
    for twin in (pickle.loads(data), copy.deepcopy(tok)):
        assert twin.special_ids == tok.special_ids
        assert_same_behaviour(twin, tok, lines)


@pytest.mark.parametrize("kind", ["gpt2", "bert"])
def test_model_folder_tokenizers_work_in_spawned_workers(fixtures, lines, tmp_path, kind):
    import multiprocessing
    tok = toksmith.load(_model_folder(fixtures, tmp_path, kind))
    chunks = [lines[:200], lines[200:400]]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        got = pool.starmap_async(_encode_lines, [(tok, chunk) for chunk in chunks]).get(timeout=300)
    assert got == [_encode_lines(tok, chunk) for chunk in chunks]
