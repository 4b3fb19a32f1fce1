"""The environment has every version the test extras pin (pyproject.toml, `test = [...]`).

Parity and table tests hold for those releases only. `.ci/run` installs them with
`pip install ".[test]"`, which replaces an installed release that differs from an `==` pin;
this test says at once, and by name, when an environment has another one.
"""
from __future__ import annotations

from tests.pinned_versions import installed_version, pinned_test_dependencies


def test_every_pinned_test_dependency_is_installed_at_its_pin():
    pins = pinned_test_dependencies()
    assert {"regex", "tokenizers", "sentencepiece", "tiktoken", "hypothesis"} <= pins.keys(), pins
    wrong = {name: installed_version(name) for name, version in pins.items() if installed_version(name) != version}
    assert not wrong, "installed otherwise than pinned (pip install \".[test]\"): " + ", ".join(
        f"{name} {found or '(not installed)'} (pin {pins[name]})" for name, found in wrong.items())
