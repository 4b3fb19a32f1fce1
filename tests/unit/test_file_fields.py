"""Readers keep what writers will need (spec.file_fields): every ModelProto field besides the
pieces, and every GGUF key with its GGUF value type. Checked against protobuf and the gguf package."""
from __future__ import annotations

import gguf
from sentencepiece import sentencepiece_model_pb2 as pb

import toksmith
from tests.conftest import fixture_file

MODELPROTO_MESSAGES = {2: ("trainer_spec", pb.TrainerSpec), 3: ("normalizer_spec", pb.NormalizerSpec),
                       5: ("denormalizer_spec", pb.NormalizerSpec)}


def test_sentencepiece_fields_are_kept(fixtures):
    for name in ("spm/sentencepiece_test_model.model", "spm/llama2_tokenizer.model",
                 "spm/t5_base_japanese_spiece.model"):
        path = fixture_file(fixtures, name)
        proto = pb.ModelProto.FromString(path.read_bytes())
        fields = toksmith.load(path).spec.file_fields.sentencepiece_fields
        numbers = [number for number, _wire, _value in fields]
        assert sorted(set(numbers)) == sorted({d.number for d, _ in proto.ListFields()} - {1}), name
        for number, wire, value in fields:
            assert wire == 2, (name, number)
            if number in MODELPROTO_MESSAGES:
                attr, message = MODELPROTO_MESSAGES[number]
                assert message.FromString(value) == getattr(proto, attr), (name, attr)
            elif number == 4:
                assert pb.SelfTestData.FromString(value) == proto.self_test_data, name


def test_gguf_metadata_and_value_types_are_kept(fixtures):
    for name in ("gguf/ggml-vocab-llama-spm.gguf", "gguf/ggml-vocab-nomic-bert-moe.gguf"):
        path = fixture_file(fixtures, name)
        kept = toksmith.load(path).spec.file_fields.gguf_metadata
        reader = gguf.GGUFReader(path)
        want = {key: field.types[0] for key, field in reader.fields.items() if not key.startswith("GGUF.")}
        assert {key: gguf.GGUFValueType(vtype) for key, (vtype, _value) in kept.items()} == want, name
        assert list(kept) == list(want), name   # file order
        assert kept["general.architecture"][1] == reader.fields["general.architecture"].contents()
