"""The Precompiled normalizer (grapheme clusters included) vs HF tokenizers' own, for EVERY
code point in ~20 contexts that decide grapheme boundaries: combining marks, Hangul jamo
(L, V, T, LV, LVT), emoji ZWJ sequences and skin tones, regional-indicator flags, Indic
conjuncts (InCB consonant / linker / extend), Prepend, CR LF.

Charsmaps: one built here where every character is a key (doubled), so every cluster
under 6 bytes shows where it starts; a sparse one (keys of one and two characters), and
rut5's nmt_nfkc. Probes run 2000 at a time joined by a character that is no key (a
cluster of its own): one comparison per chunk (the report counts chunks), then its probes
one by one where a chunk differs (the chunk's difference fails the test either way).
"""
from __future__ import annotations

import base64
import json

import pytest
import tokenizers
from tokenizers import normalizers

from tests.conftest import fixture_file
from tests.parity.comparison import Comparison
from tests.unit.test_hf_precompiled import NEIGHBOURS, build_charsmap, sparse_charsmap
from toksmith._core.hf_precompiled import HfPrecompiledNormalizer

CODE_POINTS = [cp for cp in range(1, 0x110000) if not 0xD800 <= cp <= 0xDFFF and cp != 0x0A]

CHUNK = 2000      # probes per normalizer call
# Mismatching chunks compared again text by text, per context: enough to name the texts that
# differ; past them a chunk counts as one mismatch (24M texts one by one take a minute).
CHUNKS_TEXT_BY_TEXT = 3

# (label, prefix, suffix) around each code point X
CONTEXTS = [("X", "", ""), ("a+X", "a", ""), ("X+a", "", "a"), ("X+mark", "", "\u0301"),
            ("X+mark+mark", "", "\u0301\u0301"), ("X+V", "", "\u1161\u0301"), ("X+T", "", "\u11a8\u0301"),
            ("X+L", "", "\u1100\u0301"), ("L+X", "\u1100", "\u0301"), ("LV+X", "\uac00", "\u0301"),
            ("LVT+X", "\uac01", "\u0301"), ("X+ZWJ+pict", "", "\u200d\u00a9\u0301"),
            ("pict+X+ZWJ+pict", "\u00a9", "\u200d\u00a9\u0301"), ("X+virama+ka", "", "\u094d\u0915\u0301"),
            ("ka+X+ka", "\u0915", "\u0915\u0301"), ("ka+virama+X+ka", "\u0915\u094d", "\u0915\u0301"),
            ("X+RI", "", "\U0001F1EB\u0301"), ("RI+X", "\U0001F1EB", "\u0301"),
            ("RI+RI+X", "\U0001F1EB\U0001F1EB", "\u0301"), ("CR+X", "\r", "\u0301"), ("X+skin", "", "\U0001F3FB\u0301"),
            ("prepend+X", "\u0600", "\u0301")]


@pytest.fixture(scope="module")
def charsmaps(fixtures) -> dict[str, bytes]:
    rut5 = json.loads(fixture_file(fixtures, "hf/rut5-large/tokenizer.json").read_text(encoding="utf-8"))
    every = {chr(cp): chr(cp) * 2 for cp in CODE_POINTS}
    return {"every-character": build_charsmap(every), "sparse": sparse_charsmap(),
            "nmt_nfkc": base64.b64decode(rut5["normalizer"]["normalizers"][0]["precompiled_charsmap"])}


@pytest.mark.parametrize("name", ["every-character", "sparse", "nmt_nfkc"])
def test_every_code_point_in_every_context(charsmaps, name):
    ours, ref = HfPrecompiledNormalizer(charsmaps[name]), normalizers.Precompiled(charsmaps[name])
    contexts = CONTEXTS if name == "every-character" else \
        CONTEXTS[:4] + [(f"X+{n!r}", "", n) for n in NEIGHBOURS if n] + [(f"{n!r}+X", n, "\u0301") for n in NEIGHBOURS]
    check = Comparison(f"Precompiled ({name} charsmap): {len(CODE_POINTS)} code points x {len(contexts)} grapheme "
                       f"contexts = {len(CODE_POINTS) * len(contexts)} texts, in chunks of {CHUNK} joined by \\n",
                       against=f"tokenizers {tokenizers.__version__}")
    for label, prefix, suffix in contexts:
        texts = [prefix + chr(cp) + suffix for cp in CODE_POINTS]
        text_by_text = CHUNKS_TEXT_BY_TEXT
        for i in range(0, len(texts), CHUNK):
            chunk = texts[i:i + CHUNK]
            joined = "\n".join(chunk)     # "\n": no key, a cluster alone
            if not check.one(f"{label} chunk {i // CHUNK}", ours.normalize_text(joined), ref.normalize_str(joined)) \
                    and text_by_text > 0:
                text_by_text -= 1
                check.all(chunk, ours=[ours.normalize_text(text) for text in chunk],
                          theirs=[ref.normalize_str(text) for text in chunk], what=label)
    check.finish()
