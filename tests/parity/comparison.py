"""One way for every parity test to compare toksmith with a reference.

A `Comparison` is given, case by case, the reference's output and toksmith's for the same
input and flags. It counts the comparisons it made (never the inputs), refuses two output
lists of different lengths, and writes the report line from its own count, naming what was
compared against what ("vs llama.cpp", "vs itself (fast path vs slow path)"). A difference
passes only when a named `Excuse` states exactly that difference, and each excuse has an upper
bound per comparison: a category that exceeds its bound fails the test, and so does a
comparison that compared nothing.

Example::

    check = Comparison("ggml-vocab-phi-3.gguf ids, add_special", against="llama.cpp",
                       excuses={SKIPPED_BOS_SPACE: 200})
    check.all(lines, ours=tok.encode_batch(lines), theirs=[ref.tokenize(t) for t in lines])
    check.finish()    # reports "...: 159462 comparisons vs llama.cpp, 0 mismatches" and asserts

Excuses live in tests/parity/excuses.py; tests/unit/test_parity_excuses.py checks each on the
example it must allow and the one it must refuse.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from tests.conftest import report

# Every Excuse defined anywhere, in definition order (the unit test walks them all).
ALL_EXCUSES: list["Excuse"] = []

MISMATCHES_SHOWN = 8


@dataclass(frozen=True, eq=False)
class Excuse:
    """An allowed difference between toksmith and a reference, stated exactly.

    `applies(case, ours, theirs)` is True only for that difference. `allows` says it in words
    and names the reference behaviour it stands for; `allowed` and `refused` are one
    (case, ours, theirs) it must accept and one near miss it must refuse.

    Example::

        ONE_MORE_LEADING_SPACE = Excuse(
            "ONE_MORE_LEADING_SPACE",
            allows="toksmith's decode starts with one space the reference's lacks (...)",
            applies=lambda case, ours, theirs: ours[:1] == " " and ours[1:] == theirs,
            allowed=(None, " hi", "hi"), refused=(None, "  hi", "hi"))
    """

    name: str
    allows: str
    applies: Callable[[Any, Any, Any], bool]
    allowed: tuple
    refused: tuple

    def __post_init__(self) -> None:
        ALL_EXCUSES.append(self)

    def __call__(self, case: Any, ours: Any, theirs: Any) -> bool:
        try:
            return bool(self.applies(case, ours, theirs))
        except Exception:       # a predicate that cannot judge a case does not excuse it
            return False

    def __repr__(self) -> str:
        return self.name


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def describe_difference(ours: Any, theirs: Any) -> str:
    """Where two outputs part, short enough for a failure message (lists of any length)."""
    if isinstance(ours, (list, tuple)) and isinstance(theirs, (list, tuple)):
        at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        return (f"{len(ours)} vs {len(theirs)} items, first difference at {at}: "
                f"ours {_short(list(ours[at:at + 8]))} theirs {_short(list(theirs[at:at + 8]))}")
    return f"ours {_short(ours)}\n    theirs {_short(theirs)}"


@dataclass
class Comparison:
    """Counted comparisons of toksmith with one reference, reported and asserted by `finish`.

    `label` names the file and what is compared ("ggml-vocab-gpt-2.gguf ids, add_special");
    `against` the reference ("llama.cpp", "tokenizers 0.23.3", "itself (GGUF vs .model)");
    `excuses` each allowed difference with the most times it may occur here.
    """

    label: str
    against: str
    excuses: Mapping[Excuse, int] = field(default_factory=dict)
    compared: int = 0
    mismatches: list[str] = field(default_factory=list)
    mismatch_count: int = 0
    excused: Counter = field(default_factory=Counter)
    finished: bool = False

    def one(self, case: Any, ours: Any, theirs: Any, *, what: str = "") -> bool:
        """Compare one output pair; True when equal or excused. `case` is the input (for messages
        and for excuses that look at it), `what` an optional tag ("decode", "pieces")."""
        self.compared += 1
        if ours == theirs:
            return True
        for excuse in self.excuses:
            if excuse(case, ours, theirs):
                self.excused[excuse] += 1
                return True
        self.mismatch_count += 1
        if len(self.mismatches) < MISMATCHES_SHOWN:
            tag = f"{what} " if what else ""
            self.mismatches.append(f"{tag}{_short(case, 100)}\n    {describe_difference(ours, theirs)}")
        return False

    def all(self, cases: Sequence[Any], ours: Sequence[Any], theirs: Sequence[Any], *, what: str = "") -> int:
        """Compare outputs case by case; the three lists must have the same length (an output
        list that lost items is a failure, not fewer comparisons). Returns the mismatches added."""
        if not (len(cases) == len(ours) == len(theirs)):
            raise AssertionError(f"{self.label}{' ' + what if what else ''}: {len(cases)} cases but "
                                 f"{len(ours)} outputs from toksmith and {len(theirs)} from {self.against}")
        if isinstance(ours, list) and isinstance(theirs, list) and ours == theirs:
            self.compared += len(cases)     # every pair equal: the same count, at list-compare speed
            return 0
        before = self.mismatch_count
        for case, mine, reference in zip(cases, ours, theirs):
            self.one(case, mine, reference, what=what)
        return self.mismatch_count - before

    def pairs(self, *sequences: Sequence[Any]) -> Iterable[tuple]:
        """zip that refuses sequences of different lengths (for loops that compare in their own way)."""
        lengths = [len(s) for s in sequences]
        if len(set(lengths)) > 1:
            raise AssertionError(f"{self.label}: sequences of different lengths {lengths}")
        return zip(*sequences)

    def report_line(self) -> str:
        line = f"{self.label}: {self.compared} comparisons vs {self.against}, {self.mismatch_count} mismatches"
        if self.excuses:
            line += ", allowed: " + ", ".join(f"{e.name} {self.excused[e]} (bound {bound})"
                                              for e, bound in self.excuses.items())
        return line

    def finish(self, *, at_least: int = 1) -> None:
        """Report the line and assert: at least `at_least` comparisons, no mismatch, every excuse
        within its bound."""
        if self.finished:
            raise AssertionError(f"{self.label}: finish() called twice")
        self.finished = True
        report(self.report_line())
        problems = []
        if self.compared < at_least:
            problems.append(f"{self.compared} comparisons made, at least {at_least} expected")
        for excuse, bound in self.excuses.items():
            if self.excused[excuse] > bound:
                problems.append(f"{excuse.name} allowed {self.excused[excuse]} times, bound {bound} "
                                f"({excuse.allows})")
        if self.mismatch_count:
            problems.append(f"{self.mismatch_count} mismatches, first ones:\n  " + "\n  ".join(self.mismatches))
        assert not problems, f"{self.label} vs {self.against}: " + "\n".join(problems)

    def __enter__(self) -> "Comparison":
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None and not self.finished:
            self.finish()


def finish_all(*checks: Comparison) -> None:
    """Report every comparison's line, then fail with every failed one (not only the first)."""
    failures = []
    for check in checks:
        try:
            check.finish()
        except AssertionError as failure:
            failures.append(str(failure))
    assert not failures, "\n".join(failures)
