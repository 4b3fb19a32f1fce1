"""The byte-level BPE model stage (toksmith._core.byte_bpe) on small vocabularies whose
expected ids follow from the merge rules by hand (the references are checked on real
vocabularies in tests/parity/test_byte_bpe_*.py)."""
from __future__ import annotations

import pytest

from toksmith._core.byte_bpe import ByteLevelBpe, MergeOrder
from toksmith._core.byte_unicode import byte_unicode_decode, byte_unicode_encode

ABC = [b"a", b"b", b"c", b"ab", b"bc", b"abc"]


def merges_model(tokens, merges, **flags):
    return ByteLevelBpe.build([t.encode() if isinstance(t, str) else t for t in tokens],
                              [m.encode() if isinstance(m, str) else m for m in merges],
                              order=MergeOrder.MERGE_LIST, **flags)


def test_merge_list_order_follows_the_merges_not_the_ids():
    # "b c" ranks before "a b": abc -> a bc, although ab has the lower id
    assert merges_model(ABC, ["b c", "a b"]).encode_piece(b"abc") == [0, 4]
    assert merges_model(ABC, ["a b", "b c"]).encode_piece(b"abc") == [3, 2]
    assert merges_model(ABC, ["a b", "b c", "a bc"]).encode_piece(b"abc") == [3, 2]
    assert merges_model(ABC, ["b c", "a bc"]).encode_piece(b"abc") == [5]


def test_token_rank_order_ranks_a_pair_by_the_token_it_forms():
    tokens = [b"a", b"b", b"c", b"bc", b"ab", b"abc"]
    # bc (id 3) before ab (id 4); then a+bc forms abc
    bpe = ByteLevelBpe.build(tokens, order=MergeOrder.TOKEN_RANK)
    assert bpe.encode_piece(b"abc") == [5]
    assert bpe.encode_piece(b"ab") == [4]
    assert bpe.encode_piece(b"cab") == [2, 4]


def test_ties_go_to_the_leftmost_pair():
    # Parity: llama.cpp llm_bigram_bpe::comparator, tiktoken byte_pair_merge
    assert merges_model([b"a", b"aa"], ["a a"]).encode_piece(b"aaa") == [1, 0]
    assert ByteLevelBpe.build([b"a", b"aa"], order=MergeOrder.TOKEN_RANK).encode_piece(b"aaaaa") == [1, 1, 0]


