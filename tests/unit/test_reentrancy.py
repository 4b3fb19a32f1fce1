"""Calls re-entered on the same thread get their own scratch memory.

A warnings hook, a finalizer or a gc callback may encode while an outer call on
the same thread is still building its result. Each nested call must leave the
outer result as it would have been with no nesting (issue 7: with phi-3's GGUF,
a warnings hook that encoded made the outer encode return the hook's ids).
"""
from __future__ import annotations

import gc
import warnings

import pytest

import toksmith
from tests.conftest import fixture_file

DOUBLE_BOS = "<s>hello world"       # parse_special + add_special: two BOS, and a warning
NESTED_TEXT = "an entirely different text that the nested call encodes, 日本語も"


@pytest.fixture
def phi3_path(fixtures):
    return fixture_file(fixtures, "gguf/ggml-vocab-phi-3.gguf")


def _plain(path, call):
    """`call(tok)` on a fresh tokenizer with warnings silenced: the un-nested result."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(toksmith.load(path))


NESTED_CALLS = {
    "encode": lambda tok: tok.encode(NESTED_TEXT),
    "encode-long": lambda tok: tok.encode(NESTED_TEXT * 20),     # encodes with the GIL released
    "encode_batch": lambda tok: tok.encode_batch([NESTED_TEXT] * 40, num_threads=2),
    "tokenize": lambda tok: tok.tokenize(NESTED_TEXT),
}


@pytest.mark.parametrize("nested", list(NESTED_CALLS))
@pytest.mark.parametrize("outer_text", [DOUBLE_BOS, DOUBLE_BOS + " and more words" * 30])
def test_warnings_hook_that_encodes(phi3_path, nested, outer_text):
    expected = _plain(phi3_path, lambda t: t.encode(outer_text, parse_special=True))
    tok = toksmith.load(phi3_path)   # fresh: the double-BOS warning comes once per tokenizer
    seen = []

    def hook(message, *args, **kwargs):
        seen.append(NESTED_CALLS[nested](tok))

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = hook
        got = tok.encode(outer_text, parse_special=True)
    assert len(seen) == 1, "the double-BOS warning did not reach the hook"
    assert got == expected
    assert seen[0] == _plain(phi3_path, NESTED_CALLS[nested])


class _EncodesWhenCollected:
    """Garbage in a reference cycle whose finalizer encodes with `tok`."""

    def __init__(self, tok, results):
        self.tok, self.results, self.cycle = tok, results, self

    def __del__(self):
        self.results.append(self.tok.tokenize(NESTED_TEXT))


def _with_collection_inside(call, on_collect):
    """Run `call()` with the collector set to run at the first container it allocates.

    The outer calls build their result lists after the core has written its
    scratch memory, so a collection there runs `on_collect` (a gc callback) and
    finalizers in the middle of the outer call.
    """
    threshold = gc.get_threshold()
    gc.collect()
    gc.callbacks.append(on_collect)
    try:
        gc.set_threshold(1)
        return call()
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(on_collect)


@pytest.mark.parametrize("outer", ["encode", "tokenize", "encode_batch"])
def test_finalizer_and_gc_callback_that_encode(phi3_path, outer):
    text = "Hello world, the outer call's text. " * 12
    call = {"encode": lambda t: t.encode(text), "tokenize": lambda t: t.tokenize(text),
            "encode_batch": lambda t: t.encode_batch([text] * 3)}[outer]
    expected = _plain(phi3_path, call)
    tok = toksmith.load(phi3_path)
    finalized, nested = [], []

    def on_collect(phase, info):
        if phase == "start":
            nested.append(tok.encode(NESTED_TEXT))
            _EncodesWhenCollected(tok, finalized)   # garbage for the next collection

    for _ in range(5):
        _EncodesWhenCollected(tok, finalized)
        got = _with_collection_inside(lambda: call(tok), on_collect)
        assert got == expected
    gc.collect()
    assert nested and finalized, "no collection ran during the calls"
    assert all(ids == tok.encode(NESTED_TEXT) for ids in nested)
    assert all(pieces == tok.tokenize(NESTED_TEXT) for pieces in finalized)
