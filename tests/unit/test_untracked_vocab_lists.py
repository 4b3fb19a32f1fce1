"""A loaded vocabulary's big flat lists are out of the cyclic GC's sight (pieces.untrack_flat_list):
every collection would otherwise visit each of their 100k+ items while encode results pile up."""
from __future__ import annotations

import gc

import toksmith
from toksmith._core.pieces import untrack_flat_list


def test_only_lists_of_atoms_are_untracked():
    flat = [b"a", "b", 1, 2.5, None]
    assert untrack_flat_list(flat) is True
    assert not gc.is_tracked(flat)
    nested = [b"a", [b"b"]]          # could sit in a cycle: stays visible to the collector
    assert untrack_flat_list(nested) is False
    assert gc.is_tracked(nested)


def test_loaded_vocabularies_keep_their_big_lists_untracked():
    for name in ("o200k_base", "sentencepiece-demo"):
        tok = toksmith.load(name) if name != "sentencepiece-demo" else toksmith.load_embedded(name)
        assert not gc.is_tracked(tok.vocab.pieces), name
        assert not gc.is_tracked(tok.vocab.scores), name
    byte_level = toksmith.load("o200k_base").spec.byte_level.vocab
    assert not gc.is_tracked(byte_level.texts)


def test_an_untracked_list_is_still_freed_with_its_tokenizer():
    import weakref
    tok = toksmith.load("cl100k_base")
    vocab = weakref.ref(tok.spec.vocab)
    del tok
    gc.collect()
    assert vocab() is None
