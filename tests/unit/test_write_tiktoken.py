"""The tiktoken rank-file writer and the ranks <-> merges conversions on small vocabularies,
checked with tiktoken and tokenizers themselves; refusals and their messages."""
from __future__ import annotations

import json

import pytest
import tiktoken
import tokenizers

import toksmith
from tests.conftest import fixture_file
from toksmith.errors import UnsupportedConversionError
from toksmith.formats import spec_from_bytes
from toksmith.spec import FileFormat, LoadOptions
from toksmith.vocab import ByteLevelVocab, MergeOrder
from toksmith.writers.byte_level_merges import (canonical_splits, merge_list_rank_problems, merge_list_vocab,
                                                to_byte_unicode)
from toksmith.writers.tiktoken_file import rank_file_bytes, write_tiktoken

BYTES = [bytes([b]) for b in range(256)]
PATTERN = r"\S+|\s+"


def rank_vocab(extra: list[bytes]) -> ByteLevelVocab:
    return ByteLevelVocab(texts=BYTES + extra, merge_order=MergeOrder.TOKEN_RANK, ignore_merges=True)


def tiktoken_of(extra: list[bytes]) -> tiktoken.Encoding:
    return tiktoken.Encoding(name="small", pat_str=PATTERN,
                             mergeable_ranks={t: i for i, t in enumerate(BYTES + extra)}, special_tokens={})


def tokenizers_of(vocab: ByteLevelVocab) -> tokenizers.Tokenizer:
    document = {
        "version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": PATTERN}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "ignore_merges": vocab.ignore_merges,
                  "vocab": {t.decode(): i for i, t in enumerate(vocab.texts)},
                  "merges": [m.decode().split(" ") for m in vocab.merges]}}
    return tokenizers.Tokenizer.from_str(json.dumps(document))


# ---------------------------------------------------------------------- ranks -> merges

def test_a_token_ranked_before_its_parts_keeps_its_merge():
    """'abc' ranks before 'bc': tiktoken still builds it (bc, then a+bc), so it needs the merge
    (a, bc); stopping the token's BPE at its own rank (transformers' TikTokenConverter.bpe
    with max_rank) would find no two parts."""
    extra = [b"abc", b"bc", b"ab"]
    assert canonical_splits(BYTES + extra)[256:] == [1, 1, 1]
    derived = merge_list_vocab(rank_vocab(extra))
    assert derived.merges == [b"a bc", b"b c", b"a b"]
    enc, ref = tiktoken_of(extra), tokenizers_of(derived)
    for text in ["abc", "abcabc", "xabc ab bc", "aabbcc abcbc", "cab"]:
        assert ref.encode(text).ids == enc.encode_ordinary(text), text


def test_unreachable_token_gets_no_merge_but_whole_pieces_still_find_it():
    """'xyz', with neither 'xy' nor 'yz' a token, is unreachable by BPE: tiktoken gives it
    for the piece 'xyz' only, which the merge list's ignore_merges reproduces."""
    extra = [b"xyz", b"ab"]
    assert canonical_splits(BYTES + extra)[256] == -1
    derived = merge_list_vocab(rank_vocab(extra))
    assert derived.merges == [b"a b"] and derived.ignore_merges
    enc, ref = tiktoken_of(extra), tokenizers_of(derived)
    for text in ["xyz", "xyzxyz", "ab xyz", "axyzb"]:
        assert ref.encode(text).ids == enc.encode_ordinary(text), text


def test_missing_single_byte_is_refused():
    vocab = ByteLevelVocab(texts=BYTES[1:], merge_order=MergeOrder.TOKEN_RANK)
    with pytest.raises(UnsupportedConversionError, match="single bytes 0x00"):
        merge_list_vocab(vocab, "partial.tiktoken")


def test_byte_unicode_texts():
    assert to_byte_unicode(b" \n\xff") == "\u0120\u010a\u00ff"


# ---------------------------------------------------------------------- merges -> ranks

