"""What an approximate conversion (`save(..., exact=False)`) changes, measured on a built-in
multilingual sample: the written file, read back, against the tokenizer it was written from.

The sample (data/conversion_sample.txt, shipped in the package) holds sentences of a dozen
scripts, code, markup, URLs, runs of spaces and tabs, emoji sequences, combining marks,
controls and compatibility characters. The report counts its lines that encode differently,
and the sample's code points that encode differently on their own, by Unicode general
category. toksmith reads the written file as the target's reference does (that is what the
parity tests hold it to), so no reference library is needed at run time.

>>> report = difference_report(["3 tokens only llama.cpp's UGM lacks"], source, written)   # doctest: +SKIP
>>> print(report)                                                                       # doctest: +SKIP
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import cache
from importlib import resources

from toksmith.errors import InexactConversionWarning

__all__ = ["DifferenceReport", "InexactConversionWarning", "difference_report", "sample_lines"]


@dataclass(frozen=True)
class DifferenceReport:
    """What differs between a source tokenizer and the file written from it, on the sample."""
    reasons: tuple[str, ...]                  # what the writer could not carry over exactly
    lines: int                                # sample lines compared
    differing_lines: tuple[str, ...]          # the sample lines whose ids differ
    code_points: int                          # distinct sample code points compared alone
    differing_code_points: dict[str, tuple[str, ...]]   # general category -> code points that differ

    def __str__(self) -> str:
        shown = "; ".join(f"{category} {len(chars)} ({' '.join(_shown(ch) for ch in chars[:4])})"
                          for category, chars in sorted(self.differing_code_points.items()))
        differing = sum(map(len, self.differing_code_points.values()))
        first = f"; e.g. {self.differing_lines[0][:50]!r}" if self.differing_lines else ""
        return (f"approximate conversion: {'; '.join(self.reasons)}. On the built-in sample: "
                f"{len(self.differing_lines)} of {self.lines} lines encode differently{first}; "
                f"{differing} of {self.code_points} code points encode differently alone"
                + (f", by category: {shown}" if shown else ""))


def _shown(ch: str) -> str:
    return f"U+{ord(ch):04X}" if not ch.isprintable() or unicodedata.category(ch).startswith("M") else ch


@cache
def sample_lines() -> tuple[str, ...]:
    """The built-in multilingual sample, one text per line (split at "\\n" only)."""
    text = resources.files("toksmith").joinpath("data/conversion_sample.txt").read_text(encoding="utf-8")
    return tuple(line for line in text.split("\n") if line)


def difference_report(reasons: list[str], source, written) -> DifferenceReport:
    """Compare tokenizers `source` and `written` (toksmith Tokenizers) on the sample, with
    add_special off (the vocabularies' ids, not the templates, are what a conversion keeps)."""
    lines = sample_lines()
    want = source.encode_batch(list(lines), add_special=False)
    got = written.encode_batch(list(lines), add_special=False)
    differing_lines = tuple(line for line, a, b in zip(lines, want, got) if a != b)
    chars = sorted({ch for line in lines for ch in line})
    want = source.encode_batch(chars, add_special=False)
    got = written.encode_batch(chars, add_special=False)
    by_category: dict[str, list[str]] = {}
    for ch, a, b in zip(chars, want, got):
        if a != b:
            by_category.setdefault(unicodedata.category(ch), []).append(ch)
    return DifferenceReport(reasons=tuple(reasons), lines=len(lines), differing_lines=differing_lines,
                            code_points=len(chars),
                            differing_code_points={k: tuple(v) for k, v in by_category.items()})