def test_long_pieces_take_the_heap_and_give_the_linear_result():
    tokens = [b"a", b"b", b"ab", b"aab", b"aa", b"aaaa"]
    bpe = ByteLevelBpe.build(tokens, order=MergeOrder.TOKEN_RANK)
    # 'a' * n merges pairwise left to right (aa before aaaa), for short and long pieces alike
    for n in (7, 31, 33, 64, 1001):
        ids = bpe.encode_piece(b"a" * n)
        assert ids == [5] * (n // 4) + [4] * (n % 4 // 2) + [0] * (n % 2), n
    # "ab" is rank 2, before "aa": every "ab" forms, then "a"+"ab" = "aab"
    for n in (5, 40):
        assert bpe.encode_piece(b"aab" * n) == [3] * n


def test_merge_naming_texts_that_are_no_tokens_falls_back_to_bytes():
    # Parity: llama.cpp keeps such a merge; the result "xy" is no token, so it becomes
    # the tokens of its bytes ("x"; "y" has none and is dropped).
    bpe = merges_model([b"x", b"z"], ["x y"], byte_unicode=True, llama_byte_fallback=True)
    assert bpe.encode_piece(b"xy") == [0]
    assert bpe.encode_piece(b"xyz") == [0, 1]


def test_llama_fallback_looks_up_each_byte_of_the_byte_encoded_text():
    # raw byte 0x0A is "Ċ" (U+010A, UTF-8 C4 8A) in GPT-2's map; llama.cpp looks up
    # "\xc4" and "\x8a" alone, which only odd vocabularies have as tokens
    tokens = [b"\xc4", b"\x8a", b"q"]
    bpe = ByteLevelBpe.build(tokens, [], order=MergeOrder.MERGE_LIST, byte_unicode=True,
                             llama_byte_fallback=True)
    assert bpe.encode_piece(b"\n") == [0, 1]
    assert bpe.encode_piece(b"q\n") == [2, 0, 1]


def test_ignore_merges_emits_a_piece_that_is_a_token_whole():
    tokens = [b"a", b"b", b"c", b"ab", b"abc"]
    merges = ["a b", "b c"]     # abc is no merge result, yet a token
    assert merges_model(tokens, merges).encode_piece(b"abc") == [3, 2]
    assert merges_model(tokens, merges, ignore_merges=True).encode_piece(b"abc") == [4]


def test_texts_through_the_byte_unicode_map():
    assert byte_unicode_encode(b" \n\x00\xff") == "ĠĊĀÿ".encode()
    assert byte_unicode_decode("ĠĊĀÿ".encode()) == b" \n\x00\xff"
    assert byte_unicode_decode(b"a b") is None          # ' ' is not in the map
    assert byte_unicode_decode("中".encode()) is None
    # an overlong form of "A" is not the byte-encoded text of any input (llama.cpp matches texts)
    assert byte_unicode_decode(b"\xc1\x81") is None
    tokens = ["Ġ", "h", "i", "Ġh", "Ġhi", "<|endoftext|>", "a b"]
    bpe = merges_model([t.encode() for t in tokens], ["Ġ h", "Ġh i"], byte_unicode=True)
    assert bpe.encode_piece(b" hi") == [4]
    assert bpe.token_bytes(4) == b" hi"
    assert bpe.token_bytes(6) == b""        # outside the map: no pre-token forms it


def test_utf8_symbols_and_hex_fallback():
    # llama.cpp's BPE without the byte map (gemma4): symbols are characters,
    # a symbol that is no token becomes its <0xXX> byte tokens
    tokens = ["a", "ä", "aä", "<0xC3>", "<0xB6>", "\n\n", "\n"]
    bpe = merges_model(tokens, ["a ä"], utf8_symbols=True, hex_byte_fallback=True, whole_newline_runs=True)
    assert bpe.encode_piece("aä".encode()) == [2]
    assert bpe.encode_piece("ö".encode()) == [3, 4]
    assert bpe.encode_piece("aä".encode() * 40) == [2] * 40
    assert bpe.encode_piece(b"\n\n") == [5]
    assert bpe.encode_piece(b"\n\n\n") == [6, 6, 6]


def test_spans_and_word_cache_give_the_same_ids():
    bpe = ByteLevelBpe.build(ABC, order=MergeOrder.TOKEN_RANK)
    pieces = [b"abc", b"ab", b"abc", b"ca", b"abc" * 30]
    first = bpe.encode_pieces(pieces, with_spans=True)
    assert [ids for ids, _ in first] == [bpe.encode_piece(p) for p in pieces]
    assert first[1] == ([3], [(0, 2)])
    assert first[3] == ([2, 0], [(0, 1), (1, 2)])
    assert first[4][1][:2] == [(0, 3), (3, 6)]
    assert bpe.encode_split(b"abcabca", [3, 5, 7]) == [5, 3, 2, 0]


def test_build_refuses_bad_arguments():
    with pytest.raises(ValueError, match="merges"):
        ByteLevelBpe.build(ABC, order=MergeOrder.MERGE_LIST)
    with pytest.raises(ValueError, match="ends"):
        ByteLevelBpe.build(ABC, order=MergeOrder.TOKEN_RANK).encode_split(b"abc", [2, 1])


def test_merges_as_one_bytes_object_read_as_its_lines():
    # ByteLevelBpe.build takes the merges as a list or as one bytes object of b"\n"-joined
    # lines (the tokenizer.json fast path): the same model, an empty line or a line
    # without a space included, on random words over a small alphabet.
    import random
    rng = random.Random(3)
    alphabet = ["a", "b", "c", "é", "中"]
    tokens = [byte_unicode_encode(ch.encode()) for ch in alphabet]
    lines = []
    for _ in range(60):
        left, right = rng.choice(tokens), rng.choice(tokens)
        lines.append(left + b" " + right)
        if left + right not in tokens:
            tokens.append(left + right)
    lines[5:5] = [b"", b"abc", b"a b c"]
    all_bytes = [byte_unicode_encode(bytes([b])) for b in range(256)]
    tokens += [t for t in all_bytes if t not in tokens]
    flags = dict(order=MergeOrder.MERGE_LIST, byte_unicode=True)
    as_list = ByteLevelBpe.build(tokens, lines, **flags)
    as_blob = ByteLevelBpe.build(tokens, b"\n".join(lines), **flags)
    assert len(ByteLevelBpe.build(tokens, b"", **flags).encode_piece(b"ab")) == 2
    for _ in range(300):
        word = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 12))).encode()
        assert as_blob.encode_piece(word) == as_list.encode_piece(word), word
