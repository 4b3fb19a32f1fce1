"""Would Oniguruma (Ruby syntax, as tokenizers compiles Split/Replace patterns) refuse a regex?

No Oniguruma binding is available in pure Python, so this is a check in two parts, both learned
from what `tokenizers.Tokenizer.from_str` refuses (tests/unit/test_hf_reader_errors.py):
1. the `regex` module compiles the pattern; its structural complaints (unbalanced parentheses,
   unterminated class, nothing to repeat, unknown property, bad range, bad back-reference) are
   Oniguruma's too, while its complaints about syntax Oniguruma accepts (`\\H`, `\\y`, `\\k<n>`,
   `a**`, `a{2,1}`, ...) are ignored;
2. constructs `regex` accepts and Oniguruma refuses are looked for explicitly: Python's
   `(?P<...>`, the group options `s`/`u`, `\\p{IsX}` / `\\p{X=Y}`, a repeated look-around, and
   a class escape as a range end (`[\\w-a]`).
Anything else Oniguruma refuses is not caught here (a known gap, said in the README).

>>> oniguruma_error(r"\\p{L}+") is None
True
>>> oniguruma_error("(a")
'missing ) at position 2'
"""
from __future__ import annotations

import re
from functools import cache

# Complaints of `regex` that Oniguruma shares (prefixes of regex.error messages).
_SHARED = ("missing )", "unbalanced parenthesis", "unterminated character set", "nothing to repeat",
           "unknown property", "bad character range", "invalid group reference", "unknown group",
           "incomplete escape \\u", "incomplete escape \\U", "bad escape (end of pattern)",
           "missing group name", "bad group name", "unknown flag", "missing :", "missing >")

# Parity: Oniguruma 6.9 ONIG_SYNTAX_RUBY refusals that `regex` accepts.
_ONIG_ONLY = [
    (re.compile(r"(?<!\\)(?:\\\\)*\(\?P"), "undefined group option (?P"),
    (re.compile(r"(?<!\\)(?:\\\\)*\(\?[imx-]*[su]"), "undefined group option"),
    (re.compile(r"\\[pP]\{\^?(?:Is[A-Z]|[^}]*=)"), "invalid character property name"),
    (re.compile(r"\(\?<?[=!][^()]*\)[*+?{]"), "target of repeat operator is invalid"),
    (re.compile(r"\[[^\]]*\\[wWdDsShHpP][^\]]?-[^\]]"), "unmatched range specifier in char-class"),
    (re.compile(r"\[[^\]]*[^\\]-\\[wWdDsShHpP]"), "char-class value at end of range"),
]


@cache
def _native_patterns() -> frozenset[str]:
    """The patterns toksmith splits by hand (split_patterns.oniguruma_splitter): those
    of the real files that tokenizers loads, so known to compile in Oniguruma."""
    from toksmith._core.pretok_llama import ONIGURUMA_STAGES
    from toksmith.hf.split_patterns import O200K_REGEX
    return frozenset(ONIGURUMA_STAGES) | {O200K_REGEX}


def oniguruma_error(pattern: str) -> str | None:
    """None when Oniguruma is expected to compile `pattern`, else the complaint."""
    if pattern in _native_patterns():
        return None             # no `regex` import nor compile for the common files
    return compile_error(pattern)


def compile_error(pattern: str) -> str | None:
    """`oniguruma_error` of any pattern, found by compiling it."""
    import regex
    for finder, message in _ONIG_ONLY:
        if finder.search(pattern):
            return message
    try:
        regex.compile(pattern)
    except regex.error as exc:
        message = str(exc)
        if message.startswith(_SHARED):
            return message
    except (RecursionError, OverflowError, ValueError) as exc:
        return str(exc) or type(exc).__name__
    return None
