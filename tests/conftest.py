"""Shared test plumbing: where the fixtures are, and the parity report.

Tests that need real model files or corpora take them from the folder named
by TOKSMITH_FIXTURES (CI sets it to ../shared/fixtures). Unset: those tests
skip with a reason. Set but a file is missing: they fail.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings


# The references panic where the tests expect them to (tokenizers' Strip decoder on some
# token texts): with RUST_BACKTRACE=1 in the environment each panic would symbolize and
# print a backtrace, about 5 ms apiece (minutes over the decoder suites). Set before any
# test runs, so before the first panic (Rust reads the variable once).
os.environ["RUST_BACKTRACE"] = "0"

# Hypothesis, the same examples on every run (tests/property/): derandomized (the seed is a hash
# of the test function), so a failure in CI's log reruns as it failed, with the same hypothesis
# version; print_blob adds the @reproduce_failure line. No example database: derandomized runs
# neither need nor update one, and a shrunk failure belongs in the test as an explicit
# @example(...). HYPOTHESIS_PROFILE=explore draws new examples locally (kept in the git-ignored
# .hypothesis/ folder).
settings.register_profile("ci", derandomize=True, print_blob=True, database=None)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Parity lines reported by the test now running in this process, and the lines gathered for
# the summary from every test's report (with pytest-xdist the tests run in worker processes:
# the lines travel to the controller in the teardown report's user_properties).
_PENDING_REPORT: list[str] = []
PARITY_REPORT: list[str] = []

# Corpora of the fixture set: every line of each is compared in parity tests.
CORPUS_FILES = (
    "botchan.txt", "code_python_stdlib.py.txt", "man_de.txt", "man_en.txt", "man_es.txt",
    "man_fr.txt", "man_ja.txt", "man_ru.txt", "man_zh_CN.txt", "markup_html.txt",
    "markup_json.txt", "markup_svg.txt", "wagahaiwa_nekodearu.txt", "tricky_strings.txt",
)


def fixtures_dir() -> Path | None:
    value = os.environ.get("TOKSMITH_FIXTURES")
    # Absolute: CI gives ../shared/fixtures, and tests that chdir must still find it.
    return Path(value).absolute() if value else None


@pytest.fixture(scope="session")
def fixtures() -> Path:
    root = fixtures_dir()
    if root is None:
        pytest.skip("TOKSMITH_FIXTURES is not set: real model files and corpora are unavailable")
    if not root.is_dir():
        pytest.fail(f"TOKSMITH_FIXTURES={root} is not a directory")
    return root


def fixture_file(root: Path, relative: str) -> Path:
    path = root / relative
    if not path.is_file():
        pytest.fail(f"fixture file {path} is missing (TOKSMITH_FIXTURES is set)")
    return path


def parity_sample() -> int | None:
    """TOKSMITH_PARITY_SAMPLE=N: the corpora shrink to their first N lines (the mutation check
    of tests/parity/test_parity_mutations.py, and quick local runs). Unset in CI's main run."""
    value = os.environ.get("TOKSMITH_PARITY_SAMPLE")
    return int(value) if value else None


@pytest.fixture(scope="session")
def corpus_lines(fixtures) -> dict[str, list[str]]:
    """Every corpus as a list of lines (split on \\n; \\r kept where the file has it)."""
    lines = {}
    sample = parity_sample()
    for name in CORPUS_FILES:
        text = fixture_file(fixtures, f"corpus/{name}").read_bytes().decode("utf-8")
        lines[name] = text.split("\n")[:sample]
    return lines


# Long runs a pre-tokenizer sample adds to its lines (quadratic or recursive splitters show here).
LONG_RUNS = ["a" * 3000, " " * 3000, "\n" * 500 + "x", "1234567890" * 50, "日本語" * 400,
             "🦙" * 300, "don't I'LL we'Ve", "\u00a0\u2009\u3000 \t\r\n x"]


def multilingual_sample(corpus_lines: dict[str, list[str]], per_corpus: int) -> list[str]:
    """tricky_strings.txt whole, then the first `per_corpus` lines of every other corpus."""
    lines = list(corpus_lines["tricky_strings.txt"])
    for name, corpus in corpus_lines.items():
        if name != "tricky_strings.txt":
            lines += corpus[:per_corpus]
    return lines


@pytest.fixture(scope="session")
def invalid_utf8_lines(fixtures) -> list[bytes]:
    """The 22 invalid-UTF-8 byte strings of tricky_invalid_utf8.bin."""
    import json
    index = json.loads(fixture_file(fixtures, "corpus/tricky_invalid_utf8.index.json").read_text())
    blob = fixture_file(fixtures, "corpus/tricky_invalid_utf8.bin").read_bytes()
    cases = index["cases"] if isinstance(index, dict) else index
    return [blob[c["offset"]:c["offset"] + c["length"]] for c in cases]


@pytest.fixture(scope="session")
def tricky_strings(fixtures) -> list[str]:
    import json
    data = json.loads(fixture_file(fixtures, "corpus/tricky_strings.json").read_text(encoding="utf-8"))
    return [item["text"] for item in data]


def first_difference(got: list[int], want: list[int]) -> str:
    """Where two long id lists part (pytest's own diff of megabyte lists is quadratic)."""
    at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return (f"{len(got)} vs {len(want)} ids, first difference at {at}: "
            f"{got[at:at + 8]} != {want[at:at + 8]}")


def report(line: str) -> None:
    """Add a line to the parity summary printed at the end of the run."""
    _PENDING_REPORT.append(line)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    test_report = outcome.get_result()
    if test_report.when == "teardown" and _PENDING_REPORT:
        test_report.user_properties = [*test_report.user_properties,
                                       *(("parity", line) for line in _PENDING_REPORT)]
        _PENDING_REPORT.clear()


def pytest_runtest_logreport(report):
    if report.when == "teardown":
        PARITY_REPORT.extend(value for key, value in report.user_properties if key == "parity")


def pytest_terminal_summary(terminalreporter):
    if PARITY_REPORT:
        terminalreporter.section("parity: lines compared against the reference")
        for line in PARITY_REPORT:
            terminalreporter.write_line(line)
