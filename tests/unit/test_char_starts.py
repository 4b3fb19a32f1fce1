"""Whole-character first symbols (toksmith._core.char_starts) give the ids of BPE from bytes.

Hand-made vocabularies show each guard at work (a merge crossing a character's edge
that ranks before the character's own last merge keeps it in bytes); random small
vocabularies over the bytes of a few characters compare the model with and without
character starts against a plain Python BPE, on random pieces with stray bytes.
"""
from __future__ import annotations

import itertools
import random

import pytest

from toksmith._core.byte_bpe import ByteLevelBpe, MergeOrder
from toksmith._core.byte_unicode import byte_unicode_encode

BYTES = [bytes([b]) for b in range(256)]
E_ACUTE, YI = "é".encode(), "一".encode()     # c3 a9, e4 b8 80


def ref_token_rank(tokens: list[bytes], piece: bytes) -> list[int]:
    """tiktoken's byte_pair_merge: the pair whose bytes form the lowest-ranked token, leftmost first."""
    rank = {}
    for i, t in enumerate(tokens):
        rank.setdefault(t, i)
    parts = [piece[i:i + 1] for i in range(len(piece))]
    while True:
        found = [(rank[a + b], i) for i, (a, b) in enumerate(zip(parts, parts[1:])) if a + b in rank]
        if not found:
            return [rank[p] for p in parts]
        _, i = min(found)
        parts[i:i + 2] = [parts[i] + parts[i + 1]]


def ref_merge_list(tokens: list[bytes], merges: list[tuple[bytes, bytes]], piece: bytes) -> list[int]:
    """llama.cpp's BPE session: the pair earliest in the merges list, leftmost first."""
    rank, ids = {}, {}
    for i, m in enumerate(merges):
        rank.setdefault(m, i)
    for i, t in enumerate(tokens):
        ids.setdefault(t, i)
    parts = [piece[i:i + 1] for i in range(len(piece))]
    while True:
        found = [(rank[(a, b)], i) for i, (a, b) in enumerate(zip(parts, parts[1:])) if (a, b) in rank]
        if not found:
            return [ids[p] for p in parts]
        _, i = min(found)
        parts[i:i + 2] = [parts[i] + parts[i + 1]]


def token_rank_models(tokens):
    return [ByteLevelBpe.build(tokens, order=MergeOrder.TOKEN_RANK, char_starts=flag) for flag in (True, False)]


def merge_list_models(tokens, merges):
    texts = [byte_unicode_encode(t) for t in tokens]
    lines = [byte_unicode_encode(a) + b" " + byte_unicode_encode(b) for a, b in merges]
    return [ByteLevelBpe.build(texts, lines, order=MergeOrder.MERGE_LIST, byte_unicode=True, char_starts=flag)
            for flag in (True, False)]


# ---------------------------------------------------------------------- guards, by hand

GUARDED = BYTES + [b"\xa9x", b" \xc3", E_ACUTE, b"\xe4\xb8", YI, b"\x80\xe4", b"\xe4\xb8\x80\xe4"]
X_ID, CROSS_AFTER, CROSS_BEFORE, E_ID, YI_HALF, YI_ID = 120, 256, 257, 258, 259, 260


@pytest.mark.parametrize("piece, want", [
    # é's last byte + x ranks before é: the byte path merges "\xa9x" first
    (E_ACUTE + b"x", [0xC3, CROSS_AFTER]),
    # space + é's lead byte ranks before é
    (b" " + E_ACUTE, [CROSS_BEFORE, 0xA9]),
    (b"x" + E_ACUTE + E_ACUTE, [X_ID, E_ID, E_ID]),
    # "\x80\xe4" ranks after 一's own merges: 一 forms first either way
    (YI + YI, [YI_ID, YI_ID]),
    (b" " + E_ACUTE + b"x" + YI, [CROSS_BEFORE, CROSS_AFTER, YI_ID]),
])
def test_token_rank_guards_keep_a_character_in_bytes(piece, want):
    for model in token_rank_models(GUARDED):
        assert model.encode_piece(piece) == want
    assert ref_token_rank(GUARDED, piece) == want


