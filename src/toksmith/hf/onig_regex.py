"""Parse a regex as tokenizers' Oniguruma reads it (onig 6.5.3 crate, Oniguruma 6.9 with the
syntax the crate defaults to, UTF-8, no options) into the syntax tree that
toksmith.pretokenizers.backtrack_program compiles for the linear-time matcher.

What the syntax means here was checked against tokenizers itself
(tests/parity/test_hf_split_replace.py and its randomized differential test), among others:
`^`/`$` are line anchors (`^` not after a final newline), `.` is any character but `\\n`
(`(?m)` makes it any), `\\Z` is the end or before a final newline; `\\w \\s \\d \\p{...}` are
Unicode; `X{n,m}+` is `(?:X{n,m})+` and `X{n}?` is `(?:X{n})?` (no possessive or lazy
interval), a reversed interval `X{m,n}` (m > n) is possessive `X{n,m}`; `*+ ++ ?+` are
possessive; an isolated `(?i)` applies to the rest of its group, alternatives included;
nested quantifiers reduce as Oniguruma's ReduceTypeTable; under `(?i)` a literal matches
its simple case-fold class, a bracket class is closed under case folding before `^` applies,
while `\\p{..}`, `\\w`... outside brackets are not folded.

`\\X` is an extended grapheme cluster as Oniguruma builds it, `(?>\\O(?:\\Y\\O)*)`, where
`\\Y` (not) and `\\y` are grapheme cluster boundaries by Oniguruma's rules
(onigenc_egcb_is_break_position: Unicode 16 data, no GB9c, GB11 and GB12/13 looking back to
the start of the text); inside brackets `\\X \\y \\Y` are the letters themselves.

Refused (RegexUnsupported, naming the construct): back-references, subexpression calls,
`\\K`, `\\G`, word segments `(?y{w})`, absent operators, conditionals, callouts, the options
`W D S P I L`, case-insensitive characters whose case folding is several characters
(`(?i)ß` also matches "ss"), and whatever backtrack_program refuses.

    >>> parse_onig(r"\\s+(?!\\S)")[0]
    'cat'
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, replace

from toksmith.hf import onig_unicode as uni
from toksmith.pretokenizers.backtrack_program import (MAX_CODE_POINT, Program, RegexUnsupported, compile_tree,
                                                      intersect_ranges, negate_ranges, normalize_ranges)

# Parity: Oniguruma regparse.c ReduceTypeTable (quantifier_type_num: ?:0 *:1 +:2 ??:3 *?:4 +?:5).
_DEL, _A, _AQ, _QQ, _P_QQ, _PQ_Q, _ASIS = range(7)
_REDUCE = [
    [_DEL, _A, _A, _QQ, _AQ, _ASIS],
    [_DEL, _DEL, _DEL, _P_QQ, _P_QQ, _DEL],
    [_A, _A, _DEL, _ASIS, _P_QQ, _DEL],
    [_DEL, _AQ, _AQ, _DEL, _AQ, _AQ],
    [_DEL, _DEL, _DEL, _DEL, _DEL, _DEL],
    [_ASIS, _ASIS, _ASIS, _AQ, _AQ, _DEL],   # (?:a+?)* and (?:a+?)+ stay as they are (checked)
]

_ANY = [(0, MAX_CODE_POINT)]
_NOT_NEWLINE = [(0, 0x09), (0x0B, MAX_CODE_POINT)]
_CONTROL_ESCAPES = {"t": 0x09, "n": 0x0A, "r": 0x0D, "f": 0x0C, "v": 0x0B, "a": 0x07, "e": 0x1B}
_HEX = "0123456789abcdefABCDEF"
# Parity: Oniguruma regparse.c make_text_segment: \\X == (?>\\O(?:\\Y\\O)*)
_GRAPHEME_CLUSTER = ("atomic", ("cat", [("set", _ANY),
                                        ("rep", ("cat", [("assert", "NOT_EGCB"), ("set", _ANY)]), 0, None, True)]))


@dataclass(frozen=True)
class _Options:
    ignore_case: bool = False
    dot_all: bool = False       # Ruby's (?m)
    extended: bool = False


def _quantifier_type(lo: int, hi: int | None, greedy: bool) -> int:
    kinds = {(0, 1): 0, (0, None): 1, (1, None): 2}
    k = kinds.get((lo, hi), -1)
    return k if k < 0 or greedy else k + 3


def _quantify(target, lo: int, hi: int | None, greedy: bool, possessive: bool):
    """Parity: Oniguruma regparse.c set_quantifier and onig_reduce_nested_quantifier."""
    if lo == 1 and hi == 1:
        node = target
    elif target[0] == "rep":
        tq = _quantifier_type(target[2], target[3], target[4])
        nq = _quantifier_type(lo, hi, greedy)
        if tq >= 0 and nq < 0:
            if tq in (1, 2) and hi is not None and hi > 1 and greedy:
                hi = 1 if lo == 0 else lo
            node = ("rep", target, lo, hi, greedy)
        elif nq < 0 or tq < 0:
            if lo == hi and target[2] == target[3] and target[3] is not None and hi is not None:
                node = ("rep", target[1], lo * target[2], lo * target[2], greedy)
            else:
                node = ("rep", target, lo, hi, greedy)
        else:
            body = target[1]
            how = _REDUCE[tq][nq]
            if how == _DEL:
                node = target
            elif how == _A:
                node = ("rep", body, 0, None, True)
            elif how == _AQ:
                node = ("rep", body, 0, None, False)
            elif how == _QQ:
                node = ("rep", body, 0, 1, False)
            elif how == _P_QQ:
                node = ("rep", ("rep", body, 1, None, True), 0, 1, False)
            elif how == _PQ_Q:
                node = ("rep", ("rep", body, 1, None, False), 0, 1, True)
            else:
                node = ("rep", target, lo, hi, greedy)
    else:
        node = ("rep", target, lo, hi, greedy)
    return ("atomic", node) if possessive else node


def _contains(ranges, cp: int) -> bool:
    k = bisect.bisect_right(ranges, (cp, MAX_CODE_POINT + 1)) - 1
    return k >= 0 and ranges[k][0] <= cp <= ranges[k][1]


def _fold_closure(ranges) -> list[tuple[int, int]]:
    """The ranges plus every code point case-equivalent to one in them."""
    ranges = normalize_ranges(ranges)
    extra = []
    for members in uni.fold_classes():
        if any(_contains(ranges, cp) for cp in members):
            extra.extend((cp, cp) for cp in members)
    return normalize_ranges(ranges + extra)


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.groups = 0

    # ------------------------------------------------------------------ helpers

    def unsupported(self, what: str) -> RegexUnsupported:
        return RegexUnsupported(f"{what} (at {self.i} in {self.p!r})")

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.p[j] if j < len(self.p) else None

    def skip_extended(self, opts: _Options) -> None:
        """(?x) white space and # comments, and (?#...) comments, between tokens."""
        while self.i < len(self.p):
            ch = self.p[self.i]
            if opts.extended and _contains(uni.escape_ranges("s"), ord(ch)):
                self.i += 1
            elif opts.extended and ch == "#":
                end = self.p.find("\n", self.i)
                self.i = len(self.p) if end < 0 else end + 1
            elif self.p.startswith("(?#", self.i):
                end = self.p.find(")", self.i)
                if end < 0:
                    raise self.unsupported("unterminated comment")
                self.i = end + 1
            else:
                return

    # ------------------------------------------------------------------ structure

    def parse(self):
        node = self.alternation(_Options())
        if self.i != len(self.p):
            raise self.unsupported("unmatched ')'")
        return node

    def alternation(self, opts: _Options):
        branches = [self.concat(opts)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.concat(opts))
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def concat(self, opts: _Options):
        items = []
        while True:
            self.skip_extended(opts)
            ch = self.peek()
            if ch is None or ch in "|)":
                break
            if ch == "(" and self.peek(1) == "?":
                new_opts = self.isolated_options(opts)
                if new_opts is not None:
                    # Parity: an isolated option group takes the rest of the enclosing group
                    # (its other alternatives too) as its body.
                    items.append(("group", self.alternation(new_opts), False))
                    break
            items.append(self.quantified(opts))
        _check_multi_fold_sequence(items, self)
        return items[0] if len(items) == 1 else ("cat", items)

    def isolated_options(self, opts: _Options) -> _Options | None:
        """At "(?": the options of an isolated "(?imx-imx)", consumed; None if something else."""
        j = self.i + 2
        while j < len(self.p) and self.p[j] not in ":)":
            if self.p[j] not in "imx-WDSPCILy{}gw":
                return None
            j += 1
        if j >= len(self.p) or self.p[j] != ")":
            return None
        new_opts = self.options(self.p[self.i + 2:j], opts)
        self.i = j + 1
        return new_opts

    def options(self, letters: str, opts: _Options) -> _Options:
        on = True
        if "y{w}" in letters:
            raise self.unsupported("word text segments (?y{w})")
        # (?y{g}): \X and \y are grapheme clusters, as they are by default
        for ch in letters.replace("y{g}", ""):
            if ch == "-":
                on = False
            elif ch == "i":
                opts = replace(opts, ignore_case=on)
            elif ch == "m":
                opts = replace(opts, dot_all=on)
            elif ch == "x":
                opts = replace(opts, extended=on)
            elif ch == "C":
                pass        # plain groups do not capture: nothing to do at match time
            else:
                raise self.unsupported(f"the option (?{letters})")
        return opts

    def quantified(self, opts: _Options):
        atom = self.atom(opts)
        while True:
            self.skip_extended(opts)
            q = self.quantifier()
            if q is None:
                return atom
            if atom[0] in ("look", "assert"):
                raise self.unsupported("a quantified anchor or look-around")
            lo, hi, greedy, possessive = q
            atom = _quantify(atom, lo, hi, greedy, possessive)

    def quantifier(self):
        """(lo, hi, greedy, possessive) of the quantifier at i (consumed), or None."""
        ch = self.peek()
        if ch in ("*", "+", "?"):
            self.i += 1
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[ch]
            nxt = self.peek()
            if nxt == "?":
                self.i += 1
                return lo, hi, False, False
            if nxt == "+":
                self.i += 1
                return lo, hi, True, True
            return lo, hi, True, False
        if ch == "{":
            interval = self.interval()
            if interval is None:
                return None
            lo, hi, fixed = interval
            possessive = False
            if hi is not None and lo > hi:
                # Parity: Oniguruma fetch_interval: a reversed interval is possessive.
                lo, hi, possessive = hi, lo, True
            if not fixed and not possessive and self.peek() == "?":
                self.i += 1
                return lo, hi, False, False
            return lo, hi, True, possessive
        return None

    def interval(self):
        """{n}, {n,}, {,m}, {n,m} at i: (lo, hi, fixed) consumed, or None (a literal '{')."""
        j = self.i + 1
        k = j
        while k < len(self.p) and self.p[k].isascii() and self.p[k].isdigit():
            k += 1
        low = self.p[j:k]
        if k >= len(self.p):
            return None
        if self.p[k] == ",":
            m = k + 1
            while m < len(self.p) and self.p[m].isascii() and self.p[m].isdigit():
                m += 1
            high = self.p[k + 1:m]
            if m >= len(self.p) or self.p[m] != "}" or (not low and not high):
                return None
            self.i = m + 1
            return (int(low) if low else 0), (int(high) if high else None), False
        if self.p[k] != "}" or not low:
            return None
        self.i = k + 1
        return int(low), int(low), True

    # ------------------------------------------------------------------ atoms

    def atom(self, opts: _Options):
        ch = self.p[self.i]
        if ch == "(":
            return self.group(opts)
        if ch == "[":
            ranges = self.bracket(opts, top=True)
            return ("set", ranges)
        if ch == ".":
            self.i += 1
            return ("set", _ANY if opts.dot_all else _NOT_NEWLINE)
        if ch == "^":
            self.i += 1
            return ("assert", "BOL")
        if ch == "$":
            self.i += 1
            return ("assert", "EOL")
        if ch == "\\":
            return self.escape(opts)
        if ch in "*+?":
            raise self.unsupported("a quantifier without a target")
        if ch == "{" and self.interval_at_atom():
            raise self.unsupported("a quantifier without a target")
        self.i += 1
        return self.literal(ord(ch), opts)

    def interval_at_atom(self) -> bool:
        save = self.i
        try:
            return self.interval() is not None
        finally:
            self.i = save

    def literal(self, cp: int, opts: _Options):
        if not opts.ignore_case:
            return ("set", [(cp, cp)])
        members = uni.fold_class(cp)
        if any(m in uni.multi_folds() for m in members):
            raise self.unsupported(f"a case-insensitive {chr(cp)!r}, whose case folding is several characters")
        return ("set", normalize_ranges((m, m) for m in members), ("ilit", cp))

    def group(self, opts: _Options):
        p = self.p
        i = self.i
        if p.startswith("(?", i):
            for prefix, kind in (("(?:", None), ("(?=", (False, False)), ("(?!", (False, True)),
                                 ("(?<=", (True, False)), ("(?<!", (True, True)), ("(?>", "atomic")):
                if p.startswith(prefix, i):
                    self.i = i + len(prefix)
                    body = self.alternation(opts)
                    self.close()
                    if kind is None:
                        return body
                    if kind == "atomic":
                        return ("atomic", body)
                    return ("look", body, kind[0], kind[1])
            if p.startswith("(?<", i) or p.startswith("(?'", i):
                end = p.find(">" if p[i + 2] == "<" else "'", i + 3)
                if end < 0:
                    raise self.unsupported("an unterminated group name")
                self.i = end + 1
                self.groups += 1
                body = self.alternation(opts)
                self.close()
                return ("group", body, True)
            j = i + 2
            while j < len(p) and p[j] in "imx-WDSPCILy{}gw":
                j += 1
            if j < len(p) and p[j] == ":":
                new_opts = self.options(p[i + 2:j], opts)
                self.i = j + 1
                body = self.alternation(new_opts)
                self.close()
                return ("group", body, False)
            what = {"~": "the absent operator (?~...)", "(": "a conditional (?(...)...)",
                    "{": "a callout", "P": "(?P...)"}.get(p[i + 2] if i + 2 < len(p) else "", "this group")
            raise self.unsupported(what)
        self.i = i + 1
        self.groups += 1
        body = self.alternation(opts)
        self.close()
        return ("group", body, True)

    def close(self) -> None:
        if self.peek() != ")":
            raise self.unsupported("a missing ')'")
        self.i += 1

    # ------------------------------------------------------------------ escapes

    def escape(self, opts: _Options):
        """An escape outside brackets: a character, a class, or an anchor."""
        self.i += 1
        ch = self.peek()
        if ch is None:
            raise self.unsupported("a trailing backslash")
        if ch in "wWsSdDhH":
            self.i += 1
            ranges = list(uni.escape_ranges(ch.lower()))
            return ("set", negate_ranges(ranges) if ch.isupper() else ranges)
        if ch in "pP":
            return ("set", self.property(ch == "P"))
        anchors = {"A": "BOT", "z": "EOT", "Z": "EOT_NL", "b": "WORD", "B": "NOT_WORD"}
        if ch in anchors:
            self.i += 1
            return ("assert", anchors[ch])
        if ch == "R":
            self.i += 1
            cr, lf = ("set", [(0x0D, 0x0D)]), ("set", [(0x0A, 0x0A)])
            # Parity: Oniguruma node_new_general_newline, (?>\r\n|[\n\v\f\r\x85\u2028\u2029]), one
            # node (not alternatives of fixed lengths in a look-behind)
            return ("group", ("alt", [("cat", [cr, lf]), ("cat", [cr, ("look", lf, False, True)]),
                                      ("set", [(0x0A, 0x0C), (0x85, 0x85), (0x2028, 0x2029)])]), False)
        if ch == "N":
            self.i += 1
            return ("set", _NOT_NEWLINE)
        if ch == "O":
            self.i += 1
            return ("set", _ANY)
        if ch == "X":
            self.i += 1
            return _GRAPHEME_CLUSTER
        if ch in "yY":
            self.i += 1
            return ("assert", "EGCB" if ch == "y" else "NOT_EGCB")
        refused = {"G": "\\G", "K": "\\K", "k": "a back-reference", "g": "a subexpression call"}
        if ch in refused:
            raise self.unsupported(refused[ch])
        if ch in "123456789":
            return self.numeric_escape(opts)
        return self.literal(self.char_escape(in_class=False), opts)

    def numeric_escape(self, opts: _Options):
        """\\1..\\9...: a back-reference (refused) or, past the groups opened so far, octal."""
        j = self.i
        while j < len(self.p) and self.p[j].isascii() and self.p[j].isdigit():
            j += 1
        digits = self.p[self.i:j]
        number = int(digits)
        if number <= 9 or number <= self.groups or digits[0] in "89":
            raise self.unsupported("a back-reference")
        k = self.i
        while k < len(self.p) and k < self.i + 3 and self.p[k] in "01234567":
            k += 1
        value = int(self.p[self.i:k], 8)
        self.i = k
        return self.literal(value, opts)

    def char_escape(self, in_class: bool) -> int:
        """The code point of a character escape at i (after the backslash), consumed."""
        ch = self.p[self.i]
        self.i += 1
        if ch in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[ch]
        if ch == "b" and in_class:
            return 0x08
        if ch in "XyY" and in_class:
            return ord(ch)      # Parity: Oniguruma fetch_token_cc has no \\X \\y \\Y: the letter
        if ch == "x":
            if self.peek() == "{":
                end = self.p.find("}", self.i)
                body = self.p[self.i + 1:end] if end > 0 else ""
                if not body or len(body) > 8 or any(c not in _HEX for c in body):
                    raise self.unsupported("this \\x{...} escape")
                self.i = end + 1
                return self._code_point(int(body, 16))
            j = self.i
            while j < len(self.p) and j < self.i + 2 and self.p[j] in _HEX:
                j += 1
            if j == self.i:
                raise self.unsupported("\\x without hex digits")
            value = int(self.p[self.i:j], 16)
            self.i = j
            return value
        if ch == "u":
            body = self.p[self.i:self.i + 4]
            if len(body) != 4 or any(c not in _HEX for c in body):
                raise self.unsupported("this \\u escape")
            self.i += 4
            return self._code_point(int(body, 16))
        if ch == "o" and self.peek() == "{":
            end = self.p.find("}", self.i)
            body = self.p[self.i + 1:end] if end > 0 else ""
            if not body or any(c not in "01234567" for c in body):
                raise self.unsupported("this \\o{...} escape")
            self.i = end + 1
            return self._code_point(int(body, 8))
        if ch == "0" or (in_class and ch in "1234567"):
            j = self.i
            while j < len(self.p) and j < self.i + 2 and self.p[j] in "01234567":
                j += 1
            value = int(ch + self.p[self.i:j], 8)
            self.i = j
            return value
        if ch == "c" or (ch in "CM" and self.peek() == "-"):
            return self.control_escape(ch)
        if ch.isascii() and ch.isalnum():
            raise self.unsupported(f"the escape \\{ch}")
        return ord(ch)

    def control_escape(self, ch: str) -> int:
        """\\cX, \\C-X, \\M-X. Parity: Oniguruma fetch_escaped_value."""
        if ch in "CM":
            self.i += 1     # the '-'
        if self.i >= len(self.p):
            raise self.unsupported("an unterminated control escape")
        c = self.p[self.i]
        self.i += 1
        if c == "\\":
            if self.peek() is None:
                raise self.unsupported("an unterminated control escape")
            if self.peek() in "cCM":
                nxt = self.peek()
                self.i += 1
                value = self.control_escape(nxt)
            else:
                value = self.char_escape(in_class=False)
        else:
            value = ord(c)
        if ch == "M":
            return (value & 0xFF) | 0x80
        if c == "?":
            return 0x7F
        return value & 0x9F

    def _code_point(self, value: int) -> int:
        if value > MAX_CODE_POINT or 0xD800 <= value <= 0xDFFF:
            raise self.unsupported("a code point outside Unicode scalar values")
        return value

    def property(self, negated: bool) -> list[tuple[int, int]]:
        """\\p{Name}, \\p{^Name}, \\P{Name} at i (the p/P), consumed."""
        self.i += 1
        if self.peek() != "{":
            raise self.unsupported("\\p without {name}")
        end = self.p.find("}", self.i)
        if end < 0:
            raise self.unsupported("an unterminated \\p{...}")
        name = self.p[self.i + 1:end]
        self.i = end + 1
        if name.startswith("^"):
            negated = not negated
            name = name[1:]
        ranges = uni.property_ranges(name)
        if ranges is None:
            raise self.unsupported(f"the Unicode property \\p{{{name}}} (no table for it here)")
        return negate_ranges(ranges) if negated else list(ranges)

    # ------------------------------------------------------------------ brackets

    def bracket(self, opts: _Options, top: bool) -> list[tuple[int, int]]:
        """A [...] class at i, consumed: its code point ranges. Parity: Oniguruma parse_cc
        (nested classes and && merged into the set; case folding of the outermost set)."""
        self.i += 1
        negated = False
        if self.peek() == "^":
            negated = True
            self.i += 1
        operands: list[list[tuple[int, int]]] = []
        current: list[tuple[int, int]] = []
        first = True
        while True:
            ch = self.peek()
            if ch is None:
                raise self.unsupported("an unterminated [...]")
            if ch == "]" and not first:
                self.i += 1
                break
            first = False
            if ch == "&" and self.peek(1) == "&":
                self.i += 2
                operands.append(current)
                current = []
                continue
            if ch == "[":
                if self.p.startswith("[:", self.i):
                    posix = self.posix_bracket()
                    if posix is not None:
                        current.extend(posix)
                        continue
                current.extend(self.bracket(opts, top=False))
                continue
            escaped = self.class_escape()
            if escaped is not None:
                current.extend(escaped)
                if self.peek() == "-" and self.peek(1) not in (None, "]"):
                    raise self.unsupported("a class escape as a range bound")
                continue
            lo = self.class_atom()
            if (self.peek() == "-" and self.peek(1) not in (None, "]")
                    and not (self.peek(1) == "&" and self.peek(2) == "&")):
                self.i += 1
                if self.peek() == "[" or self.class_escape_ahead():
                    raise self.unsupported("a class as a range bound")
                hi = self.class_atom()
                if hi < lo:
                    raise self.unsupported("an empty range in a class")
                current.append((lo, hi))
            else:
                current.append((lo, lo))
        operands.append(current)
        ranges = normalize_ranges(operands[0])
        for other in operands[1:]:
            ranges = intersect_ranges(ranges, other)
        if top and opts.ignore_case:
            if not negated and any(_contains(ranges, cp) for cp in uni.multi_folds()):
                raise self.unsupported("a case-insensitive class with a character whose case folding is "
                                       "several characters")
            ranges = _fold_closure(ranges)
        return negate_ranges(ranges) if negated else normalize_ranges(ranges)

    def class_escape_ahead(self) -> bool:
        return self.peek() == "\\" and self.peek(1) is not None and self.peek(1) in "wWsSdDhHpP"

    def posix_bracket(self):
        """[:name:] or [:^name:] at i, consumed; None (nothing consumed) when not one."""
        end = self.p.find(":]", self.i + 2)
        if end < 0:
            return None
        name = self.p[self.i + 2:end]
        negated = name.startswith("^")
        if negated:
            name = name[1:]
        ranges = uni.posix_ranges(name)
        if ranges is None:
            raise self.unsupported(f"the POSIX bracket [:{name}:]")
        self.i = end + 2
        return negate_ranges(ranges) if negated else list(ranges)

    def class_atom(self) -> int:
        """One character of a class at i, consumed."""
        ch = self.p[self.i]
        self.i += 1
        if ch != "\\":
            return ord(ch)
        if self.peek() is None:
            raise self.unsupported("a trailing backslash")
        return self.char_escape(in_class=True)

    def class_escape(self) -> list[tuple[int, int]] | None:
        """A class escape (\\w \\p{..} ...) at i, consumed; None (nothing consumed) when not one."""
        e = self.peek(1)
        if self.peek() != "\\" or e is None or e not in "wWsSdDhHpP":
            return None
        self.i += 1
        if e in "pP":
            return self.property(e == "P")
        self.i += 1
        ranges = list(uni.escape_ranges(e.lower()))
        return negate_ranges(ranges) if e.isupper() else ranges


