"""`Tokenizer.save` / `toksmith.writers.save`: choosing the format, and writing whole or not at all.

The writers themselves (what each format holds) are tested against their references in
tests/parity/test_convert_to_*.py; here: the suffix and `format=` rules, and that a failed
or refused write never leaves a half-written file or a stray temporary file behind.
"""
from __future__ import annotations

import os
import stat

import pytest

import toksmith
from toksmith import FileFormat, UnsupportedConversionError, writers
from toksmith.writers.atomic import write_atomically


@pytest.mark.parametrize("name, expected", [
    ("tokenizer.json", FileFormat.HF_JSON), ("out/spiece.model", FileFormat.SENTENCEPIECE),
    ("vocab.gguf", FileFormat.GGUF), ("x.tiktoken", FileFormat.TIKTOKEN), ("UPPER.JSON", FileFormat.HF_JSON),
])
def test_the_suffix_picks_the_format(name, expected):
    assert writers.target_format(name, None) is expected


@pytest.mark.parametrize("given, expected", [
    ("gguf", FileFormat.GGUF), (FileFormat.SENTENCEPIECE, FileFormat.SENTENCEPIECE),
    ("tokenizer.json", FileFormat.HF_JSON), ("tiktoken", FileFormat.TIKTOKEN),
])
def test_format_overrides_the_suffix(given, expected):
    assert writers.target_format("name.bin", given) is expected
    assert writers.target_format("name.json", given) is expected


@pytest.mark.parametrize("name", ["vocab.bin", "tokenizer", "model.txt"])
def test_an_unknown_suffix_without_format_is_an_error_naming_the_choices(name):
    with pytest.raises(ValueError) as caught:
        writers.target_format(name, None)
    message = str(caught.value)
    assert name in message and ".json" in message and ".gguf" in message and "format=" in message


def test_a_format_that_is_read_but_not_written_is_refused():
    with pytest.raises(ValueError, match="rwkv-vocab files are read but not written"):
        writers.target_format("v.txt", FileFormat.RWKV_VOCAB)
    with pytest.raises(ValueError, match="'onnx' is not one of"):
        writers.target_format("v.json", "onnx")
    with pytest.raises(TypeError, match="format must be"):
        writers.target_format("v.json", 3)


def test_write_atomically_writes_and_replaces(tmp_path):
    path = tmp_path / "a.bin"
    write_atomically(path, b"first")
    write_atomically(path, b"second, longer")
    assert path.read_bytes() == b"second, longer"
    assert os.listdir(tmp_path) == ["a.bin"]


def test_write_atomically_keeps_the_permissions_of_the_file_it_replaces(tmp_path):
    path = tmp_path / "a.bin"
    path.write_bytes(b"old")
    os.chmod(path, 0o640)
    write_atomically(path, b"new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "a.bin"
    path.write_bytes(b"old content")

    def disk_full(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(path, b"new content")
    assert path.read_bytes() == b"old content"
    assert os.listdir(tmp_path) == ["a.bin"]


def test_unwritable_paths_are_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_atomically(tmp_path / "no" / "such" / "folder" / "a.json", b"x")
    with pytest.raises(IsADirectoryError, match="is a folder"):
        write_atomically(tmp_path, b"x")
    a_file = tmp_path / "plain"
    a_file.write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_atomically(a_file / "a.json", b"x")


def test_a_refused_conversion_writes_nothing(tmp_path, monkeypatch):
    tok = toksmith.load_embedded("sentencepiece-demo")
    path = tmp_path / "out.tiktoken"
    path.write_bytes(b"precious")

    def refuse(spec):
        raise UnsupportedConversionError("the demo", "a tiktoken rank file", ["a Unigram model"])
    monkeypatch.setitem(writers.WRITERS, FileFormat.TIKTOKEN, refuse)
    with pytest.raises(UnsupportedConversionError, match="cannot be written as a tiktoken rank file: a Unigram"):
        tok.save(path)
    assert path.read_bytes() == b"precious"
    assert os.listdir(tmp_path) == ["out.tiktoken"]


def test_save_returns_the_path_and_the_bytes_are_the_writers(tmp_path, monkeypatch):
    tok = toksmith.load_embedded("sentencepiece-demo")
    monkeypatch.setitem(writers.WRITERS, FileFormat.GGUF, lambda spec: b"GGUF" + str(len(spec.vocab)).encode())
    written = tok.save(tmp_path / "x.bin", format="gguf")
    assert written == tmp_path / "x.bin"
    assert written.read_bytes() == b"GGUF" + str(tok.vocab_size).encode()
    with pytest.raises(TypeError, match="path must be"):
        tok.save(3)
