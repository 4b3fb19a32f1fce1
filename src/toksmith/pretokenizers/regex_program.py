"""Compile one of llama.cpp's std::regex pre-tokenizer patterns for the linear-time matcher.

llama.cpp runs every pre-tokenizer regex it has no hand-written splitter for through
std::regex (ECMAScript, leftmost-first backtracking). toksmith runs the same patterns on
`toksmith._core.linear_regex` (the matcher tokenizer.json's Oniguruma patterns run on too),
which gives backtracking's matches in time linear in the text. This module parses the
pattern into the syntax tree of `toksmith.pretokenizers.backtrack_program`.

Supported: literals, escapes, classes with ranges and \\s \\S \\d \\w \\W, groups
(capturing or not), alternation, greedy * + ? {n} {n,} {n,m}, `$`, and look-aheads whose
body is one character class (`(?!\\S)`, `(?=[\\p{L}])`). Anything else is rejected.

Two symbol spaces, as in llama.cpp's unicode_regex_split:
- collapsed (the pattern uses \\p{..}): the pattern is rewritten like llama.cpp does
  (\\p{L} -> [\\xD2A-Za-z], ...) and runs on text where every non-ASCII codepoint became
  one placeholder byte (its category, or 0x0B for whitespace);
- wide (no \\p{..}): the pattern runs on codepoints, non-ASCII whitespace turned into 0x0B.

Example:
    >>> prog = compile_pattern("\\\\s+(?!\\\\S)|\\\\s+")
    >>> prog.collapsed, len(prog.linear.passes)
    (False, 1)
"""
from __future__ import annotations

from dataclasses import dataclass

from toksmith.pretokenizers import backtrack_program

MAX_SYMBOL = 0x10FFFF

# Parity: llama.cpp unicode_regex_split k_ucat_enum / k_ucat_cpt / k_ucat_map.
_UCAT_PLACEHOLDER = {"N": 0xD1, "L": 0xD2, "P": 0xD3, "M": 0xD4, "S": 0xD5}
_UCAT_ENUM = {"\\p{N}": "N", "\\p{L}": "L", "\\p{P}": "P", "\\p{M}": "M", "\\p{S}": "S",
              "\\p{Lu}": "L", "\\p{Ll}": "L", "\\p{Lt}": "L", "\\p{Lm}": "L", "\\p{Lo}": "L"}
_UCAT_ASCII = {
    "N": "\x30-\x39",
    "L": "\x41-\x5A\x61-\x7A",
    "P": "\x21-\x23\x25-\x2A\x2C-\x2F\x3A-\x3B\x3F-\x40\\\x5B-\\\x5D\x5F\\\x7B\\\x7D",
    "M": "",
    "S": "\\\x24\\\x2B\x3C-\x3E\x5E\x60\\\x7C\\\x7E",
}

