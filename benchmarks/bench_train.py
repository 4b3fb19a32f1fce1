"""Training side by side: toksmith.train_bpe / train_unigram, HF tokenizers' BpeTrainer /
UnigramTrainer, sentencepiece (bpe and unigram), toksmith.train_sentencepiece_bpe.

Same input in one run: the fixture corpora concatenated into one file, vocabulary 32,000,
2 threads. Every trainer runs in a process of its own (a fresh interpreter), which reports
its wall time, user CPU time and peak RSS (ru_maxrss, the interpreter and imports
included). toksmith and HF train on the same tokenizer.json pipeline (GPT-2's ByteLevel
and Llama 3's Split + ByteLevel, made by tokenizers); sentencepiece runs its own BPE
trainer (model_type=bpe) on the same file, and toksmith.train_sentencepiece_bpe beside it with the
same options (character_coverage 1.0, no sentence length limit, soft vocabulary limit). Unigram: toksmith.train_unigram and
sentencepiece's Unigram trainer with spm_train's defaults (nmt_nfkc, character_coverage
0.9995), and HF's UnigramTrainer on an NFKC + Metaspace pipeline (as transformers converts
sentencepiece models). --kinds picks which of them run.

The byte-stream configuration (`train_bpe(files, vocab, like=None)`, and with
ascii_only) trains on the same file read whole as one byte sequence. Its nearest HF peer
is BpeTrainer on a ByteLevel(use_regex=false) pipeline: no pre-tokenization either, but
tokenizers reads a file line by line, so each line is one sequence there (merges never
cross a line end); its vocabulary starts from the corpus's bytes, not all 256.

With --repeats N every trainer runs N times (each a fresh process, one after another):
the table and the ratios use the median wall and user times, the range shows the fastest
and slowest wall time, and peak RSS is the largest of the N.

With --paired N it then times toksmith against sentencepiece in N alternating rounds
(toksmith, then sentencepiece, in each round): the ratio of each round's wall times, their
median and range. A shared machine's speed drifts over a run by more than a few percent;
the ratio within a round does not.

    TOKSMITH_FIXTURES=../shared/fixtures python benchmarks/bench_train.py [--vocab 32000] [--threads 2]
        [--kinds bpe,bytes,unigram] [--no-hf] [--repeats 1] [--paired 0]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPORA = ("botchan.txt", "code_python_stdlib.py.txt", "man_de.txt", "man_en.txt", "man_es.txt",
           "man_fr.txt", "man_ja.txt", "man_ru.txt", "man_zh_CN.txt", "markup_html.txt",
           "markup_json.txt", "markup_svg.txt", "wagahaiwa_nekodearu.txt", "tricky_strings.txt")

# Each child: train, then print {"wall": s, "user": s, "rss_mb": MB, "vocab": n}.
CHILD = r'''
import json, resource, sys, time
kind, corpus, like, vocab, threads, out = sys.argv[1:7]
vocab, threads = int(vocab), int(threads)
t0 = time.perf_counter()
if kind in ("toksmith", "bytes", "ascii"):
    import toksmith
    options = {"like": like} if kind == "toksmith" else {"ascii_only": kind == "ascii"}
    tok = toksmith.train_bpe([corpus], vocab, num_threads=threads, show_progress=False, **options)
    tok.save(out)
    n = tok.vocab_size
elif kind == "toksmith-unigram":
    import toksmith
    tok = toksmith.train_unigram([corpus], vocab, num_threads=threads, show_progress=False)
    tok.save(out)
    n = tok.vocab_size
elif kind == "toksmith-spm-bpe":
    import toksmith
    tok = toksmith.train_sentencepiece_bpe([corpus], vocab, num_threads=threads, show_progress=False,
                                           character_coverage=1.0, max_sentence_length=1 << 20,
                                           hard_vocab_limit=False)
    tok.save(out)
    n = tok.vocab_size
elif kind == "spm-unigram":
    import sentencepiece as spm
    spm.SentencePieceTrainer.train(input=corpus, model_prefix=out, vocab_size=vocab, model_type="unigram",
                                   num_threads=threads, minloglevel=2)
    n = spm.SentencePieceProcessor(model_file=out + ".model").get_piece_size()
elif kind == "hf-unigram":
    import os
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from tokenizers.trainers import UnigramTrainer
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.train([corpus], UnigramTrainer(vocab_size=vocab, special_tokens=["<unk>", "<s>", "</s>"],
                                       unk_token="<unk>", show_progress=False))
    tok.save(out)
    n = tok.get_vocab_size()
elif kind == "hf":
    import os
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    from tokenizers import Tokenizer
    from tokenizers.trainers import BpeTrainer
    tok = Tokenizer.from_file(like)
    tok.train([corpus], BpeTrainer(vocab_size=vocab, show_progress=False))
    tok.save(out)
    n = tok.get_vocab_size()
else:
    import sentencepiece as spm
    spm.SentencePieceTrainer.train(input=corpus, model_prefix=out, vocab_size=vocab, model_type="bpe",
                                   num_threads=threads, character_coverage=1.0, minloglevel=2,
                                   max_sentence_length=1 << 20, hard_vocab_limit=False)
    n = spm.SentencePieceProcessor(model_file=out + ".model").get_piece_size()
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "user": ru.ru_utime, "rss_mb": ru.ru_maxrss / 1024, "vocab": n}))
'''


REPEATS = 1     # --repeats


def run(kind: str, corpus: Path, like: Path | None, vocab: int, threads: int, out: Path) -> dict:
    """The trainer's figures over REPEATS fresh processes: median wall and user time, the
    fastest and slowest wall time, the largest peak RSS."""
    results = [_run_once(kind, corpus, like, vocab, threads, out) for _ in range(REPEATS)]
    failed = [r for r in results if "error" in r]
    if failed:
        return failed[0]
    walls = [r["wall"] for r in results]
    return {"wall": statistics.median(walls), "user": statistics.median(r["user"] for r in results),
            "rss_mb": max(r["rss_mb"] for r in results), "vocab": results[0]["vocab"],
            "wall_min": min(walls), "wall_max": max(walls)}


def _run_once(kind: str, corpus: Path, like: Path | None, vocab: int, threads: int, out: Path) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", CHILD, kind, str(corpus), str(like or ""), str(vocab),
                           str(threads), str(out)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"rc {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pipelines", default="gpt2,llama3")
    parser.add_argument("--kinds", default="bpe,bytes,unigram",
                        help="any of bpe (like= pipelines), bytes (the byte-stream configuration), unigram")
    parser.add_argument("--no-hf", action="store_true", help="leave HF's trainers out (they take a minute)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each trainer (medians reported)")
    parser.add_argument("--paired", type=int, default=0,
                        help="then N alternating rounds of toksmith and sentencepiece (median wall ratio)")
    args = parser.parse_args()
    global REPEATS
    REPEATS = max(1, args.repeats)
    kinds = args.kinds.split(",")
    fixtures = Path(os.environ.get("TOKSMITH_FIXTURES", ROOT.parent / "shared" / "fixtures"))
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        corpus = tmp / "corpus.txt"
        with open(corpus, "wb") as f:
            for name in CORPORA:
                f.write((fixtures / "corpus" / name).read_bytes())
        size_mb = corpus.stat().st_size / 1e6
        print(f"input: {len(CORPORA)} corpora concatenated, {size_mb:.1f} MB; vocab {args.vocab}; "
              f"{args.threads} threads; each trainer in its own process"
              + (f", {REPEATS} runs each (medians)" if REPEATS > 1 else ""))
        print(f"{'trainer':34} {'wall s':>8} {'user s':>8} {'peak MB':>8} {'vocab':>7}"
              + (f" {'wall range':>12}" if REPEATS > 1 else ""))
        rows = []
        if "bpe" in kinds:
            _bpe_rows(rows, args, fixtures, tmp, corpus)
        if "bytes" in kinds:
            _byte_stream_rows(rows, args, tmp, corpus)
        if "unigram" in kinds:
            _unigram_rows(rows, args, tmp, corpus)
        if args.paired > 0:
            _paired_ratios(args, kinds, fixtures, tmp, corpus)


def _bpe_rows(rows: list, args, fixtures: Path, tmp: Path, corpus: Path) -> None:
    from tests.parity.bpe_training_pipelines import write_pipeline
    for pipeline in args.pipelines.split(","):
        like = write_pipeline(pipeline, fixtures, tmp)
        for kind in ("toksmith",) + (() if args.no_hf else ("hf",)):
            rows.append((f"{kind} ({pipeline})", run(kind, corpus, like, args.vocab, args.threads,
                                                      tmp / f"{kind}-{pipeline}.json")))
            _print(*rows[-1])
    rows.append(("sentencepiece bpe", run("spm", corpus, None, args.vocab, args.threads, tmp / "spm")))
    _print(*rows[-1])
    rows.append(("toksmith spm-bpe", run("toksmith-spm-bpe", corpus, None, args.vocab, args.threads,
                                         tmp / "toksmith-spm-bpe.model")))
    _print(*rows[-1])
    results = dict(rows)
    spm = results["sentencepiece bpe"]
    ours = results["toksmith spm-bpe"]
    if "error" not in spm and "error" not in ours:
        print(f"spm-bpe: toksmith.train_sentencepiece_bpe {ours['wall'] / spm['wall']:.2f}x sentencepiece's BPE "
              f"wall time (user CPU {ours['user'] / spm['user']:.2f}x), peak RSS {ours['rss_mb']:.0f} vs "
              f"{spm['rss_mb']:.0f} MB")
    for pipeline in args.pipelines.split(","):
        ours, hf = results[f"toksmith ({pipeline})"], results.get(f"hf ({pipeline})", {"error": "skipped"})
        if "error" in ours or "error" in hf:
            continue
        line = (f"{pipeline}: toksmith {hf['wall'] / ours['wall']:.1f}x faster than HF (user CPU "
                f"{hf['user'] / ours['user']:.1f}x), peak RSS {ours['rss_mb']:.0f} vs {hf['rss_mb']:.0f} MB")
        if "error" not in spm:
            line += (f"; vs sentencepiece {spm['wall'] / ours['wall']:.2f}x (user CPU "
                     f"{spm['user'] / ours['user']:.2f}x), peak RSS {spm['rss_mb']:.0f} MB")
        print(line)


def _unigram_rows(rows: list, args, tmp: Path, corpus: Path) -> None:
    names = {"toksmith-unigram": "toksmith unigram", "spm-unigram": "sentencepiece unigram",
             "hf-unigram": "hf UnigramTrainer"}
    results = {}
    for kind in ("toksmith-unigram", "spm-unigram") + (() if args.no_hf else ("hf-unigram",)):
        out = tmp / (kind + (".model" if kind == "toksmith-unigram" else ".json" if kind == "hf-unigram" else ""))
        results[kind] = run(kind, corpus, None, args.vocab, args.threads, out)
        rows.append((names[kind], results[kind]))
        _print(*rows[-1])
    ours, spm = results["toksmith-unigram"], results["spm-unigram"]
    if "error" not in ours and "error" not in spm:
        line = (f"unigram: toksmith {ours['wall'] / spm['wall']:.2f}x sentencepiece's wall time (user CPU "
                f"{ours['user'] / spm['user']:.2f}x), peak RSS {ours['rss_mb']:.0f} vs {spm['rss_mb']:.0f} MB")
        hf = results.get("hf-unigram", {"error": "skipped"})
        if "error" not in hf:
            line += f"; HF {hf['wall'] / ours['wall']:.1f}x slower than toksmith, {hf['rss_mb']:.0f} MB"
        print(line)


def _byte_stream_rows(rows: list, args, tmp: Path, corpus: Path) -> None:
    results = dict(rows)
    if "sentencepiece bpe" not in results:
        rows.append(("sentencepiece bpe", run("spm", corpus, None, args.vocab, args.threads, tmp / "spm")))
        _print(*rows[-1])
    byte_like = _byte_stream_pipeline(tmp)
    for name, kind, like in (("toksmith byte-stream", "bytes", None),
                             ("toksmith byte-stream ascii_only", "ascii", None)) + (
            () if args.no_hf else (("hf (ByteLevel no regex, lines)", "hf", byte_like),)):
        rows.append((name, run(kind, corpus, like, args.vocab, args.threads, tmp / f"{kind}-bytes.json")))
        _print(*rows[-1])
    results = dict(rows)
    ours, spm = results["toksmith byte-stream"], results["sentencepiece bpe"]
    hf = results.get("hf (ByteLevel no regex, lines)", {"error": "skipped"})
    if "error" in ours:
        return
    line = f"byte-stream: peak RSS {ours['rss_mb']:.0f} MB"
    if "error" not in hf:
        line += (f"; {hf['wall'] / ours['wall']:.1f}x faster than HF on ByteLevel without regex (user CPU "
                 f"{hf['user'] / ours['user']:.1f}x, {hf['rss_mb']:.0f} MB)")
    if "error" not in spm:
        line += (f"; vs sentencepiece {spm['wall'] / ours['wall']:.2f}x (user CPU "
                 f"{spm['user'] / ours['user']:.2f}x), peak RSS {spm['rss_mb']:.0f} MB")
    print(line)


def _byte_stream_pipeline(tmp: Path) -> Path:
    """A tokenizer.json (made by tokenizers) with no pre-tokenization: BPE behind a
    ByteLevel pre-tokenizer without its regex."""
    from tokenizers import Tokenizer, decoders, pre_tokenizers
    from tokenizers.models import BPE
    tok = Tokenizer(BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    path = tmp / "byte-stream.tokenizer.json"
    tok.save(str(path))
    return path


def _paired_ratios(args, kinds: list[str], fixtures: Path, tmp: Path, corpus: Path) -> None:
    """toksmith's wall time over sentencepiece's, round by round (see the module docstring)."""
    from tests.parity.bpe_training_pipelines import write_pipeline
    pairs = []          # (label, toksmith kind, its like file, sentencepiece kind)
    if "bpe" in kinds:
        for pipeline in args.pipelines.split(","):
            pairs.append((f"toksmith ({pipeline}) / sentencepiece bpe", "toksmith",
                          write_pipeline(pipeline, fixtures, tmp), "spm"))
        pairs.append(("toksmith spm-bpe / sentencepiece bpe", "toksmith-spm-bpe", None, "spm"))
    if "bytes" in kinds:
        pairs.append(("toksmith byte-stream / sentencepiece bpe", "bytes", None, "spm"))
    if "unigram" in kinds:
        pairs.append(("toksmith unigram / sentencepiece unigram", "toksmith-unigram", None, "spm-unigram"))
    print(f"paired: {args.paired} rounds, toksmith then sentencepiece in each; wall-time ratio")
    print(f"{'pair':44} {'median':>7} {'range':>12}")
    for label, ours_kind, like, spm_kind in pairs:
        ratios = []
        suffix = ".json" if ours_kind in ("toksmith", "bytes") else ".model"
        for _ in range(args.paired):
            ours = _run_once(ours_kind, corpus, like, args.vocab, args.threads, tmp / f"paired-{ours_kind}{suffix}")
            spm = _run_once(spm_kind, corpus, None, args.vocab, args.threads, tmp / f"paired-{spm_kind}")
            if "error" in ours or "error" in spm:
                ratios = []
                print(f"{label:44} unavailable: {ours.get('error') or spm.get('error')}")
                break
            ratios.append(ours["wall"] / spm["wall"])
        if ratios:
            print(f"{label:44} {statistics.median(ratios):7.2f} {min(ratios):5.2f}-{max(ratios):<5.2f}")


def _print(name: str, r: dict) -> None:
    if "error" in r:
        print(f"{name:34} unavailable: {r['error']}")
    else:
        spread = f" {r['wall_min']:5.2f}-{r['wall_max']:<5.2f}" if REPEATS > 1 else ""
        print(f"{name:34} {r['wall']:8.2f} {r['user']:8.2f} {r['rss_mb']:8.0f} {r['vocab']:7d}{spread}")


if __name__ == "__main__":
    main()
