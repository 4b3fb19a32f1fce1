"""The code points a pre-tokenizer's class escapes stand for under each reference's Unicode
tables, and Oniguruma regexes that match exactly llama.cpp's classes.

llama.cpp classifies code points with its own unicode-data.cpp (older Unicode); tiktoken and
tokenizers read the regex crate's / Oniguruma's Unicode 16 tables. So `\\p{L}` is not the same
set under each (U+1C89, U+A7CB, U+105C0, ... are letters only in Unicode 16), and a file
converted between them is read otherwise on text holding those code points. Every set here is
computed from toksmith's own generated tables (the ones its splitters run on), so the checks
stay right when the tables are regenerated.

    >>> [f"U+{lo:04X}..U+{hi:04X}" for lo, hi in class_difference("L", Reference.ONIGURUMA)[1][:2]]
    ['U+1C89..U+1C8A', 'U+A7CB..U+A7CD']
    >>> oniguruma_regex_for_llama_cpp("\\\\d+")
    '[0-9]+'
"""
from __future__ import annotations

import enum
import re
from functools import lru_cache

# The classes llama.cpp's splitters read from its tables (\\p{X} and \\s; \\S and [^..] negate them).
CATEGORY_CLASSES = ("L", "N", "P", "M", "S")
SPACE_CLASS = "s"
SURROGATES = range(0xD800, 0xE000)
# Parity: llama.cpp unicode_regex_split collapsed text: the placeholder of each category.
_LLAMA_PLACEHOLDER = {"N": 0xD1, "L": 0xD2, "P": 0xD3, "M": 0xD4, "S": 0xD5, SPACE_CLASS: 0x0B}
# std::regex (ECMAScript, "C" locale, as llama.cpp runs it): ASCII-only \\d and \\w.
_LLAMA_ASCII_ESCAPES = {"d": "[0-9]", "D": "[^0-9]", "w": "[0-9A-Za-z_]", "W": "[^0-9A-Za-z_]"}


class Reference(enum.Enum):
    """Whose Unicode tables: llama.cpp's, tokenizers' Oniguruma, tiktoken's regex crate."""

    LLAMA_CPP = "llama.cpp"
    ONIGURUMA = "tokenizers (Oniguruma)"
    TIKTOKEN = "tiktoken"


Ranges = tuple[tuple[int, int], ...]


def _ranges(members: bytearray) -> Ranges:
    out = []
    cp = 0
    n = len(members)
    while cp < n:
        if members[cp]:
            lo = cp
            while cp + 1 < n and members[cp + 1]:
                cp += 1
            out.append((lo, cp))
        cp += 1
    return tuple(out)


def _members(ranges) -> bytearray:
    out = bytearray(0x110000)
    for lo, hi in ranges:
        out[lo:hi + 1] = b"\x01" * (hi - lo + 1)
    return out


@lru_cache(maxsize=None)
def _llama_cpp_symbols() -> bytes:
    # The placeholder llama.cpp's collapsed text holds for each non-ASCII code point (0 below 128).
    from toksmith._core.pretok_llama import codepoint_symbols
    return bytes([0] * 128 + [codepoint_symbols(cp)[0] & 0xFF for cp in range(128, 0x110000)])


def _llama_cpp_ascii(name: str) -> list[int]:
    # Parity: llama.cpp unicode_regex_split k_ucat_map (the ASCII part of each \\p{X}), and
    # std::regex's \\s in the "C" locale.
    from toksmith.pretokenizers.regex_program import _SPACE, _UCAT_ASCII
    if name == SPACE_CLASS:
        return [cp for lo, hi in _SPACE for cp in range(lo, hi + 1)]
    body = _UCAT_ASCII[name]
    return [cp for cp in range(128) if body and re.fullmatch("[" + body + "]", chr(cp))]


@lru_cache(maxsize=None)
def class_members(name: str, reference: Reference) -> bytes:
    """One byte per code point, 1 where `\\p{name}` (`\\s` for name "s") matches under `reference`."""
    if name not in CATEGORY_CLASSES and name != SPACE_CLASS:
        raise ValueError(f"class {name!r}: expected one of {CATEGORY_CLASSES + (SPACE_CLASS,)}")
    if reference is Reference.LLAMA_CPP:
        symbols = _llama_cpp_symbols()
        placeholder = bytes([_LLAMA_PLACEHOLDER[name]])
        members = bytearray(symbols.translate(bytes(int(k == placeholder[0]) for k in range(256))))
        members[0:128] = bytes(128)
        for cp in _llama_cpp_ascii(name):
            members[cp] = 1
    elif reference is Reference.ONIGURUMA:
        from toksmith.hf import onig_unicode
        members = _members(onig_unicode.escape_ranges("s") if name == SPACE_CLASS
                           else onig_unicode.property_ranges(name))
    else:
        members = _tiktoken_members(name)
    members[SURROGATES.start:SURROGATES.stop] = bytes(len(SURROGATES))  # never in text
    return bytes(members)


def _tiktoken_members(name: str) -> bytearray:
    # tiktoken's splitters read \\p{L} \\p{N} \\s from its flag table (pretok_tiktoken); the
    # other categories from the same regex-syntax 0.8.11 tables as tokenizers' added tokens.
    from toksmith._core.pretok_tiktoken import splitter_flag_table
    bits = {"L": 1, "N": 2, "M": 4, SPACE_CLASS: 8}   # pretok_common F_LETTER F_NUMBER F_MARK F_SPACE
    if name not in bits:
        raise ValueError(f"class {name!r}: tiktoken's table holds only \\p{{L}} \\p{{N}} \\p{{M}} \\s")
    table = splitter_flag_table()
    index = [int.from_bytes(table[2 * k:2 * k + 2], "little") for k in range(4352)]
    blocks = table[2 * 4352:]
    bit = bits[name]
    members = bytearray(0x110000)
    for k, block in enumerate(index):
        chunk = blocks[256 * block:256 * block + 256]
        members[256 * k:256 * k + 256] = bytes(int(bool(f & bit)) for f in chunk)
    return members


