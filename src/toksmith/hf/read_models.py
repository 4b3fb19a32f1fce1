"""Read the `model` section of a tokenizer.json: BPE, Unigram, WordPiece, WordLevel.

Fields, defaults and checks are tokenizers 0.23.3's (models/*/serialization.rs and the builders
they call), plus what toksmith refuses on purpose: duplicate ids, BPE dropout (random encode)
and unknown keys. The 280k merges of Llama 3 are checked in one comprehension, not a Python loop
per check.

>>> m = read_model({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}, "$.model", "t.json")
>>> m.merges, m.vocab["ab"]
((('a', 'b'),), 2)
"""
from __future__ import annotations

from itertools import repeat
from typing import Any

from toksmith._core.hf_json_sections import MergeTable, PieceTable, TokenTable

from . import components as c
from ._fields import U32_MAX, Fields, expect_type, fail, json_type_name, shown
from .json_numbers import serde_json_f64


def read_vocab_map(value: Any, path: str, source: str) -> dict[str, int]:
    """token -> id, ids unique u32 (tokenizers takes duplicates silently; one of them then decodes wrong).
    Any u32 id is taken, as tokenizers takes it: ids that are not 0..n-1 are renumbered for
    the core (toksmith.hf.sparse_ids), so memory goes by the token count."""
    if type(value) is TokenTable:
        # the scanner checked the ids (hf_json_sections._vocab_object)
        return value
    vocab = expect_type(value, dict, "an object of token: id", source, path)
    ids = vocab.values()
    if vocab and set(map(type, ids)) != {int}:
        token, bad = next((t, i) for t, i in vocab.items() if type(i) is not int)
        fail(source, f"{path}[{token!r}]", f"expected an integer id; found {json_type_name(bad)}")
    if vocab and (min(ids) < 0 or max(ids) > U32_MAX):
        token, bad = next((t, i) for t, i in vocab.items() if not 0 <= i <= U32_MAX)
        fail(source, f"{path}[{token!r}]", f"expected an id in 0..{U32_MAX}; found {bad}")
    if len(set(ids)) != len(vocab):
        first: dict[int, str] = {}
        for token, i in vocab.items():
            if i in first:
                fail(source, f"{path}[{token!r}]", f"duplicate id {i} (also {first[i]!r})")
            first[i] = token
    return vocab


def _merges(f: Fields, vocab: dict[str, int], prefix: str | None) -> tuple[tuple[str, str], ...]:
    """The merges, as pairs, each checked against the vocab as tokenizers' BpeBuilder::build does.

    Speed: Llama 3 has 280k merges; every pass here is a C-level map/zip/join, none a Python loop
    per merge (the slow diagnostic loop runs only to explain a failure).
    """
    value = f.raw("merges")
    plen = len(prefix.encode()) if prefix else 0
    if type(value) is MergeTable:
        # the scanner's table: the same checks, natively (MergeTable.resolve)
        if type(vocab) is TokenTable and value.resolve(vocab, plen):
            return value
        f.fail("merges", "a merge the plain reader explains")     # read_hf_json reads the file again
    value = f.list("merges")
    # Parity: tokenizers models/bpe/serialization.rs MergeType: all [a, b] pairs, else all "a b" strings.
    if value and type(value[0]) is str:
        lefts, rights = _split_legacy_merges(f, value)
    else:
        if value and (set(map(type, value)) != {list} or set(map(len, value)) != {2}):
            _explain_bad_merge(f, value, vocab, 0, offset=0)
        lefts, rights = zip(*value) if value else ((), ())
    try:
        sides = set(lefts)
        sides.update(rights)
        ok = vocab.keys() >= sides
        if ok and plen == 0:
            ok = all(map(vocab.__contains__, map(str.__add__, lefts, rights)))
        elif ok:
            ok = all(vocab.__contains__(merged_token(a, b, plen)) for a, b in zip(lefts, rights))
    except (TypeError, ValueError, UnicodeError):
        ok = False
    if not ok:
        pairs = [list(p) for p in zip(lefts, rights)]
        _explain_bad_merge(f, pairs, vocab, plen, offset=len(value) - len(pairs))
    return tuple(zip(lefts, rights))


