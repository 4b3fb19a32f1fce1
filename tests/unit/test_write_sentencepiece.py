"""The sentencepiece .model writer: the protobuf encoder, .model -> .model byte for byte,
the in-memory route, and the refusals.

Files are compared with sentencepiece's own protobuf classes (sentencepiece_model_pb2).
"""
from __future__ import annotations

import dataclasses
import math
import random
import struct

import pytest
from sentencepiece import sentencepiece_model_pb2 as pb

import toksmith
from tests.conftest import fixture_file
from toksmith._core.wire import encode_piece_messages, parse_message
from toksmith.errors import UnsupportedConversionError
from toksmith.writers.protobuf_wire import float_field, int32_field, raw_field, string_field, varint
from toksmith.writers.sentencepiece_model import write_sentencepiece_model
from toksmith.writers.spm_model_proto import encode_piece

SPM_MODELS = ["spm/hf_test_sentencepiece_bpe.model", "spm/llama2_tokenizer.model", "spm/llama2c_tok512.model",
              "spm/sentencepiece_test_ja_model.model", "spm/sentencepiece_test_model.model",
              "spm/t5_base_japanese_spiece.model"]


# ------------------------------------------------------------- the wire encoder

@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**31 - 1, 2**32, 2**63, 2**64 - 1])
def test_varint_round_trips_through_the_reader(value):
    field = int32_field(9, value) if value < 2**63 else b"\x48" + varint(value)
    assert parse_message(field) == [(9, 0, value)]


def _pieces_reference(pieces, scores, types, omitted):
    """The pieces fields written one by one in Python (encode_piece, string_field)."""
    return b"".join(string_field(1, encode_piece(piece, score, token_type, index not in omitted))
                    for index, (piece, score, token_type) in enumerate(zip(pieces, scores, types)))


def test_native_piece_messages_are_the_python_encoders_bytes():
    rng = random.Random(7)
    specials = [0.0, -0.0, 1e-45, -3.4e38, float("inf"), float("-inf"), float("nan"), 1 / 3,
                struct.pack("<I", 0x7FC00001), struct.pack("<I", 0xFFFFFFFF)]
    for _ in range(200):
        n = rng.randrange(0, 40)
        pieces = [bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 3, 127, 128, 300])))
                  for _ in range(n)]
        scores = [rng.choice(specials) if rng.random() < 0.2 else rng.uniform(-1e6, 1e6) for _ in range(n)]
        types = bytes(rng.choice([1, 1, 1, 2, 3, 4, 5, 6, 200]) for _ in range(n))
        omitted = frozenset(i for i in range(n) if rng.random() < 0.2)
        assert encode_piece_messages(pieces, scores, types, omitted) == _pieces_reference(pieces, scores, types,
                                                                                         omitted)


def test_native_piece_messages_refuse_what_the_python_encoder_refuses():
    with pytest.raises(OverflowError):
        encode_piece_messages([b"a"], [1e39], b"\x01")
    with pytest.raises(OverflowError):
        float_field(2, 1e39)
    with pytest.raises(ValueError, match="4 bytes"):
        encode_piece_messages([b"a"], [b"\x00\x00"], b"\x01")
    with pytest.raises(ValueError, match="2 pieces, 1 scores"):
        encode_piece_messages([b"a", b"b"], [0.0], b"\x01\x01")


def test_negative_int32_is_ten_bytes_as_protobuf_writes_it():
    message = pb.TrainerSpec(pad_id=-1)
    assert message.SerializeToString() == int32_field(43, -1)
    assert len(varint(-1)) == 10


def test_varint_out_of_range_is_refused():
    with pytest.raises(ValueError, match="64-bit"):
        varint(2**64)


@pytest.mark.parametrize("bits", [0x00000000, 0x80000000, 0x3F800000, 0x7F800000, 0xFF800000,
                                  0x7FC00001, 0x00000001, 0xC2C80000])
def test_floats_round_trip_bit_exactly(bits):
    raw = struct.pack("<I", bits)
    assert float_field(2, raw) == b"\x15" + raw
    value = struct.unpack("<f", raw)[0]
    if not math.isnan(value):   # a NaN's payload is kept by passing the raw bytes
        assert float_field(2, value) == b"\x15" + raw
        piece = pb.ModelProto.SentencePiece.FromString(string_field(1, b"x") + float_field(2, value))
        assert struct.pack("<f", piece.score) == raw


def test_raw_field_refuses_a_wrong_fixed_width():
    with pytest.raises(ValueError, match="4 raw bytes"):
        raw_field(2, 5, b"\0\0")


# ------------------------------------------------------------- .model -> .model

@pytest.mark.parametrize("model", SPM_MODELS)
def test_own_format_is_byte_identical(fixtures, model):
    path = fixture_file(fixtures, model)
    original = path.read_bytes()
    written = write_sentencepiece_model(toksmith.load(path).spec)
    assert written == original
    assert pb.ModelProto.FromString(written) == pb.ModelProto.FromString(original)


