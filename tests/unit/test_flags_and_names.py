"""Flags are bools, and load() names what a mistyped name may have meant (issue 30, item 13).

- every flag of every public encode/decode method (on a Tokenizer and on its Engine)
  takes True/False (or a numpy bool) and refuses anything else with a TypeError naming
  the flag: "yes", "no", 0, 1, None would otherwise count as true or false silently;
- load("o200k"), load("gpt-4o") suggest the embedded tokenizer (for a model name, the
  encoding tiktoken's own model table gives it);
- a bare embedded name means the embedded tokenizer even where a file of that name
  exists (a warning says so); "./name" or a Path loads the file.
"""
from __future__ import annotations

import os
import pathlib
import shutil
import warnings

import numpy as np
import pytest
import tiktoken.model

import toksmith
from tests.conftest import fixture_file

BAD_FLAGS = ["yes", "no", "", 0, 1, None, 1.0, [True]]

# (method, positional arguments, its flags) of the public API.
CALLS = [
    ("encode", ("Hello <|endoftext|>",), ("add_special", "parse_special")),
    ("encode_batch", (["Hello", "world"],), ("add_special", "parse_special")),
    ("tokenize", ("Hello world",), ("add_special", "parse_special")),
    ("decode", ([99, 1917],), ("skip_special",)),
    ("decode_bytes", ([99, 1917],), ("skip_special",)),
    ("stream_decoder", (), ("skip_special",)),
]


@pytest.fixture(scope="module", params=["cl100k_base", "sentencepiece-demo"])
def tok(request):
    return toksmith.load_embedded(request.param)


@pytest.mark.parametrize("owner", ["tokenizer", "engine"])
@pytest.mark.parametrize("method, args, flags", CALLS, ids=[c[0] for c in CALLS])
def test_flags_must_be_bool(tok, owner, method, args, flags):
    target = tok if owner == "tokenizer" else tok.engine
    call = getattr(target, method)
    checked = 0
    for flag in flags:
        for bad in BAD_FLAGS:
            with pytest.raises(TypeError, match=rf"^{flag} must be a bool"):
                call(*args, **{flag: bad})
            checked += 1
        for good in (True, False, np.bool_(True), np.bool_(False)):
            call(*args, **{flag: good})
    assert checked == len(flags) * len(BAD_FLAGS)


def test_numpy_bool_flags_mean_what_bools_mean(tok):
    text = "Hello <|endoftext|> world"
    for value in (True, False):
        assert tok.encode(text, add_special=np.bool_(value), parse_special=np.bool_(not value)) == \
            tok.encode(text, add_special=value, parse_special=not value)


def test_encode_with_pair_checks_its_flags(fixtures):
    tok = toksmith.load(fixture_file(fixtures, "hf/all-MiniLM-L6-v2/tokenizer.json"))
    with pytest.raises(TypeError, match="^add_special must be a bool"):
        tok.encode("a", pair="b", add_special="no")


# ----------------------------------------------------------------- names load() suggests


def test_model_names_suggest_the_encoding_tiktoken_gives_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    models = list(tiktoken.model.MODEL_TO_ENCODING)
    models += [prefix + "2099-01-01" for prefix in tiktoken.model.MODEL_PREFIX_TO_ENCODING]
    compared = 0
    for model in models:
        encoding = tiktoken.model.encoding_name_for_model(model)
        with pytest.raises(FileNotFoundError) as caught:
            toksmith.load(model)
        message = str(caught.value)
        assert f"uses the {encoding} encoding" in message, (model, message)
        if encoding in ("o200k_base", "cl100k_base"):
            assert f"load({encoding!r})" in message
        else:
            assert "not embedded" in message
        compared += 1
    assert compared == len(tiktoken.model.MODEL_TO_ENCODING) + len(tiktoken.model.MODEL_PREFIX_TO_ENCODING)


@pytest.mark.parametrize("name, embedded", [("o200k", "o200k_base"), ("cl100k", "cl100k_base"),
                                            ("O200K_BASE", "o200k_base"), ("sentencepiece", "sentencepiece-demo")])
def test_near_names_suggest_the_embedded_tokenizer(tmp_path, monkeypatch, name, embedded):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=f"did you mean the embedded .*'{embedded}'"):
        toksmith.load(name)


def test_unrelated_missing_name_is_a_plain_missing_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as caught:
        toksmith.load("no-such-tokenizer.json")
    assert "did you mean" not in str(caught.value)


# ----------------------------------------------------------------- a file named like an embedded tokenizer


@pytest.fixture
def shadowing_file(fixtures, tmp_path, monkeypatch):
    """A file named o200k_base in the working directory, holding another tokenizer (GPT-2's ranks)."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(fixture_file(fixtures, "tiktoken/r50k_base.tiktoken"), tmp_path / "o200k_base")
    return tmp_path / "o200k_base"


def test_bare_embedded_name_means_the_embedded_tokenizer(shadowing_file):
    embedded = toksmith.load_embedded("o200k_base")
    with pytest.warns(UserWarning, match=r"loads the embedded tokenizer.*'\./o200k_base'"):
        tok = toksmith.load("o200k_base")
    assert tok.encode("Hello, world") == embedded.encode("Hello, world")
    assert tok.vocab_size == embedded.vocab_size


@pytest.mark.parametrize("spelling", ["./o200k_base", "path"])
def test_a_path_loads_the_file(shadowing_file, spelling):
    path = pathlib.Path("o200k_base") if spelling == "path" else spelling
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok = toksmith.load(path, encoding="r50k_base")
    assert tok.vocab_size == 50257
    assert tok.encode("Hello, world") != toksmith.load_embedded("o200k_base").encode("Hello, world")


def test_load_options_with_an_embedded_name_say_how_to_name_the_file(shadowing_file):
    with pytest.raises(ValueError, match=r"load options do not apply.*'\./o200k_base'"):
        toksmith.load("o200k_base", encoding="r50k_base")


def test_no_warning_without_a_file_of_that_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert not os.path.exists("o200k_base")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        toksmith.load("o200k_base")


@pytest.mark.parametrize("trainer, flag", [("train_unigram", "split_digits"), ("train_unigram", "byte_fallback"),
                                           ("train_sentencepiece_bpe", "add_dummy_prefix"),
                                           ("train_sentencepiece_bpe", "hard_vocab_limit")])
def test_sentencepiece_trainer_flags_must_be_bool(tmp_path, trainer, flag):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world 123\n" * 20)
    for bad in ("yes", "no", 0, 1, None):
        with pytest.raises(TypeError, match=rf"^{flag} must be a bool"):
            getattr(toksmith, trainer)(str(corpus), 300, **{flag: bad})


def test_a_missing_path_gets_no_name_suggestion(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        toksmith.load(str(tmp_path / "o200k"))
    assert "did you mean" not in str(caught.value)
