"""Pausing Python's cyclic garbage collector around work that makes many containers and
no reference cycles (reading a tokenizer.json, a trainer's output): each collection
would walk all of them again.

>>> with paused_gc():
...     merges = [(a, a + 1) for a in range(100_000)]
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """The collector off inside the block, back on after it if it was on before."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
