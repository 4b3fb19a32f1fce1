"""tokenizer.json patterns (`{"String": ...}` / `{"Regex": ...}`) -> the native matcher
(`toksmith._core.linear_regex.LinearRegex`) that Split, Replace and the Replace decoder share.

Parity: tokenizers compiles both kinds with Oniguruma, a String as `regex::escape(s)` (so
its characters are literals, and "" matches the empty string everywhere); a Regex as is.

>>> native_pattern(hf, c.RegexPattern(r"\\s+"), "$.pre_tokenizer.pattern")   # doctest: +SKIP
"""
from __future__ import annotations

from functools import lru_cache

from toksmith._core.linear_regex import LinearRegex
from toksmith.hf import components as c
from toksmith.hf import onig_unicode
from toksmith.hf.onig_regex import parse_onig
from toksmith.pretokenizers.backtrack_program import RegexUnsupported, compile_tree


@lru_cache(maxsize=256)
def compiled_pattern(kind: str, text: str) -> LinearRegex:
    """The matcher of a pattern ("String" or "Regex"); RegexUnsupported when it has none."""
    try:
        if kind == "String":
            tree = ("cat", [("set", [(ord(ch), ord(ch))]) for ch in text])
        else:
            tree = parse_onig(text)
        program = compile_tree(tree, word=onig_unicode.escape_ranges("w"), graphemes=onig_unicode.grapheme_values())
    except RecursionError:
        raise RegexUnsupported("groups nested too deeply") from None
    return LinearRegex(program, text)


def native_pattern(hf: c.HfTokenizerSpec, pattern: c.Pattern, path: str) -> LinearRegex:
    """The matcher of the pattern at JSON `path` (its parent's "pattern"), or
    UnsupportedModelError naming the path and the construct it cannot run exactly."""
    kind, text = ("String", pattern.text) if isinstance(pattern, c.StringPattern) else ("Regex", pattern.regex)
    try:
        return compiled_pattern(kind, text)
    except RegexUnsupported as exc:
        from toksmith.hf.pipeline import unsupported
        raise unsupported(hf, f"{path}.{kind}", pattern, str(exc)) from None
