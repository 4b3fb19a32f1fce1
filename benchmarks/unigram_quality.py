"""Quality of toksmith.train_unigram (or, --model-type bpe, train_sentencepiece_bpe) against
sentencepiece's own trainer of the same model type.

Each fixture corpus is split: its first 90% of lines train (all corpora concatenated), the
last 10% are held out. Both trainers run with the same settings (spm_train's defaults,
vocabulary 32,000 unless --vocab); on the held-out lines of each corpus and of all together
the table gives tokens per byte of UTF-8 for each model (encoded by sentencepiece itself)
and, at the end, the share of sentencepiece's pieces that toksmith's model holds too.

    TOKSMITH_FIXTURES=../shared/fixtures python benchmarks/unigram_quality.py [--vocab 32000] [--threads 2]
        [--model-type unigram|bpe]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from benchmarks.bench_train import CORPORA  # noqa: E402


def split_corpora(fixtures: Path) -> tuple[list[str], dict[str, list[str]]]:
    train, held_out = [], {}
    for name in CORPORA:
        lines = (fixtures / "corpus" / name).read_text(encoding="utf-8").split("\n")
        cut = len(lines) * 9 // 10
        train += lines[:cut]
        held_out[name] = lines[cut:]
    return train, held_out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model-type", choices=["unigram", "bpe"], default="unigram")
    args = parser.parse_args()
    import sentencepiece as spm

    import toksmith
    fixtures = Path(os.environ.get("TOKSMITH_FIXTURES", ROOT.parent / "shared" / "fixtures"))
    train, held_out = split_corpora(fixtures)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        text = tmp / "train.txt"
        text.write_text("\n".join(train) + "\n", encoding="utf-8")
        t0 = time.perf_counter()
        trainer = toksmith.train_unigram if args.model_type == "unigram" else toksmith.train_sentencepiece_bpe
        trainer([str(text)], args.vocab, num_threads=args.threads, show_progress=False).save(tmp / "toksmith.model")
        t1 = time.perf_counter()
        spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(tmp / "sentencepiece"),
                                       vocab_size=args.vocab, num_threads=args.threads, minloglevel=2,
                                       model_type=args.model_type)
        t2 = time.perf_counter()
        ours = spm.SentencePieceProcessor(model_file=str(tmp / "toksmith.model"))
        ref = spm.SentencePieceProcessor(model_file=str(tmp / "sentencepiece.model"))
    size = text.stat().st_size if text.exists() else sum(len(x.encode()) + 1 for x in train)
    print(f"{args.model_type}: trained on {len(train)} lines ({size / 1e6:.1f} MB), vocabulary {args.vocab}, {args.threads} threads: "
          f"toksmith {t1 - t0:.1f} s, sentencepiece {t2 - t1:.1f} s")
    print(f"{'held-out corpus':28} {'lines':>6} {'toksmith tok/B':>15} {'spm tok/B':>10} {'diff':>8}")
    all_lines = []
    for name, lines in list(held_out.items()) + [("all", None)]:
        if lines is None:
            lines = all_lines
        else:
            all_lines += lines
        n_bytes = sum(len(line.encode("utf-8")) for line in lines) or 1
        a = sum(map(len, ours.encode(lines))) / n_bytes
        b = sum(map(len, ref.encode(lines))) / n_bytes
        print(f"{name:28} {len(lines):6d} {a:15.5f} {b:10.5f} {a / b - 1:+8.3%}")
    pa = {ours.id_to_piece(i) for i in range(ours.get_piece_size())}
    pb = {ref.id_to_piece(i) for i in range(ref.get_piece_size())}
    print(f"pieces shared: {len(pa & pb)} of {len(pb)} ({len(pa & pb) / len(pb):.2%})")


if __name__ == "__main__":
    main()