def test_merge_list_guards_keep_a_character_in_bytes():
    tokens = BYTES + [b"\xa9x", b" \xc3", E_ACUTE, b"\xc3\xa9x"]
    merges = [(b"\xa9", b"x"), (b" ", b"\xc3"), (b"\xc3", b"\xa9"), (b"\xc3", b"\xa9x")]
    for piece, want in [(E_ACUTE + b"x", [259]), (b" " + E_ACUTE, [257, 0xA9]), (E_ACUTE * 2, [258, 258])]:
        assert ref_merge_list(tokens, merges, piece) == want
        for model in merge_list_models(tokens, merges):
            assert model.encode_piece(piece) == want, piece


def test_characters_whose_bytes_do_not_merge_into_one_symbol_start_as_bytes():
    tokens = BYTES + [b"\xb8\x80"]       # 一 ends as two symbols: e4, b880
    for model in token_rank_models(tokens):
        assert model.encode_piece(YI * 3) == [0xE4, 256] * 3


# ---------------------------------------------------------------------- random vocabularies

UNITS = ["é", "ü", "一", "中", "丁", "x", " ", "\n"]
STRAYS = [b"\x80", b"\xa9", b"\xe4", b"\xe4\xb8", b"\xc3", b"\xff"]


def random_piece(rng: random.Random) -> bytes:
    out = b""
    for _ in range(rng.choice([1, 2, 3, 5, 8, 20, 40])):
        out += rng.choice(STRAYS) if rng.random() < 0.08 else rng.choice(UNITS).encode()
    return out


def random_vocab(rng: random.Random) -> tuple[list[bytes], list[tuple[bytes, bytes]]]:
    """All bytes, then tokens formed by merging two earlier ones that stand side by side in
    random text: some join whole characters, some cross a character's edge, in any order."""
    tokens, merges = list(BYTES), []
    known = set(tokens)
    for _ in range(rng.randrange(10, 60)):
        text = random_piece(rng)
        a = rng.randrange(len(text))
        b = rng.randrange(a + 1, min(a + 7, len(text)) + 1) if a + 1 < len(text) else a + 1
        c = rng.randrange(b + 1, min(b + 7, len(text)) + 1) if b < len(text) else b
        left, right = text[a:b], text[b:c]
        if left in known and right in known and right:
            merges.append((left, right))
            if left + right not in known:
                known.add(left + right)
                tokens.append(left + right)
        elif left and left not in known and rng.random() < 0.5:
            tokens.append(left)     # TOKEN_RANK: a token need not be the union of two others
            known.add(left)
    return tokens, merges


@pytest.mark.parametrize("seed", range(40))
def test_random_vocabularies_match_plain_bpe(seed):
    rng = random.Random(seed)
    tokens, merges = random_vocab(rng)
    pieces = [random_piece(rng) for _ in range(300)]
    pieces += [b"".join(p) for p in itertools.product([u.encode() for u in UNITS[:4]] + [b"\x80"], repeat=3)]
    fast, slow = token_rank_models(tokens)
    for piece in pieces:
        want = ref_token_rank(tokens, piece)
        assert fast.encode_piece(piece) == want, (piece, "token rank")
        assert slow.encode_piece(piece) == want, (piece, "token rank, bytes")
    # MERGE_LIST: every merge result is a token, so no byte fallback is involved
    merge_tokens = list(BYTES)
    for a, b in merges:
        if a + b not in merge_tokens:
            merge_tokens.append(a + b)
    fast, slow = merge_list_models(merge_tokens, merges)
    for piece in pieces:
        want = ref_merge_list(merge_tokens, merges, piece)
        assert fast.encode_piece(piece) == want, (piece, "merge list")
        assert slow.encode_piece(piece) == want, (piece, "merge list, bytes")
