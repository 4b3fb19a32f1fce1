"""The exact versions pyproject.toml's test extras pin, and a guard for tests that need one.

Tests that compare with a reference's own tables (the `regex` module's Unicode version, a
reference library's behaviour) hold only for the version the extras pin: `.ci/run` installs
them (`pip install ".[test]"` replaces an installed version that differs from an `==` pin).
Elsewhere such a test fails with a message naming the pin, rather than skipping or failing on
a difference that only the other version makes.
"""
from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def pinned_test_dependencies() -> dict[str, str]:
    """{distribution: version} for every `name==version` of the `test = [...]` extra."""
    text = PYPROJECT.read_text(encoding="utf-8")
    block = re.search(r"^test = \[(.*?)^\]", text, re.MULTILINE | re.DOTALL)
    if block is None:
        raise AssertionError(f"{PYPROJECT}: no 'test = [...]' extra found")
    return dict(re.findall(r'"([A-Za-z0-9_.-]+)==([^"]+)"', block.group(1)))


def installed_version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def require_pinned(distribution: str, why: str) -> None:
    """Fail the calling test unless `distribution` is installed at the test extras' pin."""
    pinned = pinned_test_dependencies()[distribution]
    installed = installed_version(distribution)
    if installed != pinned:
        pytest.fail(f"{distribution} {installed or '(not installed)'} is installed, the test extras pin "
                    f"{distribution}=={pinned}: {why}. Install the test dependencies: "
                    f"pip install \".[test]\"", pytrace=False)