@pytest.mark.parametrize("model", ["spm/sentencepiece_test_model.model", "spm/llama2c_tok512.model"])
def test_save_by_suffix_and_format(fixtures, tmp_path, model):
    path = fixture_file(fixtures, model)
    tok = toksmith.load(path)
    assert tok.save(tmp_path / "out.model").read_bytes() == path.read_bytes()
    assert tok.save(tmp_path / "out.bin", format="sentencepiece").read_bytes() == path.read_bytes()


@pytest.mark.parametrize("model", SPM_MODELS)
def test_in_memory_spec_writes_the_same_pieces_and_normalizer(fixtures, model):
    """A spec without file fields (as a tokenizer built in memory has): the pieces and the
    normalizer_spec come out equal to the file's, the trainer_spec names the same special
    pieces and model type; nothing else of the trainer is known."""
    path = fixture_file(fixtures, model)
    spec = dataclasses.replace(toksmith.load(path).spec, file_fields=None, source_data=None)
    written = pb.ModelProto.FromString(write_sentencepiece_model(spec))
    original = pb.ModelProto.FromString(path.read_bytes())
    assert [(p.piece, p.score, p.type) for p in written.pieces] == \
           [(p.piece, p.score, p.type) for p in original.pieces]
    normalizer = pb.NormalizerSpec()
    normalizer.CopyFrom(original.normalizer_spec)
    for name in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"):
        setattr(normalizer, name, getattr(original.normalizer_spec, name))   # defaults, written out
    if not normalizer.normalization_rule_tsv:
        normalizer.ClearField("normalization_rule_tsv")   # an empty rule file: a trainer-only field
    assert written.normalizer_spec == normalizer
    trainer, source = written.trainer_spec, original.trainer_spec
    assert trainer.model_type == source.model_type
    assert trainer.byte_fallback == source.byte_fallback
    assert trainer.vocab_size == len(original.pieces)
    for role in ("unk", "bos", "eos", "pad"):
        source_id = getattr(source, f"{role}_id")
        if source_id >= 0:
            assert getattr(trainer, f"{role}_id") == source_id
            assert getattr(trainer, f"{role}_piece") == original.pieces[source_id].piece
    assert trainer.unk_surface == source.unk_surface


# ------------------------------------------------------------- refusals

@pytest.mark.parametrize("source,missing", [
    ("tiktoken/cl100k_base.tiktoken", "byte-bpe model"),
    ("gguf/ggml-vocab-gpt-2.gguf", "byte-bpe model"),
    ("gguf/ggml-vocab-bert-bge.gguf", "wordpiece model"),
    ("rwkv/rwkv_vocab_v20230424.txt", "rwkv model"),
])
def test_other_algorithms_are_refused_and_nothing_is_written(fixtures, tmp_path, source, missing):
    tok = toksmith.load(fixture_file(fixtures, source))
    target = tmp_path / "out.model"
    target.write_bytes(b"old content")
    with pytest.raises(UnsupportedConversionError, match=missing) as caught:
        tok.save(target)
    assert "sentencepiece .model" in str(caught.value)
    assert target.read_bytes() == b"old content"
    assert list(tmp_path.iterdir()) == [target]


# ------------------------------------------------------------- BPE merge order -> piece scores

from toksmith.writers.spm_bpe_scores import live_pair_rank, merge_scores   # noqa: E402


def test_merge_scores_follow_the_live_pair_of_each_piece():
    vocab = {t: i for i, t in enumerate(["a", "b", "c", "ab", "abc", "bc"])}
    # tokenizers merges "abc" alone as a+b (rank 0), then ab+c (rank 2): its live pair ranks 2.
    scores = merge_scores(vocab, [("a", "b"), ("b", "c"), ("ab", "c"), ("a", "bc")], set(vocab))
    assert scores == {"ab": -1.0, "bc": -2.0, "abc": -3.0}
    # The splits of a piece need not be consecutive (Llama 2's runs of "▁", as both converters
    # order them); a piece formed by two splits that can never both be candidates is fine.
    runs = {t: i for i, t in enumerate(["x", "xx", "xxx", "xxxx"])}
    scores = merge_scores(runs, [("xxx", "x"), ("xx", "x"), ("x", "x"), ("xx", "xx"), ("x", "xx"), ("x", "xxx")],
                          set(runs))
    assert scores == {"xxxx": -1.0, "xxx": -2.0, "xx": -3.0}


def test_live_pair_rank_is_tokenizers_last_merge():
    ranks = {("a", "b"): 0, ("b", "a"): 1, ("ab", "a"): 3, ("a", "ba"): 2}
    assert live_pair_rank("aba", ranks) == 3          # a+b first (rank 0), then ab+a
    assert live_pair_rank("abab", ranks) is None      # [ab][ab] has no merge


