"""The native reader of `model.vocab` / `model.merges` (_core/hf_json_sections.pyx) against the
plain reader (json.loads + hf/read_models.py), differentially.

read_hf_json takes the scanner's tables only when the scanner and every check after it accept
the file; otherwise the plain path reads it again. So the property that matters is: whenever
the fast path returns a spec, the plain path returns an equal one (same vocab, same scores to
the bit, same merges, same components); and whenever the plain path refuses a file, the fast
path declines it too (the error then comes from the plain path, naming the file and JSON path).
Inputs: files written by `tokenizers`, then truncated at every byte, given bad escapes, lone
surrogates, repeated keys, tokens and ids, huge ids, odd numbers, deep nesting, random edits.
"""
from __future__ import annotations

import gzip
import json
import random
import pytest
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from tests.conftest import fixture_file
from toksmith.errors import ModelFormatError
from toksmith.hf import reader
from toksmith.hf.read_models import MergeTable, PieceTable, TokenTable

VOCAB = {"[UNK]": 0, "a": 1, "b": 2, "ab": 3, "c": 4, "abc": 5, "é": 6, "éa": 7, "\u2581": 8, "\u2581a": 9}
MERGES = [("a", "b"), ("ab", "c"), ("é", "a"), ("\u2581", "a")]


