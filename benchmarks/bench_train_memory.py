"""Peak memory of BPE training as the corpus grows: it should follow the distinct
pre-tokens (or lines), not the bytes.

The corpus: every line of the fixture corpora, repeated and shuffled (each round in a
seeded random order) until it holds SIZE MB, written to one file. Each run trains
`toksmith.train_bpe(..., like=None)` in a fresh interpreter and reports wall time, user
CPU time and peak RSS (ru_maxrss: the interpreter and imports included):

- file: the file read whole, one sequence (memory grows with the corpus: see the README);
- lines: the same bytes given as an iterator of lines, one sequence each (identical
  lines are kept once with their count: memory grows with the distinct lines only);
- gpt2: the file given to `train_bpe(..., like=<GPT-2's ByteLevel tokenizer.json>)`, the
  HF-compatible configuration (memory grows with the distinct pre-tokens only).

    TOKSMITH_FIXTURES=../shared/fixtures python benchmarks/bench_train_memory.py --sizes 10,100,1000 [--modes file,lines,gpt2]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_train import CORPORA  # noqa: E402

CHILD = r'''
import json, resource, sys, time
mode, corpus, vocab, threads, like = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
import toksmith
t0 = time.perf_counter()
options = {}
if mode == "lines":
    def lines():
        with open(corpus, "rb") as f:
            yield from f
    source = lines()
else:
    source = [corpus]
    if mode == "gpt2":
        options["like"] = like
tok = toksmith.train_bpe(source, vocab, num_threads=threads, show_progress=False, **options)
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "user": ru.ru_utime, "rss_mb": ru.ru_maxrss / 1024, "vocab": tok.vocab_size}))
'''


def write_corpus(fixtures: Path, path: Path, size: int, seed: int = 12) -> int:
    """Fixture lines, repeated and shuffled, until `size` bytes or a little more (whole
    lines: the file stays UTF-8 for the trainers that read it as text)."""
    lines = []
    for name in CORPORA:
        lines += (fixtures / "corpus" / name).read_bytes().splitlines(keepends=True)
    rnd = random.Random(seed)
    written = 0
    with open(path, "wb") as f:
        while written < size:
            order = list(range(len(lines)))
            rnd.shuffle(order)
            for i in order:
                line = lines[i]
                f.write(line)
                written += len(line)
                if written >= size:
                    break
    return written


def run(mode: str, corpus: Path, vocab: int, threads: int, like: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", CHILD, mode, str(corpus), str(vocab), str(threads), str(like)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"rc {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10,100", help="corpus sizes in MB (10**6 bytes)")
    parser.add_argument("--modes", default="file,lines,gpt2")
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tmp", help="folder for the corpus files (default: the system's)")
    args = parser.parse_args()
    fixtures = Path(os.environ.get("TOKSMITH_FIXTURES", ROOT.parent / "shared" / "fixtures"))
    print(f"BPE training, vocab {args.vocab}, {args.threads} threads; fixture lines repeated and shuffled")
    print(f"{'corpus':>8} {'mode':>6} {'wall s':>8} {'user s':>8} {'peak MB':>8} {'peak B/byte':>11}")
    from tests.parity.bpe_training_pipelines import write_pipeline
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp_name:
        like = write_pipeline("gpt2", fixtures, Path(tmp_name))
        for size_mb in (float(s) for s in args.sizes.split(",")):
            corpus = Path(tmp_name) / f"corpus-{size_mb:g}MB.txt"
            size = write_corpus(fixtures, corpus, int(size_mb * 1e6))
            for mode in args.modes.split(","):
                r = run(mode, corpus, args.vocab, args.threads, like)
                if "error" in r:
                    print(f"{size_mb:>6g}MB {mode:>6} unavailable: {r['error']}")
                else:
                    print(f"{size_mb:>6g}MB {mode:>6} {r['wall']:8.1f} {r['user']:8.1f} {r['rss_mb']:8.0f} "
                          f"{r['rss_mb'] * 2 ** 20 / size:11.1f}", flush=True)
            corpus.unlink()


if __name__ == "__main__":
    main()
