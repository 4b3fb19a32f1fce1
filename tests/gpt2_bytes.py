"""GPT-2's byte <-> unicode table as published, for tests that check toksmith's against it."""
from __future__ import annotations


def gpt2_bytes_to_unicode() -> dict[int, str]:
    """Parity: GPT-2 encoder.py bytes_to_unicode, as published."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))