def test_merges_that_encode_as_ranks():
    texts = BYTES + [b"ab", b"abc", b"bc"]
    # one merge per token, and every split as transformers writes them: both are fine
    assert merge_list_rank_problems(texts, [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c")], False) == []
    assert merge_list_rank_problems(texts, [(b"a", b"b"), (b"ab", b"c"), (b"a", b"bc"), (b"b", b"c")],
                                    False) == []


@pytest.mark.parametrize("merges, ignore_merges, message", [
    ([(b"a", b"b"), (b"b", b"c")], False, "merge (b\"ab\", b\"c\") tiktoken makes to build b\"abc\""),
    ([(b"a", b"b"), (b"b", b"c"), (b"ab", b"c")], False, "not in the order of their tokens' ids"),
    ([(b"a", b"b"), (b"ab", b"c"), (b"b", b"c"), (b"c", b"d")], False, "result is no token"),
    ([(b"a", b"b"), (b"a", b"b"), (b"ab", b"c"), (b"b", b"c")], False, "listed twice"),
])
def test_merges_that_do_not_encode_as_ranks(merges, ignore_merges, message):
    texts = BYTES + [b"ab", b"abc", b"bc"]
    problems = merge_list_rank_problems(texts, merges, ignore_merges)
    assert problems and message in problems[0], problems


def test_unreachable_token_needs_ignore_merges():
    texts = BYTES + [b"xyz"]
    assert "not built by BPE" in merge_list_rank_problems(texts, [], False)[0]
    assert merge_list_rank_problems(texts, [], True) == []


# ---------------------------------------------------------------------- the writer

def test_rank_file_bytes_layout():
    assert rank_file_bytes([b"!", None, b"ab"]) == b"IQ== 0\nYWI= 2\n"


def test_custom_rank_file_written_back_with_its_options():
    data = rank_file_bytes(BYTES + [b"ab"])
    options = LoadOptions.of(pattern=PATTERN, special_tokens={"<|end|>": 300})
    spec = spec_from_bytes(data, FileFormat.TIKTOKEN, "mine.tiktoken", options)
    assert write_tiktoken(spec) == data


@pytest.mark.parametrize("relative, part", [
    ("spm/llama2c_tok512.model", "spm-bpe model"),
    ("hf/all-MiniLM-L6-v2/tokenizer.json", "wordpiece model"),
])
def test_refusal_leaves_an_existing_file_as_it_was(fixtures, tmp_path, relative, part):
    target = tmp_path / "out.tiktoken"
    target.write_bytes(b"keep me")
    tok = toksmith.load(fixture_file(fixtures, relative))
    with pytest.raises(UnsupportedConversionError, match=part):
        tok.save(target)
    assert target.read_bytes() == b"keep me"
    with pytest.raises(UnsupportedConversionError):
        tok.save(tmp_path / "out.bin", format="tiktoken")
    assert not (tmp_path / "out.bin").exists()


def _byte_level_json(tmp_path, post_processor=None, extra_added=()) -> toksmith.Tokenizer:
    vocab = {to_byte_unicode(b): b[0] for b in BYTES} | {"ab": 256}
    document = {
        "version": "1.0",
        "added_tokens": [{"id": 257, "content": "<|end|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}, *extra_added],
        "normalizer": None, "post_processor": post_processor,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "vocab": vocab, "merges": [["a", "b"]]}}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document))
    return toksmith.load(path)


def test_unrecognised_ranks_are_refused_naming_pattern_and_specials(tmp_path):
    with pytest.raises(UnsupportedConversionError) as err:
        write_tiktoken(_byte_level_json(tmp_path).spec)
    message = str(err.value)
    assert "'tokenizer.json'" in message and "GPT-2's regex" in message and "1 special tokens" in message
    assert "no encoding a reader recognises" in message


def test_pipeline_a_rank_file_cannot_carry_is_named(tmp_path):
    template = {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|end|>", "type_id": 0}},
                                                         {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {"<|end|>": {"id": "<|end|>", "ids": [257], "tokens": ["<|end|>"]}}}
    plain = {"id": 258, "content": "hello", "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": True, "special": False}
    with pytest.raises(UnsupportedConversionError) as err:
        write_tiktoken(_byte_level_json(tmp_path, template, [plain]).spec)
    message = str(err.value)
    assert "post-processor adding <|end|>" in message and "not special (first 'hello')" in message
