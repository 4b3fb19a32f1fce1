"""Peak memory of BPE training against corpus size: it should follow the distinct
pre-tokens, not the bytes.

Builds corpora of 10 MB, 100 MB and 1 GB (sizes set by --sizes) from the fixture corpora's
lines, repeated and shuffled with a fixed seed (so the larger ones hold no new words), and
trains `toksmith.train_bpe` on each for GPT-2's ByteLevel pipeline, in a fresh process
that reports its wall time and peak RSS (ru_maxrss: the interpreter and imports included).
`--peers` also runs tokenizers' BpeTrainer on the sizes up to --peer-max-mb.

    TOKSMITH_FIXTURES=../shared/fixtures python benchmarks/train_memory.py [--sizes 10,100,1000]
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

CORPORA = ("botchan.txt", "code_python_stdlib.py.txt", "man_de.txt", "man_en.txt", "man_es.txt",
           "man_fr.txt", "man_ja.txt", "man_ru.txt", "man_zh_CN.txt", "markup_html.txt",
           "markup_json.txt", "markup_svg.txt", "wagahaiwa_nekodearu.txt", "tricky_strings.txt")

CHILD = r'''
import json, resource, sys, time
kind, corpus, like, vocab, threads, out = sys.argv[1:7]
t0 = time.perf_counter()
if kind == "toksmith":
    import toksmith
    tok = toksmith.train_bpe([corpus], int(vocab), like=like, num_threads=int(threads), show_progress=False)
    tok.save(out)
else:
    import os
    os.environ["RAYON_NUM_THREADS"] = threads
    from tokenizers import Tokenizer
    from tokenizers.trainers import BpeTrainer
    tok = Tokenizer.from_file(like)
    tok.train([corpus], BpeTrainer(vocab_size=int(vocab), show_progress=False))
    tok.save(out)
wall = time.perf_counter() - t0
print(json.dumps({"wall": wall, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
'''


def write_corpus(fixtures: Path, path: Path, size_bytes: int, seed: int = 0) -> int:
    """The fixture corpora's lines, shuffled again for every round, until `size_bytes`."""
    lines = []
    for name in CORPORA:
        lines.extend((fixtures / "corpus" / name).read_bytes().splitlines(keepends=True))
    rng = random.Random(seed)
    written = 0
    with open(path, "wb") as f:
        while written < size_bytes:
            rng.shuffle(lines)
            for line in lines:
                f.write(line)
                written += len(line)
                if written >= size_bytes:
                    break
    return written


def run(kind: str, corpus: Path, like: Path, vocab: int, threads: int, out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", CHILD, kind, str(corpus), str(like), str(vocab), str(threads),
                           str(out)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or [f"rc {proc.returncode}"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10,100,1000", help="corpus sizes in MB")
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--peers", action="store_true", help="also tokenizers' BpeTrainer")
    parser.add_argument("--peer-max-mb", type=int, default=100)
    args = parser.parse_args()
    fixtures = Path(os.environ.get("TOKSMITH_FIXTURES", ROOT.parent / "shared" / "fixtures"))
    from tests.parity.bpe_training_pipelines import write_pipeline
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        like = write_pipeline("gpt2", fixtures, tmp)
        print(f"GPT-2 ByteLevel pipeline, vocab {args.vocab}, {args.threads} threads; corpora of the fixture "
              f"lines repeated and shuffled; each trainer in a fresh process")
        print(f"{'corpus MB':>10} {'trainer':>10} {'wall s':>8} {'peak RSS MB':>12}")
        for mb in (int(x) for x in args.sizes.split(",")):
            corpus = tmp / f"corpus-{mb}.txt"
            size = write_corpus(fixtures, corpus, mb * 1_000_000)
            kinds = ["toksmith"] + (["hf"] if args.peers and mb <= args.peer_max_mb else [])
            for kind in kinds:
                r = run(kind, corpus, like, args.vocab, args.threads, tmp / f"{kind}-{mb}.json")
                if "error" in r:
                    print(f"{size / 1e6:10.0f} {kind:>10} unavailable: {r['error']}")
                else:
                    print(f"{size / 1e6:10.0f} {kind:>10} {r['wall']:8.1f} {r['rss_mb']:12.0f}")
            corpus.unlink()


if __name__ == "__main__":
    main()
