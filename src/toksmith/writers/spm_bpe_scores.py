"""Piece scores that make sentencepiece's BPE merge as a Hugging Face BPE merge list does.

HF BPE (tokenizers models/bpe/word.rs merge_all) starts from the characters and repeatedly
merges the adjacent listed pair of lowest merge rank, leftmost first among equal ranks (one
rank is one pair). sentencepiece's BPE (bpe_model.cc Model::SampleEncode) starts from the
characters and repeatedly merges the adjacent pair whose concatenation is a piece of highest
score, leftmost first among equal scores, whether or not anyone listed the pair.

Live pairs. Run tokenizers' merging on the text of a piece t alone: if it ends in the one
symbol t, its last merge is the live pair of t. Lemma: in any text, whenever tokenizers holds
two adjacent symbols [x][y] with x + y = t, (x, y) is the live pair of t. Proof: no symbol
crosses either end of the span x + y now, so none ever did (symbols only grow); each merge
inside the span was, when made, the best candidate of the whole text, so the best inside the
span, ranked by (rank, position) as the run on t alone ranks them. The merges inside the span
are therefore the first steps of the run on t alone, which holds two symbols only once.

The scores: a piece with a live pair scores -(1 + rank of its live pair); any other piece 0
(it never has a candidate, by the lemma and C1). Conditions, each checked:
- (C0) every merge forms a NORMAL piece; no pair is listed twice (tokenizers keeps one rank);
- (C1) every split t = a + b of a NORMAL piece t into symbols sentencepiece can hold (a, b
  characters or merge results) is a listed merge. (An unlisted split makes the two differ:
  sentencepiece merges it, tokenizers cannot.)

Why they then make the same segmentation, step by step (induction on equal symbols): by C0
and C1 the candidates are the same adjacent pairs on both sides (a user-defined piece is
never formed: both cut its text out before merging). By the lemma each candidate is the live
pair of its result, so tokenizers' lowest rank is the highest score: both pick the same
piece, and of that piece one pair, the leftmost occurrence on both sides. So the order of a
piece's other splits in the list never matters (no two different pairs of one piece are
candidates at once), nor whether a piece's merges are consecutive (Llama 2's runs of "▁",
interleaved by both converters, score by their live pairs (▁*k, ▁)).

>>> scores = merge_scores({"a": 0, "b": 1, "ab": 2, "abb": 3}, [("a", "b"), ("ab", "b")], {"a", "b", "ab", "abb"})
>>> scores["ab"], scores["abb"]
(-1.0, -2.0)
"""
from __future__ import annotations

from collections.abc import Iterable


def merge_scores(vocab: dict[str, int], merges: Iterable[tuple[str, str]], normal: set[str],
                 limit: int = 5) -> dict[str, float]:
    """{piece text: score} for the merge results (see the module docstring); raises
    ValueError naming (up to `limit` of each kind) the merges that fail a condition.
    `normal`: the texts that will be NORMAL pieces."""
    problems: dict[str, list[str]] = {}

    def problem(kind: str, text: str) -> None:
        found = problems.setdefault(kind, [])
        if len(found) < limit:
            found.append(text)

    rank_of: dict[tuple[str, str], int] = {}
    results: set[str] = set()
    for rank, (left, right) in enumerate(merges):
        result = left + right
        if result not in normal:
            problem("C0", f"merge {rank} ({left!r}, {right!r}) forms {result!r}, which is "
                          f"{'not in the vocabulary' if result not in vocab else 'an added or special token'}")
        elif (left, right) in rank_of:
            problem("C0", f"merge {rank} ({left!r}, {right!r}) is listed twice (also at rank {rank_of[left, right]})")
        else:
            rank_of[left, right] = rank
            results.add(result)

    def symbol(text: str) -> bool:
        return len(text) == 1 or text in results

    for piece in normal:
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            # Parity: bpe_model.cc SampleEncode merges any adjacent pair whose text is a piece.
            if symbol(left) and symbol(right) and (left, right) not in rank_of:
                problem("C1", f"{piece!r} = {left!r} + {right!r}, which sentencepiece would merge and "
                              f"the merge list does not name")
    if problems:
        raise ValueError("; ".join(f"{text} [{kind}]" for kind, texts in sorted(problems.items()) for text in texts))
    scores = {}
    for piece in results:
        live = live_pair_rank(piece, rank_of)
        if live is not None:
            scores[piece] = -float(live + 1)
    return scores


def live_pair_rank(piece: str, rank_of: dict[tuple[str, str], int]) -> int | None:
    """The rank of the last merge when tokenizers' BPE merges the text `piece` alone, if that
    ends in one symbol; else None.

    >>> live_pair_rank("abc", {("a", "b"): 0, ("b", "c"): 1, ("a", "bc"): 2, ("ab", "c"): 3})
    3
    """
    symbols, last = tokenizers_bpe_merge(piece, rank_of)
    return last if len(symbols) == 1 else None


def tokenizers_bpe_merge(text: str, rank_of: dict[tuple[str, str], int]) -> tuple[list[str], int | None]:
    """The symbols tokenizers' BPE makes of `text` with merge ranks `rank_of`, and the rank
    of its last merge (None: no merge).

    Parity: tokenizers 0.23 models/bpe/word.rs Word::merge_all: the listed pair of lowest
    rank first, the leftmost first among equal ranks (Merge::cmp).

    >>> tokenizers_bpe_merge("abc", {("b", "c"): 0, ("a", "b"): 0})
    (['ab', 'c'], 0)
    """
    symbols = list(text)
    last = None
    while True:
        best = None
        for position in range(len(symbols) - 1):
            rank = rank_of.get((symbols[position], symbols[position + 1]))
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, position)
        if best is None:
            return symbols, last
        last, position = best
        symbols[position:position + 2] = [symbols[position] + symbols[position + 1]]
