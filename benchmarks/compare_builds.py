"""Before/after: toksmith from two source trees, timed alternately in one run.

Each tree's ``src`` must hold built extensions (``python setup.py build_ext --inplace``).
For every model and corpus, rounds alternate A, B, A, B ... each in a fresh
process that loads a fresh tokenizer and times its first pass over the lines
(one call per line, then the whole corpus as one ``encode_batch``). The ratio
B/A of the medians says whether the change made encoding faster (> 1) or slower.

    python benchmarks/compare_builds.py OLD_TREE NEW_TREE ../shared/fixtures [--rounds 5]
        [--models hf/llama3/tokenizer.json.gz ...] [--corpora man_en.txt ...]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

MODELS = ("spm/t5_base_japanese_spiece.model", "spm/sentencepiece_test_model.model",
          "spm/llama2_tokenizer.model", "gguf/ggml-vocab-nomic-bert-moe.gguf")
CORPORA = ("man_en.txt", "man_ja.txt", "botchan.txt", "code_python_stdlib.py.txt")


def worker(model: str, corpus: str) -> None:
    """Print {"single": MB/s, "batch": MB/s}: first passes of two freshly loaded tokenizers."""
    import toksmith
    lines = Path(corpus).read_text(encoding="utf-8").split("\n")
    mb = sum(len(s.encode()) for s in lines) / 1e6
    tok = toksmith.load(model)
    start = time.perf_counter()
    for line in lines:
        tok.encode(line, add_special=False)
    single = mb / (time.perf_counter() - start)
    tok = toksmith.load(model)
    start = time.perf_counter()
    tok.encode_batch(lines, add_special=False)
    batch = mb / (time.perf_counter() - start)
    print(json.dumps({"single": single, "batch": batch}))


def measure(tree: Path, model: Path, corpus: Path) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    out = subprocess.run([sys.executable, __file__, "--worker", str(model), str(corpus)],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("fixtures", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--models", nargs="+", default=MODELS, help="fixture paths (default: %(default)s)")
    parser.add_argument("--corpora", nargs="+", default=CORPORA, help="corpus names (default: %(default)s)")
    args = parser.parse_args()
    print(f"A = {args.old}, B = {args.new}; medians of {args.rounds} alternating rounds, MB/s, "
          f"first pass of a fresh tokenizer in a fresh process")
    print(f"{'model':<40}{'corpus':<28}{'A 1-thr':>9}{'B 1-thr':>9}{'B/A':>7}{'A batch':>9}{'B batch':>9}{'B/A':>7}")
    for model in args.models:
        for corpus in args.corpora:
            runs: dict[str, list[dict[str, float]]] = {"A": [], "B": []}
            for _ in range(args.rounds):
                runs["A"].append(measure(args.old, args.fixtures / model, args.fixtures / "corpus" / corpus))
                runs["B"].append(measure(args.new, args.fixtures / model, args.fixtures / "corpus" / corpus))
            med = {k: {m: statistics.median(r[m] for r in v) for m in ("single", "batch")}
                   for k, v in runs.items()}
            print(f"{model:<40}{corpus:<28}{med['A']['single']:>9.1f}{med['B']['single']:>9.1f}"
                  f"{med['B']['single'] / med['A']['single']:>7.2f}{med['A']['batch']:>9.1f}"
                  f"{med['B']['batch']:>9.1f}{med['B']['batch'] / med['A']['batch']:>7.2f}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
    else:
        main()
