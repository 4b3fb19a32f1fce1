"""byte_unicode_encode: raw bytes -> the UTF-8 of their GPT-2 byte<->unicode text, as
GPT-2's bytes_to_unicode table (written out here) gives it, in memory proportional to the
text (a byte-stream training's tokens can be megabytes long: issue 30 item 10)."""
from __future__ import annotations

import random
import tracemalloc

from tests.gpt2_bytes import gpt2_bytes_to_unicode
from toksmith._core.byte_unicode import byte_unicode_decode, byte_unicode_encode


def test_every_byte_and_random_texts_encode_as_gpt2s_table():
    table = gpt2_bytes_to_unicode()
    rng = random.Random(10)
    texts = [bytes([b]) for b in range(256)] + [b"", bytes(range(256))]
    texts += [bytes(rng.randrange(256) for _ in range(rng.randint(1, 300))) for _ in range(200)]
    for raw in texts:
        want = "".join(table[b] for b in raw).encode("utf-8")
        assert byte_unicode_encode(raw) == want, raw
        assert byte_unicode_decode(want) == raw
    assert len(texts) == 458


def test_a_4_mb_text_is_encoded_without_an_object_per_byte():
    raw = b" a\n\xff" * (1 << 20)              # all but "a" take two UTF-8 bytes
    tracemalloc.start()
    try:
        encoded = byte_unicode_encode(raw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(encoded) == 7 << 20
    # the result itself (7 MB); a list of one-character strings took 8 bytes a byte more,
    # plus an object for each byte mapped past U+00FF
    assert peak < 2 * len(encoded), f"{peak / len(raw):.1f} bytes per byte"
