"""The normalizers that make invalid UTF-8 U+FFFD before a byte-level pre-tokenizer.

`PythonUtf8Repair` must be CPython's ``bytes.decode("utf-8", "replace")`` exactly (the
reference for what tiktoken, which takes str only, sees of bytes); `LlamaCppUtf8Repair` is
checked against llama.cpp end to end in tests/parity/test_byte_bpe_gguf.py, and here on
the cases where its rule is simple to state.
"""
from __future__ import annotations

import random

from toksmith._core.utf8_repair import LlamaCppUtf8Repair, PythonUtf8Repair, valid_utf8_prefix

CASES = [b"", b"plain ascii", "日本語 é 😀".encode(), b"\x80", b"a\xffb", b"\xc3", b"\xc3(", b"\xe2\x82",
         b"\xe2\x82(", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xc0\x80", b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80",
         b"\xfe\xff", bytes(range(256)), "ok".encode() + b"\xe0\x80\xaf" + "ok".encode()]


def random_bytes(seed: int, count: int) -> list[bytes]:
    rnd = random.Random(seed)
    alphabet = [b"a", b" ", b"\x80", b"\xbf", b"\xc2", b"\xc3\xa9", b"\xe0", b"\xe2\x82\xac", b"\xed",
                b"\xf0", b"\xf4", b"\xf5", b"\xff", "日".encode(), "😀".encode()]
    return [b"".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12))) for _ in range(count)]


def test_python_rules_are_cpython_replace():
    repair = PythonUtf8Repair()
    for raw in CASES + random_bytes(1, 20000):
        assert repair.normalize_text(raw) == raw.decode("utf-8", "replace").encode("utf-8"), raw


def test_valid_prefix_is_what_cpython_decodes():
    # The corpus reader's check (training/corpus.py): the first byte CPython's strict decoder
    # refuses, or the whole length. Long ASCII runs around each case take the 8-byte path.
    for raw in CASES + random_bytes(2, 20000):
        for text in (raw, b"x" * 19 + raw + b"y" * 9):
            try:
                text.decode("utf-8")
                expected = len(text)
            except UnicodeDecodeError as e:
                expected = e.start
            assert valid_utf8_prefix(text) == expected, text


def test_valid_text_comes_back_unchanged():
    for repair in (PythonUtf8Repair(), LlamaCppUtf8Repair()):
        for raw in (b"", b"hello", "日本語 é 😀 \u2581".encode()):
            assert repair.normalize_text(raw) == raw


def test_llama_cpp_rules():
    repair = LlamaCppUtf8Repair()
    fffd = "\ufffd".encode()
    assert repair.normalize_text(b"a\xffb") == b"a" + fffd + b"b"
    assert repair.normalize_text(b"\xc0\x80") == b"\x00"          # overlong, read by its bits
    assert repair.normalize_text(b"\xed\xa0\x80") == b"\xed\xa0\x80"   # an encoded surrogate is kept
    assert repair.normalize_text(b"\xe2\x82") == fffd + fffd      # one U+FFFD per byte of a cut sequence
    assert repair.normalize_text(b"\xf4\x90\x80\x80") == fffd + fffd + fffd + fffd   # past U+10FFFF


def test_escape_spaces_with_llama_cpp_rules():
    repair = LlamaCppUtf8Repair(escape_spaces=True)
    assert repair.normalize_text(b"a b  c") == "a\u2581b\u2581\u2581c".encode()
    assert repair.normalize_text(b"\xc3 x") == "\ufffd\u2581x".encode()
    assert repair.normalize_text(b"abc") == b"abc"
