"""Load time of tokenizer.json files: toksmith beside HF tokenizers, tokie and kitoken.

Each library loads each file `--repeat` times in this one process (after one warm-up load,
so imports and first-call costs are not counted); the table shows the median wall time
and the least CPU time of the process (CPU time is steadier on a shared machine), and each
peer's median over toksmith's (x > 1: toksmith loads faster). A library that cannot load a
file is listed as unavailable. Peak memory of a load: benchmarks/peak_memory.py --load-only.

Files: Llama 3 (BPE, byte-level, 128k tokens, 280k merges; unpacked from the fixture's
.gz), GPT-2 (byte-level BPE written by tokenizers from vocab.json + merges.txt), rut5-large
(Unigram + Precompiled), all-MiniLM-L6-v2 (WordPiece + Bert stages).

    python benchmarks/bench_load.py ../shared/fixtures [--repeat 9]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from peak_memory import tokenizer_files


def _toksmith(path: str):
    import toksmith
    return toksmith.load(path)


def _hf(path: str):
    from tokenizers import Tokenizer
    return Tokenizer.from_file(path)


def _tokie(path: str):
    import tokie
    return tokie.Tokenizer.from_json(path)


def _kitoken(path: str):
    from kitoken import Kitoken
    return Kitoken.from_tokenizers_file(path)


LOADERS = {"toksmith": _toksmith, "hf-tokenizers": _hf, "tokie": _tokie, "kitoken": _kitoken}


def time_loads(load, path: str, repeat: int) -> tuple[float, float] | str:
    """(median wall ms, least CPU ms) over `repeat` loads, or why the library cannot load it."""
    try:
        load(path)
    except Exception as exc:        # noqa: BLE001 -- reported, the others still run
        return f"unavailable: {type(exc).__name__}: {str(exc)[:80]}"
    walls, cpus = [], []
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        tokenizer = load(path)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        del tokenizer
    return statistics.median(walls) * 1000, min(cpus) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixtures", nargs="?", default="../shared/fixtures")
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    root = Path(args.fixtures).resolve()
    print(f"load time, ms: median wall and least CPU of {args.repeat} loads per library and file (one process)")
    with tempfile.TemporaryDirectory() as tmp:
        for label, path in tokenizer_files(root, Path(tmp)).items():
            print(f"\n== {label}\n{'library':<16}{'wall ms':>9}{'cpu ms':>9}{'wall / toksmith':>17}")
            results = {name: time_loads(load, str(path), args.repeat) for name, load in LOADERS.items()}
            own = results["toksmith"]
            for name, result in results.items():
                if isinstance(result, str):
                    print(f"{name:<16}{result}")
                    continue
                ratio = f"{result[0] / own[0]:>16.2f}x" if not isinstance(own, str) else ""
                print(f"{name:<16}{result[0]:>9.1f}{result[1]:>9.1f}{ratio}")


if __name__ == "__main__":
    main()