def _check_multi_fold_sequence(items, parser: _Parser) -> None:
    """Refuse adjacent case-insensitive literals that a several-character case folding could
    span (`(?i)ss` also matches "ß"): Oniguruma matches such strings as one character."""
    flat: list = []

    def walk(node) -> None:
        if node[0] == "cat":
            for x in node[1]:
                walk(x)
        elif node[0] == "group" and not node[2]:
            walk(node[1])
        else:
            flat.append(node)

    for item in items:
        walk(item)
    pairs = _multi_fold_pairs()
    for a, b in zip(flat, flat[1:]):
        if a[0] == b[0] == "set" and len(a) == len(b) == 3:
            for x in uni.fold_class(a[2][1]):
                for y in uni.fold_class(b[2][1]):
                    if (x, y) in pairs:
                        raise parser.unsupported(
                            f"the case-insensitive {chr(a[2][1]) + chr(b[2][1])!r}, which a character's "
                            "several-character case folding can match")


_PAIRS: set[tuple[int, int]] = set()


def _multi_fold_pairs() -> set[tuple[int, int]]:
    """(first, second) code points of consecutive characters in several-character foldings,
    each widened to its case-fold class."""
    if not _PAIRS:
        for folded in uni.multi_folds().values():
            for x, y in zip(folded, folded[1:]):
                for a in uni.fold_class(ord(x)):
                    for b in uni.fold_class(ord(y)):
                        _PAIRS.add((a, b))
    return _PAIRS


def parse_onig(pattern: str):
    """The syntax tree of an Oniguruma pattern. Raises RegexUnsupported."""
    return _Parser(pattern).parse()


def compile_onig(pattern: str) -> Program:
    """The linear-time program of an Oniguruma pattern. Raises RegexUnsupported."""
    return compile_tree(parse_onig(pattern), word=uni.escape_ranges("w"), graphemes=uni.grapheme_values())