def _split_legacy_merges(f: Fields, value: list) -> tuple[list[str], list[str]]:
    """["a b", ...] -> (lefts, rights), refusing any merge without exactly one space."""
    path = f.at("merges")
    if set(map(type, value)) != {str}:
        i = next(i for i, m in enumerate(value) if type(m) is not str)
        fail(f.source, f"{path}[{i}]", "expected a string \"left right\" like the merges before it; "
             f"found {json_type_name(value[i])}")
    # Parity: tokenizers convert_merges_to_hashmap: skip "#version" lines, split at the one space.
    lines = [m for m in value if not m.startswith("#version")] if value[0].startswith("#version") else value
    sep = "\x00"
    joined = sep.join(lines)
    parts = joined.replace(" ", sep).split(sep)
    lefts, rights = parts[0::2], parts[1::2]
    # Each line has exactly one space (and no NUL) iff cutting at spaces only leaves pieces that
    # each hold one line break, bar the first and the last.
    pieces = joined.split(" ")
    aligned = (len(pieces) == len(lines) + 1 and sep not in pieces[0] and sep not in pieces[-1]
               and set(map(str.count, pieces[1:-1], repeat(sep))) <= {1})
    if not aligned:
        for i, m in enumerate(value):
            if not m.startswith("#version") and (m.count(" ") != 1 or sep in m):
                fail(f.source, f"{path}[{i}]", f"expected \"left right\" with exactly one space; found {shown(m)}")
    return lefts, rights


def merged_token(a: str, b: str, plen: int) -> str:
    # Parity: tokenizers BpeBuilder::build: a + b minus the first len(prefix) BYTES of b, prefix or not.
    tail = b.encode()
    if len(tail) < plen:
        raise ValueError("right side shorter than the prefix")
    return a + tail[plen:].decode()


def _explain_bad_merge(f: Fields, pairs: list, vocab: dict[str, int], plen: int, offset: int) -> None:
    path = f.at("merges")
    for i, pair in enumerate(pairs):
        where = f"{path}[{i + offset}]"
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            found = f"{len(pair)} items" if isinstance(pair, list) else json_type_name(pair)
            fail(f.source, where, f"expected a pair [left, right] of strings; found {found}")
        a, b = pair
        for side in (a, b):
            if side not in vocab:
                fail(f.source, where, f"merge names token {side!r}, which is not in the vocab")
        try:
            joined = merged_token(a, b, plen) if plen else a + b
        except (ValueError, UnicodeError):
            joined = None
        if joined is None or joined not in vocab:
            fail(f.source, where, f"merge {a!r} + {b!r} makes {joined!r}, which is not in the vocab")


def _bpe(f: Fields) -> c.BpeModel:
    dropout = f.raw("dropout", None)
    if dropout is not None:
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)):
            f.fail("dropout", f"expected a number or null; found {json_type_name(dropout)}")
        # Parity: tokenizers BPE::tokenize: dropout 0.0 is no dropout (deterministic).
        if dropout != 0:
            f.fail("dropout", f"dropout {dropout} makes encode random; toksmith supports only null or 0")
    unk = f.str("unk_token", None, nullable=True)
    prefix = f.str("continuing_subword_prefix", None, nullable=True)
    suffix = f.str("end_of_word_suffix", None, nullable=True)
    fuse_unk = f.bool("fuse_unk", False, nullable=True)
    byte_fallback = f.bool("byte_fallback", False, nullable=True)
    ignore_merges = f.bool("ignore_merges", False, nullable=True)
    vocab = read_vocab_map(f.raw("vocab"), f.at("vocab"), f.source)
    merges = _merges(f, vocab, prefix)
    return c.BpeModel(vocab=vocab, merges=merges, unk_token=unk, continuing_subword_prefix=prefix,
                      end_of_word_suffix=suffix, fuse_unk=fuse_unk, byte_fallback=byte_fallback,
                      ignore_merges=ignore_merges)


