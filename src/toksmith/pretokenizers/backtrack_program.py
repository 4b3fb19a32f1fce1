"""Compile a regex syntax tree into the program of `toksmith._core.linear_regex`, the matcher
that gives a backtracking engine's match (leftmost start, then the first successful path in
priority order: alternatives left to right, greedy loops longest first) in linear time.

How: the match found from a start position by backtracking depends only on (state, position),
so `linear_regex` computes it for every position at once, right to left, one column of
states per position (memoized backtracking): an alternative's value is its first branch's
value unless that failed; a character step's value is its successor's value one position
to the right. Atomic groups and possessive quantifiers keep the first path of their body
(a jump to its end position); look-arounds longer than one character are position
predicates computed by their own passes beforehand (a look-behind body runs reversed,
left to right). A loop whose body can match the empty string is refused (Oniguruma's
empty-iteration check makes such a loop depend on more than the state and position).

The syntax tree (tuples), produced by a dialect's parser (toksmith.hf.onig_regex):
  ("set", ranges)                 one character among sorted disjoint inclusive ranges
  ("cat", [nodes]) ("alt", [nodes])   a sequence; alternatives, leftmost first
  ("rep", node, lo, hi, greedy)   hi None: unbounded
  ("atomic", node)                (?>...): its body's first match, never backtracked into
  ("look", node, behind, negative)
  ("assert", kind)                one of ASSERTS, or "EGCB" / "NOT_EGCB": at (not at) an extended
                                  grapheme cluster boundary (the `graphemes` a dialect gives)
  ("group", node)                 a capturing group (nothing at match time)

    >>> prog = compile_tree(("rep", ("set", [(0x61, 0x61)]), 1, None, True), word=[(0x61, 0x7A)])
    >>> len(prog.passes), prog.passes[-1].output
    (1, -1)
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Opcodes (must match linear_regex.pyx). Each state is (op, a, b, c).
OP_CLASS = 0        # a: class, b: next. One character (forward: s[j]; reversed pass: s[j-1]).
OP_ALT = 1          # a: first choice, b: second choice
OP_MATCH = 2        # the value is the position itself
OP_ASSERT = 3       # a: ASSERT_*, b: next
OP_LOOK_CLASS = 4   # a: class, b: next, c: negative. The character after the position is in a class.
OP_BEHIND_CLASS = 5 # a: class, b: next, c: negative. The character before the position is in a class.
OP_LOOK = 6         # a: table, b: next, c: negative. A look-around computed by an earlier pass.
OP_ATOMIC = 7       # a: body start, b: next, c: slot. The body's first end, then next there.

ASSERT_BOL, ASSERT_EOL, ASSERT_BOT, ASSERT_EOT, ASSERT_EOT_NL, ASSERT_WORD, ASSERT_NOT_WORD = range(7)
ASSERTS = {"BOL": ASSERT_BOL, "EOL": ASSERT_EOL, "BOT": ASSERT_BOT, "EOT": ASSERT_EOT,
           "EOT_NL": ASSERT_EOT_NL, "WORD": ASSERT_WORD, "NOT_WORD": ASSERT_NOT_WORD}

# The grapheme cluster break values a dialect gives compile_tree (Other: all the rest), in the
# order of their codes 1.. in linear_regex.pyx; Extended_Pictographic is a flag beside them.
GRAPHEME_VALUES = ("CR", "LF", "Control", "Extend", "ZWJ", "SpacingMark", "Prepend", "Regional_Indicator",
                   "L", "V", "T", "LV", "LVT", "Extended_Pictographic")
GRAPHEME_ASSERTS = {"EGCB": False, "NOT_EGCB": True}     # kind -> negative

MAX_CODE_POINT = 0x10FFFF
MAX_STATES = 20000      # per pass; {n,m} counts are unrolled


class RegexUnsupported(ValueError):
    """The pattern uses a construct the linear-time matcher cannot run exactly."""


@dataclass
class Pass:
    """One right-to-left (or, reversed, left-to-right) sweep over the text."""

    states: list[list[int]]
    start: int
    order: list[int]            # evaluation order within a column (dependencies first)
    reversed: bool              # a look-behind body: consumes s[j-1], sweeps left to right
    output: int                 # the table it fills, or -1: the main pass (match ends)
    slots: list[tuple[int, int]] = field(default_factory=list)   # (slot, state after the atomic group)


@dataclass
class Program:
    """The passes (look-around tables first, the main pass last) and their character classes."""

    passes: list[Pass]
    classes: list[list[tuple[int, int]]]
    newline_class: int
    word_class: int
    n_tables: int
    n_slots: int
    grapheme_table: int = -1        # the table of grapheme cluster boundaries (filled first), or -1
    grapheme_classes: list[int] = field(default_factory=list)   # the class of each GRAPHEME_VALUES


def normalize_ranges(ranges) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def negate_ranges(ranges) -> list[tuple[int, int]]:
    out = []
    nxt = 0
    for lo, hi in normalize_ranges(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return out


def intersect_ranges(a, b) -> list[tuple[int, int]]:
    out = []
    i = j = 0
    a = normalize_ranges(a)
    b = normalize_ranges(b)
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


# ---------------------------------------------------------------------- tree analysis

def nullable(node) -> bool:
    """Whether the node can match the empty string (assertions count as empty)."""
    kind = node[0]
    if kind == "set":
        return False
    if kind in ("assert", "look"):
        return True
    if kind == "cat":
        return all(nullable(x) for x in node[1])
    if kind == "alt":
        return any(nullable(x) for x in node[1])
    if kind == "rep":
        return node[2] == 0 or nullable(node[1])
    return nullable(node[1])    # atomic, group


def _single_set(node):
    """The ranges of a node that is exactly one character of a set, else None."""
    kind = node[0]
    if kind == "set":
        return node[1]
    if kind in ("group",):
        return _single_set(node[1])
    if kind == "cat" and len(node[1]) == 1:
        return _single_set(node[1][0])
    if kind == "alt":
        parts = [_single_set(b) for b in node[1]]
        if all(p is not None for p in parts):
            return normalize_ranges([r for p in parts for r in p])
    if kind == "atomic":
        return _single_set(node[1])
    return None


def _fixed_sequence(node) -> bool:
    """The node matches exactly one way from any position (sets, assertions, fixed repeats)."""
    kind = node[0]
    if kind in ("set", "assert"):
        return True
    if kind == "cat":
        return all(_fixed_sequence(x) for x in node[1])
    if kind == "rep":
        return node[2] == node[3] and _fixed_sequence(node[1])
    if kind in ("group", "atomic"):
        return _fixed_sequence(node[1])
    if kind == "alt":
        return _single_set(node) is not None
    return False


def char_length(node) -> tuple[int, float]:
    """(min, max) characters the node matches (max may be inf). Parity: Oniguruma
    regcomp.c node_char_len1 (anchors and look-arounds are 0)."""
    kind = node[0]
    if kind == "set":
        return 1, 1
    if kind in ("assert", "look"):
        return 0, 0
    if kind == "cat":
        parts = [char_length(x) for x in node[1]]
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    if kind == "alt":
        parts = [char_length(x) for x in node[1]]
        return min(p[0] for p in parts), max(p[1] for p in parts)
    if kind == "rep":
        lo, hi = char_length(node[1])
        top = float("inf") if node[3] is None else node[3] * hi
        return node[2] * lo, (0 if node[3] == 0 else top)
    return char_length(node[1])     # atomic, group


def _contains_kind(node, kinds) -> bool:
    if node[0] in kinds:
        return True
    if node[0] in ("cat", "alt"):
        return any(_contains_kind(x, kinds) for x in node[1])
    if node[0] in ("rep", "atomic", "look", "group"):
        return _contains_kind(node[1], kinds)
    return False


def check_look_behind(body) -> None:
    """Refuse a look-behind whose Oniguruma semantics the reversed existence pass does not
    give. Parity: Oniguruma regcomp.c tune_look_behind: a body of one length runs from that
    many characters back over the whole text (so its anchors and look-aheads see past the
    position); alternatives of different fixed lengths are divided into look-behinds of their
    own; any other body runs with the text cut at the position (its anchors, look-arounds
    and atomic groups would see that cut), so those are refused."""
    lo, hi = char_length(body)
    if lo == hi:
        return
    if body[0] == "alt" and all(char_length(b)[0] == char_length(b)[1] for b in body[1]):
        return
    if _contains_kind(body, ("assert", "look", "atomic")):
        raise RegexUnsupported("a variable-length look-behind with an anchor, a look-around or an atomic "
                               "group (Oniguruma cuts the text at the position for those)")


def simplify(node, in_look_behind: bool = False):
    """Drop groups, flatten sequences, merge alternatives of single characters, and rewrite
    atomic groups that need no jump: (?>X{a,b}) over one character class X is
    X{b} | X{a,b-1}(?!X) (X{a,}(?!X) when unbounded): the greedy count is the run's.
    In a look-behind body (run reversed) an atomic group is of one length (check_look_behind)
    and so is its own body."""
    kind = node[0]
    if kind == "group":
        return simplify(node[1], in_look_behind)
    if kind == "set":
        return node
    if kind == "cat":
        items = []
        for x in node[1]:
            x = simplify(x, in_look_behind)
            if x[0] == "cat":
                items.extend(x[1])
            else:
                items.append(x)
        return items[0] if len(items) == 1 else ("cat", items)
    if kind == "alt":
        branches = []
        for x in node[1]:
            x = simplify(x, in_look_behind)
            if x[0] == "alt":
                branches.extend(x[1])
            else:
                branches.append(x)
        single = _single_set(("alt", branches))
        if single is not None:
            return ("set", single)
        return ("alt", branches)
    if kind == "rep":
        body = simplify(node[1], in_look_behind)
        lo, hi, greedy = node[2], node[3], node[4]
        if hi == 0:
            return ("cat", [])
        if lo == 1 and hi == 1:
            return body
        return ("rep", body, lo, hi, greedy)
    if kind == "atomic":
        body = simplify(node[1], in_look_behind)
        if _fixed_sequence(body):
            return body
        if in_look_behind:
            lo, hi = char_length(body)
            if lo != hi:
                raise RegexUnsupported("an atomic group or possessive quantifier inside a look-behind")
            return body     # every path has the same length: the first one is as good as any
        if body[0] == "rep" and body[1][0] == "set":
            x, lo, hi, greedy = body[1], body[2], body[3], body[4]
            not_x = ("look", x, False, True)
            if not greedy:
                return simplify(("rep", x, lo, lo, True))
            if hi is None:
                return ("cat", [simplify(("rep", x, lo, None, True)), not_x])
            return ("alt", [simplify(("rep", x, hi, hi, True)),
                            ("cat", [simplify(("rep", x, lo, hi - 1, True)), not_x])])
        return ("atomic", body)
    if kind == "look":
        body, behind, negative = node[1], node[2], node[3]
        if behind:
            check_look_behind(body)
        return ("look", simplify(body, behind), behind, negative)
    return node     # assert


def check_loops(node) -> None:
    """Refuse a repeat of more than one iteration whose body can match the empty string."""
    kind = node[0]
    if kind == "rep":
        if (node[3] is None or node[3] > 1) and nullable(node[1]):
            raise RegexUnsupported("a repeated group that can match the empty string")
        check_loops(node[1])
    elif kind in ("cat", "alt"):
        for x in node[1]:
            check_loops(x)
    elif kind in ("atomic", "look", "group"):
        check_loops(node[1])


def _has_atomic(node) -> bool:
    kind = node[0]
    if kind == "atomic":
        return True
    if kind in ("cat", "alt"):
        return any(_has_atomic(x) for x in node[1])
    if kind in ("rep", "group"):
        return _has_atomic(node[1])
    return False


# ---------------------------------------------------------------------- emission

class _Compiler:
    def __init__(self, word, graphemes) -> None:
        self.classes: list[list[tuple[int, int]]] = []
        self._class_ids: dict[tuple, int] = {}
        self.passes: list[Pass] = []
        self.n_slots = 0
        self.n_tables = 0
        self.newline_class = self.cls([(0x0A, 0x0A)])
        self.word_class = self.cls(word)
        self.graphemes = graphemes
        self.grapheme_table = -1
        self.grapheme_classes: list[int] = []

    def boundaries(self) -> int:
        """The table of grapheme cluster boundaries (linear_regex fills it before the passes)."""
        if self.grapheme_table < 0:
            if self.graphemes is None:
                raise RegexUnsupported("grapheme clusters (no Grapheme_Cluster_Break data for this dialect)")
            self.grapheme_classes = [self.cls(self.graphemes[name]) for name in GRAPHEME_VALUES]
            self.grapheme_table = self.n_tables
            self.n_tables += 1
        return self.grapheme_table

    def cls(self, ranges) -> int:
        key = tuple(normalize_ranges(ranges))
        if key not in self._class_ids:
            self._class_ids[key] = len(self.classes)
            self.classes.append(list(key))
        return self._class_ids[key]

    def compile_pass(self, tree, reversed_: bool, output: int) -> Pass:
        emitter = _PassEmitter(self, reversed_)
        match = emitter.state(OP_MATCH)
        start = emitter.emit(tree, match)
        p = Pass(states=emitter.states, start=start, order=_order(emitter.states, emitter.empty_atomics),
                 reversed=reversed_, output=output, slots=emitter.slots)
        self.passes.append(p)
        return p

    def table(self, body, behind: bool) -> int:
        """A look-around's position table: its own pass, before the passes that read it."""
        if behind and _has_atomic(body):
            raise RegexUnsupported("an atomic group or possessive quantifier inside a look-behind")
        # Nested look-arounds get their (earlier) passes while this body is emitted.
        p = self.compile_pass(body, behind, -1)
        p.output = self.n_tables
        self.n_tables += 1
        return p.output


