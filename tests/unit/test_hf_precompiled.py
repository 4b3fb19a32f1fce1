"""The Precompiled normalizer stage alone (HfPrecompiledNormalizer) vs HF tokenizers'
`normalizers.Precompiled(...).normalize_str`, on the charsmaps of the fixture files (rut5's
nmt_nfkc, sentencepiece_test_model's nfkc) and on a sparse charsmap built here with
sentencepiece (keys of one and two characters, so that grapheme clusters show): every
corpus line, every code point alone and after/before characters of every grapheme
category, edge cases, long runs and invalid UTF-8 given as bytes.

tests/parity/test_hf_precompiled.py goes further: every code point in ~40 contexts, with a
charsmap where every character is a key.
"""
from __future__ import annotations

import base64
import json

import pytest
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb
from tokenizers import normalizers

from tests.conftest import LONG_RUNS, fixture_file
from toksmith._core.errors import CharsMapError
from toksmith._core.hf_precompiled import HfPrecompiledNormalizer

# Characters of every grapheme category (and the InCB ones) to put around each code point.
NEIGHBOURS = ["", "a", "\u0301", "\u0301\u0301", "\u200d", "\u200d\u00a9", "\u094d\u0915", "\U0001F1EB",
              "\u1161", "\u11a8", "\u0600", "e\u0301", "\U0001F3FB", "\u0915", "\u0436", "\r", "\n"]


def build_charsmap(mapping: dict[str, str]) -> bytes:
    """A precompiled charsmap made by sentencepiece's own builder."""
    normalizer = spm.SentencePieceNormalizer(norm_map=list(mapping.items()))
    spec = pb.NormalizerSpec()
    spec.ParseFromString(normalizer.serialized_normalizer_spec())
    return spec.precompiled_charsmap


def sparse_charsmap() -> bytes:
    keys = {chr(cp): f"<{cp:x}>" for cp in [*range(0x300, 0x370), 0x200D, 0x94D, 0x915, 0x1F1EB, 0xA9, 0x1100,
                                              0x1161, 0xAC00, 0x61, 0x41, 0x600, 0xD, 0x436, 0x1F469, 0x1F3FB]}
    keys.update({"e\u0301": "E!", "\u0915\u094d": "KV", "\u0436\u0301": "ZH", "\r\n": "CRLF", "ab": "AB"})
    return build_charsmap(keys)


@pytest.fixture(scope="module")
def charsmaps(fixtures) -> dict[str, bytes]:
    rut5 = json.loads(fixture_file(fixtures, "hf/rut5-large/tokenizer.json").read_text(encoding="utf-8"))
    proto = pb.ModelProto()
    proto.ParseFromString(fixture_file(fixtures, "spm/sentencepiece_test_model.model").read_bytes())
    return {"nmt_nfkc": base64.b64decode(rut5["normalizer"]["normalizers"][0]["precompiled_charsmap"]),
            "nfkc": proto.normalizer_spec.precompiled_charsmap,
            "sparse": sparse_charsmap()}


def _pair(charsmap: bytes):
    return HfPrecompiledNormalizer(charsmap), normalizers.Precompiled(charsmap)


def _check_many(ours, ref, texts: list[str], label: str) -> int:
    """Compare in chunks joined by a separator that is a cluster of its own ('\\x00' is never
    normalized), then text by text where a chunk differs."""
    for i in range(0, len(texts), 2000):
        chunk = texts[i:i + 2000]
        joined = "\x00".join(chunk)
        if ours.normalize_text(joined) != ref.normalize_str(joined):
            for text in chunk:
                assert ours.normalize_text(text) == ref.normalize_str(text), (label, text)
            pytest.fail(f"{label}: a chunk differs but no text alone does")
    return len(texts)


@pytest.mark.parametrize("name", ["nmt_nfkc", "nfkc", "sparse"])
def test_corpora(charsmaps, corpus_lines, name):
    ours, ref = _pair(charsmaps[name])
    for corpus, lines in corpus_lines.items():
        for line in lines:
            assert ours.normalize_text(line) == ref.normalize_str(line), (name, corpus, line[:80])


@pytest.mark.parametrize("name", ["nmt_nfkc", "nfkc", "sparse"])
def test_every_code_point_alone_and_beside_every_category(charsmaps, name):
    ours, ref = _pair(charsmaps[name])
    code_points = [cp for cp in range(1, 0x110000) if not 0xD800 <= cp <= 0xDFFF]
    _check_many(ours, ref, [chr(cp) for cp in code_points], f"{name} alone")
    # beside each neighbour: a sample of the code points (tests/parity takes them all)
    sample = [chr(cp) for cp in code_points[::13]] + [chr(cp) for cp in range(0x300, 0x370)]
    for neighbour in NEIGHBOURS:
        _check_many(ours, ref, [x + neighbour for x in sample], f"{name} X+{neighbour!r}")
        _check_many(ours, ref, [neighbour + x + "\u0301" for x in sample], f"{name} {neighbour!r}+X")


@pytest.mark.parametrize("name", ["nmt_nfkc", "sparse"])
def test_edge_cases(charsmaps, name):
    ours, ref = _pair(charsmaps[name])
    texts = ["", " ", "   ", "  a  ", "\r\n", "\r\n\r\n", "e\u0301" * 3, "\u0915\u094d\u0937\u094d\u0915",
             "\U0001F469\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466", "\U0001F1EB" * 7, "a\u0301" * 2000,
             "\u0301" * 1000, "\u200d" * 500 + "\u00a9", "\x00a\x00", "ab" * 100, *LONG_RUNS]
    for text in texts:
        assert ours.normalize_text(text) == ref.normalize_str(text), (name, text[:40])


def test_invalid_utf8_as_bytes(charsmaps, invalid_utf8_lines):
    # tokenizers takes str: bytes are decoded with Python's "replace" first
    for name in ("nmt_nfkc", "sparse"):
        ours, ref = _pair(charsmaps[name])
        for data in [*invalid_utf8_lines, b"\xff", b"a\xe2\x96", b"\xcc\x81\xff\xcc\x81", b"e\xcc"]:
            assert ours.normalize_text(data) == ref.normalize_str(data.decode("utf-8", "replace")), (name, data)


def test_shortest_key_wins_and_nul_stops_it():
    # spm_precompiled's transform takes common_prefix_search()[0]: "a" before "ab"
    ours, ref = _pair(build_charsmap({"a": "1", "ab": "2", "b\u0301": "3", "x": ""}))
    for text in ["ab", "a\u0301", "b\u0301", "b\u0301\u0301", "xa", "x\u0301", "\x00x", "abab"]:
        assert ours.normalize_text(text) == ref.normalize_str(text), text


def test_bad_charsmaps_are_refused():
    good = build_charsmap({"a": "b"})
    trie_size = int.from_bytes(good[:4], "little")
    with pytest.raises(CharsMapError):
        HfPrecompiledNormalizer(good[:4 + trie_size] + b"\xff\xfe\x00")   # strings not UTF-8
    with pytest.raises(CharsMapError):
        HfPrecompiledNormalizer(b"\x01\x00")
