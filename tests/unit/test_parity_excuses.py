"""The parity comparison helper and every excuse it allows are tested themselves.

tests/parity/comparison.py counts comparisons and fails on lost outputs, on mismatches, on an
excuse over its bound and on comparing nothing; each Excuse of tests/parity/excuses/ accepts its
`allowed` example and refuses its `refused` one.
"""
from __future__ import annotations

import pytest

from tests.parity import excuses
from tests.parity.comparison import ALL_EXCUSES, Comparison, Excuse

excuses.load_all()

ONE_MORE_LEADING_SPACE = Excuse(
    "TEST_ONE_MORE_LEADING_SPACE", allows="ours has one leading space more (a test of the helper)",
    applies=lambda case, ours, theirs: ours[:1] == " " and ours[1:] == theirs,
    allowed=(None, " hi", "hi"), refused=(None, "  hi", "hi"))


@pytest.mark.parametrize("excuse", ALL_EXCUSES, ids=lambda e: e.name)
def test_excuse_allows_its_example_and_refuses_its_near_miss(excuse):
    assert excuse(*excuse.allowed), f"{excuse.name} refuses its own allowed example"
    assert not excuse(*excuse.refused), f"{excuse.name} allows its refused example"
    assert excuse.allows.strip(), f"{excuse.name} does not say what it allows"


def test_excuse_names_are_unique():
    names = [e.name for e in ALL_EXCUSES]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_comparison_counts_what_it_compared(monkeypatch):
    lines = []
    monkeypatch.setattr("tests.parity.comparison.report", lines.append)
    check = Comparison("file ids", against="the reference")
    check.all(["a", "b", "c"], ours=[[1], [2], [3]], theirs=[[1], [2], [3]])
    check.finish()
    assert lines == ["file ids: 3 comparisons vs the reference, 0 mismatches"]


def test_comparison_refuses_lost_outputs():
    check = Comparison("file ids", against="the reference")
    with pytest.raises(AssertionError, match="3 cases but 0 outputs from toksmith"):
        check.all(["a", "b", "c"], ours=[], theirs=[[1], [2], [3]])


def test_comparison_fails_on_a_mismatch_and_on_nothing_compared(monkeypatch):
    monkeypatch.setattr("tests.parity.comparison.report", lambda line: None)
    check = Comparison("file ids", against="the reference")
    check.one("a", [1, 2], [1])
    with pytest.raises(AssertionError, match="1 mismatches"):
        check.finish()
    with pytest.raises(AssertionError, match="0 comparisons made"):
        Comparison("empty", against="the reference").finish()


def test_comparison_bounds_each_excuse(monkeypatch):
    lines = []
    monkeypatch.setattr("tests.parity.comparison.report", lines.append)
    check = Comparison("file decode", against="the reference", excuses={ONE_MORE_LEADING_SPACE: 1})
    check.all(["x", "y"], ours=[" hi", "  hi"], theirs=["hi", "hi"])
    with pytest.raises(AssertionError, match="1 mismatches"):
        check.finish()
    assert lines == ["file decode: 2 comparisons vs the reference, 1 mismatches, "
                     "allowed: TEST_ONE_MORE_LEADING_SPACE 1 (bound 1)"]
    over = Comparison("file decode", against="the reference", excuses={ONE_MORE_LEADING_SPACE: 1})
    over.all(["x", "y"], ours=[" hi", " ho"], theirs=["hi", "ho"])
    with pytest.raises(AssertionError, match="allowed 2 times, bound 1"):
        over.finish()
