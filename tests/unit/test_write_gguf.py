"""The vocab-only GGUF writer without fixtures: the key/value encoding against independent
readers (tests/gguf_reference.py with struct, the gguf package's GGUFReader), the routes'
keys, and the refusals and bad input."""
from __future__ import annotations

import struct
from array import array

import gguf
import pytest

import toksmith
from tests.gguf_reference import read_metadata
from tests.unit import gguf_writer
from toksmith.writers.gguf_binary import Entry, GgufValue, ValueType, encode_gguf, read_values
from toksmith.writers.gguf_file import write_gguf

EVERY_TYPE = [
    Entry("u8", GgufValue.scalar(ValueType.UINT8, 255)), Entry("i8", GgufValue.scalar(ValueType.INT8, -128)),
    Entry("u16", GgufValue.scalar(ValueType.UINT16, 65535)), Entry("i16", GgufValue.scalar(ValueType.INT16, -2)),
    Entry("u32", GgufValue.scalar(ValueType.UINT32, 2 ** 32 - 1)), Entry("i32", GgufValue.scalar(ValueType.INT32, -7)),
    Entry("f32", GgufValue.scalar(ValueType.FLOAT32, 0.5)), Entry("bool", GgufValue.scalar(ValueType.BOOL, True)),
    Entry("str", GgufValue.string(b"caf\xc3\xa9 \xff")),   # invalid UTF-8 kept as bytes
    Entry("u64", GgufValue.scalar(ValueType.UINT64, 2 ** 64 - 1)), Entry("i64", GgufValue.scalar(ValueType.INT64, -1)),
    Entry("f64", GgufValue.scalar(ValueType.FLOAT64, -1.25)),
    Entry("strings", GgufValue.strings(["a", "", "\u2581b"])),
    Entry("floats", GgufValue.numbers(ValueType.FLOAT32, [0.0, -1.5])),
    Entry("types", GgufValue.numbers(ValueType.INT32, bytes([1, 3, 6]))),
    Entry("bools", GgufValue.numbers(ValueType.BOOL, [1, 0])),
    Entry("bytes", GgufValue.numbers(ValueType.UINT8, b"\x00\xff")),
    Entry("nested", GgufValue(ValueType.ARRAY, [GgufValue.numbers(ValueType.INT16, [1, -1]),
                                                 GgufValue.numbers(ValueType.INT16, [2])], ValueType.ARRAY)),
]


def test_header_is_gguf_v3_without_tensors_or_padding():
    data = encode_gguf(EVERY_TYPE[:1])
    assert data[:4] == b"GGUF"
    assert struct.unpack_from("<IQQ", data, 4) == (3, 0, 1)
    assert len(data) == 24 + 8 + 2 + 4 + 1   # key length + "u8" + type + value: nothing after


def test_every_value_type_reads_back_in_independent_readers(tmp_path):
    path = tmp_path / "all.gguf"
    path.write_bytes(encode_gguf(EVERY_TYPE))
    meta = read_metadata(path)
    assert meta["u32"] == 2 ** 32 - 1 and meta["i8"] == -128 and meta["bool"] is True
    assert meta["str"] == b"caf\xc3\xa9 \xff" and meta["strings"] == [b"a", b"", "\u2581b".encode()]
    assert meta["types"] == [1, 3, 6] and meta["bools"] == [True, False] and meta["nested"] == [[1, -1], [2]]
    reader = gguf.GGUFReader(str(path))
    assert [k for k in reader.fields if not k.startswith("GGUF.")] == [e.key for e in EVERY_TYPE]
    assert reader.fields["bools"].types == [gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.BOOL]
    assert reader.fields["f64"].types == [gguf.GGUFValueType.FLOAT64]
    assert reader.fields["floats"].contents() == [0.0, -1.5]


def test_read_values_keeps_types_and_bytes():
    data = encode_gguf(EVERY_TYPE)
    entries = read_values(data)
    assert [(e.key, e.value.type, e.value.element_type) for e in entries] == \
        [(e.key, e.value.type, e.value.element_type) for e in EVERY_TYPE]
    assert encode_gguf(entries) == data


