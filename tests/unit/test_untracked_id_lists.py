"""The id lists encode and encode_batch return are out of the cyclic GC's sight (engine._id_list):
they hold only ints, so the collector need not visit every id of every list a program keeps.
They are still ordinary lists, freed by reference counting like any other."""
from __future__ import annotations

import gc
import sys

import toksmith


def test_encode_results_are_untracked_lists_of_ints():
    tok = toksmith.load("o200k_base")
    ids = tok.encode("Hello, world")
    assert type(ids) is list and all(type(i) is int for i in ids)
    assert not gc.is_tracked(ids)
    batch = tok.encode_batch(["Hello", "world", ""] * 50, num_threads=2)
    assert gc.is_tracked(batch)                       # the outer list holds lists: tracked
    assert not any(gc.is_tracked(ids) for ids in batch)
    assert batch[0] == tok.encode("Hello")
    # a copy is an ordinary tracked list; the results stay usable as lists
    assert gc.is_tracked(list(ids))
    ids.append(7)
    assert ids[-1] == 7 and len(ids) == len(tok.encode("Hello, world")) + 1


def test_a_young_collection_visits_no_id_list():
    tok = toksmith.load("o200k_base")
    kept = [tok.encode("a line of text with several words in it") for _ in range(2000)]
    assert not any(gc.is_tracked(ids) for ids in kept)
    # none of the kept lists is among the objects the collector knows
    known = {id(o) for o in gc.get_objects(generation=0)}
    assert not any(id(ids) in known for ids in kept)


def test_untracked_id_lists_are_freed_by_reference_counting():
    tok = toksmith.load("cl100k_base")
    ids = tok.encode("freed when the last reference goes " * 100)
    probe = ids[0]
    before = sys.getrefcount(probe)
    del ids
    assert sys.getrefcount(probe) < before   # the list released its items
