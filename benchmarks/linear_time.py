"""Linear time on adversarial inputs: every pre-tokenizer with its byte-level BPE model.

For each llama.cpp pre-tokenizer type (one name per type, on the GPT-2 fixture GGUF with
`pre=` forced) and each of OpenAI's tiktoken encodings, encodes N and 8N characters of
'a', ' ', '\\n', digits, CJK without spaces and emoji, one call each, and prints the
seconds and the ratio t(8N) / t(N): linear time is a ratio near 8 (the bar is 10).

    python benchmarks/linear_time.py ../shared/fixtures [--n 2000000] [--only o200k --only pre=llama3]

A text that the reference itself aborts on (llama.cpp's pre "whitespace" under a gpt2
model, on runs of spaces) is refused by toksmith and shown as "refused".
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import toksmith
from toksmith.pretokenizers.llama_cpp import PRE_NAMES

INPUTS = {"a": "a", "space": " ", "newline": "\n", "digits": "0123456789", "cjk": "日本語漢字",
          "emoji": "🦙😀"}


def seconds(tok, text: str) -> float:
    start = time.perf_counter()
    tok.encode(text, add_special=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixtures", nargs="?", default="../shared/fixtures")
    parser.add_argument("--n", type=int, default=2_000_000, help="characters of the smaller input")
    parser.add_argument("--only", action="append", help="run only the tokenizers whose label contains this")
    args = parser.parse_args()
    root = Path(args.fixtures)
    tokenizers = {}
    seen_types = set()
    for name, spec in sorted(PRE_NAMES.items()):
        if spec.pre_type not in seen_types:
            seen_types.add(spec.pre_type)
            tokenizers[f"pre={name}"] = toksmith.load(root / "gguf/ggml-vocab-gpt-2.gguf", pre=name)
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        tokenizers[name] = toksmith.load(name) if name != "r50k_base" else \
            toksmith.load(root / "tiktoken/r50k_base.tiktoken")
    if args.only:
        tokenizers = {label: tok for label, tok in tokenizers.items() if any(o in label for o in args.only)}
    n = args.n
    print(f"{'tokenizer':<28}" + "".join(f"{k:>18}" for k in INPUTS))
    print(f"{'':<28}" + "".join(f"{f't({n // 1000000}M)s x8:ratio':>18}" for _ in INPUTS))
    worst = 0.0
    for label, tok in tokenizers.items():
        cells = []
        for unit in INPUTS.values():
            small = (unit * (n // len(unit) + 1))[:n]
            big = small * 8
            try:
                t_small, t_big = seconds(tok, small), seconds(tok, big)
            except toksmith.ReferenceAbortsError:
                cells.append("refused")
                continue
            ratio = t_big / t_small
            worst = max(worst, ratio)
            cells.append(f"{t_small:.3f}:{ratio:.1f}")
        print(f"{label:<28}" + "".join(f"{c:>18}" for c in cells), flush=True)
    print(f"worst ratio t(8N)/t(N): {worst:.1f}")


if __name__ == "__main__":
    main()
