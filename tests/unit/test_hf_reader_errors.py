"""Bad tokenizer.json files: `ModelFormatError` naming the file and the JSON path, never a crash.

Each case starts from a valid file written by `tokenizers` and breaks one thing. Where
`tokenizers.Tokenizer.from_str` refuses the same text, the case says so and the test checks
it; the cases marked `stricter` are ones tokenizers loads (ignoring an unknown key, keeping one
of two duplicate ids, panicking only at encode time) that toksmith refuses on purpose.
"""
from __future__ import annotations

import json

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, processors

import toksmith
from toksmith.hf.reader import read_hf_json

VOCAB = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "a": 3, "b": 4, "ab": 5}


def base(model: str = "bpe") -> dict:
    if model == "bpe":
        tok = Tokenizer(models.BPE(dict(VOCAB), [("a", "b")], unk_token="[UNK]"))
    else:
        tok = Tokenizer(models.WordLevel(dict(VOCAB), unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    tok.add_special_tokens(["<s>"])
    return json.loads(tok.to_str())


def edit(path: list, value, model: str = "bpe") -> str:
    data = base(model)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(data)


def split_regex(pattern: str) -> str:
    return edit(["pre_tokenizer"], {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated",
                                    "invert": False})


# (text, JSON path the message must name, tokenizers refuses it too?)
CASES = {
    "malformed-json": ('{"model": ', "$", True),
    "not-utf8": (b'{"model": "\xff"}', "$", True),
    "nan": ('{"model": NaN}', "$", True),
    "top-level-array": ("[]", "$", True),
    "version": (edit(["version"], "2.0"), "$.version", True),
    "missing-model": (json.dumps({k: v for k, v in base().items() if k != "model"}), "$", True),
    # tokenizers refuses it by accident: its TokenizerVisitor skips the key but not its value.
    "unknown-top-level-key": (edit(["extra"], 1), "$.extra", True),
    "model-unknown-type": (edit(["model", "type"], "Foo"), "$.model.type", True),
    "model-wrong-type-vocab": (edit(["model", "vocab"], []), "$.model.vocab", True),
    "model-id-not-int": (edit(["model", "vocab", "a"], "3"), "$.model.vocab['a']", True),
    "model-id-negative": (edit(["model", "vocab", "a"], -1), "$.model.vocab['a']", True),
    "model-id-too-big": (edit(["model", "vocab", "a"], 2**32), "$.model.vocab['a']", True),
    "model-duplicate-id": (edit(["model", "vocab", "b"], 3), "$.model.vocab['b']", False),
    "merge-unknown-left": (edit(["model", "merges"], [["x", "b"]]), "$.model.merges[0]", True),
    "merge-unknown-result": (edit(["model", "merges"], [["b", "a"]]), "$.model.merges[0]", True),
    "merge-string-two-spaces": (edit(["model", "merges"], ["a  b"]), "$.model.merges[0]", True),
    "merge-string-no-space": (edit(["model", "merges"], ["ab"]), "$.model.merges[0]", True),
    "merges-mixed": (edit(["model", "merges"], [["a", "b"], "a b"]), "$.model.merges[1]", True),
    "merge-three-items": (edit(["model", "merges"], [["a", "b", "c"]]), "$.model.merges[0]", True),
    "bpe-dropout": (edit(["model", "dropout"], 0.1), "$.model.dropout", False),
    "bpe-dropout-out-of-range": (edit(["model", "dropout"], 1.5), "$.model.dropout", True),
    "bpe-unknown-option": (edit(["model", "dropuot"], None), "$.model.dropuot", False),
    "bpe-fuse_unk-not-bool": (edit(["model", "fuse_unk"], "yes"), "$.model.fuse_unk", True),
    "unigram-unk_id-out-of-range": (edit(["model"], {"type": "Unigram", "vocab": [["a", 0.0]], "unk_id": 1}),
                                    "$.model.unk_id", True),
    "unigram-bad-entry": (edit(["model"], {"type": "Unigram", "vocab": [["a", "x"]], "unk_id": None}),
                          "$.model.vocab[0]", True),
    "wordpiece-missing-field": (edit(["model"], {"type": "WordPiece", "vocab": {"a": 0}, "unk_token": "a",
                                                 "continuing_subword_prefix": "##"}), "$.model", True),
    "wordlevel-missing-unk": (edit(["model"], {"type": "WordLevel", "vocab": {"a": 0}}), "$.model", True),
    "added-token-missing-field": (edit(["added_tokens", 0], {"id": 6, "content": "<s>"}), "$.added_tokens[0]", True),
    "added-token-duplicate-id": (edit(["added_tokens", 0, "id"], 3), "$.added_tokens[0].id", False),
    "added-token-out-of-range-id": (edit(["added_tokens", 0, "id"], 60), "$.added_tokens[0].id", False),
    "added-token-negative-id": (edit(["added_tokens", 0, "id"], -6), "$.added_tokens[0].id", True),
    "normalizer-unknown-type": (edit(["normalizer"], {"type": "Upper"}), "$.normalizer.type", True),
    "normalizer-no-type": (edit(["normalizer"], {"lowercase": True}), "$.normalizer", True),
    "normalizer-unknown-option": (edit(["normalizer"], {"type": "Lowercase", "foo": 1}), "$.normalizer.foo", False),
    "strip-wrong-keys": (edit(["normalizer"], {"type": "Strip", "left": True, "right": True}), "$.normalizer", True),
    "precompiled-empty": (edit(["normalizer"], {"type": "Precompiled", "precompiled_charsmap": ""}),
                          "$.normalizer.precompiled_charsmap", True),
    "precompiled-not-base64": (edit(["normalizer"], {"type": "Precompiled", "precompiled_charsmap": "!!"}),
                               "$.normalizer.precompiled_charsmap", True),
    "behavior": (edit(["pre_tokenizer", "pretokenizers", 1, "behavior"], "Foo"),
                 "$.pre_tokenizer.pretokenizers[1].behavior", True),
    "behavior-lowercase": (edit(["pre_tokenizer", "pretokenizers", 1, "behavior"], "isolated"),
                           "$.pre_tokenizer.pretokenizers[1].behavior", True),
    "pre-tokenizer-null-in-sequence": (edit(["pre_tokenizer", "pretokenizers", 0], None),
                                       "$.pre_tokenizer.pretokenizers[0]", True),
    "bytelevel-missing-option": (edit(["pre_tokenizer"], {"type": "ByteLevel"}), "$.pre_tokenizer", True),
    "metaspace-long-replacement": (edit(["pre_tokenizer"], {"type": "Metaspace", "replacement": "ab"}),
                                   "$.pre_tokenizer.replacement", True),
    "metaspace-add_prefix_space-false": (edit(["pre_tokenizer"], {"type": "Metaspace", "replacement": "_",
                                                                  "add_prefix_space": False}),
                                         "$.pre_tokenizer.add_prefix_space", True),
    "metaspace-prepend_scheme": (edit(["pre_tokenizer"], {"type": "Metaspace", "replacement": "_",
                                                          "prepend_scheme": "First"}),
                                 "$.pre_tokenizer.prepend_scheme", True),
    "split-missing-invert": (edit(["pre_tokenizer"], {"type": "Split", "pattern": {"String": "-"},
                                                      "behavior": "Isolated"}), "$.pre_tokenizer", True),
    "split-pattern-plain-string": (edit(["pre_tokenizer"], {"type": "Split", "pattern": "-", "behavior": "Isolated",
                                                            "invert": False}), "$.pre_tokenizer.pattern", True),
    "fixed-length-zero": (edit(["pre_tokenizer"], {"type": "FixedLength", "length": 0}),
                          "$.pre_tokenizer.length", False),
    "delimiter-two-chars": (edit(["pre_tokenizer"], {"type": "CharDelimiterSplit", "delimiter": "ab"}),
                            "$.pre_tokenizer.delimiter", True),
    "template-undefined-special": (edit(["post_processor", "single", 0, "SpecialToken", "id"], "[BOS]"),
                                   "$.post_processor.single[0].SpecialToken.id", False),
    "template-missing-pair": (edit(["post_processor", "pair"], None), "$.post_processor.pair", True),
    "template-piece-string": (edit(["post_processor", "single", 0], "$A"), "$.post_processor.single[0]", True),
    "template-sequence-C": (edit(["post_processor", "single", 1, "Sequence", "id"], "C"),
                            "$.post_processor.single[1].Sequence.id", True),
    "template-id-not-in-vocab": (edit(["post_processor", "special_tokens", "[CLS]", "ids"], [99]),
                                 "$.post_processor.special_tokens['[CLS]'].ids[0]", False),
    "bert-processing-bad-pair": (edit(["post_processor"], {"type": "BertProcessing", "sep": ["[SEP]"],
                                                           "cls": ["[CLS]", 1]}), "$.post_processor.sep", True),
    "decoder-unknown-type": (edit(["decoder"], {"type": "Foo"}), "$.decoder.type", True),
    "decoder-missing-option": (edit(["decoder"], {"type": "WordPiece"}), "$.decoder", True),
    "strip-decoder-negative": (edit(["decoder"], {"type": "Strip", "content": " ", "start": -1, "stop": 0}),
                               "$.decoder.start", True),
    "truncation-not-object": (edit(["truncation"], 5), "$.truncation", True),
    # json.dumps writes a lone surrogate as a \\u escape; serde_json refuses the escape
    "lone-surrogate-prefix": (edit(["model", "continuing_subword_prefix"], "\ud800"),
                              "$.model.continuing_subword_prefix", True),
    "lone-surrogate-suffix": (edit(["model", "end_of_word_suffix"], "a\udc00"), "$.model.end_of_word_suffix", True),
    "lone-surrogate-added-token": (edit(["added_tokens", 0, "content"], "<\udbff>"), "$.added_tokens[0].content",
                                   True),
    "lone-surrogate-key": (edit(["model", "vocab", "\ud83d"], 6, model="wordlevel"), "$.model.vocab (a key)", True),
}

BAD_REGEXES = [r"(a", r"a)", r"[a", r"*a", r"\p{Foo}", r"(?P<n>a)", r"\1", r"(a)\2", r"[z-a]", r"\u12",
               r"[[:foo:]]", r"\p{IsHan}", r"\p{Script=Han}", r"(?u)a", r"(?s)a", r"(?=a)*", r"[\w-a]", r"[a-\w]"]
for _i, _pattern in enumerate(BAD_REGEXES):
    CASES[f"regex-{_i}-{_pattern}"] = (split_regex(_pattern), "$.pre_tokenizer.pattern.Regex", True)

# Patterns Oniguruma compiles although Python's `regex` refuses or reads them otherwise.
GOOD_REGEXES = [r"a{2,1}", r"a**", r"\H", r"(?<name>a)\k<name>", r"\x{10FFFF}", r"\y", r"\O", r"\Q", r"\ca",
                r"\e", r"\o{17}", r"a{1,2}{3}", r"\h+", r"(?i:'s|'t)", r"[^\r\n\p{L}\p{N}]?\p{L}+", r"\p{^L}",
                r"(?<=ab|c)d", r"\s+(?!\S)", r"[\w-]", r"[\w.-]+", r"\p{InBasicLatin}"]


@pytest.mark.parametrize("case", CASES)
def test_bad_file_is_model_format_error(case):
    text, json_path, tokenizers_refuses = CASES[case]
    with pytest.raises(toksmith.ModelFormatError) as info:
        read_hf_json(text, "tok.json")
    message = str(info.value)
    assert message.startswith(f"tok.json: {json_path}"), message
    assert isinstance(info.value, ValueError)
    if tokenizers_refuses:
        with pytest.raises(BaseException):          # PanicException is a BaseException
            Tokenizer.from_str(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)
    elif case != "fixed-length-zero":
        Tokenizer.from_str(text)                    # stricter than tokenizers, on purpose


def test_escaped_surrogate_pair_is_one_character():
    # the escape of a whole pair is a character (U+1F600), as serde_json reads it
    text = edit(["added_tokens", 0, "content"], "\U0001F600")
    assert "\\ud83d\\ude00" in text
    assert read_hf_json(text, "tok.json").added_tokens[0].content == "\U0001F600"
    assert Tokenizer.from_str(text).encode("x\U0001F600", add_special_tokens=False).tokens[-1] == "\U0001F600"


def test_behavior_message_lists_the_known_values():
    text = CASES["behavior"][0]
    with pytest.raises(toksmith.ModelFormatError, match=r"expected one of Removed, Isolated, MergedWithPrevious, "
                                                        r"MergedWithNext, Contiguous; found 'Foo'"):
        read_hf_json(text, "tok.json")


@pytest.mark.parametrize("pattern", GOOD_REGEXES)
def test_regex_that_oniguruma_compiles_is_accepted(pattern):
    text = split_regex(pattern)
    Tokenizer.from_str(text)
    assert read_hf_json(text, "tok.json").pre_tokenizer.pattern.regex == pattern


@pytest.mark.parametrize("cut", [1, 10, 100, 500, -2])
def test_truncated_file(cut):
    text = json.dumps(base())[:cut]
    with pytest.raises(toksmith.ModelFormatError, match=r"^tok\.json: \$: malformed JSON"):
        read_hf_json(text, "tok.json")


def test_deeply_nested_json():
    with pytest.raises(toksmith.ModelFormatError, match=r"^tok\.json: \$"):
        read_hf_json("[" * 100000 + "]" * 100000, "tok.json")


@pytest.mark.parametrize("seed", range(30))
def test_random_value_swaps_never_crash(seed):
    """Replace one value anywhere in the file by a value of another JSON type: an error, not a crash."""
    import random
    rng = random.Random(seed)
    data = base()
    paths = []

    def walk(node, path):
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            paths.append(path + [key])
            walk(child, path + [key])
    walk(data, [])
    path = rng.choice(paths)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = rng.choice([None, 7, -1, "x", [], {}, 1.5, True])
    try:
        read_hf_json(json.dumps(data), "tok.json")
    except toksmith.ModelFormatError as exc:
        assert str(exc).startswith("tok.json: $")



@pytest.mark.parametrize("single", [["B"], ["[CLS]", "A", "B"], ["[CLS]", "[SEP]"]])
def test_single_template_without_exactly_sequence_a_is_refused_at_load(single, tmp_path):
    # $B in a single template: tokenizers panics at encode time, indexing a second text a
    # single one does not have; no sequence at all would drop the text. Both are refused
    # when the file is loaded ("$A ... $A", the text repeated, is supported).
    data = base()
    data["post_processor"]["single"] = [
        {"Sequence": {"id": piece, "type_id": 0}} if piece in ("A", "B") else {"SpecialToken": {"id": piece, "type_id": 0}}
        for piece in single]
    path = tmp_path / "tok.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    Tokenizer.from_file(str(path))      # tokenizers loads it
    with pytest.raises(toksmith.errors.UnsupportedModelError, match=r"\$\.post_processor"):
        toksmith.load(path)
