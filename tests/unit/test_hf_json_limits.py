"""What tokenizers 0.23.3 refuses in the shape of a tokenizer.json, refused alike (issue 30 item 8).

- Nesting: serde_json stops at its recursion limit (128 nested arrays/objects), wherever the
  nesting is; toksmith refuses the same files, with a ModelFormatError (not RecursionError).
- A UTF-8 byte-order mark before the JSON: serde_json refuses it ("expected value at line 1
  column 1"); Python's json.loads of bytes would skip it.
- The `truncation` and `padding` sections: the fields, types and ranges of tokenizers'
  TruncationParams and PaddingParams (a negative max_length, a missing field, an unknown
  strategy...). toksmith does not apply them at encode time, but loads no file tokenizers
  refuses.

Every verdict is compared with tokenizers' own on the same text.
"""
from __future__ import annotations

import copy
import json

import pytest
from tokenizers import Tokenizer

import toksmith
from tests.conftest import report
from toksmith.hf.reader import read_hf_json

BASE = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1, "[PAD]": 2}, "unk_token": "a"}}

# section -> (the key of its Sequence's list, an innermost component without nested
# containers, one with exactly one more level)
SEQUENCES = {
    "normalizer": ("normalizers", {"type": "Lowercase"},
                   {"type": "Replace", "pattern": {"String": "x"}, "content": "y"}),
    "pre_tokenizer": ("pretokenizers", {"type": "Whitespace"},
                      {"type": "Split", "pattern": {"String": " "}, "behavior": "Isolated", "invert": False}),
    "decoder": ("decoders", {"type": "Fuse"},
                {"type": "Replace", "pattern": {"String": "x"}, "content": "y"}),
    "post_processor": ("processors", {"type": "ByteLevel", "trim_offsets": True, "add_prefix_space": True,
                                      "use_regex": True},
                       {"type": "RobertaProcessing", "sep": ["b", 1], "cls": ["a", 0], "trim_offsets": True,
                        "add_prefix_space": True}),
}


def tokenizers_verdict(text: str | bytes) -> str | None:
    """None where tokenizers loads the text, else its message."""
    try:
        Tokenizer.from_str(text.decode("utf-8") if isinstance(text, bytes) else text)
    except Exception as exc:                 # noqa: BLE001 -- any refusal
        return str(exc)
    return None


def toksmith_verdict(text: str | bytes) -> str | None:
    try:
        read_hf_json(text, "tok.json")
    except toksmith.ModelFormatError as exc:
        assert str(exc).startswith("tok.json: $"), exc
        return str(exc)
    return None


def nested(section: str, levels: int, inner: dict) -> str:
    key, _, _ = SEQUENCES[section]
    component = inner
    for _ in range(levels):
        component = {"type": "Sequence", key: [component]}
    doc = copy.deepcopy(BASE)
    doc[section] = component
    return json.dumps(doc)


@pytest.mark.parametrize("section", SEQUENCES)
def test_sequence_nesting_limit_is_tokenizers(section):
    # levels 60..64 with either innermost component cross serde_json's limit both at an even
    # and at an odd depth (each Sequence level is an object and an array).
    compared = 0
    for levels in range(60, 65):
        for inner in SEQUENCES[section][1:]:
            text = nested(section, levels, inner)
            want = tokenizers_verdict(text)
            for form in (text, text.encode()):           # the plain reader and the native scanner
                got = toksmith_verdict(form)
                assert (got is None) == (want is None), (section, levels, inner["type"], got, want)
                if want is not None:
                    assert "recursion limit exceeded" in want
                    assert "nested" in got and "128" in got, got
                compared += 1
    report(f"nesting {section}: {compared} verdicts compared with tokenizers, 0 differ")


@pytest.mark.parametrize("total", [127, 128, 129, 200, 5000])
def test_nesting_anywhere_is_refused_past_the_limit(total):
    # a deep array as an added token's content: refused for its type below the limit, for
    # its depth at and past it -- by both
    doc = copy.deepcopy(BASE)
    doc["added_tokens"] = [{"id": 3, "content": "DEEP", "single_word": False, "lstrip": False,
                            "rstrip": False, "normalized": False, "special": True}]
    arrays = total - 3                  # inside the document, the added_tokens array and its object
    text = json.dumps(doc).replace('"DEEP"', "[" * arrays + "0" + "]" * arrays)
    want = tokenizers_verdict(text)
    got = toksmith_verdict(text.encode())
    assert want is not None and got is not None
    assert ("recursion limit" in want) == (total >= 128), want
    assert ("nested" in got) == (total >= 128), got


def test_deep_sequence_is_a_model_format_error_not_recursion_error():
    for form in (nested("pre_tokenizer", 200, {"type": "Whitespace"}),
                 nested("pre_tokenizer", 200, {"type": "Whitespace"}).encode(), "[" * 10**6 + "]" * 10**6):
        with pytest.raises(toksmith.ModelFormatError, match=r"^tok\.json: \$.*nested 128"):
            read_hf_json(form, "tok.json")


