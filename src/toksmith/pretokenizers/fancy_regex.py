"""Rank files with any split pattern: parse a regex as tiktoken reads it (fancy-regex 0.19
over the Rust `regex` crate) into the syntax tree of toksmith.pretokenizers.backtrack_program,
and split text with it as tiktoken does, on the linear-time matcher (_core/linear_regex).

tiktoken's CoreBPE takes the pattern's matches, leftmost-first (a backtracking engine's
match: fancy-regex hands the parts it does not run itself to the regex crate only where that
gives the same match), one after another, and encodes each; text no match covers is dropped.

What the syntax means here (Rust regex semantics, not Oniguruma's): `^`/`$` are the start and
end of the text, `.` any character but `\\n`; `\\d \\s \\w \\p{..}` are the regex crate's Unicode
classes (rust_regex_unicode: generated from tiktoken itself), `\\h` is `[0-9A-Fa-f]`; under
`(?i)` a literal, a `\\p{..}` and a bracket class (before `^` applies) match their simple
case-fold closure; an isolated `(?i)` lasts to the end of the pattern unless a `(?:..)` group
around it closes first (fancy-regex's parser keeps one flag state); `{,n}` is `{0,n}`;
`*+ ++ ?+ {n,m}+` are possessive, `(?>..)`
atomic; look-aheads of any kind; look-behinds of one length (fancy-regex refuses others).

Refused (RegexUnsupported, naming the construct): back-references, `\\G`, `\\K`, `\\Z`,
`\\<`, `\\>`, `\\N`, `\\O`, `\\R`, flags other than `i`, nested or set-operation classes (`[a[b]]`, `&&`, `--`,
`~~`), POSIX classes, properties with no table here, a `{` that is no quantifier, and a
pattern that can match the empty string (tiktoken panics on an empty match).

    >>> tiktoken_splitter(r"\\p{L}+|\\s+(?!\\S)|\\s+").split_text("héllo  wörld!".encode())
    [b'h\\xc3\\xa9llo', b' ', b' ', b'w\\xc3\\xb6rld']
"""
from __future__ import annotations

import bisect

from toksmith.pretokenizers import rust_regex_unicode as uni
from toksmith.pretokenizers.backtrack_program import (MAX_CODE_POINT, Program, RegexUnsupported, char_length,
                                                      compile_tree, negate_ranges, normalize_ranges, nullable)

_ANY_BUT_NEWLINE = [(0, 0x09), (0x0B, MAX_CODE_POINT)]
# Parity: fancy-regex parse.rs parse_escape: the one-letter character escapes.
_CHAR_ESCAPES = {"a": 0x07, "f": 0x0C, "t": 0x09, "n": 0x0A, "r": 0x0D, "v": 0x0B, "e": 0x1B}
_HEX = "0123456789abcdefABCDEF"
_REFUSED_ESCAPES = {"G": "\\G", "K": "\\K", "Z": "\\Z", "<": "\\<", ">": "\\>", "k": "a back-reference",
                    "X": "\\X", "R": "\\R", "0": "\\0", "N": "\\N", "O": "\\O", "g": "a subexpression call"}


class PatternSyntaxError(RegexUnsupported):
    """The pattern is no regex at all (tiktoken refuses it too): an unbalanced group or class,
    a trailing backslash, a quantifier with nothing to repeat..."""


