"""Allowed differences of the tokenizer.json parity files of hf2's share (issue 31): Split and
Replace patterns, post-processors, Precompiled, random pipelines, WordPiece, Unigram, tokens.

Today only one: Oniguruma giving up on a search in tokenizers. Every other comparison of these
files must be equal.
"""
from __future__ import annotations

from dataclasses import dataclass

from tests.parity.comparison import Excuse


@dataclass(frozen=True)
class ReferencePanic:
    """tokenizers panicked (a PanicException) instead of giving an output; `message` is its text."""

    message: str


# onig 6.5.3 (the Rust binding tokenizers 0.23.3 links, src/lib.rs:647) panics on a search that
# returns ONIGERR_RETRY_LIMIT_IN_MATCH_OVER: Oniguruma stops a match after
# ONIG_DEFAULT_RETRY_LIMIT_IN_MATCH (10,000,000) backtracking steps.
RETRY_LIMIT_MESSAGE = "Onig: Regex search error: retry-limit-in-match over"

ONIGURUMA_RETRY_LIMIT = Excuse(
    "ONIGURUMA_RETRY_LIMIT",
    allows="tokenizers 0.23.3 panics with Oniguruma's 'retry-limit-in-match over' (the onig 6.5.3 binding, "
           "lib.rs:647, after 10,000,000 backtracking steps) and gives no output; toksmith gives one (its "
           "matches, or the Replace output)",
    applies=lambda case, ours, theirs: (isinstance(theirs, ReferencePanic) and theirs.message == RETRY_LIMIT_MESSAGE
                                        and isinstance(ours, (list, str))),
    allowed=(("(a|a?)+b", "aaaa"), [(0, 4)], ReferencePanic(RETRY_LIMIT_MESSAGE)),
    refused=(("(a|a?)+b", "aaaa"), [(0, 4)], ReferencePanic("Onig: Regex search error: invalid pattern")))