class _PassEmitter:
    def __init__(self, compiler: _Compiler, reversed_: bool) -> None:
        self.c = compiler
        self.reversed = reversed_
        self.states: list[list[int]] = []
        self.slots: list[tuple[int, int]] = []
        self.empty_atomics: set[int] = set()    # atomic states whose body can match the empty string

    def state(self, op: int, a: int = -1, b: int = -1, c: int = 0) -> int:
        if len(self.states) >= MAX_STATES:
            raise RegexUnsupported(f"the pattern compiles to more than {MAX_STATES} states")
        self.states.append([op, a, b, c])
        return len(self.states) - 1

    def emit(self, node, nxt: int) -> int:
        """The state that matches `node` then continues at `nxt`."""
        kind = node[0]
        if kind == "set":
            return self.state(OP_CLASS, self.c.cls(node[1]), nxt)
        if kind == "cat":
            items = node[1]
            # forward: the first item runs first; reversed (a look-behind body): the last one
            for item in (items if self.reversed else reversed(items)):
                nxt = self.emit(item, nxt)
            return nxt
        if kind == "alt":
            starts = [self.emit(b, nxt) for b in node[1]]
            s = starts[-1]
            for first in reversed(starts[:-1]):
                s = self.state(OP_ALT, first, s)
            return s
        if kind == "rep":
            return self.emit_rep(node, nxt)
        if kind == "assert":
            if node[1] in GRAPHEME_ASSERTS:
                return self.state(OP_LOOK, self.c.boundaries(), nxt, int(GRAPHEME_ASSERTS[node[1]]))
            return self.state(OP_ASSERT, ASSERTS[node[1]], nxt)
        if kind == "look":
            body, behind, negative = node[1], node[2], node[3]
            single = _single_set(body)
            if single is not None:
                op = OP_BEHIND_CLASS if behind else OP_LOOK_CLASS
                return self.state(op, self.c.cls(single), nxt, int(negative))
            return self.state(OP_LOOK, self.c.table(body, behind), nxt, int(negative))
        if kind == "atomic":
            if self.reversed:
                raise RegexUnsupported("an atomic group or possessive quantifier inside a look-behind")
            slot = self.c.n_slots
            self.c.n_slots += 1
            end = self.state(OP_MATCH)
            body = self.emit(node[1], end)
            self.slots.append((slot, nxt))
            state = self.state(OP_ATOMIC, body, nxt, slot)
            if nullable(node[1]):
                self.empty_atomics.add(state)
            return state
        if kind == "group":
            return self.emit(node[1], nxt)
        raise RegexUnsupported(f"unknown node {kind!r}")

    def emit_rep(self, node, nxt: int) -> int:
        _, body, lo, hi, greedy = node
        if hi is None:
            loop = self.state(OP_ALT)
            first = self.emit(body, loop)
            self.states[loop][1:3] = [first, nxt] if greedy else [nxt, first]
            cur = loop
        else:
            cur = nxt
            for _ in range(hi - lo):
                first = self.emit(body, cur)
                cur = self.state(OP_ALT, first, nxt) if greedy else self.state(OP_ALT, nxt, first)
        for _ in range(lo):
            cur = self.emit(body, cur)
        return cur