def _fold_closure(ranges) -> list[tuple[int, int]]:
    """The ranges plus every code point case-equivalent to one in them.
    Parity: regex-syntax ClassUnicode::try_case_fold_simple."""
    ranges = normalize_ranges(ranges)
    starts = [lo for lo, _ in ranges]

    def contains(cp: int) -> bool:
        k = bisect.bisect_right(starts, cp) - 1
        return k >= 0 and ranges[k][1] >= cp

    extra = [(cp, cp) for members in uni.fold_classes() if any(contains(m) for m in members) for cp in members]
    return normalize_ranges(ranges + extra)


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        # Parity: fancy-regex 0.19 Parser.flags: one state for the whole parse. A flag set
        # alone, "(?i)", lasts to the end of the pattern: only the close of a "(?:...)" or
        # "(?i:...)" group restores the flags from before it (not a capturing, atomic or
        # look-around group's).
        self.ignore_case = False

    def unsupported(self, what: str) -> RegexUnsupported:
        return RegexUnsupported(f"{what} (at {self.i} in {self.p!r})")

    def malformed(self, what: str) -> PatternSyntaxError:
        return PatternSyntaxError(f"{what} (at {self.i} in {self.p!r})")

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.p[j] if j < len(self.p) else None

    # ------------------------------------------------------------------ structure

    def parse(self):
        node = self.alternation()
        if self.i != len(self.p):
            raise self.malformed("an unmatched ')'")
        return node

    def alternation(self):
        branches = [self.concat()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.concat())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def concat(self):
        items = []
        while True:
            ch = self.peek()
            if ch is None or ch in "|)":
                break
            if self.p.startswith("(?", self.i) and self.isolated_flags():
                continue
            items.append(self.quantified())
        return items[0] if len(items) == 1 else ("cat", items)

    def set_flags(self, letters: str) -> None:
        on = True
        for ch in letters:
            if ch == "-":
                on = False
            elif ch == "i":
                self.ignore_case = on
            else:
                raise self.unsupported(f"the flag {ch!r} (only i is supported)")

    def isolated_flags(self) -> bool:
        """At "(?": whether it is an isolated "(?i)" / "(?-i)" (then consumed and applied)."""
        end = self.i + 2
        while end < len(self.p) and (self.p[end].isalpha() or self.p[end] == "-"):
            end += 1
        if end == self.i + 2 or end >= len(self.p) or self.p[end] != ")":
            return False
        self.set_flags(self.p[self.i + 2:end])
        self.i = end + 1
        return True

    def quantified(self):
        atom = self.atom()
        quantifier = self.quantifier()
        if quantifier is None:
            return atom
        if atom[0] in ("look", "assert"):
            raise self.unsupported("a quantified anchor or look-around")
        lo, hi, greedy, possessive = quantifier
        node = ("rep", atom, lo, hi, greedy)
        if self.peek() is not None and self.peek() in "*+?{":
            raise self.unsupported("a quantifier after a quantifier")
        return ("atomic", node) if possessive else node

    def quantifier(self):
        """(lo, hi, greedy, possessive) of the quantifier at i (consumed), or None."""
        ch = self.peek()
        if ch is None or ch not in "*+?{":
            return None
        self.i += 1
        if ch == "{":
            lo, hi = self.interval()
        else:
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[ch]
        nxt = self.peek()
        if nxt == "?":
            self.i += 1
            return lo, hi, False, False
        if nxt == "+":
            self.i += 1
            return lo, hi, True, True
        return lo, hi, True, False

    def interval(self) -> tuple[int, int | None]:
        """{n}, {n,}, {n,m} after the '{', consumed."""
        end = self.p.find("}", self.i)
        body = self.p[self.i:end] if end >= 0 else ""
        low, comma, high = body.partition(",")
        if comma and not low:
            low = "0"       # Parity: fancy-regex parse_repeat reads "{,n}" as {0,n}
        if not low.isascii() or not low.isdigit() or (high and not (high.isascii() and high.isdigit())):
            raise self.unsupported("a '{' that is no quantifier {n}, {n,} or {n,m}")
        self.i = end + 1
        lo = int(low)
        hi = lo if not comma else (int(high) if high else None)
        if hi is not None and hi < lo:
            raise self.malformed("a quantifier {n,m} with m < n")
        return lo, hi

    # ------------------------------------------------------------------ atoms

    def atom(self):
        ch = self.p[self.i]
        if ch == "(":
            return self.group()
        if ch == "[":
            return ("set", self.bracket())
        if ch == ".":
            self.i += 1
            return ("set", _ANY_BUT_NEWLINE)
        if ch == "^":
            self.i += 1
            return ("assert", "BOT")
        if ch == "$":
            self.i += 1
            return ("assert", "EOT")
        if ch == "\\":
            return self.escape()
        if ch in "*+?{":
            raise self.malformed("a quantifier without a target")
        self.i += 1
        return self.literal(ord(ch))

    def literal(self, cp: int):
        if not self.ignore_case:
            return ("set", [(cp, cp)])
        return ("set", normalize_ranges((m, m) for m in uni.fold_class(cp)))

    def group(self):
        p, i = self.p, self.i
        kinds = (("(?=", (False, False)), ("(?!", (False, True)), ("(?<=", (True, False)),
                 ("(?<!", (True, True)), ("(?>", "atomic"))
        for prefix, kind in kinds:
            if p.startswith(prefix, i):
                self.i = i + len(prefix)
                body = self.alternation()
                self.close()
                if kind == "atomic":
                    return ("atomic", body)
                if kind[0]:
                    lo, hi = char_length(body)
                    if lo != hi:
                        raise self.unsupported("a look-behind of several lengths (fancy-regex refuses it)")
                return ("look", body, kind[0], kind[1])
        if p.startswith("(?P<", i) or p.startswith("(?<", i):
            end = p.find(">", i)
            if end < 0:
                raise self.malformed("an unterminated group name")
            self.i = end + 1
            body = self.alternation()
            self.close()
            return ("group", body, True)
        if p.startswith("(?", i):
            end = i + 2
            while end < len(p) and (p[end].isalpha() or p[end] == "-"):
                end += 1
            if end < len(p) and p[end] == ":":
                saved = self.ignore_case
                self.set_flags(p[i + 2:end])
                self.i = end + 1
                body = self.alternation()
                self.close()
                self.ignore_case = saved
                return ("group", body, False)
            raise self.unsupported("this group")
        self.i = i + 1
        body = self.alternation()
        self.close()
        return ("group", body, True)

    def close(self) -> None:
        if self.peek() != ")":
            raise self.malformed("a missing ')'")
        self.i += 1

    # ------------------------------------------------------------------ escapes

    def escape(self):
        """An escape outside brackets: a character, a class or an anchor."""
        self.i += 1
        ch = self.peek()
        if ch is None:
            raise self.malformed("a trailing backslash")
        anchors = {"A": "BOT", "z": "EOT", "b": "WORD", "B": "NOT_WORD"}
        if ch in anchors:
            self.i += 1
            return ("assert", anchors[ch])
        ranges = self.class_escape()
        if ranges is not None:
            return ("set", ranges)
        return self.literal(self.char_escape())

    def class_escape(self) -> list[tuple[int, int]] | None:
        """\\d \\s \\w \\p{..} and their negations at i (after the backslash), consumed; None if not one.
        Parity: regex-syntax Translator: a Unicode class is case-folded under (?i), then negated."""
        ch = self.peek()
        if ch is not None and ch in "hH":
            # Parity: fancy-regex parse_escape: \h is [0-9A-Fa-f], never case-folded.
            self.i += 1
            ranges = [(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)]
            return negate_ranges(ranges) if ch == "H" else ranges
        if ch is not None and ch in "dDsSwW":
            self.i += 1
            ranges = list(uni.escape_ranges(ch.lower()))     # closed under case folding already
            return negate_ranges(ranges) if ch.isupper() else ranges
        if ch is not None and ch in "pP":
            self.i += 1
            ranges = self.property()
            if self.ignore_case:
                ranges = _fold_closure(ranges)
            return negate_ranges(ranges) if ch == "P" else list(ranges)
        return None

    def property(self) -> list[tuple[int, int]]:
        """\\p{Name} / \\pL after the p, consumed."""
        if self.peek() == "{":
            end = self.p.find("}", self.i)
            if end < 0:
                raise self.malformed("an unterminated \\p{...}")
            name = self.p[self.i + 1:end]
            self.i = end + 1
        elif self.peek() is not None:
            name = self.p[self.i]
            self.i += 1
        else:
            raise self.malformed("\\p without a name")
        negated = name.startswith("^")
        ranges = uni.property_ranges(name[1:] if negated else name)
        if ranges is None:
            raise self.unsupported(f"the Unicode property \\p{{{name}}} (no table for it here)")
        return negate_ranges(ranges) if negated else list(ranges)

    def char_escape(self) -> int:
        """The code point of a character escape at i (after the backslash), consumed."""
        ch = self.p[self.i]
        if ch in _REFUSED_ESCAPES or ch.isdigit():
            raise self.unsupported(_REFUSED_ESCAPES.get(ch, "a back-reference"))
        self.i += 1
        if ch in _CHAR_ESCAPES:
            return _CHAR_ESCAPES[ch]
        if ch in "xuU":
            if self.peek() == "{":
                end = self.p.find("}", self.i)
                digits = self.p[self.i + 1:end] if end > 0 else ""
                self.i = end + 1
            else:
                width = {"x": 2, "u": 4, "U": 8}[ch]
                digits = self.p[self.i:self.i + width]
                if len(digits) != width:
                    digits = ""
                self.i += width
            if not digits or any(c not in _HEX for c in digits) or len(digits) > 8:
                raise self.unsupported(f"this \\{ch} escape")
            value = int(digits, 16)
            if value > MAX_CODE_POINT or 0xD800 <= value <= 0xDFFF:
                raise self.unsupported("a code point outside Unicode scalar values")
            return value
        if ch.isascii() and ch.isalnum():
            raise self.unsupported(f"the escape \\{ch}")
        return ord(ch)

    # ------------------------------------------------------------------ brackets

    def bracket(self) -> list[tuple[int, int]]:
        """A [...] class at i, consumed: its ranges (case-folded under (?i), then negated)."""
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            ch = self.peek()
            if ch is None:
                raise self.malformed("an unterminated [...]")
            if ch == "]" and not first:
                self.i += 1
                break
            first = False
            if ch == "[":
                raise self.unsupported("a nested class or a POSIX class in [...]")
            if self.p.startswith(("&&", "--", "~~"), self.i):
                raise self.unsupported(f"the class operation {self.p[self.i:self.i + 2]!r}")
            if ch == "\\":
                self.i += 1
                escaped = self.class_escape()
                if escaped is not None:
                    ranges.extend(escaped)
                    continue
                self.i -= 1
            lo = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in (None, "]"):
                self.i += 1
                if self.peek() == "\\" and self.peek(1) is not None and self.peek(1) in "dDsSwWpP":
                    raise self.unsupported("a class as a range bound")
                hi = self.class_atom()
                if hi < lo:
                    raise self.malformed("a range in a class whose end is before its start")
                ranges.append((lo, hi))
            else:
                ranges.append((lo, lo))
        if self.ignore_case:
            ranges = _fold_closure(ranges)
        return negate_ranges(ranges) if negated else normalize_ranges(ranges)

    def class_atom(self) -> int:
        ch = self.p[self.i]
        if ch != "\\":
            self.i += 1
            return ord(ch)
        self.i += 1
        if self.peek() is None:
            raise self.malformed("a trailing backslash")
        return self.char_escape()


