"""Every allowed difference between toksmith and a reference, one module per family of tests.

Each is a `tests.parity.comparison.Excuse`: a name, the exact difference in words with the
reference behaviour it stands for, a predicate true for that difference only, and an example it
must allow and one it must refuse (checked by tests/unit/test_parity_excuses.py). A test that
uses one gives it an upper bound (`Comparison(..., excuses={EXCUSE: bound})`).
"""
from __future__ import annotations

import importlib
import pkgutil


def load_all() -> None:
    """Import every module of this package, so that ALL_EXCUSES lists every excuse."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
