"""A loaded vocabulary's big flat lists are out of the cyclic GC's sight (pieces.untrack_flat_list):
every collection would otherwise visit each of their 100k+ items while encode results pile up."""
from __future__ import annotations

import gc
import gzip
import types

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


def _big_tracked_containers(root, min_items=10_000):
    """The GC-tracked objects reachable from `root`'s data (through gc.get_referents, not
    through types, modules or functions, whose globals reach the whole process) that hold
    at least `min_items` items."""
    seen, stack, big = set(), [root], []
    while stack:
        obj = stack.pop()
        if id(obj) in seen or not gc.is_tracked(obj) or isinstance(obj, types.ModuleType) or callable(obj):
            continue
        seen.add(id(obj))
        if isinstance(obj, (list, tuple, dict, set)) and len(obj) >= min_items:
            big.append((type(obj).__name__, len(obj)))
        stack.extend(gc.get_referents(obj))
    return big


def test_tokenizer_json_loads_keep_no_big_tracked_container(fixtures, tmp_path):
    # The token texts of a tokenizer.json (TokenTable.texts) and its HF decoder's pieces
    # were tracked lists: the collections of the first encode calls walked 128k entries.
    llama3 = tmp_path / "tokenizer.json"
    llama3.write_bytes(gzip.decompress((fixtures / "hf/llama3/tokenizer.json.gz").read_bytes()))
    for path in (fixtures / "hf/all-MiniLM-L6-v2/tokenizer.json", fixtures / "hf/rut5-large/tokenizer.json",
                 llama3):
        tok = toksmith.load(path)
        tok.encode("warm up every lazily built table")
        assert _big_tracked_containers(tok) == [], path


_ELSEWHERE = [[] for _ in range(20_000)]     # the test's module globals: not the tokenizer's


def test_the_walk_stays_inside_the_tokenizer():
    tok = toksmith.load("o200k_base")
    assert _big_tracked_containers(tok) == []
    assert _big_tracked_containers([tok, _ELSEWHERE]) == [("list", 20_000)]
    tok.spec.load_options.__dict__["probe"] = [[] for _ in range(15_000)]   # deep inside: found
    assert _big_tracked_containers(tok) == [("list", 15_000)]