def _bpe(legacy_merges: bool = False) -> str:
    tok = Tokenizer(models.BPE(dict(VOCAB), list(MERGES), unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(["<s>"])
    text = tok.to_str()
    if legacy_merges:
        data = json.loads(text)
        data["model"]["merges"] = [" ".join(m) for m in data["model"]["merges"]]
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text


def _wordpiece() -> str:
    tok = Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2, "é": 3}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer()
    return tok.to_str()


def _unigram() -> str:
    tok = Tokenizer(models.Unigram([("<unk>", 0.0), ("a", -1.5), ("b", -2.25), ("ab", -7.2239313677366805),
                                    ("\u2581", -3.0)], unk_id=0, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    return tok.to_str()


BASES = {"bpe": _bpe(), "bpe-legacy-merges": _bpe(legacy_merges=True), "wordpiece": _wordpiece(),
         "unigram": _unigram()}


def _plain(data: bytes):
    """The plain reader's outcome: ("ok", spec key) or ("error", type, message)."""
    try:
        return ("ok", _key(reader._read(reader.parse_tokenizer_json(data, "t.json"), "t.json")))
    except ModelFormatError as exc:
        return ("error", type(exc).__name__, str(exc))
    except Exception as exc:                # noqa: BLE001 -- the fast path must match whatever happens
        return ("error", type(exc).__name__, str(exc))


def _outcome(data: bytes):
    try:
        return ("ok", _key(reader.read_hf_json(data, "t.json")))
    except Exception as exc:                # noqa: BLE001
        return ("error", type(exc).__name__, str(exc))


def _plain_value(value):
    if isinstance(value, TokenTable):
        return value.as_dict()
    if isinstance(value, (PieceTable, MergeTable)):
        return value.as_tuple()
    return value


def _key(spec, merges: bool = True) -> tuple:
    """Everything a spec says, floats by their bits (-0.0 is not 0.0 here); the BPE merges
    left out unless `merges`."""
    model = spec.model
    fields = {}
    for name, value in vars(model).items():
        if name == "merges" and not merges:
            continue
        value = _plain_value(value)
        if name == "vocab" and isinstance(value, tuple):
            value = tuple((piece, score.hex()) for piece, score in value)
        if name == "vocab" and isinstance(value, dict):
            value = list(value.items())             # the file's order too
        fields[name] = value
    return (type(model).__name__, repr(sorted(fields.items())), repr(spec.normalizer), repr(spec.pre_tokenizer),
            repr(spec.post_processor), repr(spec.decoder), repr(spec.added_tokens), spec.has_truncation,
            spec.has_padding)


def check_same(data: bytes) -> None:
    """The fast path's outcome is the plain path's, and it only ever accepts what the plain path accepts."""
    plain = _plain(data)
    fast = reader._read_scanned(data, "t.json")
    if fast is not None:
        assert plain == ("ok", _key(fast[0])), data[:300]
    assert _outcome(data) == plain, data[:300]


@pytest.mark.parametrize("name", sorted(BASES))
def test_valid_files_take_the_fast_path(name):
    data = BASES[name].encode()
    assert reader._read_scanned(data, "t.json") is not None
    check_same(data)


@pytest.mark.parametrize("name", sorted(BASES))
def test_every_truncation(name):
    data = BASES[name].encode()
    for end in range(len(data)):
        check_same(data[:end])


def _replace(name: str, old: str, new: str) -> bytes:
    text = BASES[name]
    assert old in text, (name, old)
    return text.replace(old, new, 1).encode()


EDITS = [
    # bad escapes, surrogates
    ("bpe", '"ab":', '"a\\x":'), ("bpe", '"ab":', '"a\\u12":'), ("bpe", '"ab":', '"\\ud800":'),
    ("bpe", '"ab":', '"\\udc00":'), ("bpe", '"ab":', '"\\ud800\\u0041":'), ("bpe", '"ab":', '"\\ud83d\\ude00":'),
    ("bpe", '"ab":', '"a\\u0062":'), ("bpe", '"ab":', '"a\\/b":'), ("bpe", '"ab":', '"a\\tb":'),
    ("bpe", '"ab":', '"a\tb":'), ("bpe", '"ab":', '"a\\u0000":'), ("bpe", '["a","b"]', '["a","\\ud800"]'),
    ("bpe", '["a","b"]', '["a\\u0000","b"]'), ("bpe-legacy-merges", '"a b"', '"a\\u0020b"'),
    ("bpe-legacy-merges", '"a b"', '"a \\ud800"'), ("unigram", '["a",', '["\\udfff",'),
    # repeated keys, tokens and ids
    ("bpe", '"vocab":', '"vocab":{},"vocab":'), ("bpe", '"merges":', '"merges":[],"merges":'),
    ("bpe", '"model":', '"model":{},"model":'), ("bpe", '"ab":3', '"ab":3,"ab":4'), ("bpe", '"ab":3', '"ab":3,"zz":3'),
    ("bpe", '"ab":3', '"ab":3,"a":3'), ("bpe", '"a":1', '"\\u0061":1'), ("bpe", '"vocab":', '"\\u0076ocab":'),
    ("bpe", '"model":', '"\\u006dodel":'), ("bpe", '"type":"BPE"', '"type":"BPE","type":"BPE"'),
    ("unigram", '["a",-1.5]', '["a",-1.5],["a",-1.5]'), ("bpe", '"version":"1.0"', '"version":"1.0","version":"2.0"'),
    ("bpe", '"normalizer":null', '"normalizer":null,"normalizer":null'),
    # ids and numbers
    ("bpe", '"ab":3', '"ab":4294967295'), ("bpe", '"ab":3', '"ab":4294967296'), ("bpe", '"ab":3', '"ab":-3'),
    ("bpe", '"ab":3', '"ab":03'), ("bpe", '"ab":3', '"ab":3.0'), ("bpe", '"ab":3', '"ab":3e0'),
    ("bpe", '"ab":3', '"ab":"3"'), ("bpe", '"ab":3', '"ab":null'), ("bpe", '"ab":3', '"ab":true'),
    ("bpe", '"ab":3', '"ab":99999999999999999999999'), ("bpe", '"ab":3', '"ab":-0'),
    ("unigram", '-1.5', '1e400'), ("unigram", '-1.5', '-0'), ("unigram", '-1.5', '-0.0'), ("unigram", '-1.5', '1.5E+3'),
    ("unigram", '-1.5', '12345678901234567890'), ("unigram", '-1.5', '123456789012345678'),
    ("unigram", '-1.5', '-9223372036854775808'), ("unigram", '-1.5', '18446744073709551616'),
    ("unigram", '-1.5', '0.12345678901234567890123'), ("unigram", '-1.5', '1e-400'), ("unigram", '-1.5', '-1e-400'),
    ("unigram", '-1.5', '1e2147483648'), ("unigram", '-1.5', '0e2147483648'), ("unigram", '-1.5', '1.7976931348623157e308'),
    ("unigram", '-1.5', '1.8e308'), ("unigram", '-1.5', '123456789012345678901234567890e-10'),
    ("unigram", '-1.5', '4.9e-324'), ("unigram", '-1.5', '2.4703282292062328e-324'), ("unigram", '-1.5', 'NaN'),
    ("unigram", '-1.5', 'Infinity'), ("unigram", '-1.5', '-1.'), ("unigram", '-1.5', '.5'), ("unigram", '-1.5', '"x"'),
    ("unigram", '-1.5', 'null'), ("unigram", '-1.5', '-1.5,1'), ("unigram", '"unk_id":0', '"unk_id":5'),
    ("unigram", '"unk_id":0', '"unk_id":4'), ("unigram", '"unk_id":0', '"unk_id":null'),
    # merges
    ("bpe", '["a","b"]', '["a","zz"]'), ("bpe", '["a","b"]', '["b","a"]'), ("bpe", '["a","b"]', '["a","b","c"]'),
    ("bpe", '["a","b"]', '"a b"'), ("bpe", '["a","b"]', '["a"]'), ("bpe", '["a","b"]', '[]'), ("bpe", '["a","b"]', '"ab"'),
    ("bpe", '["a","b"]', '[1,2]'), ("bpe", '"merges":[', '"merges":[["a b", "c"],'),
    ("bpe-legacy-merges", '"a b"', '"a  b"'), ("bpe-legacy-merges", '"a b"', '"ab"'),
    ("bpe-legacy-merges", '"a b"', '"#version: 0.2","a b"'), ("bpe-legacy-merges", '"a b"', '"a b","#version: 0.2"'),
    ("bpe-legacy-merges", '"a b"', '"a b\\u0000"'), ("bpe-legacy-merges", '"a b"', '" a"'),
    ("bpe-legacy-merges", '"a b"', '"a b",["ab","c"]'), ("bpe-legacy-merges", '"merges":[', '"merges":"x","y":['),
    ("bpe", '"continuing_subword_prefix":null', '"continuing_subword_prefix":"a"'),
    ("bpe", '"continuing_subword_prefix":null', '"continuing_subword_prefix":"\u2581"'),
    ("bpe", '"continuing_subword_prefix":null', '"continuing_subword_prefix":"\\ud800"'),
    # structure
    ("bpe", '"vocab":{', '"vocab":[{'), ("bpe", '"type":"BPE"', '"type":"WordLevel"'), ("bpe", '"type":"BPE",', ''),
    ("wordpiece", '"type":"WordPiece",', ''), ("unigram", '"type":"Unigram",', ''), ("unigram", '"type":"Unigram"', '"type":"BPE"'),
    ("wordpiece", '"vocab":{', '"merges":[],"vocab":{'), ("bpe", '"normalizer":null', '"normalizer":' + "[" * 300 + "]" * 300),
    ("bpe", '"normalizer":null', '"normalizer":' + "[" * 100000 + "]" * 100000),
    ("bpe", '"normalizer":null', '"normalizer":{"type":"Sequence","normalizers":' + "[" * 150 + "]" * 150 + "}"),
    ("bpe", '{', '\ufeff{'), ("bpe", '{', ' \n\t\r{'), ("bpe", '"model":{', '"model":{ }, "x":{'),
    ("bpe", '"ab":3', '"ab":3,'), ("bpe", '"ab":3', '"ab" :3 '), ("bpe", '"ab":3', '"ab":3 , "q":11'),
]


@pytest.mark.parametrize("name,old,new", EDITS)
def test_edits_give_the_plain_outcome(name, old, new):
    check_same(_replace(name, old, new))


def test_bytes_that_are_not_utf8():
    for bad in (b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe9", b"\xe2\x82"):
        check_same(BASES["bpe"].encode().replace(b'"ab":', b'"a' + bad + b'":', 1))
        check_same(BASES["bpe"].encode().replace(b'"normalizer":null', b'"normalizer":"' + bad + b'"', 1))


def test_random_edits():
    rng = random.Random(9)
    alphabet = [b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b" ", b"0", b"9", b"-", b".", b"e", b"u", b"\xc3",
                b"\x00", b"n"]
    for name in sorted(BASES):
        data = BASES[name].encode()
        for _ in range(300):
            at = rng.randrange(len(data))
            cut = rng.choice((0, 1, 1, 2))
            check_same(data[:at] + rng.choice(alphabet) + data[at + cut:])


@pytest.mark.parametrize("rel", ["hf/all-MiniLM-L6-v2/tokenizer.json", "hf/rut5-large/tokenizer.json",
                                 "hf/llama3/tokenizer.json.gz"])
def test_real_files_read_the_same(rel, fixtures):
    path = fixture_file(fixtures, rel)
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    scanned = reader._read_scanned(data, "t.json")
    assert scanned is not None
    fast, rest = scanned
    assert _key(fast) == _key(reader._read(reader.parse_json(data, "t.json"), "t.json"))
    # the rest a trainer keeps: the document less the model's vocab and merges
    whole, kept = json.loads(data), json.loads(rest)
    assert kept["model"]["vocab"] is None and kept["model"].get("merges") is None
    for model in (whole["model"], kept["model"]):
        model.pop("vocab")
        model.pop("merges", None)
    assert kept == whole
    merges = getattr(fast.model, "merges", None)
    if isinstance(merges, MergeTable):
        assert merges.byte_level_blob() == b"\n".join(merges.byte_level_lines())


def check_like_read(data: bytes) -> None:
    """A trainer's read of a like= file (read_merges=False) says what the plain reader says,
    but for the merges: where the plain reader refuses the file, only the merges are to
    blame (their JSON is still checked: the fast path declines broken JSON)."""
    fast = reader._read_scanned(data, "t.json", read_merges=False)
    if fast is None:
        return
    assert len(fast[0].model.merges) == 0
    try:
        plain = reader._read(reader.parse_json(data, "t.json"), "t.json")
    except ModelFormatError as exc:
        assert "$.model.merges" in str(exc), (str(exc), data[:300])
        return
    assert _key(fast[0], merges=False) == _key(plain, merges=False), data[:300]


@pytest.mark.parametrize("name", ["bpe", "bpe-legacy-merges"])
def test_like_read_skips_only_the_merges(name):
    data = BASES[name].encode()
    assert reader._read_scanned(data, "t.json", read_merges=False) is not None
    for end in range(len(data)):
        check_like_read(data[:end])
    rng = random.Random(11)
    for _ in range(600):
        at = rng.randrange(len(data))
        check_like_read(data[:at] + rng.choice([b'"', b"x", b"]", b",", b" ", b"\\", b"\xc3"]) + data[at + 1:])
    # a merge naming no token: refused by loading, but training replaces the merges
    unknown = data.replace(b'"ab","c"' if b'"ab","c"' in data else b'"ab c"',
                           b'"ab","zz"' if b'"ab","c"' in data else b'"ab zz"', 1)
    assert unknown != data
    with pytest.raises(ModelFormatError, match=r"\$\.model\.merges"):
        reader.read_hf_json(unknown, "t.json")
    spec, rest = reader.read_hf_json_sections(unknown, "t.json", read_merges=False)
    assert _key(spec, merges=False) == _key(reader.read_hf_json(data, "t.json"), merges=False)
    assert json.loads(rest)["model"]["merges"] is None
