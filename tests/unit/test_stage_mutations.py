"""The mutation check's "stages" target (tests/parity_mutation_plugin.py): the stages a test
builds have their outputs mutated; those toksmith's own code builds are left whole."""
from __future__ import annotations

import pytest

from tests import parity_mutation_plugin as plugin
from toksmith.vocab import ByteLevelVocab, MergeOrder

VOCAB = ByteLevelVocab(texts=[b"a", b"b", b"ab"], merge_order=MergeOrder.TOKEN_RANK)


def test_a_model_a_test_builds_is_cut_and_the_path_from_bytes_is_not():
    with pytest.MonkeyPatch.context() as patch:
        plugin._patch_stages(patch, "truncated")
        from toksmith._core import byte_bpe
        model = VOCAB.build_model()
        assert model.encode_piece(b"abab") == [2]               # whole: [2, 2]
        assert model.encode_pieces([b"ab", b"ba"]) == [[], [1]]  # whole: [[2], [1, 0]]
        assert model.token_bytes(2) == b"ab"                    # other methods are the model's
        from_bytes = byte_bpe.ByteLevelBpe.build(VOCAB.texts, order=byte_bpe.MergeOrder.TOKEN_RANK,
                                                 char_starts=False)
        assert from_bytes.encode_piece(b"abab") == [2, 2]
    assert VOCAB.build_model().encode_piece(b"abab") == [2, 2]   # undone


def test_stages_toksmith_builds_are_left_whole():
    toksmith_code = {"__name__": "toksmith.models.somewhere"}
    exec("def build(vocab):\n    return vocab.build_model()", toksmith_code)
    with pytest.MonkeyPatch.context() as patch:
        plugin._patch_stages(patch, "empty")
        assert toksmith_code["build"](VOCAB).encode_piece(b"abab") == [2, 2]
        assert VOCAB.build_model().encode_piece(b"abab") == []


def test_splitters_normalizers_and_regexes_a_test_builds_are_emptied():
    with pytest.MonkeyPatch.context() as patch:
        plugin._patch_stages(patch, "empty")
        from toksmith._core import hf_normalizers, hf_regex_stages, stage_sequences
        from toksmith.hf import native_regex, split_patterns
        splitter = split_patterns.oniguruma_splitter(split_patterns.O200K_REGEX)
        assert splitter.split_text(b"Hello world") == []
        strip = hf_normalizers.HfStrip(True, True)
        assert strip.normalize_text(" a ") == ""
        assert stage_sequences.NormalizerSequence([strip]).normalize_text(" a ") == ""   # built of the real one
        regex = native_regex.compiled_pattern("Regex", r"\s+")
        assert regex.find_matches(b"a b") == []
        assert hf_regex_stages.HfSplit(regex, 0, False).split_text(b"a b") == []
    assert split_patterns.oniguruma_splitter(split_patterns.O200K_REGEX).split_text(b"Hello world") == [b"Hello",
                                                                                                         b" world"]