def parse_fancy(pattern: str):
    """The syntax tree of a tiktoken pattern. Raises RegexUnsupported."""
    try:
        return _Parser(pattern).parse()
    except RecursionError:
        raise RegexUnsupported("groups nested too deeply") from None


def compile_fancy(pattern: str) -> Program:
    """The linear-time program of a tiktoken pattern. Raises RegexUnsupported."""
    tree = parse_fancy(pattern)
    if nullable(tree):
        raise RegexUnsupported(f"the pattern {pattern!r} can match the empty string, on which tiktoken's "
                               f"encoder panics")
    return compile_tree(tree, word=uni.escape_ranges("w"))


def tiktoken_splitter(pattern: str):
    """The pre-tokenizer that splits text as tiktoken's CoreBPE does with `pattern`: each match
    a piece, the text between matches dropped. Raises RegexUnsupported."""
    from toksmith._core.hf_regex_stages import SPLIT_REMOVED, HfSplit
    from toksmith._core.linear_regex import LinearRegex
    # Parity: tokenizers' Split(invert=True, behavior=Removed) keeps exactly the matches, as
    # tiktoken CoreBPE::encode_ordinary's regex.find_iter does.
    return HfSplit(LinearRegex(compile_fancy(pattern), pattern), SPLIT_REMOVED, True)
