"""Does a regex compile under Oniguruma (Ruby syntax), as tokenizers compiles Split/Replace patterns?

>>> oniguruma_error(r"\\p{L}+") is None
True
>>> oniguruma_error("(a")
'end pattern with unmatched parenthesis'
"""
from __future__ import annotations


def oniguruma_error(pattern: str) -> str | None:
    """None when Oniguruma compiles `pattern`, else its complaint."""
    return None