@pytest.mark.parametrize("vocab,merges,step", [
    (["a", "b"], [("a", "b")], "C0"),                                   # "ab" is no piece
    (["a", "b", "ab"], [("a", "b"), ("a", "b")], "C0"),                 # a pair listed twice
    (["a", "b", "c", "ab", "bc", "abc"], [("a", "b"), ("ab", "c")], "C1"),  # a + bc is not listed
])
def test_merge_orders_no_scores_reproduce_are_refused(vocab, merges, step):
    with pytest.raises(ValueError, match=rf"\[{step}\]"):
        merge_scores({t: i for i, t in enumerate(vocab)}, merges, set(vocab))


def small_bpe_json(tmp_path):
    """A tokenizer.json BPE whose merge list names every split sentencepiece could merge."""
    import tokenizers
    from tokenizers import decoders, models, normalizers
    pieces = ["<unk>", "<s>", "</s>", "▁", "a", "b", "c", "▁a", "ab", "bc", "▁ab", "abc", "▁abc", "cc"]
    merges = [("▁", "a"), ("a", "b"), ("b", "c"), ("ab", "c"), ("a", "bc"), ("▁a", "b"), ("▁", "ab"),
              ("▁ab", "c"), ("▁a", "bc"), ("▁", "abc"), ("c", "c")]
    tok = tokenizers.Tokenizer(models.BPE({p: i for i, p in enumerate(pieces)}, merges, unk_token="<unk>",
                                          fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.add_special_tokens(["<unk>", "<s>", "</s>"])
    path = tmp_path / "small_bpe.json"
    tok.save(str(path))
    return path, tok


def test_bpe_without_fuse_unk_is_refused(tmp_path):
    path, tok = small_bpe_json(tmp_path)
    data = path.read_text(encoding="utf-8").replace('"fuse_unk": true', '"fuse_unk": false')
    path.write_text(data, encoding="utf-8")
    with pytest.raises(UnsupportedConversionError, match="without fuse_unk"):
        write_sentencepiece_model(toksmith.load(path).spec)


def test_bpe_json_whose_merge_order_scores_reproduce_converts(tmp_path):
    """Random texts over the alphabet: sentencepiece on the written .model gives tokenizers' ids."""
    import random
    import sentencepiece as spm
    path, ref = small_bpe_json(tmp_path)
    ref.encode_special_tokens = True
    sp = spm.SentencePieceProcessor(model_proto=write_sentencepiece_model(toksmith.load(path).spec))
    rnd = random.Random(11)
    texts = ["".join(rnd.choice("abc  x") for _ in range(rnd.randint(0, 14))) for _ in range(3000)]
    for text in texts:
        assert sp.encode(text) == ref.encode(text, add_special_tokens=False).ids, text


# ------------------------------------------------------------- tokenizer.json refusals

@pytest.mark.parametrize("source,missing", [
    ("hf/all-MiniLM-L6-v2/tokenizer.json", ["normalizer BertNormalizer", "pre-tokenizer BertPreTokenizer",
                                            "WordPieceModel"]),
    ("hf/rut5-large/tokenizer.json", ["the normalizer Replace(' {2,}')", "end of a text"]),
])
def test_hf_sources_refused_with_every_missing_part(fixtures, source, missing):
    tok = toksmith.load(fixture_file(fixtures, source))
    with pytest.raises(UnsupportedConversionError) as caught:
        write_sentencepiece_model(tok.spec)
    for part in missing:
        assert part in str(caught.value)


def test_gpt2_model_folder_is_refused(fixtures):
    tok = toksmith.load(fixture_file(fixtures, "hf/gpt2/vocab.json").parent)
    with pytest.raises(UnsupportedConversionError, match="sentencepiece .model"):
        write_sentencepiece_model(tok.spec)


@pytest.mark.parametrize("converter,settings,missing", [
    ("AlbertConverter", {"do_lower_case": True, "keep_accents": False},
     ["normalizer Replace", "normalizer NFKD", "normalizer Lowercase", "template token '[CLS]'"]),
    ("LlamaConverter", {"legacy": False}, ["Metaspace prepend_scheme first"]),
    ("CamembertConverter", {}, ["the normalizer Replace(' {2,}')"]),
])
def test_converted_jsons_sentencepiece_cannot_express_are_refused(fixtures, tmp_path, converter, settings, missing):
    from tests.parity.converted_spm import convert
    model = {"AlbertConverter": "spm/sentencepiece_test_model.model", "LlamaConverter": "spm/llama2c_tok512.model",
             "CamembertConverter": "spm/hf_test_sentencepiece_bpe.model"}[converter]
    path = tmp_path / "converted.json"
    convert(str(fixture_file(fixtures, model)), converter, **settings).save(str(path))
    with pytest.raises(UnsupportedConversionError) as caught:
        toksmith.load(path).save(tmp_path / "out.model")
    for part in missing:
        assert part in str(caught.value), str(caught.value)
    assert not (tmp_path / "out.model").exists()
