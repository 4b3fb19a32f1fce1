"""Files people mistake for model files, and paths that are not regular files:
each is refused with one error that names the file once and says what it is."""
from __future__ import annotations

import gzip
import os
import shutil
import threading

import pytest

import toksmith
from tests.conftest import fixture_file
from tests.unit.test_cli import assert_cli_error, cli

LFS_POINTER = (b"version https://git-lfs.github.com/spec/v1\n"
               b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 499723\n")
HTML = b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body>Not Found</body></html>\n"


@pytest.fixture
def llama_model(fixtures):
    return fixture_file(fixtures, "spm/llama2c_tok512.model")


def _error(path) -> str:
    with pytest.raises(toksmith.ModelFormatError) as info:
        toksmith.load(path)
    message = str(info.value)
    assert message.count(os.fspath(path)) == 1, message
    return message


def test_gzip_compressed_model(tmp_path, llama_model):
    path = tmp_path / "tokenizer.model"
    path.write_bytes(gzip.compress(llama_model.read_bytes()))
    assert "gzip-compressed: decompress it first" in _error(path)


def test_lfs_pointer(tmp_path):
    path = tmp_path / "tokenizer.model"
    path.write_bytes(LFS_POINTER)
    assert "Git LFS pointer, not the model: fetch the LFS object" in _error(path)


def test_html_error_page(tmp_path):
    path = tmp_path / "tokenizer.model"
    path.write_bytes(HTML)
    assert "HTML page, not a model file" in _error(path)


def test_plain_text_file(tmp_path, fixtures):
    path = tmp_path / "tokenizer.model"
    path.write_bytes(fixture_file(fixtures, "corpus/man_en.txt").read_bytes()[:4000])
    assert "text file, not a model file" in _error(path)


def test_truncated_model_at_a_piece_boundary(tmp_path, llama_model):
    from sentencepiece import sentencepiece_model_pb2 as pb
    data = llama_model.read_bytes()
    m = pb.ModelProto()
    m.ParseFromString(data)
    cut = sum(len(pb.ModelProto(pieces=[p]).SerializeToString()) for p in m.pieces[:100])
    path = tmp_path / "tokenizer.model"
    path.write_bytes(data[:cut])
    message = _error(path)
    assert f"ends at byte {cut} of {cut} right after piece 99" in message
    assert "looks truncated" in message and "byte_fallback" not in message


def test_truncated_model_mid_field(tmp_path, llama_model):
    """Cut inside the last top-level field: the error names where its length is stored."""
    data = llama_model.read_bytes()
    pos = last_length = 0
    while pos < len(data):   # walk the top-level fields (all length-delimited in a ModelProto)
        key, pos = _varint(data, pos)
        assert key & 7 == 2
        last_length = pos
        length, pos = _varint(data, pos)
        pos += length
    path = tmp_path / "tokenizer.model"
    path.write_bytes(data[:len(data) - 7])
    message = _error(path)
    assert f"truncated at byte {last_length} of {len(data) - 7}: field length" in message
    assert "looks truncated" in message


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        value |= (data[pos] & 0x7F) << shift
        pos += 1
        if data[pos - 1] < 0x80:
            return value, pos
        shift += 7


def test_error_names_the_file_once(tmp_path, llama_model):
    from sentencepiece import sentencepiece_model_pb2 as pb
    m = pb.ModelProto()
    m.ParseFromString(llama_model.read_bytes())
    m.pieces[68].piece = "<0xZZ>"   # a BYTE piece that is not <0xXX>
    path = tmp_path / "badbyte.model"
    path.write_bytes(m.SerializeToString())
    _error(path)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_device_is_refused(device):
    assert "character device" in _error(device)


def _load_in_thread(path):
    outcome = {}

    def run():
        try:
            toksmith.load(path)
        except Exception as e:   # noqa: BLE001
            outcome["error"] = e
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=30)
    if thread.is_alive():
        # unblock the open() so the thread ends, then fail
        with open(path, "wb"):
            pass
        pytest.fail("toksmith.load blocked on a FIFO")
    return outcome.get("error")


def test_fifo_is_refused_without_blocking(tmp_path):
    path = tmp_path / "tokenizer.model"
    os.mkfifo(path)
    error = _load_in_thread(path)
    assert isinstance(error, toksmith.ModelFormatError) and "FIFO" in str(error)


def test_folder_with_two_ggufs_is_ambiguous(tmp_path, fixtures):
    for name in ("ggml-vocab-llama-spm.gguf", "ggml-vocab-phi-3.gguf"):
        shutil.copy(fixture_file(fixtures, f"gguf/{name}"), tmp_path / name)
    message = _error(tmp_path)
    assert "ggml-vocab-llama-spm.gguf" in message and "ggml-vocab-phi-3.gguf" in message


@pytest.mark.parametrize("kind", ["zero", "fifo", "gzip", "lfs"])
def test_cli_reports_one_error_line(tmp_path, llama_model, kind):
    if kind == "zero":
        path = "/dev/zero"
    else:
        path = tmp_path / "tokenizer.model"
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.write_bytes(gzip.compress(llama_model.read_bytes()) if kind == "gzip" else LFS_POINTER)
    result = cli("encode", "-m", str(path), "hi")   # cli() has a timeout: a hang fails
    line = assert_cli_error(result, str(path))
    assert line.count(str(path)) == 1


def test_bpe_model_with_a_nan_score_is_refused(tmp_path, llama_model):
    """sentencepiece loads it, but its merge order with a NaN score is undefined."""
    from sentencepiece import sentencepiece_model_pb2 as pb
    m = pb.ModelProto()
    m.ParseFromString(llama_model.read_bytes())
    m.pieces[276].score = float("nan")
    path = tmp_path / "nan.model"
    path.write_bytes(m.SerializeToString())
    assert "piece 276 b're' has score NaN: merge order is undefined" in _error(path)
