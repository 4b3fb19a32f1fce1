"""tokenizers' BPE model over characters (toksmith._core.hf_bpe) on small vocabularies
built here, word by word against `tokenizers.models.BPE(...).tokenize` itself.

The cases the trained vocabularies of tests/parity/test_hf_bpe.py rarely reach: a merge
listed twice (the last rank wins), unk_token missing from the vocabulary, the pending
unk placed after byte-fallback tokens, merges that involve unk or byte tokens, and
random vocabularies whose merges let a changed pair form the same token (the heap's
exact stale-entry check).
"""
from __future__ import annotations

import itertools
import json
import random

import pytest
from tokenizers import Tokenizer

from toksmith._core.hf_bpe import HfBpe
from toksmith.hf.native_models import _bpe
from toksmith.hf.reader import read_hf_json


def _pair(vocab: dict[str, int], merges: list[tuple[str, str]], **options):
    """(toksmith's model, tokenizers' model) of one BPE model section."""
    section = {"type": "BPE", "vocab": vocab, "merges": [list(m) for m in merges], **options}
    data = json.dumps({"version": "1.0", "model": section}).encode()
    hf = read_hf_json(data, "t.json")
    return _bpe(None, hf, hf.model), Tokenizer.from_str(data.decode()).model


def _same(mine: HfBpe, ref, words) -> None:
    for word in words:
        assert mine.encode_piece(word) == [t.id for t in ref.tokenize(word)], word


def test_a_merge_listed_twice_keeps_its_last_rank():
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}
    mine, ref = _pair(vocab, [("a", "b"), ("b", "c"), ("a", "b")])
    assert mine.n_pairs == 2
    _same(mine, ref, ["abc", "ab", "bcab", "cabc"])
    assert mine.encode_piece("abc") == [0, 4]       # ("b", "c") now ranks before ("a", "b")


def test_unknown_characters_unk_fuse_and_byte_fallback():
    vocab = {"a": 0, "b": 1, "ab": 2, "<unk>": 3, "<0x41>": 4, "<0xC3>": 5, "<0xA9>": 6, "<unk>a": 7}
    words = ["a", "xa", "axxb", "Aé", "xAy", "éx", "xéyA", "ab", "x", "ééé", "xxx"]
    for fuse, fallback in itertools.product((False, True), repeat=2):
        mine, ref = _pair(vocab, [("a", "b"), ("<unk>", "a")], unk_token="<unk>", fuse_unk=fuse,
                          byte_fallback=fallback)
        _same(mine, ref, words)
    mine, ref = _pair(vocab, [("a", "b")])          # no unk_token: unknown characters vanish,
    _same(mine, ref, ["axb", "xx", "xab"])         # and their neighbours meet
    assert mine.encode_piece("axb") == [2]


def test_pending_unk_comes_after_byte_tokens():
    # Parity: merge_word adds a pending unk only at the next known character or the end
    vocab = {"a": 0, "<unk>": 1, "<0x41>": 2, "<0x42>": 3}
    for fuse in (False, True):
        mine, ref = _pair(vocab, [], unk_token="<unk>", fuse_unk=fuse, byte_fallback=True)
        _same(mine, ref, ["xA", "xAyB", "axAa", "xyABz"])
    assert mine.encode_piece("xAyBa") == [2, 3, 1, 0]


def test_prefix_and_suffix_with_byte_fallback():
    vocab = {"a": 0, "##a": 1, "a</w>": 2, "##a</w>": 3, "##aa": 4, "<unk>": 5,
             **{f"<0x{b:02X}>": 6 + b for b in b"#</w>x"}}
    mine, ref = _pair(vocab, [("##a", "##a")], unk_token="<unk>",
                      continuing_subword_prefix="##", end_of_word_suffix="</w>", byte_fallback=True)
    _same(mine, ref, ["a", "aa", "aaa", "xa", "ax", "axa", "x", "é", "aé", "éa"])


def test_ignore_merges_emits_a_word_that_is_a_token():
    vocab = {"a": 0, "b": 1, "ab": 2, "abb": 3, "bb": 4}
    mine, ref = _pair(vocab, [("a", "b"), ("b", "b")], ignore_merges=True)
    _same(mine, ref, ["abb", "ab", "abbb", "bb"])
    assert mine.encode_piece("abb") == [3]


def test_unk_token_missing_from_the_vocabulary():
    # tokenizers loads the file and refuses only a text that needs the unk token
    mine, ref = _pair({"a": 0}, [], unk_token="<unk>")
    assert mine.encode_piece("aa") == [0, 0]
    with pytest.raises(Exception):
        ref.tokenize("ax")
    with pytest.raises(ValueError, match="unk_token"):
        mine.encode_piece("ax")


def _random_vocabulary(rnd: random.Random, prefix: str, short_right: bool):
    """Tokens closed under random merges a + b[len(prefix):], with unk and prefix-long tokens."""
    unk = prefix if short_right else "<unk>"
    tokens = ["a", "b", prefix + "a", prefix + "b", unk]
    merges: list[tuple[str, str]] = []
    for _ in range(40):
        left, right = rnd.choice(tokens), rnd.choice(tokens)
        if len(right) < len(prefix):
            continue
        merged = left + right[len(prefix):]
        if (left, right) not in merges:
            merges.append((left, right))
            if merged not in tokens:
                tokens.append(merged)
    return {t: i for i, t in enumerate(tokens)}, merges, unk


@pytest.mark.parametrize("seed", range(30))
def test_random_vocabularies_including_changed_pairs_forming_the_same_token(seed):
    rnd = random.Random(seed)
    short_right = seed % 2 == 0
    vocab, merges, unk = _random_vocabulary(rnd, "##", short_right)
    mine, ref = _pair(vocab, merges, unk_token=unk, fuse_unk=seed % 3 == 0, continuing_subword_prefix="##")
    assert mine.exact_stale_check == any(len(b) <= 2 for _, b in merges)
    words = ["".join(rnd.choice("abx") for _ in range(rnd.randint(1, 60))) for _ in range(300)]
    _same(mine, ref, words)


def test_words_are_cut_before_spaces_only_where_no_merge_crosses():
    # Llama-style: no merge joins "▁..." to a text that does not end with "▁": cut there
    vocab = {"▁": 0, "a": 1, "b": 2, "▁a": 3, "▁▁": 4, "ab": 5, "▁ab": 6, "b▁": 7, "<unk>": 8}
    words = ["▁a▁b", "▁▁a▁▁ab", "ab▁ab", "a▁", "▁", "x▁a", "▁x▁▁x"]
    mine, ref = _pair(vocab, [("▁", "a"), ("▁", "▁"), ("a", "b"), ("▁a", "b")], unk_token="<unk>", fuse_unk=True)
    assert mine.n_cut_chars == 1
    _same(mine, ref, words)
    # a merge from "b" into "▁": no cut
    mine, ref = _pair(vocab, [("▁", "a"), ("b", "▁"), ("a", "b")], unk_token="<unk>")
    assert mine.n_cut_chars == 0
    _same(mine, ref, words)
    # an unk_token ending with the character: no cut either
    mine, ref = _pair({**vocab, "x▁": 9}, [("▁", "a")], unk_token="x▁")
    assert mine.n_cut_chars == 0 and mine.unk_id == 9
    _same(mine, ref, words)