def _order(states: list[list[int]], empty_atomics: set[int]) -> list[int]:
    """States in an order where each one's same-column dependencies come before it (an
    atomic group reads its successor in the same column only when its body matched empty)."""
    deps: list[list[int]] = []
    for q, (op, a, b, c) in enumerate(states):
        if op == OP_ALT:
            deps.append([a, b])
        elif op in (OP_ASSERT, OP_LOOK_CLASS, OP_BEHIND_CLASS, OP_LOOK):
            deps.append([b])
        elif op == OP_ATOMIC:
            deps.append([a, b] if q in empty_atomics else [a])
        else:
            deps.append([])
    order: list[int] = []
    mark = [0] * len(states)      # 0 new, 1 in progress, 2 done
    for root in range(len(states)):
        if mark[root]:
            continue
        stack = [(root, 0)]
        mark[root] = 1
        while stack:
            s, k = stack.pop()
            if k < len(deps[s]):
                stack.append((s, k + 1))
                d = deps[s][k]
                if mark[d] == 1:
                    raise RegexUnsupported("a loop that can repeat without consuming a character")
                if mark[d] == 0:
                    mark[d] = 1
                    stack.append((d, 0))
            else:
                mark[s] = 2
                order.append(s)
    return order


def compile_tree(tree, *, word, graphemes=None) -> Program:
    """The program of a syntax tree; `word` are the ranges of \\w for \\b and \\B,
    `graphemes` the ranges of each GRAPHEME_VALUES name (for the EGCB asserts).
    Raises RegexUnsupported."""
    tree = simplify(tree)
    check_loops(tree)
    compiler = _Compiler(word, graphemes)
    compiler.compile_pass(tree, False, -1)
    return Program(passes=compiler.passes, classes=compiler.classes, newline_class=compiler.newline_class,
                   word_class=compiler.word_class, n_tables=compiler.n_tables, n_slots=compiler.n_slots,
                   grapheme_table=compiler.grapheme_table, grapheme_classes=compiler.grapheme_classes)
