"""Linear time of tokenizer.json's Split and Replace (toksmith.hf.native_regex) on adversarial inputs.

For each pattern (the real-world ones of tests/parity/test_hf_split_replace.py and some
that make backtracking engines quadratic or worse), splits N and 8N characters of 'a',
' ', '\\n', digits, CJK without spaces and 'ab', one call each, and prints the seconds and
the ratio t(8N) / t(N) (best of 3 calls each): linear time is a ratio near 8 (the bar is 10;
the per-character cost still grows a little while the working set leaves the caches).

    python benchmarks/linear_time_regex.py [--n 2000000] [--only gpt2 --only nested]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.parity.test_hf_split_replace import REAL_PATTERNS  # noqa: E402
from toksmith._core.hf_regex_stages import SPLIT_ISOLATED, HfReplace, HfSplit  # noqa: E402
from toksmith._core.pretokenizer import SplitScratch  # noqa: E402
from toksmith.hf.native_regex import compiled_pattern  # noqa: E402

INPUTS = {"a": "a", "space": " ", "newline": "\n", "digits": "0123456789", "cjk": "日本語漢字", "ab": "ab"}
# Patterns a backtracking engine runs in quadratic (or exponential) time on some input.
HARD_PATTERNS = {
    "alt-rescans": r"a*b|a",
    "nested": r"(?:a|aa)+c",
    "space-lookahead": r"\s+(?!\S)|\s+",
    "digit-lookahead": r"(?=(\d{3})+(?!\d))",
    "look-behind": r"(?<=a)a|(?<![a ])\d",
    "word-boundary": r"\b\w+\b|\B",
    "atomic": r"(?>a|ab)*c|a",
    "lazy": r"a+?b|.",
    "end-anchor": r"\s++$|\s",
}


def seconds(stage, text: bytes, scratch: SplitScratch) -> float:
    """The best of 3 calls (the first one also grows the scratch buffers to the text)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        if isinstance(stage, HfSplit):
            stage.count_pieces(text, scratch)
        else:
            stage.normalize_text(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2_000_000, help="characters of the smaller input")
    parser.add_argument("--only", action="append", help="run only the patterns whose name contains this")
    args = parser.parse_args()
    patterns = {**REAL_PATTERNS, **HARD_PATTERNS}
    if args.only:
        patterns = {k: v for k, v in patterns.items() if any(o in k for o in args.only)}
    n = args.n
    print(f"{'pattern':<28}" + "".join(f"{k:>16}" for k in INPUTS))
    print(f"{'':<28}" + "".join(f"{f't({n / 1e6:g}M)s x8:ratio':>16}" for _ in INPUTS))
    worst = 0.0
    for name, pattern in patterns.items():
        regex = compiled_pattern("Regex", pattern)
        for label, stage in ((f"{name} split", HfSplit(regex, SPLIT_ISOLATED, False)),
                             (f"{name} replace", HfReplace(regex, b"_"))):
            cells = []
            for unit in INPUTS.values():
                small = (unit * (n // len(unit) + 1))[:n].encode()
                scratch = SplitScratch()
                t_small, t_big = seconds(stage, small, scratch), seconds(stage, small * 8, scratch)
                ratio = t_big / max(t_small, 1e-9)
                worst = max(worst, ratio)
                cells.append(f"{t_small:.3f}:{ratio:.1f}")
            print(f"{label:<28}" + "".join(f"{c:>16}" for c in cells), flush=True)
    print(f"worst ratio t(8N)/t(N): {worst:.1f}")


if __name__ == "__main__":
    main()