def _unigram(f: Fields) -> c.UnigramModel:
    if type(f.raw("vocab")) is PieceTable:
        # the scanner checked the pairs and refused repeated pieces (hf_json_sections._piece_list)
        return _unigram_rest(f, f.raw("vocab"))
    value = f.list("vocab")
    path = f.at("vocab")
    vocab: list[tuple[str, float]] = []
    append = vocab.append
    # one plain loop over the 32k-250k pairs: checks and conversion together
    for i, e in enumerate(value):
        if type(e) is not list or len(e) != 2:
            fail(f.source, f"{path}[{i}]", f"expected a pair [piece, score]; found {shown(e)}")
        piece, score = e
        kind = type(score)
        if type(piece) is not str or (kind is not float and kind is not int):
            fail(f.source, f"{path}[{i}]", f"expected a pair [piece, score]; found {shown(e)}")
        if kind is int:
            score = _integer_score(score, f.source, f"{path}[{i}][1]")
        append((piece, score))
    if len({piece for piece, _ in vocab}) != len(vocab):
        seen: dict[str, int] = {}
        for i, (piece, _) in enumerate(vocab):
            if piece in seen:
                fail(f.source, f"{path}[{i}]", f"duplicate piece {piece!r} (also id {seen[piece]})")
            seen[piece] = i
    return _unigram_rest(f, tuple(vocab))


def _unigram_rest(f: Fields, vocab: tuple[tuple[str, float], ...] | PieceTable) -> c.UnigramModel:
    unk_id = f.u32("unk_id", None, nullable=True)
    # Parity: tokenizers Unigram::from: unk_id must index the vocab.
    if unk_id is not None and unk_id >= len(vocab):
        f.fail("unk_id", f"unk_id {unk_id} is not in the vocab of {len(vocab)} pieces")
    byte_fallback = f.bool("byte_fallback", False)
    return c.UnigramModel(vocab=vocab, unk_id=unk_id, byte_fallback=byte_fallback)


def _integer_score(score: int, source: str, path: str) -> float:
    """An integer score as serde_json reads it: a u64 / i64 converted, a longer one parsed as
    a float ("number out of range" past f64). Fractional scores come as floats already
    (reader.parse_json reads them the serde_json way)."""
    if -(1 << 63) <= score < (1 << 64):
        return float(score)
    try:
        return serde_json_f64(str(score))
    except ValueError:
        fail(source, path, f"number out of range: {score}")


def _wordpiece(f: Fields) -> c.WordPieceModel:
    # Parity: tokenizers models/wordpiece/serialization.rs: every field but `type` is required.
    return c.WordPieceModel(vocab=read_vocab_map(f.raw("vocab"), f.at("vocab"), f.source),
                            unk_token=f.str("unk_token"),
                            continuing_subword_prefix=f.str("continuing_subword_prefix"),
                            max_input_chars_per_word=f.u32("max_input_chars_per_word"))


def _wordlevel(f: Fields) -> c.WordLevelModel:
    return c.WordLevelModel(vocab=read_vocab_map(f.raw("vocab"), f.at("vocab"), f.source),
                            unk_token=f.str("unk_token"))


_MODELS = {"BPE": _bpe, "Unigram": _unigram, "WordPiece": _wordpiece, "WordLevel": _wordlevel}


def _legacy_type(obj: dict) -> str:
    # Parity: tokenizers models/mod.rs ModelUntagged: a model without "type" is tried as
    # BPE, WordPiece, WordLevel, Unigram in that order; their required keys pick one.
    if "merges" in obj:
        return "BPE"
    if "max_input_chars_per_word" in obj or "continuing_subword_prefix" in obj:
        return "WordPiece"
    if isinstance(obj.get("vocab"), (list, PieceTable)):
        return "Unigram"
    return "WordLevel"


def read_model(value: Any, path: str, source: str) -> c.Model:
    """The `model` section (required)."""
    if value is None:
        fail(source, path, f"expected a model ({', '.join(_MODELS)}); found null")
    f = Fields(value, path, source)
    kind = f.raw("type", None)
    if kind is None:
        kind = _legacy_type(f.obj)
    elif not isinstance(kind, str) or kind not in _MODELS:
        f.fail("type", f"expected one of {', '.join(_MODELS)}; found {shown(kind)}")
    model = _MODELS[kind](f)
    f.done()
    return model