def test_bad_input_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="given twice"):
        encode_gguf([EVERY_TYPE[0], EVERY_TYPE[0]])
    with pytest.raises(toksmith.ModelFormatError, match="truncated"):
        read_values(encode_gguf(EVERY_TYPE)[:-3])
    with pytest.raises(toksmith.ModelFormatError, match="not a GGUF"):
        read_values(b"GGUX" + bytes(20))


def test_own_gguf_written_back_byte_for_byte(tmp_path):
    path = gguf_writer.write_gguf(tmp_path / "tiny.gguf", gguf_writer.vocab_kvs(
        "llama", [b"<unk>", b"<s>", b"</s>", "\u2581a".encode(), b"b"], [0.0, 0.0, 0.0, -1.0, -2.0],
        [2, 3, 3, 1, 1], bos_token_id=1, add_bos_token=True))
    tok = toksmith.load(path)
    assert write_gguf(tok.spec) == path.read_bytes()
    copy = tok.save(tmp_path / "copy.gguf")
    assert toksmith.load(copy).encode("a b ab") == tok.encode("a b ab")


def test_sentencepiece_unigram_is_written_as_t5(tok, sp, tmp_path):
    """The embedded Unigram model through T5's route: pieces, scores and types as the .model
    holds them, its charsmap and whitespace flags, its special ids, add_eos. Its byte fallback
    has no place in llama.cpp's UGM, so only exact=False writes it (with a warning)."""
    from toksmith.writers.approximation import InexactConversionWarning
    with pytest.raises(toksmith.UnsupportedConversionError, match="byte fallback"):
        tok.save(tmp_path / "demo.gguf")
    with pytest.warns(InexactConversionWarning, match="byte fallback"):
        path = tok.save(tmp_path / "demo.gguf", exact=False)
    meta = read_metadata(path)
    n = sp.get_piece_size()
    assert meta["general.architecture"] == b"t5" and meta["tokenizer.ggml.model"] == b"t5"
    assert meta["tokenizer.ggml.tokens"] == [sp.id_to_piece(i).encode() for i in range(n)]
    assert meta["tokenizer.ggml.scores"] == [struct.unpack("<f", struct.pack("<f", sp.get_score(i)))[0]
                                             for i in range(n)]
    assert meta["tokenizer.ggml.unknown_token_id"] == sp.unk_id()
    assert (meta["tokenizer.ggml.add_bos_token"], meta["tokenizer.ggml.add_eos_token"]) == (False, True)
    assert meta["tokenizer.ggml.add_space_prefix"] is True
    assert len(meta["tokenizer.ggml.precompiled_charsmap"]) > 0
    reader = gguf.GGUFReader(str(path))
    assert reader.fields["tokenizer.ggml.precompiled_charsmap"].types == [gguf.GGUFValueType.ARRAY,
                                                                           gguf.GGUFValueType.UINT8]
    back = toksmith.load(path)
    for text in ("Hello world", "  two  spaces ", "日本語のテキスト"):
        assert back.encode(text, add_special=False) == sp.encode(text)


def test_cl100k_is_refused_for_want_of_a_llama_cpp_splitter(tmp_path):
    tok = toksmith.load_embedded("cl100k_base")
    target = tmp_path / "cl100k.gguf"
    target.write_bytes(b"keep")
    with pytest.raises(toksmith.UnsupportedConversionError, match="the converter names it 'dbrx'"):
        tok.save(target)
    assert target.read_bytes() == b"keep"


def test_unwritable_paths_are_refused(tok, tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        tok.save(tmp_path / "missing" / "x.gguf")
    with pytest.raises(IsADirectoryError):
        tok.save(tmp_path, format="gguf")
    with pytest.warns(UserWarning):
        assert tok.save(tmp_path / "vocab.bin", format="gguf", exact=False).read_bytes()[:4] == b"GGUF"


def test_numbers_from_bytes_are_values_not_memory():
    value = GgufValue.numbers(ValueType.INT32, bytes([1, 2, 3]))
    assert value.value == array("i", [1, 2, 3])
