"""JSON numbers as `tokenizers` reads them: serde_json 1.0 without its `float_roundtrip`
feature, which is NOT correctly rounded.

serde_json (de.rs: parse_integer, parse_long_integer, parse_decimal,
parse_decimal_overflow, parse_exponent, f64_from_parts) keeps the digits as a u64
significand (an integer digit that would overflow it, and each one after, adds 1 to the
exponent instead; a fraction digit that would overflow it ends the significand, the rest
are ignored), then computes `significand as f64` times or over the power of ten: two
roundings. A Unigram score written by tokenizers itself ("-7.2239313677366805") then
reads back one unit in the last place away from Python's float() about a fifth of the
time, which moves Viterbi ties.

>>> serde_json_f64("-7.2239313677366805") == float("-7.22393136773668")
True
>>> serde_json_f64("0.5")
0.5
"""
from __future__ import annotations

_POW10 = tuple(float(f"1e{k}") for k in range(309))   # serde_json's POW10: 1e0 ... 1e308
_U64_MAX = (1 << 64) - 1
_I32_MAX = (1 << 31) - 1
_I32_MIN = -(1 << 31)


def serde_json_f64(token: str) -> float:
    """The f64 serde_json's default parser gives for the JSON number `token` when it is read
    as a float; ValueError where it reports "number out of range"."""
    if len(token) - (token[0] == "-") <= 20 and "." in token and "e" not in token and "E" not in token:
        # the common case: at most 19 digits around a point (no u64 overflow, no exponent)
        f = int(token.replace(".", "", 1)) / _POW10[len(token) - token.index(".") - 1]
        return -0.0 if f == 0.0 and token[0] == "-" else f
    positive = not token.startswith("-")
    body = token if positive else token[1:]
    exp_at = body.find("e")
    if exp_at < 0:
        exp_at = body.find("E")
    mantissa, exp_text = (body, None) if exp_at < 0 else (body[:exp_at], body[exp_at + 1:])
    int_digits, _, frac_digits = mantissa.partition(".")
    if len(int_digits) + len(frac_digits) <= 19:   # below 10**19: no u64 overflow
        significand = int(int_digits + frac_digits)
        exponent = -len(frac_digits)
    else:
        significand, exponent = _long_significand(int_digits, frac_digits)
    if exp_text is not None:
        exp_positive = not exp_text.startswith("-")
        exp = int(exp_text.lstrip("+-"))
        if exp > _I32_MAX:
            # parse_exponent_overflow: an error instead of infinity, else zero
            if significand != 0 and exp_positive:
                raise ValueError("number out of range")
            return 0.0 if positive else -0.0
        # i32 saturating add / subtract
        exponent = max(_I32_MIN, min(_I32_MAX, exponent + exp if exp_positive else exponent - exp))
    return _f64_from_parts(positive, significand, exponent)


def _long_significand(int_digits: str, frac_digits: str) -> tuple[int, int]:
    significand = exponent = 0
    overflowed = False
    for d in int_digits:
        if not overflowed:
            value = significand * 10 + ord(d) - 48
            if value <= _U64_MAX:
                significand = value
                continue
            overflowed = True          # parse_long_integer: the rest only move the exponent
        exponent += 1
    for d in frac_digits:
        value = significand * 10 + ord(d) - 48
        if value > _U64_MAX:
            break                      # parse_decimal_overflow: the rest are ignored
        significand = value
        exponent -= 1
    return significand, exponent


def _f64_from_parts(positive: bool, significand: int, exponent: int) -> float:
    f = float(significand)   # u64 -> f64, rounded to nearest (Rust `as`)
    while True:
        magnitude = -exponent if exponent < 0 else exponent
        if magnitude <= 308:
            if exponent >= 0:
                f *= _POW10[magnitude]
                if f == float("inf"):
                    raise ValueError("number out of range")
            else:
                f /= _POW10[magnitude]
            break
        if f == 0.0:
            break
        if exponent >= 0:
            raise ValueError("number out of range")
        f /= 1e308
        exponent += 308
    return f if positive else -f
