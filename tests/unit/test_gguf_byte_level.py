"""GGUF byte-level BPE vocabularies (tokenizer.ggml.model gpt2, gemma4, whitespace, hybriddna):
what llama.cpp's llama_vocab::impl::load reads, and clear errors for broken files."""
from __future__ import annotations

import struct

import pytest

from tests.conftest import fixture_file
from tests.unit.gguf_writer import (ARRAY, I32, STRING, _str, bool_kv, i32s_kv, str_kv, strings_kv, u32_kv,
                                    write_gguf)
from toksmith.errors import ModelFormatError
from toksmith.formats.gguf import read_byte_level_gguf
from toksmith.spec import GgufBpeModel
from toksmith.vocab import TokenType

# "Ġ" is the space of GPT-2's byte<->unicode map
TOKENS = ["a", "b", "Ġ", "ab", "Ġab", "<|endoftext|>", "c", "d", "e", "f", "g", "h"]
MERGES = ["a b", "Ġ ab"]


def kvs(model="gpt2", tokens=TOKENS, merges=MERGES, pre="gpt-2", **extra):
    out = [str_kv("general.architecture", "gpt2"), str_kv("tokenizer.ggml.model", model),
           strings_kv("tokenizer.ggml.tokens", tokens),
           i32s_kv("tokenizer.ggml.token_type", [TokenType.CONTROL if t.startswith("<|") else TokenType.NORMAL
                                                for t in tokens])]
    if pre is not None:
        out.append(str_kv("tokenizer.ggml.pre", pre))
    if merges is not None:
        out.append(strings_kv("tokenizer.ggml.merges", merges))
    for key, value in extra.items():
        out.append(bool_kv(f"tokenizer.ggml.{key}", value) if isinstance(value, bool)
                   else u32_kv(f"tokenizer.ggml.{key}", value))
    return out


def test_reads_tokens_merges_and_llama_cpp_defaults(tmp_path):
    spec = read_byte_level_gguf(write_gguf(tmp_path / "v.gguf", kvs()))
    assert spec.gguf_model is GgufBpeModel.GPT2 and spec.pre == "gpt-2"
    assert spec.vocab.special.bos == 11 and spec.vocab.special.eos == 11   # llama.cpp's BPE defaults
    assert spec.add_bos is None and spec.add_eos is None                     # absent: the pre decides
    model = spec.vocab.build_model()
    assert model.encode_piece(b" ab") == [4]
    assert spec.vocab.token_bytes(4) == b" ab"
    assert spec.vocab.token_bytes(5) == b"<|endoftext|>"


def test_keys_and_pre_override(tmp_path):
    path = write_gguf(tmp_path / "v.gguf", kvs(bos_token_id=5, eos_token_id=5, add_bos_token=True))
    spec = read_byte_level_gguf(path, pre="llama-bpe")
    assert spec.vocab.special.bos == 5 and spec.add_bos is True
    assert spec.pre == "llama-bpe" and spec.vocab.ignore_merges          # llama3 family: ignore_merges
    assert not read_byte_level_gguf(path).vocab.ignore_merges


def test_gemma4_model_takes_the_gemma4_pre_and_raw_utf8(tmp_path):
    tokens = ["a", "ä", "aä", "<0xC3>", "<0xB6>", "\n\n", "\n", "x", "y", "z", "w", "v"]
    spec = read_byte_level_gguf(write_gguf(tmp_path / "g.gguf", kvs("gemma4", tokens, ["a ä"], pre=None)))
    assert spec.pre == "gemma4" and spec.vocab.special.bos is None
    assert spec.vocab.utf8_symbols and not spec.vocab.byte_unicode
    model = spec.vocab.build_model()
    assert model.encode_piece("aä".encode()) == [2]
    assert model.encode_piece("ö".encode()) == [3, 4]
    assert model.encode_piece(b"\n\n") == [5]


def test_kimi_k2_needs_no_merges(tmp_path):
    spec = read_byte_level_gguf(write_gguf(tmp_path / "k.gguf", kvs(merges=None, pre="kimi-k2")))
    assert spec.vocab.merges == [] and spec.vocab.build_model().encode_piece(b"ab") == [0, 1]


@pytest.mark.parametrize("build, message", [
    (lambda: kvs(merges=None), "no tokenizer.ggml.merges key"),
    (lambda: kvs("gemma4", merges=None, pre=None), "no tokenizer.ggml.merges key"),
    (lambda: [k for k in kvs() if b"tokenizer.ggml.tokens" not in k], "no tokenizer.ggml.tokens key"),
    (lambda: kvs(tokens=TOKENS + ["a"]), r"tokenizer.ggml.tokens\[12\] b'a' is a text already defined"),
    (lambda: kvs() + [i32s_kv("tokenizer.ggml.merges", [1, 2])], "tokenizer.ggml.merges"),
    (lambda: kvs(merges=None) + [i32s_kv("tokenizer.ggml.merges", [1, 2])],
     "tokenizer.ggml.merges must be an array of strings"),
    (lambda: kvs()[:3] + [i32s_kv("tokenizer.ggml.token_type", [1] * 5)] + kvs()[4:],
     "token_type has 5 values, fewer than the 12 tokens"),
    (lambda: kvs(bos_token_id=True), "bos_token_id has GGUF type"),
])
def test_broken_vocabularies(tmp_path, build, message):
    path = write_gguf(tmp_path / "bad.gguf", build())
    with pytest.raises(ModelFormatError, match=message) as e:
        read_byte_level_gguf(path)
    assert e.value.path == str(path)


def test_huge_counts_and_truncation(tmp_path):
    good = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs())) + b"".join(kvs())
    huge = (_str("tokenizer.ggml.merges") + struct.pack("<IIQ", ARRAY, STRING, 1 << 60))
    path = tmp_path / "huge.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs(merges=None)) + 1)
                     + b"".join(kvs(merges=None)) + huge)
    with pytest.raises(ModelFormatError):
        read_byte_level_gguf(path)
    for cut in (len(good) - 3, len(good) // 2, 30):
        path = tmp_path / f"cut{cut}.gguf"
        path.write_bytes(good[:cut])
        with pytest.raises(ModelFormatError):
            read_byte_level_gguf(path)
    path = tmp_path / "types.gguf"
    path.write_bytes(good[:16] + good[16:].replace(struct.pack("<IIQ", ARRAY, I32, len(TOKENS)),
                                                   struct.pack("<IIQ", ARRAY, I32, 1 << 50)))
    with pytest.raises(ModelFormatError):
        read_byte_level_gguf(path)


def test_gguf_v2_files_load(fixtures, tmp_path):
    # GGUF v2 has the v3 layout (64-bit counts); only the version field differs.
    data = bytearray(fixture_file(fixtures, "gguf/ggml-vocab-gpt-2.gguf").read_bytes())
    data[4:8] = struct.pack("<I", 2)
    path = tmp_path / "v2.gguf"
    path.write_bytes(bytes(data))
    spec = read_byte_level_gguf(path)
    assert len(spec.vocab.texts) == 50257 and len(spec.vocab.merges) == 50000
    # llama.cpp reads the v2 copy too, and agrees
    from tests import llama_cpp_reference
    ref = llama_cpp_reference.load_vocab(path)
    model = spec.vocab.build_model()
    for piece in (b" Hello", b" tokenizer", b"\xe4\xb8\xad\xe6\x96\x87"):
        assert model.encode_piece(piece) == ref.tokenize(piece, add_special=False, parse_special=False)