# std::regex classes in the "C" locale.
_SPACE = [(0x09, 0x0D), (0x20, 0x20)]
_DIGIT = [(0x30, 0x39)]
_WORD = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
_LINE_TERMINATORS = [(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]


class PatternError(ValueError):
    """The pattern uses a construct the linear-time matcher does not support."""


@dataclass(frozen=True)
class Program:
    """A compiled pattern: the symbol space it runs on and its linear-time program."""

    pattern: str
    collapsed: bool
    linear: backtrack_program.Program


def uses_categories(pattern: str) -> bool:
    """Whether llama.cpp runs `pattern` on the collapsed text. Parity: unicode_regex_split use_collapsed."""
    return any(key in pattern for key in _UCAT_ENUM)


def collapse_pattern(pattern: str) -> str:
    """Rewrite \\p{..} like llama.cpp does. Parity: unicode_regex_split regex_expr_collapsed."""
    if any(ord(ch) >= 128 for ch in pattern):
        raise PatternError("Regex includes both unicode categories and non-ASCII characters - not supported")
    out = []
    inside = False
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "[" and (i == 0 or pattern[i - 1] != "\\"):
            out.append("[")
            inside = True
            i += 1
            continue
        if inside and ch == "]" and pattern[i - 1] != "\\":
            out.append("]")
            inside = False
            i += 1
            continue
        if ch == "\\" and i + 3 < n and pattern[i + 1] == "p" and pattern[i + 2] == "{":
            close = pattern.find("}", i + 3)
            if close != -1 and close <= i + 10:
                key = pattern[i:close + 1]
                if key in _UCAT_ENUM:
                    cat = _UCAT_ENUM[key]
                    body = chr(_UCAT_PLACEHOLDER[cat]) + _UCAT_ASCII[cat]
                    out.append(body if inside else "[" + body + "]")
                    i = close + 1
                    continue
        out.append(ch)
        i += 1
    return "".join(out)


def _normalize(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _negate(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    nxt = 0
    for lo, hi in _normalize(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_SYMBOL:
        out.append((nxt, MAX_SYMBOL))
    return out


# AST nodes: ("cls", ranges) ("cat", [nodes]) ("alt", [nodes]) ("rep", node, lo, hi|None)
# ("look", ranges, negative) ("eol",)
class _Parser:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def error(self, what: str) -> PatternError:
        return PatternError(f"pattern {self.p!r} at {self.i}: {what}")

    def peek(self) -> str | None:
        return self.p[self.i] if self.i < len(self.p) else None

    def parse(self):
        node = self.alternation()
        if self.i != len(self.p):
            raise self.error("unbalanced ')'")
        return node

    def alternation(self):
        branches = [self.concat()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.concat())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def concat(self):
        items = []
        while self.peek() is not None and self.peek() not in "|)":
            items.append(self.quantified())
        return ("cat", items)

    def quantified(self):
        atom = self.atom()
        while True:
            ch = self.peek()
            if ch == "*":
                lo, hi = 0, None
                self.i += 1
            elif ch == "+":
                lo, hi = 1, None
                self.i += 1
            elif ch == "?":
                lo, hi = 0, 1
                self.i += 1
            elif ch == "{" and self._is_counted():
                lo, hi = self._counted()
            else:
                return atom
            if self.peek() == "?":
                raise self.error("lazy quantifiers are not supported")
            if atom[0] in ("look", "eol"):
                raise self.error("quantified assertion")
            atom = ("rep", atom, lo, hi)

    def _is_counted(self) -> bool:
        j = self.p.find("}", self.i)
        body = self.p[self.i + 1:j] if j != -1 else ""
        return bool(body) and all(c.isdigit() or c == "," for c in body) and body[0].isdigit()

    def _counted(self):
        j = self.p.index("}", self.i)
        body = self.p[self.i + 1:j]
        self.i = j + 1
        if "," in body:
            a, b = body.split(",", 1)
            return int(a), (int(b) if b else None)
        return int(body), int(body)

    def atom(self):
        ch = self.p[self.i]
        if ch == "(":
            self.i += 1
            kind = "group"
            if self.p.startswith("?:", self.i):
                self.i += 2
            elif self.p.startswith("?=", self.i) or self.p.startswith("?!", self.i):
                kind = "neg" if self.p[self.i + 1] == "!" else "pos"
                self.i += 2
            elif self.peek() == "?":
                raise self.error("unsupported group")
            inner = self.alternation()
            if self.peek() != ")":
                raise self.error("missing ')'")
            self.i += 1
            if kind == "group":
                return inner
            ranges = _single_class(inner)
            if ranges is None:
                raise self.error("look-ahead longer than one character")
            return ("look", ranges, kind == "neg")
        if ch == "[":
            return ("cls", self.bracket())
        if ch == "\\":
            return ("cls", self.escape(in_class=False))
        if ch == "$":
            self.i += 1
            return ("eol",)
        if ch == ".":
            self.i += 1
            return ("cls", _negate(_LINE_TERMINATORS))
        if ch in "^*+?{}":
            raise self.error(f"unsupported {ch!r}")
        self.i += 1
        return ("cls", [(ord(ch), ord(ch))])

    def escape(self, in_class: bool) -> list[tuple[int, int]]:
        self.i += 1
        if self.i >= len(self.p):
            raise self.error("trailing backslash")
        ch = self.p[self.i]
        self.i += 1
        simple = {"s": _SPACE, "d": _DIGIT, "w": _WORD}
        if ch in simple:
            return simple[ch]
        if ch.lower() in simple:
            return _negate(simple[ch.lower()])
        controls = {"r": 13, "n": 10, "t": 9, "f": 12, "v": 11, "0": 0}
        if ch in controls:
            return [(controls[ch], controls[ch])]
        if ch == "x":
            code = int(self.p[self.i:self.i + 2], 16)
            self.i += 2
            return [(code, code)]
        if ch == "u":
            code = int(self.p[self.i:self.i + 4], 16)
            self.i += 4
            return [(code, code)]
        if ch.isalnum():
            raise self.error(f"unsupported escape \\{ch}")
        return [(ord(ch), ord(ch))]

    def bracket(self) -> list[tuple[int, int]]:
        self.i += 1
        negate = self.peek() == "^"
        if negate:
            self.i += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            ch = self.peek()
            if ch is None:
                raise self.error("missing ']'")
            if ch == "]" and not first:
                self.i += 1
                break
            first = False
            lo = self._class_atom()
            if self.peek() == "-" and self.i + 1 < len(self.p) and self.p[self.i + 1] != "]":
                self.i += 1
                hi = self._class_atom()
                if len(lo) != 1 or len(hi) != 1 or lo[0][0] != lo[0][1] or hi[0][0] != hi[0][1]:
                    raise self.error("class range with a set as bound")
                if hi[0][0] < lo[0][0]:
                    raise self.error("range out of order")
                ranges.append((lo[0][0], hi[0][0]))
            else:
                ranges.extend(lo)
        ranges = _normalize(ranges)
        return _negate(ranges) if negate else ranges

    def _class_atom(self) -> list[tuple[int, int]]:
        ch = self.p[self.i]
        if ch == "\\":
            return self.escape(in_class=True)
        self.i += 1
        return [(ord(ch), ord(ch))]


def _single_class(node) -> list[tuple[int, int]] | None:
    if node[0] == "cls":
        return node[1]
    if node[0] == "cat" and len(node[1]) == 1:
        return _single_class(node[1][0])
    if node[0] == "alt":
        parts = [_single_class(b) for b in node[1]]
        if all(p is not None for p in parts):
            return _normalize([r for p in parts for r in p])
    return None


def _nullable(node) -> bool:
    kind = node[0]
    if kind == "cls":
        return False
    if kind in ("look", "eol"):
        return True
    if kind == "cat":
        return all(_nullable(x) for x in node[1])
    if kind == "alt":
        return any(_nullable(x) for x in node[1])
    return node[2] == 0 or _nullable(node[1])


def _tree(node):
    """The backtrack_program syntax tree of a parsed node (greedy repeats; `$` is the end
    of the piece, ECMAScript without multiline)."""
    kind = node[0]
    if kind == "cls":
        return ("set", node[1])
    if kind in ("cat", "alt"):
        return (kind, [_tree(x) for x in node[1]])
    if kind == "rep":
        return ("rep", _tree(node[1]), node[2], node[3], True)
    if kind == "look":
        return ("look", ("set", node[1]), False, node[2])
    return ("assert", "EOT")


def compile_pattern(pattern: str) -> Program:
    """Compile `pattern` the way llama.cpp would run it (collapsed or wide). Raises PatternError."""
    collapsed = uses_categories(pattern)
    source = collapse_pattern(pattern) if collapsed else pattern
    tree = _Parser(source).parse()
    if _nullable(tree):
        raise PatternError(f"pattern {pattern!r} can match the empty string")
    try:
        linear = backtrack_program.compile_tree(_tree(tree), word=[])
    except backtrack_program.RegexUnsupported as exc:
        raise PatternError(f"pattern {pattern!r}: {exc}") from None
    return Program(pattern, collapsed, linear)
