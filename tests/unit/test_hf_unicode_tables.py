"""The generated Unicode tables (tools/gen_hf_unicode_tables.py) against HF tokenizers
0.23.3 itself, on every code point but the surrogates.

Each table is exercised through the native stage that reads it, next to the tokenizers
component that defines it: NFD/NFKD (decompositions, combining classes), NFC/NFKC
(composition pairs), Lowercase (char::to_lowercase), StripAccents (combining marks),
BertNormalizer with one option at a time (clean_text's control and whitespace sets, the
Chinese ranges, NFD + Mn, lowercase), and the pre-tokenizers' classes (char::is_whitespace,
BERT punctuation, Rust regex \\w). Code points go in chunks, each one between separators
that keep it apart from its neighbours, one call per chunk on each side; a chunk that
differs is then compared code point by code point, to name the first one.
"""
from __future__ import annotations

import pytest
from tokenizers import normalizers as N
from tokenizers import pre_tokenizers as P

from toksmith._core import hf_regex_stages
from toksmith._core.unicode_normalizers import HfCharNormalizer, HfUnicodeNormalizer
from toksmith._core.bert_pretokenizers import HfBertPreTokenizer, HfPunctuation, HfRunsPreTokenizer

CODE_POINTS = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
CHUNK = 4096

NORMALIZERS = {
    # name: (tokenizers' component, ours, separator between code points)
    "NFD": (N.NFD(), HfUnicodeNormalizer("NFD"), "\x00"),
    "NFKD": (N.NFKD(), HfUnicodeNormalizer("NFKD"), "\x00"),
    "NFC": (N.NFC(), HfUnicodeNormalizer("NFC"), "\x00"),
    "NFKC": (N.NFKC(), HfUnicodeNormalizer("NFKC"), "\x00"),
    "Lowercase": (N.Lowercase(), HfCharNormalizer.lowercase_only(), "|"),
    "StripAccents": (N.StripAccents(), HfCharNormalizer.strip_accents_only(), "|"),
    "Bert clean_text": (N.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False,
                                         lowercase=False),
                        HfCharNormalizer.bert(clean_text=True, handle_chinese_chars=False, strip_accents=False,
                                              lowercase=False), "|"),
    "Bert handle_chinese_chars": (N.BertNormalizer(clean_text=False, handle_chinese_chars=True, strip_accents=False,
                                                   lowercase=False),
                                  HfCharNormalizer.bert(clean_text=False, handle_chinese_chars=True,
                                                        strip_accents=False, lowercase=False), "|"),
    "Bert strip_accents": (N.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True,
                                            lowercase=False),
                           HfCharNormalizer.bert(clean_text=False, handle_chinese_chars=False, strip_accents=True,
                                                 lowercase=False), "|"),
    "Bert lowercase": (N.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=False,
                                        lowercase=True),
                       HfCharNormalizer.bert(clean_text=False, handle_chinese_chars=False, strip_accents=False,
                                             lowercase=True), "|"),
    "Bert all": (N.BertNormalizer(), HfCharNormalizer.bert(), "|"),
}

PRE_TOKENIZERS = {
    "BertPreTokenizer": (P.BertPreTokenizer(), HfBertPreTokenizer()),
    "Whitespace": (P.Whitespace(), HfRunsPreTokenizer.whitespace()),
    "WhitespaceSplit": (P.WhitespaceSplit(), HfRunsPreTokenizer.whitespace_split()),
    "Punctuation": (P.Punctuation(), HfPunctuation(hf_regex_stages.SPLIT_ISOLATED)),
}


def _chunks():
    for i in range(0, len(CODE_POINTS), CHUNK):
        yield [chr(cp) for cp in CODE_POINTS[i:i + CHUNK]]


@pytest.mark.parametrize("name", list(NORMALIZERS))
def test_normalizer_tables_on_every_code_point(name):
    ref, ours, sep = NORMALIZERS[name]
    for chars in _chunks():
        text = sep.join(chars)
        if ours.normalize_text(text) != ref.normalize_str(text):
            for c in chars:
                assert ours.normalize_text(c) == ref.normalize_str(c), f"{name}: U+{ord(c):04X}"
            pytest.fail(f"{name}: a chunk differs but no code point alone does")


def _pieces_ref(pretok, text: str) -> list[str]:
    return [piece for piece, _ in pretok.pre_tokenize_str(text)]


def _pieces_ours(pretok, text: str) -> list[str]:
    return [piece.decode("utf-8") for piece in pretok.split_text(text.encode("utf-8"))]


@pytest.mark.parametrize("name", list(PRE_TOKENIZERS))
def test_pre_tokenizer_classes_on_every_code_point(name):
    # "x" + c + "y ": c is kept in the word, split off, or dropped, depending on its class
    ref, ours = PRE_TOKENIZERS[name]
    for chars in _chunks():
        text = "".join(f"x{c}y " for c in chars)
        if _pieces_ours(ours, text) != _pieces_ref(ref, text):
            for c in chars:
                assert _pieces_ours(ours, f"x{c}y ") == _pieces_ref(ref, f"x{c}y "), f"{name}: U+{ord(c):04X}"
            pytest.fail(f"{name}: a chunk differs but no code point alone does")


def test_lowercase_is_per_character():
    # Parity: NormalizedString::lowercase maps each character alone (no final sigma), and
    # İ becomes two characters
    for text in ["ΟΔΟΣ", "ΣΑΣ Σ", "İstanbul", "ẞ ǅ ǈ", "ΑΣ."]:
        assert HfCharNormalizer.lowercase_only().normalize_text(text) == N.Lowercase().normalize_str(text)
