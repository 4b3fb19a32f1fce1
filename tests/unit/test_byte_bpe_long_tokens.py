"""ByteLevelBpe with tokens far longer than any pre-token of prose: what a byte-stream
training of one repetitive line learns (issue 30 item 10: tokens as long as the line).
Building the model must take memory in proportion to the vocabulary's texts, not tens of
bytes per byte of its longest token, and give the same ids as the merge rule."""
from __future__ import annotations

import pytest

from tests.peak_rss import run_measured
from toksmith._core.byte_bpe import ByteLevelBpe, MergeOrder


def doubling_vocabulary(unit: bytes, doublings: int) -> tuple[list[bytes], list[bytes]]:
    """The bytes of `unit`, its prefixes, then unit * 2**k for k up to `doublings`, with the
    merges forming each in id order (a byte-stream training on one line of `unit` repeated
    learns these), so that MERGE_LIST and TOKEN_RANK merge alike."""
    tokens = sorted({bytes([b]) for b in unit})
    merges = []
    for k in range(2, len(unit) + 1):
        tokens.append(unit[:k])
        merges.append(unit[:k - 1] + b" " + unit[k - 1:k])
    text = unit
    for _ in range(doublings):
        merges.append(text + b" " + text)
        text += text
        tokens.append(text)
    return tokens, merges


# Prints the growth of the peak RSS (bytes) while building the model, and the longest token.
_BUILD_PEAK = """
import sys
from tests.unit.test_byte_bpe_long_tokens import doubling_vocabulary
from toksmith._core.byte_bpe import ByteLevelBpe, MergeOrder
tokens, merges = doubling_vocabulary(sys.argv[1].encode(), int(sys.argv[2]))
order = MergeOrder[sys.argv[3]]
before = reset_peak()
model = ByteLevelBpe.build(tokens, merges if order == MergeOrder.MERGE_LIST else None, order=order)
print(peak() - before, len(tokens[-1]))
"""


@pytest.mark.parametrize("order", ["MERGE_LIST", "TOKEN_RANK"])
def test_building_a_model_with_a_4_mb_token_takes_memory_in_proportion_to_its_texts(order):
    growth, longest = map(int, run_measured(_BUILD_PEAK, "a", "22", order).split())
    assert longest == 4 << 20
    # The texts are 2 bytes per byte of the longest token (8 MB), kept once with their maps;
    # merging the 4 MB token once at load took 33-39 bytes per byte (140-164 MB) more; 2-6 since.
    assert growth < 12 * longest, f"building grew the peak RSS by {growth / longest:.1f} bytes per byte"


@pytest.mark.parametrize("order", [MergeOrder.MERGE_LIST, MergeOrder.TOKEN_RANK])
@pytest.mark.parametrize("unit", [b"a", b"ab", b"abc"])
def test_tokens_longer_than_any_marked_whole_give_the_merge_rules_ids(unit, order):
    tokens, merges = doubling_vocabulary(unit, 14)            # up to 16384 copies of the unit
    longest = unit * (1 << 14)
    # a token longer still, its text the longest and one unit: no merge of the list forms
    # it, so MERGE_LIST stops at the two; TOKEN_RANK merges any pair whose bytes are a token
    tokens.append(longest + unit)
    model = ByteLevelBpe.build(tokens, merges if order == MergeOrder.MERGE_LIST else None, order=order)
    ids = {t: i for i, t in enumerate(tokens)}
    checked = 0
    for k in range(15):
        text = unit * (1 << k)
        for _ in range(2):        # twice: a second call may answer from a cache
            assert model.encode_piece(text) == [ids[text]], len(text)
            checked += 1
    want = [ids[longest], ids[unit]] if order == MergeOrder.MERGE_LIST else [ids[longest + unit]]
    assert model.encode_piece(longest + unit) == want
    # 3 copies of a long token: the first two merge (leftmost first), the third stays
    half = unit * (1 << 13)
    assert model.encode_piece(half * 3) == [ids[longest], ids[half]]
    assert checked == 30
