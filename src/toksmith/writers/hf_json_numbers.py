"""Write f64 numbers so that `tokenizers` reads back exactly the same value.

tokenizers parses JSON numbers with serde_json's default (not correctly rounded) parser
(toksmith.hf.json_numbers.serde_json_f64), so the shortest round-trip text Python's
repr gives reads back one unit in the last place away about a fifth of the time, which
moves Unigram Viterbi ties. `serde_exact_text` picks a text that serde_json parses to the
very float we hold.

>>> x = float("-7.2239313677366805")
>>> repr(x), serde_json_f64(repr(x)) == x, serde_json_f64(serde_exact_text(x)) == x
('-7.2239313677366805', False, True)
>>> serde_exact_text(0.5)
'0.5'
"""
from __future__ import annotations

import math
from fractions import Fraction

from toksmith.hf.json_numbers import serde_json_f64


def ryu_text(value: float) -> str:
    """The shortest round-trip digits of `value` laid out as serde_json writes an f64 (the ryu
    crate's format64): 0.00001, 12.5, 1e-7, 1.5e+16 is 1.5e16.

    >>> ryu_text(-1e-05), ryu_text(100.0), ryu_text(1.5e-07), ryu_text(2e20)
    ('-0.00001', '100.0', '1.5e-7', '2e20')
    """
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0.0"
    digits, exponent = _shortest_digits(abs(value))
    length = len(digits)
    point = length + exponent                 # where the decimal point goes
    if 0 <= exponent and point <= 16:
        return f"{sign}{digits}{'0' * exponent}.0"
    if 0 < point <= 16:
        return f"{sign}{digits[:point]}.{digits[point:]}"
    if -5 < point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    mantissa = digits if length == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{sign}{mantissa}e{point - 1}"


def _shortest_digits(value: float) -> tuple[str, int]:
    """(digits, exponent) of Python's shortest round-trip repr: value == int(digits) * 10**exponent."""
    mantissa, _, exp = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0") or "0"
    exponent = (int(exp) if exp else 0) - len(fraction)
    stripped = digits.rstrip("0")
    return stripped, exponent + len(digits) - len(stripped)


def _candidates(value: float):
    """Texts of `value` to try: serde_json's own layout of the shortest digits first, then
    "<significand>e<exponent>" texts. serde_json turns the significand into an f64 `d`, then
    multiplies or divides by 10**|exponent|: walking the f64s `d` next to
    |value| * 10**-exponent finds one that lands exactly on `value`."""
    yield ryu_text(value)
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
    float32 924.1119384765625), the text tokenizers itself writes (`ryu_text`), which it
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
    return ryu_text(value)
