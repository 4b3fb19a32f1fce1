"""The suffix array and LCP array the Unigram trainer's seeds come from (_core/suffix_array),
against their definitions (sorting the suffixes, comparing neighbours)."""
from __future__ import annotations

import random

import pytest

from toksmith._core.suffix_array import lcp_array, suffix_array


def naive_lcp(text: bytes, sa: list[int]) -> list[int]:
    def common(a: int, b: int) -> int:
        k = 0
        while a + k < len(text) and b + k < len(text) and text[a + k] == text[b + k]:
            k += 1
        return k
    return [0] + [common(sa[i - 1], sa[i]) for i in range(1, len(sa))]


@pytest.mark.parametrize("alphabet", [b"ab", b"ab\x00c", bytes(range(256)), "日本▁".encode()])
def test_small_texts_against_sorting(alphabet):
    rng = random.Random(len(alphabet))
    for _ in range(200):
        text = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 120)))
        sa = suffix_array(text)
        assert sa == sorted(range(len(text)), key=lambda i: text[i:])
        assert lcp_array(text) == naive_lcp(text, sa)


def test_repetitive_texts():
    for text in [b"a" * 1000, b"ab" * 700 + b"a", b"abc\x00" * 300, (b"x" * 50 + b"\x00") * 40]:
        sa = suffix_array(text)
        assert sa == sorted(range(len(text)), key=lambda i: text[i:])
        assert lcp_array(text) == naive_lcp(text, sa)


def test_parallel_lcp_is_the_same_array():
    rng = random.Random(7)
    words = [bytes(rng.choice(b"abcde") for _ in range(rng.randint(1, 9))) for _ in range(500)]
    text = b"\x00".join(rng.choice(words) for _ in range(20000))
    assert len(text) > 1 << 16
    serial = lcp_array(text)
    assert lcp_array(text, threads=2) == lcp_array(text, threads=3) == serial
    sa = suffix_array(text)
    for i in rng.sample(range(1, len(text)), 300):
        assert text[sa[i - 1]:sa[i - 1] + serial[i]] == text[sa[i]:sa[i] + serial[i]]
        assert text[sa[i - 1]:sa[i - 1] + serial[i] + 1] < text[sa[i]:sa[i] + serial[i] + 1]
