"""Allowed differences of the tokenizer.json parity files of hf2's share (issue 31): Split and
Replace patterns, post-processors, Precompiled, random pipelines, WordPiece, Unigram, tokens.

Today two, both in test_hf_split_replace's random patterns: Oniguruma giving up on a search in
tokenizers, and patterns Oniguruma refuses that toksmith's reader does not foresee. Every other
comparison of these files must be equal.
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


# What a reader does with a pattern (compared with what tokenizers does when it loads it).
REFUSED = "refused"
LOADS = "loads"

# Oniguruma 6.9 complaints (as tokenizers 0.23.3 words them) that toksmith's check of a pattern,
# hf/onig_syntax.oniguruma_error, does not look for: it learned the ones `regex` shares and a
# few Oniguruma-only constructs, and says the rest is a known gap.
UNFORESEEN_ONIGURUMA_COMPLAINTS = ("Oniguruma error: invalid pattern in look-behind",
                                   "Oniguruma error: target of repeat operator is invalid",
                                   "Oniguruma error: undefined error code")

ONIGURUMA_REFUSAL_NOT_FORESEEN = Excuse(
    "ONIGURUMA_REFUSAL_NOT_FORESEEN",
    allows="tokenizers 0.23.3 refuses the pattern with one of Oniguruma's complaints that toksmith's check "
           "(hf/onig_syntax.py) does not foresee (a look-behind Oniguruma finds invalid, a repeated "
           "look-around, 'undefined error code'), and toksmith's reader loads it: case is (pattern, "
           "tokenizers' message)",
    applies=lambda case, ours, theirs: (ours == LOADS and theirs == REFUSED
                                        and case[1] in UNFORESEEN_ONIGURUMA_COMPLAINTS),
    allowed=(("a(?<=b+)", "Oniguruma error: invalid pattern in look-behind"), LOADS, REFUSED),
    refused=(("(a", "Oniguruma error: end pattern with unmatched parenthesis"), LOADS, REFUSED))
