"""Write f64 numbers so that `tokenizers` reads back exactly the same value.

tokenizers parses JSON numbers with serde_json's default (not correctly rounded) parser
(toksmith.hf.json_numbers.serde_json_f64), so the shortest round-trip text Python's
repr gives reads back one unit in the last place away about a fifth of the time, which
moves Unigram Viterbi ties. `serde_exact_text` picks a text that serde_json parses to the
very float we hold.

>>> serde_exact_text(-7.22393136773668)
'-7.2239313677366805'
>>> serde_exact_text(0.5)
'0.5'
"""
from __future__ import annotations

import math
from fractions import Fraction

from toksmith.hf.json_numbers import serde_json_f64


def _candidates(value: float):
    """Texts of `value` to try: Python's repr (what tokenizers itself writes) first, then
    "<significand>e<exponent>" texts. serde_json turns the significand into an f64 `d`, then
    multiplies or divides by 10**|exponent|: walking the f64s `d` next to
    |value| * 10**-exponent finds one that lands exactly on `value`."""
    yield repr(value)
    exact = Fraction(abs(value))
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    top = math.floor(math.log10(abs(value))) if value else 0
    for digits in (17, 18, 19, 16, 15):           # significands that fit in a u64
        exponent = top - digits + 1
        center = float(exact / Fraction(10) ** exponent if exponent >= 0 else exact * 10 ** -exponent)
        below = above = center
        for _ in range(48):
            for d in (below, above):
                significand = round(d)
                if 0 < significand < 1 << 64:
                    yield f"{sign}{significand}e{exponent}"
            below, above = math.nextafter(below, 0.0), math.nextafter(above, math.inf)


def serde_exact_text(value: float) -> str:
    """A JSON number text that serde_json (tokenizers' parser) reads as exactly `value`;
    where no decimal text does (serde_json's double rounding skips some floats, e.g. the
    float32 924.1119384765625), Python's repr, which is what tokenizers itself writes and
    reads back one unit in the last place away.

    Integral values keep a ".0" as serde_json writes them (-1.0, not -1). ValueError for
    NaN and infinities, which JSON cannot hold.
    """
    if not math.isfinite(value):
        raise ValueError(f"{value!r} cannot be written as a JSON number")
    for text in _candidates(value):
        if "e" not in text and "." not in text and "inf" not in text:
            text += ".0"
        try:
            parsed = serde_json_f64(text)
        except ValueError:
            continue
        if parsed == value and math.copysign(1.0, parsed) == math.copysign(1.0, value):
            return text
    return repr(value)
