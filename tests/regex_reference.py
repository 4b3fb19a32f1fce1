"""What tokenizers 0.23.3 itself does with a Split/Replace pattern, for the regex tests.

`reference_matches` recovers tokenizers' match list (empty matches included) for a
pattern and a text from three of its own calls: Split "removed" + invert (the non-empty
matches with their offsets) and Replace with a marker (every match, empty ones too, as one
marker). `random_pattern` draws patterns from a grammar of the constructs the linear-time
matcher supports (and some it refuses).
"""
from __future__ import annotations

import random

from tokenizers import Regex, normalizers, pre_tokenizers

MARK = "\uE000"
BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]


def marker_for(text: str) -> str:
    """A private-use character the text does not hold."""
    if MARK not in text:
        return MARK
    return next(chr(c) for c in range(0xE001, 0xF900) if chr(c) not in text)


def reference_matches(pattern: str, text: str, mark: str) -> tuple[list[tuple[int, int]], str]:
    """(tokenizers' matches of a Regex pattern in text as character offsets, the text
    with every match replaced by `mark`)."""
    regex = Regex(pattern)
    spans = [o for _, o in pre_tokenizers.Split(regex, "removed", invert=True).pre_tokenize_str(text)]
    marked = normalizers.Replace(regex, mark).normalize_str(text)
    out: list[tuple[int, int]] = []
    nonempty = {start: end for start, end in spans}
    p = k = 0
    while True:
        if p in nonempty:
            assert marked[k] == mark
            out.append((p, nonempty[p]))
            p = nonempty[p]
            k += 1
            continue
        if k < len(marked) and marked[k] == mark:
            out.append((p, p))
            k += 1
            continue
        if p == len(text):
            break
        assert marked[k] == text[p]
        p += 1
        k += 1
    assert k == len(marked)
    return out, marked


def char_offsets(text: str, byte_pairs) -> list[tuple[int, int]]:
    """(start, end) byte offsets of UTF-8 text -> character offsets."""
    index = {}
    b = 0
    for i, ch in enumerate(text):
        index[b] = i
        b += len(ch.encode("utf-8"))
    index[b] = len(text)
    return [(index[s], index[e]) for s, e in byte_pairs]


_LITERALS = list("abcAB  .-'1209") + ["\\n", "\\t", "é", "ß", "中", "k", "s", "\\x41", "\\u00e9", "\\.", "\\-",
                                        "\\ ", "\\#", "K", "\\r"]
_CLASSES = [r"\w", r"\W", r"\s", r"\S", r"\d", r"\D", r"\h", r"\p{L}", r"\p{Lu}", r"\P{N}", r"\p{Han}", r"\p{^P}",
            ".", r"\N", r"\O", "[abc]", "[^a-c]", "[a-z&&[^aeiou]]", "[[:alpha:]]", "[[:^space:]]", r"[\w-]",
            r"[\s\p{L}]", r"[^\s\p{L}\p{N}]", r"[\r\n]", "[ab[cd]]", "[^[^a]]", "[a-]", "[]a]", r"[\x41-\x5a]",
            "[é-ü]", r"\R", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"]
_ANCHORS = ["^", "$", r"\A", r"\z", r"\Z", r"\b", r"\B"]
_GROUPS = ["(?:", "(", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>", "(?i:", "(?m:", "(?<n>"]
_QUANTIFIERS = ["*", "+", "?", "*?", "+?", "??", "*+", "++", "?+", "{2}", "{1,3}", "{2,}", "{,2}", "{0,1}", "{1,2}?",
                "{3,1}", "{2}?", "{1,3}+", "**", "{0}"]
TEXT_PIECES = list("abcABk s\n\t.-'12é中ßſK\r") + ["ab", "aa", " \n", "  ", "hello", "world", "'s", "ss"]


def random_pattern(rng: random.Random) -> str:
    def atom(depth: int) -> str:
        r = rng.random()
        if r < 0.35 or (depth > 2 and r >= 0.66):
            return rng.choice(_LITERALS)
        if r < 0.6:
            return rng.choice(_CLASSES)
        if r < 0.66:
            return rng.choice(_ANCHORS)
        return rng.choice(_GROUPS) + alternation(depth + 1) + ")"

    def concat(depth: int) -> str:
        out = []
        for _ in range(rng.randint(1, 4)):
            item = atom(depth)
            # Oniguruma refuses a quantified anchor or look-around
            quantifiable = item not in _ANCHORS and not item.startswith(("(?=", "(?!", "(?<=", "(?<!"))
            out.append(item + (rng.choice(_QUANTIFIERS) if quantifiable and rng.random() < 0.45 else ""))
        return "".join(out)

    def alternation(depth: int) -> str:
        return "|".join(concat(depth) for _ in range(rng.choice([1, 1, 1, 2, 3])))

    pattern = alternation(0)
    return "(?i)" + pattern if rng.random() < 0.1 else pattern


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(TEXT_PIECES) for _ in range(rng.randint(0, 12)))
