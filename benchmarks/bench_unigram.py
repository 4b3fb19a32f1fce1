"""Unigram throughput and load time: toksmith beside sentencepiece, HF tokenizers and tokie.

Every tokenizer encodes the same lines, one call per line (per-call overhead
counts), on one thread; then the whole corpus as one batch on all cores. The
HF and tokie tokenizers are built from the same .model (Precompiled charsmap
normalizer, Metaspace pre-tokenizer, Unigram model), as HF's T5 converter does.

    python benchmarks/bench_unigram.py ../shared/fixtures [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

MODELS = {"t5-ja (32k)": "spm/t5_base_japanese_spiece.model",
          "spm-test (1k)": "spm/sentencepiece_test_model.model"}
CORPORA = ("man_en.txt", "man_ja.txt", "botchan.txt", "wagahaiwa_nekodearu.txt")


def build_hf_json(model_path: Path, out: Path) -> Path:
    """A tokenizer.json equivalent to a sentencepiece Unigram .model."""
    from sentencepiece import sentencepiece_model_pb2 as pb
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    proto = pb.ModelProto()
    proto.ParseFromString(model_path.read_bytes())
    vocab = [(p.piece, p.score) for p in proto.pieces]
    unk = next(i for i, p in enumerate(proto.pieces) if p.type == 2)
    tok = Tokenizer(models.Unigram(vocab, unk_id=unk, byte_fallback=proto.trainer_spec.byte_fallback))
    steps = []
    if proto.normalizer_spec.precompiled_charsmap:
        steps.append(normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap))
    steps.append(normalizers.Replace(Regex(" {2,}"), " "))
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.save(str(out))
    return out


def encoders(model_path: Path, hf_json: Path):
    """name -> (load(), encode_one(tok, text) -> ids, encode_batch(tok, texts) -> list[ids])."""
    import sentencepiece as spm

    import toksmith
    out = {
        "toksmith": (lambda: toksmith.load(model_path), lambda t, s: t.encode(s, add_special=False),
                     lambda t, xs: t.encode_batch(xs, add_special=False)),
        "sentencepiece": (lambda: spm.SentencePieceProcessor(model_file=str(model_path)),
                          lambda t, s: t.encode(s),
                          lambda t, xs: t.encode(xs, num_threads=os.cpu_count())),
    }
    try:
        from tokenizers import Tokenizer
        out["hf-tokenizers"] = (lambda: Tokenizer.from_file(str(hf_json)),
                                lambda t, s: t.encode(s, add_special_tokens=False).ids,
                                lambda t, xs: [e.ids for e in t.encode_batch(xs, add_special_tokens=False)])
    except ImportError:
        pass
    try:
        import tokie
        out["tokie"] = (lambda: tokie.Tokenizer.from_json(str(hf_json)),
                        lambda t, s: t.encode(s, add_special_tokens=False).ids,
                        lambda t, xs: [e.ids for e in t.encode_batch(xs, add_special_tokens=False)])
    except ImportError:
        pass
    return out


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixtures", nargs="?", default="../shared/fixtures")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = Path(args.fixtures)
    corpora = {name: (root / "corpus" / name).read_text(encoding="utf-8").split("\n") for name in CORPORA}
    print(f"cores: {os.cpu_count()}; lines encoded one call each; MB/s of UTF-8 input; best of {args.repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        for label, rel in MODELS.items():
            model_path = root / rel
            hf_json = build_hf_json(model_path, Path(tmp) / f"{model_path.stem}.json")
            table = encoders(model_path, hf_json)
            loaded = {name: load() for name, (load, _, _) in table.items()}
            load_ms = {name: 1000 * statistics.median(best_of(1, load) for _ in range(5))
                       for name, (load, _, _) in table.items()}
            print(f"\n== {label}: {rel}")
            print("load ms: " + ", ".join(f"{n} {v:.1f}" for n, v in load_ms.items()))
            header = f"{'corpus':<26}{'tokenizer':<15}{'1-thread MB/s':>14}{'batch MB/s':>12}" \
                     f"{'toksmith x':>12}{'same ids as spm':>17}"
            print(header)
            for corpus, lines in corpora.items():
                mb = sum(len(s.encode()) for s in lines) / 1e6
                reference = loaded["sentencepiece"].encode(lines)
                single = {}
                for name, (_, one, batch) in table.items():
                    tok = loaded[name]
                    t1 = best_of(args.repeat, lambda: [one(tok, s) for s in lines])
                    tb = best_of(args.repeat, lambda: batch(tok, lines))
                    same = sum(a == b for a, b in zip(batch(tok, lines), reference)) / len(lines)
                    single[name] = mb / t1
                    ratio = single["toksmith"] / single[name] if "toksmith" in single else 1.0
                    print(f"{corpus:<26}{name:<15}{mb / t1:>14.1f}{mb / tb:>12.1f}{ratio:>12.2f}"
                          f"{100 * same:>16.2f}%")


if __name__ == "__main__":
    main()
