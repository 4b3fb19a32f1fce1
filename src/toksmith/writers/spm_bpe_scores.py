"""Piece scores that make sentencepiece's BPE merge as a Hugging Face BPE merge list does.

HF BPE (tokenizers models/bpe/word.rs merge_all) repeatedly merges the adjacent pair of
lowest merge rank, leftmost first, and only pairs listed in `merges`. sentencepiece's BPE
(bpe_model.cc Model::Encode) repeatedly merges the adjacent pair whose concatenation is a
piece of highest score, leftmost first, whether or not anyone listed the pair. The scores
here are -(1 + block), where a block is a run of consecutive merges forming the same
piece; a piece no merge forms scores 0 (its score is never compared).

Why the result is the same (the check refuses every file where a step does not hold):

1. Same candidates. sentencepiece's symbols start as single characters and grow only by
   merges, so every symbol is a character or a merge result (the set S). (C1) for every
   NORMAL piece t and every split t = a + b with a, b in S, (a, b) is in the merge list:
   so every pair sentencepiece could merge is a pair HF may merge; conversely every merge
   forms a NORMAL piece (C0), which sentencepiece may form. A character that is no piece
   takes part in no merge on either side (HF merges name pieces only), and becomes byte
   pieces or <unk> on both sides.
2. Same choice at every step. (C2) the merges forming one piece are consecutive, so between
   candidates of different blocks ranks and scores choose alike, and candidates of one
   block forming by the same pair are taken leftmost first on both sides. The two can
   differ only when the best block b holds two different pairs at once (HF: lower rank
   first; sentencepiece: leftmost first). (C4) refuses two different pairs of a block that
   can overlap ([x][y][z] with x + y = y + z = t), so those candidates share no symbol.
   (C3) a piece formed by two or more different merges is a half only of merges ranked
   after its own: so merging one of them creates only candidates of later blocks and
   removes no other candidate of block b. Both sides then merge every candidate of block b
   before anything else, reaching the same symbols; before and after, they agree step by step.

>>> scores = merge_scores({"a": 0, "b": 1, "ab": 2, "abb": 3}, [("a", "b"), ("ab", "b")], {"a", "b", "ab", "abb"})
>>> scores["ab"], scores["abb"]
(-1.0, -2.0)
"""
from __future__ import annotations

from collections.abc import Iterable


def merge_scores(vocab: dict[str, int], merges: Iterable[tuple[str, str]], normal: set[str],
                 limit: int = 5) -> dict[str, float]:
    """{piece text: score} for the merge results (see the module docstring); raises
    ValueError listing (up to `limit` of each kind) the steps that fail. `normal`: the
    texts that will be NORMAL pieces."""
    block_of: dict[str, int] = {}
    pairs_of_block: list[list[tuple[str, str]]] = []
    merge_set: set[tuple[str, str]] = set()
    problems: dict[str, list[str]] = {}

    def problem(kind: str, text: str) -> None:
        found = problems.setdefault(kind, [])
        if len(found) < limit:
            found.append(text)

    previous = None
    for rank, (left, right) in enumerate(merges):
        result = left + right
        merge_set.add((left, right))
        if result not in normal:
            problem("C0", f"merge {rank} ({left!r}, {right!r}) forms {result!r}, which is "
                          f"{'not in the vocabulary' if result not in vocab else 'an added or special token'}")
            continue
        if result != previous:
            if result in block_of:
                problem("C2", f"the merges forming {result!r} are not consecutive (again at rank {rank})")
                continue
            block_of[result] = len(pairs_of_block)
            pairs_of_block.append([])
            previous = result
        pairs_of_block[block_of[result]].append((left, right))

    # The earliest block whose result has each piece as a half.
    first_use: dict[str, int] = {}
    for block, pairs in enumerate(pairs_of_block):
        for left, right in pairs:
            first_use.setdefault(left, block)
            first_use.setdefault(right, block)
    for block, pairs in enumerate(pairs_of_block):
        if len(pairs) > 1:
            result = pairs[0][0] + pairs[0][1]
            if first_use.get(result, len(pairs_of_block)) < block:
                problem("C3", f"{result!r}, formed by {len(pairs)} different merges, is a half of a merge "
                              f"ranked before them")
            in_block = set(pairs)
            result = pairs[0][0] + pairs[0][1]
            for left, right in pairs:
                if result.startswith(right) and (right, result[len(right):]) in in_block \
                        and (right, result[len(right):]) != (left, right):
                    problem("C4", f"merges ({left!r}, {right!r}) and ({right!r}, {result[len(right):]!r}) form "
                                  f"{result!r} and can overlap")

    def in_s(text: str) -> bool:
        return len(text) == 1 or text in block_of

    for piece in normal:
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if in_s(left) and in_s(right) and (left, right) not in merge_set:
                problem("C1", f"{piece!r} = {left!r} + {right!r}, which sentencepiece would merge and "
                              f"the merge list does not name")
    if problems:
        raise ValueError("; ".join(f"{text} [{kind}]" for kind, texts in sorted(problems.items()) for text in texts))
    return {piece: -float(block + 1) for piece, block in block_of.items()}
