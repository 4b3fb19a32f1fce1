"""Two shortcuts of ByteLevelBpe must change no id: a pre-token that is a token's text skips
the merge when merging that text gives the token (load-time whole-token marks, merge lists
without ignore_merges), and a long run of one byte whose pair never merges is that many of
the byte's id. Random merge lists, in trained and in shuffled orders, against a naive
merge-list BPE written here from the rule (lowest rank first, leftmost on ties)."""
from __future__ import annotations

import random

from toksmith._core.byte_bpe import ByteLevelBpe, MergeOrder

ALPHABET = b"abc"


def naive_merge_list_bpe(text: bytes, ranks: dict[tuple[bytes, bytes], int], ids: dict[bytes, int]) -> list[int]:
    """Merge the bytes of `text` by the lowest-ranked adjacent pair, leftmost on ties."""
    symbols = [bytes([b]) for b in text]
    while True:
        best = None
        for i in range(len(symbols) - 1):
            rank = ranks.get((symbols[i], symbols[i + 1]))
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            return [ids[s] for s in symbols]
        i = best[1]
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]


def random_vocabulary(rng: random.Random, n_merges: int, shuffle: bool):
    """Tokens (the alphabet, then every merge result) and merges over random existing symbols."""
    tokens = [bytes([b]) for b in ALPHABET]
    merges: list[tuple[bytes, bytes]] = []
    while len(merges) < n_merges:
        left, right = rng.choice(tokens), rng.choice(tokens)
        if (left, right) in merges or len(left + right) > 12:
            continue
        merges.append((left, right))
        if left + right not in tokens:
            tokens.append(left + right)
    if shuffle:
        rng.shuffle(merges)      # ranks no longer follow the order the symbols were made in
    return tokens, merges


def test_whole_token_marks_change_no_id_on_random_merge_lists():
    rng = random.Random(20261128)
    checked = 0
    for case in range(300):
        tokens, merges = random_vocabulary(rng, rng.randint(3, 40), shuffle=case % 2 == 1)
        ids = {t: i for i, t in enumerate(tokens)}
        ranks = {pair: r for r, pair in enumerate(merges)}
        bpe = ByteLevelBpe.build(tokens, [l + b" " + r for l, r in merges], order=MergeOrder.MERGE_LIST)
        texts = tokens + [bytes(rng.choice(ALPHABET) for _ in range(rng.randint(2, 30))) for _ in range(30)]
        texts += [bytes([b]) * rng.randint(2, 80) for b in ALPHABET]      # runs, merging or not
        for text in texts:
            # twice: the second call answers from the word cache
            for _ in range(2):
                assert bpe.encode_piece(text) == naive_merge_list_bpe(text, ranks, ids), (case, text, merges)
            checked += 1
    assert checked > 15_000


def test_a_token_its_own_merges_cannot_form_is_merged_not_emitted_whole():
    # "abc" is a token, but merging its text stops at ab + c (no "ab c" merge)
    tokens = [b"a", b"b", b"c", b"ab", b"bc", b"abc"]
    bpe = ByteLevelBpe.build(tokens, [b"a b", b"b c", b"a bc"], order=MergeOrder.MERGE_LIST)
    assert bpe.encode_piece(b"abc") == [3, 2]
    # with "b c" first, a + bc forms the token
    bpe = ByteLevelBpe.build(tokens, [b"b c", b"a b", b"a bc"], order=MergeOrder.MERGE_LIST)
    assert bpe.encode_piece(b"abc") == [5]
