"""Linear time on adversarial inputs: every pre-tokenizer with its byte-level BPE model, and
the vocabulary types that are not BPE.

For each llama.cpp pre-tokenizer type (one name per type, on the GPT-2 fixture GGUF with
`pre=` forced), each of OpenAI's tiktoken encodings, RWKV's greedy longest match (its
world vocabulary, rwkv/rwkv_vocab_v20230424.txt; a GGUF "rwkv" vocabulary runs the same
model stage), llama.cpp's PLaMo-2 vocab type (label "plamo2": a GGUF written as llama.cpp's
converter lays one out, from the pieces of spm/t5_base_japanese_spiece.model, see
bench_plamo2.py) and the other GGUF types' files (OTHER_GGUFS), encodes N and 8N characters of
'a', ' ', '\\n', digits, CJK without spaces and emoji, one call each, and prints the
seconds and the ratio t(8N) / t(N): linear time is a ratio near 8 (the bar is 10).
Each timing is a first pass in a process of its own (`_common.in_child`: load, build
the text, encode once), so both sizes start from the same state: in one process the smaller text runs
on memory the allocator already holds while the larger one maps fresh pages, and that
alone made some ratios read 12 for merges that are linear. Each size is timed --repeat
times (default 3) and the fastest kept: a pass over 2M characters takes about 0.1 s
and on a small shared machine varies by a third from one run to the next.

    python benchmarks/linear_time.py ../shared/fixtures [--n 2000000] [--repeat 3] [--only o200k --only pre=llama3]

A text that the reference itself aborts on (llama.cpp's pre "whitespace" under a gpt2
model, on runs of spaces) is refused by toksmith and shown as "refused".
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import toksmith
from toksmith.pretokenizers.llama_cpp import PRE_NAMES

from _common import in_child
from bench_plamo2 import plamo2_gguf

INPUTS = {"a": "a", "space": " ", "newline": "\n", "digits": "0123456789", "cjk": "日本語漢字",
          "emoji": "🦙😀"}
# GGUF files of the vocabulary types other than BPE, by label
OTHER_GGUFS = {"gguf=bert-bge (WPM)": "gguf/ggml-vocab-bert-bge.gguf"}


def labels() -> list[str]:
    """One pre-tokenizer name per llama.cpp type (on the GPT-2 GGUF), then the tiktoken encodings."""
    names, seen_types = [], set()
    for name, spec in sorted(PRE_NAMES.items()):
        if spec.pre_type not in seen_types:
            seen_types.add(spec.pre_type)
            names.append(f"pre={name}")
    return names + ["r50k_base", "cl100k_base", "o200k_base", RWKV, "plamo2", *OTHER_GGUFS]


RWKV = "rwkv_vocab_v20230424"


def load(label: str, root: Path):
    if label == RWKV:
        return toksmith.load(root / f"rwkv/{RWKV}.txt")
    if label == "plamo2":
        return toksmith.load(plamo2_gguf(root))
    if label in OTHER_GGUFS:
        return toksmith.load(root / OTHER_GGUFS[label])
    if label.startswith("pre="):
        return toksmith.load(root / "gguf/ggml-vocab-gpt-2.gguf", pre=label[len("pre="):])
    return toksmith.load(root / "tiktoken/r50k_base.tiktoken") if label == "r50k_base" else toksmith.load(label)


def time_one(root: Path, label: str, unit: str, chars: int) -> float | None:
    """Seconds of one first encode of `chars` characters of INPUTS[unit]; None when refused."""
    tok = load(label, root)
    text = (INPUTS[unit] * (chars // len(INPUTS[unit]) + 1))[:chars]
    start = time.perf_counter()
    try:
        tok.encode(text, add_special=False)
    except toksmith.ReferenceAbortsError:
        return None
    return time.perf_counter() - start


def seconds(root: Path, label: str, unit: str, chars: int, repeat: int) -> float | None:
    """The fastest of `repeat` first passes, each in a process of its own; None when refused."""
    best = float("inf")
    for _ in range(repeat):
        took = in_child(lambda: time_one(root, label, unit, chars))
        if took is None:
            return None
        best = min(best, took)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixtures", nargs="?", default="../shared/fixtures")
    parser.add_argument("--n", type=int, default=2_000_000, help="characters of the smaller input")
    parser.add_argument("--repeat", type=int, default=3, help="timings per size; the fastest is kept")
    parser.add_argument("--only", action="append", help="run only the tokenizers whose label contains this")
    args = parser.parse_args()
    root = Path(args.fixtures).resolve()
    chosen = [label for label in labels() if not args.only or any(o in label for o in args.only)]
    if "plamo2" in chosen:
        plamo2_gguf(root)   # written before any timing
    n = args.n
    print(f"{'tokenizer':<28}" + "".join(f"{k:>18}" for k in INPUTS))
    print(f"{'':<28}" + "".join(f"{f't({n // 1000000}M)s x8:ratio':>18}" for _ in INPUTS))
    worst = 0.0
    for label in chosen:
        cells = []
        for unit in INPUTS:
            t_small = seconds(root, label, unit, n, args.repeat)
            t_big = seconds(root, label, unit, 8 * n, args.repeat) if t_small is not None else None
            if t_small is None or t_big is None:
                cells.append("refused")
                continue
            ratio = t_big / t_small
            worst = max(worst, ratio)
            cells.append(f"{t_small:.3f}:{ratio:.1f}")
        print(f"{label:<28}" + "".join(f"{c:>18}" for c in cells), flush=True)
    print(f"worst ratio t(8N)/t(N): {worst:.1f}")


if __name__ == "__main__":
    main()