def test_byte_order_mark_is_refused(tmp_path):
    text = json.dumps(BASE)
    assert tokenizers_verdict(text) is None
    path = tmp_path / "tok.json"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    with pytest.raises(Exception, match="expected value at line 1 column 1"):
        Tokenizer.from_file(str(path))
    with pytest.raises(toksmith.ModelFormatError, match="byte-order mark"):
        toksmith.load(path)
    with pytest.raises(toksmith.ModelFormatError, match="byte-order mark"):
        read_hf_json("\ufeff" + text, "tok.json")


TRUNCATION = {"direction": "Right", "max_length": 5, "strategy": "LongestFirst", "stride": 0}
PADDING = {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None, "pad_id": 2,
           "pad_type_id": 0, "pad_token": "[PAD]"}
DROP = object()
SECTION_EDITS = [
    ("truncation", {}), ("truncation", {"direction": DROP}), ("truncation", {"max_length": DROP}),
    ("truncation", {"strategy": DROP}), ("truncation", {"stride": DROP}),
    ("truncation", {"max_length": -1}), ("truncation", {"max_length": 0}), ("truncation", {"max_length": 1.0}),
    ("truncation", {"max_length": None}), ("truncation", {"max_length": "5"}), ("truncation", {"max_length": True}),
    ("truncation", {"max_length": 2**64 - 1}), ("truncation", {"max_length": 2**64}),
    ("truncation", {"stride": -1}), ("truncation", {"stride": 9}),
    ("truncation", {"strategy": "OnlyFirst"}), ("truncation", {"strategy": "OnlySecond"}),
    ("truncation", {"strategy": "longest_first"}), ("truncation", {"strategy": None}),
    ("truncation", {"direction": "Left"}), ("truncation", {"direction": "left"}),
    ("padding", {}), ("padding", {"pad_to_multiple_of": DROP}), ("padding", {"strategy": DROP}),
    ("padding", {"direction": DROP}), ("padding", {"pad_id": DROP}), ("padding", {"pad_type_id": DROP}),
    ("padding", {"pad_token": DROP}),
    ("padding", {"strategy": {"Fixed": 8}}), ("padding", {"strategy": {"Fixed": -1}}),
    ("padding", {"strategy": {"Fixed": 1.5}}), ("padding", {"strategy": "Fixed"}),
    ("padding", {"strategy": {"BatchLongest": None}}), ("padding", {"strategy": {"Fixed": 8, "BatchLongest": None}}),
    ("padding", {"strategy": {"Other": 1}}), ("padding", {"strategy": "X"}), ("padding", {"strategy": 3}),
    ("padding", {"direction": "Left"}), ("padding", {"direction": "X"}),
    ("padding", {"pad_to_multiple_of": 0}), ("padding", {"pad_to_multiple_of": 8}),
    ("padding", {"pad_to_multiple_of": -1}), ("padding", {"pad_id": -1}), ("padding", {"pad_id": 2**32 - 1}),
    ("padding", {"pad_id": 2**32}), ("padding", {"pad_type_id": -1}), ("padding", {"pad_type_id": 2**32}),
    ("padding", {"pad_token": None}), ("padding", {"pad_token": 1}), ("padding", {"pad_token": "zz"}),
]


def test_truncation_and_padding_checked_as_tokenizers_checks_them():
    compared = 0
    for section, edits in SECTION_EDITS:
        value = dict(TRUNCATION if section == "truncation" else PADDING)
        for key, new in edits.items():
            if new is DROP:
                value.pop(key)
            else:
                value[key] = new
        doc = copy.deepcopy(BASE)
        doc[section] = value
        text = json.dumps(doc)
        want = tokenizers_verdict(text)
        got = toksmith_verdict(text.encode())
        assert (got is None) == (want is None), (section, edits, got, want)
        if got is not None:
            assert got.startswith(f"tok.json: $.{section}"), got
        compared += 1
    report(f"truncation/padding: {compared} verdicts compared with tokenizers, 0 differ")


@pytest.mark.parametrize("section,value", [
    ("truncation", ["Left", 5, "OnlyFirst", 2]), ("truncation", ["Right", 5, "LongestFirst"]),
    ("truncation", ["Right", 5, "LongestFirst", 0, 1]), ("truncation", ["Left", -1, "LongestFirst", 0]),
    ("truncation", []), ("padding", [{"Fixed": 3}, "Left", 8, 1, 2, "[PAD]"]),
    ("padding", ["BatchLongest", "Right", None, 0, 0]), ("padding", ["BatchLongest", "Right", None, 0, 0, "p", 1]),
    ("padding", ["BatchLongest", "Right", None, -1, 0, "[PAD]"]),
])
def test_truncation_and_padding_as_arrays(section, value):
    # serde reads a struct from an array of all its fields in declaration order
    doc = copy.deepcopy(BASE)
    doc[section] = value
    text = json.dumps(doc)
    want = tokenizers_verdict(text)
    got = toksmith_verdict(text.encode())
    assert (got is None) == (want is None), (got, want)


def test_unknown_truncation_key_is_refused_on_purpose():
    # stricter than tokenizers (which ignores it), as for every other section: a misspelt
    # option is never silently dropped
    doc = copy.deepcopy(BASE)
    doc["truncation"] = dict(TRUNCATION, max_lenght=5)
    assert tokenizers_verdict(json.dumps(doc)) is None
    with pytest.raises(toksmith.ModelFormatError, match=r"\$\.truncation\.max_lenght: unknown option"):
        read_hf_json(json.dumps(doc), "tok.json")