def _and_not(a: bytes, b: bytes) -> bytes:
    return (int.from_bytes(a, "big") & ~int.from_bytes(b, "big")).to_bytes(len(a), "big")


@lru_cache(maxsize=None)
def class_difference(name: str, other: Reference) -> tuple[Ranges, Ranges]:
    """(ranges of code points in llama.cpp's class only, ranges in `other`'s class only)."""
    mine = class_members(name, Reference.LLAMA_CPP)
    theirs = class_members(name, other)
    return _ranges(bytearray(_and_not(mine, theirs))), _ranges(bytearray(_and_not(theirs, mine)))


def describe_difference(name: str, other: Reference) -> str | None:
    """A line naming how `\\p{name}` (`\\s`) differs between llama.cpp and `other`; None: alike."""
    only_llama, only_other = class_difference(name, other)
    if not only_llama and not only_other:
        return None
    escape = "\\s" if name == SPACE_CLASS else f"\\p{{{name}}}"
    parts = []
    for ranges, whose in ((only_other, other.value), (only_llama, Reference.LLAMA_CPP.value)):
        if ranges:
            count = sum(hi - lo + 1 for lo, hi in ranges)
            first = ", ".join(f"U+{lo:04X}" + (f"..U+{hi:04X}" if hi > lo else "") for lo, hi in ranges[:3])
            parts.append(f"{count} code points only in {whose}'s ({first}{', ...' if len(ranges) > 3 else ''})")
    return f"{escape} differs between llama.cpp's and {other.value}'s Unicode tables: " + "; ".join(parts)


# A class escape of a pre-tokenizer regex: \p{X} / \P{X} of one category letter, \s \S \d \D \w \W.
_ESCAPE = re.compile(r"\\(?:([pP])\{([A-Za-z])\}|([sSdDwW]))")


def _hex_ranges(ranges: Ranges) -> str:
    return "".join(f"\\x{{{lo:X}}}" + (f"-\\x{{{hi:X}}}" if hi > lo else "") for lo, hi in ranges)


def _oniguruma_class(name: str, negated: bool) -> str | None:
    """An Oniguruma bracket class matching llama.cpp's `\\p{name}` (`\\s`), or its complement;
    None when Oniguruma's own escape already does."""
    only_llama, only_oniguruma = class_difference(name, Reference.ONIGURUMA)
    if not only_llama and not only_oniguruma:
        return None
    escape = "\\s" if name == SPACE_CLASS else f"\\p{{{name}}}"
    body = escape + _hex_ranges(only_llama)
    if only_oniguruma:
        # Oniguruma: `&&` binds loosest in a class, so this is (escape + additions) minus removals.
        body += "&&[^" + _hex_ranges(only_oniguruma) + "]"
    return ("[^" if negated else "[") + body + "]"


def classes_used(regex: str) -> list[str]:
    """The table classes ("L", "N", "P", "M", "S", "s") a regex's escapes read, in order, once each."""
    out = []
    for m in _ESCAPE.finditer(regex):
        name = m.group(2) if m.group(1) else (SPACE_CLASS if m.group(3) in "sS" else None)
        if name is not None and name not in out:
            out.append(name)
    return out


def oniguruma_regex_for_llama_cpp(regex: str) -> str:
    """`regex` (one of llama.cpp's pre-tokenizer regexes) with each class escape spelled so
    that tokenizers' Oniguruma matches exactly the code points llama.cpp's splitter does:
    `\\p{L}` -> `[\\p{L}&&[^\\x{1C89}-\\x{1C8A}...]]` (the Unicode 16 additions removed), `\\S` ->
    its complement, `\\d`/`\\w` -> std::regex's ASCII classes. A bracket class is a valid
    atom both alone and inside another class (Oniguruma nests them), so both spellings hold.
    Category letters llama.cpp has no table for (\\p{Han}, \\p{Lu}, ...) are left as they are.
    """
    def spelled(m: re.Match) -> str:
        if m.group(3):
            letter = m.group(3)
            if letter in "sS":
                return _oniguruma_class(SPACE_CLASS, letter == "S") or m.group(0)
            return _LLAMA_ASCII_ESCAPES[letter]
        if m.group(2) not in CATEGORY_CLASSES:
            return m.group(0)
        return _oniguruma_class(m.group(2), m.group(1) == "P") or m.group(0)

    out = []
    i = 0
    while i < len(regex):
        if regex[i] != "\\":
            out.append(regex[i])
            i += 1
            continue
        m = _ESCAPE.match(regex, i)
        if m is None:   # another escape (\r, \x41, \\, ...): copied with the character it escapes
            out.append(regex[i:i + 2])
            i += 2
            continue
        out.append(spelled(m))
        i = m.end()
    return "".join(out)


def llama_cpp_class_differences(regexes, other: Reference) -> list[str]:
    """What `other`'s reader matches otherwise than llama.cpp in the classes `regexes` read
    (one line per differing class; empty: the same code points everywhere)."""
    names: list[str] = []
    for regex in regexes:
        names += [name for name in classes_used(regex) if name not in names]
    lines = []
    for name in names:
        try:
            line = describe_difference(name, other)
        except ValueError:   # a class `other`'s tables do not hold: not comparable, so not exact
            line = f"\\p{{{name}}}: {other.value}'s table for it is not known here"
        if line is not None:
            lines.append(line)
    return lines
