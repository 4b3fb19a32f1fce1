"""Huge and hostile inputs cost a bounded amount, and are refused with a ModelFormatError
that names the setting raising the bound (issue 30 item 9): no MemoryError, no OSError from
mapping a 20 GB file, no gzip bomb decompressed whole.

Sparse files (truncate) stand in for huge ones: nothing here writes or allocates gigabytes.
"""
from __future__ import annotations

import gzip
import json
import struct
import subprocess
import sys
import textwrap
import tracemalloc
import zlib
from pathlib import Path

import pytest

import toksmith
from tests.conftest import fixture_file
from toksmith.formats.bounded_read import gunzip_bounded, read_limits

WORDLEVEL = json.dumps({"model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1}, "unk_token": "a"}}).encode()


def sparse_file(path: Path, head: bytes, size: int) -> Path:
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


@pytest.mark.parametrize("name,head", [
    ("tokenizer.json", b'{"model": '), ("big.tiktoken", b"IQ== 0\n"), ("spiece.model", b"\n\x05\n\x01a\x15\x00\x00\x00\x00"),
    ("rwkv_vocab_v20230424.txt", b"1 '\\x00' 1\n"),
])
def test_a_file_past_max_file_bytes_is_refused_unread(tmp_path, name, head):
    path = sparse_file(tmp_path / name, head, read_limits.max_file_bytes + 1)
    tracemalloc.start()
    try:
        with pytest.raises(toksmith.ModelFormatError, match=r"more than toksmith reads .*read_limits\.max_file_bytes"):
            toksmith.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak                   # the 256 MiB were never read


def test_a_model_folder_file_past_max_file_bytes_is_refused(tmp_path, monkeypatch):
    (tmp_path / "vocab.txt").write_text("[UNK]\n[CLS]\n[SEP]\na\n" * 100)
    (tmp_path / "tokenizer_config.json").write_text('{"tokenizer_class": "BertTokenizer"}')
    monkeypatch.setattr(read_limits, "max_file_bytes", 1000)
    with pytest.raises(toksmith.ModelFormatError, match=r"vocab\.txt: the file is 2\.0 KiB .*max_file_bytes"):
        toksmith.load(tmp_path)


def test_raising_max_file_bytes_lets_the_file_load(tmp_path, monkeypatch):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(WORDLEVEL)
    monkeypatch.setattr(read_limits, "max_file_bytes", len(WORDLEVEL) - 1)
    with pytest.raises(toksmith.ModelFormatError, match="max_file_bytes"):
        toksmith.load(path)
    read_limits.max_file_bytes = len(WORDLEVEL)
    assert toksmith.load(path).encode("b") == [1]


def test_read_limits_take_only_positive_ints():
    with pytest.raises(ValueError, match="positive int"):
        read_limits.max_file_bytes = -1
    with pytest.raises(ValueError, match="positive int"):
        read_limits.max_gguf_metadata_bytes = 1.5
    with pytest.raises(AttributeError, match="no setting 'max_bytes'"):
        read_limits.max_bytes = 10
    assert toksmith.read_limits is read_limits


def gguf_header(n_tensors: int = 0, n_kv: int = 0) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv)


def test_a_20_gb_gguf_maps_only_its_head(tmp_path):
    # A 24-byte header and 20 GB of nothing: the metadata (none) is read and the file refused
    # for what it lacks, under an address-space limit far below its size (before, the whole
    # file was mapped: OSError "Cannot allocate memory").
    path = sparse_file(tmp_path / "huge.gguf", gguf_header(), 20 << 30)
    script = textwrap.dedent(f"""
        import resource, toksmith
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
        try:
            toksmith.load({str(path)!r})
        except toksmith.ModelFormatError as e:
            print("ModelFormatError", e)
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.stdout.startswith("ModelFormatError") and "no general.architecture key" in run.stdout, \
        run.stdout + run.stderr


def test_gguf_metadata_past_the_bound_names_the_setting(fixtures, monkeypatch):
    path = fixture_file(fixtures, "gguf/ggml-vocab-bert-bge.gguf")
    monkeypatch.setattr(read_limits, "max_gguf_metadata_bytes", 64 << 10)
    with pytest.raises(toksmith.ModelFormatError,
                       match=r"within the first 64\.0 KiB .*read_limits\.max_gguf_metadata_bytes"):
        toksmith.load(path)
    read_limits.max_gguf_metadata_bytes = path.stat().st_size
    assert toksmith.load(path).vocab_size > 30000


def gzip_bomb(size: int) -> bytes:
    """gzip data of `size` zero bytes, made without holding them."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    parts = [compressor.compress(block) for _ in range(size >> 20)]
    parts.append(compressor.flush())
    return b"".join(parts)


def test_train_bpe_like_a_gzip_bomb_is_refused_within_the_bound(tmp_path, monkeypatch):
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip_bomb(256 << 20))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a b\n")
    monkeypatch.setattr(read_limits, "max_file_bytes", 4 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(toksmith.ModelFormatError, match=r"bomb\.json\.gz: the decompressed file is larger.*"
                                                            r"max_file_bytes"):
            toksmith.train_bpe([str(corpus)], 10, like=str(bomb))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, peak                   # not the 256 MiB the bomb holds


def test_gunzip_bounded_is_gzip_decompress():
    data = gzip.compress(WORDLEVEL) + gzip.compress(b"second member")
    assert gunzip_bounded(data, "x.gz") == gzip.decompress(data)
    with pytest.raises(toksmith.ModelFormatError, match="truncated"):
        gunzip_bounded(data[:20], "x.gz")
    with pytest.raises(toksmith.ModelFormatError, match="not valid gzip data"):
        gunzip_bounded(data + b"junk", "x.gz")


def test_train_bpe_like_gzipped_tokenizer_json_still_works(tmp_path):
    like = tmp_path / "like.json.gz"
    like.write_bytes(gzip.compress(json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "vocab": {}, "merges": []}}).encode()))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("ab ab abc\n")
    tok = toksmith.train_bpe([str(corpus)], 8, like=str(like))
    assert tok.vocab_size > 0


def test_a_unigram_seed_file_past_max_file_bytes_is_refused(tmp_path, monkeypatch):
    """train_unigram's seed_sentencepieces_file is read under the same bound (it was read whole)."""
    seeds = tmp_path / "seeds.tsv"
    seeds.write_bytes(b"abc\t10\n" * 300)
    monkeypatch.setattr(read_limits, "max_file_bytes", 1000)
    with pytest.raises(toksmith.ModelFormatError, match=r"seeds\.tsv: the file is 2\.1 KiB .*max_file_bytes"):
        toksmith.train_unigram(texts=["abc abd abe"] * 50, vocab_size=40, seed_sentencepieces_file=str(seeds),
                               show_progress=False)
