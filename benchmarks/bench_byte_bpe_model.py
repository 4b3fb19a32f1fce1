"""Byte-level BPE model stage alone: load times beside tiktoken and kitoken, and long pre-tokens.

Not the pipeline (no pre-tokenizer, no special tokens): this times what
`formats.tiktoken` / `formats.gguf` read and `ByteLevelVocab.build_model()` builds,
and one pre-token of N repeated characters (N log N expected). Best of --repeat
runs; run it on a quiet machine.

    python benchmarks/bench_byte_bpe_model.py ../shared/fixtures [--repeat 5] [--max-chars 8388608]
"""
from __future__ import annotations

import argparse
import gzip
import tempfile
import time
from pathlib import Path


def best_ms(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def load_times(fixtures: Path, repeat: int) -> None:
    import tiktoken
    import tiktoken.load

    from toksmith.formats.gguf import read_byte_level_gguf
    from toksmith.formats.tiktoken import PATTERN_REGEX, read_tiktoken
    print("load (ms, best of %d)" % repeat)
    for name in ("cl100k_base", "o200k_base"):
        path = fixtures / "tiktoken" / f"{name}.tiktoken"
        pattern = PATTERN_REGEX[read_tiktoken(path).pattern]
        row = {"toksmith": best_ms(lambda: read_tiktoken(path).vocab.build_model(), repeat),
               "tiktoken": best_ms(lambda: tiktoken.Encoding(
                   name=name, pat_str=pattern, mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
                   special_tokens={}), repeat)}
        try:
            import kitoken
            row["kitoken"] = best_ms(lambda: kitoken.Kitoken.from_tiktoken_file(str(path)), repeat)
        except Exception as e:   # a peer that cannot run is reported, not fatal
            row["kitoken"] = f"unavailable: {e}"
        print(f"  {name:12s} " + "  ".join(f"{k} {v:.0f}" if isinstance(v, float) else f"{k} {v}"
                                           for k, v in row.items()))
    gguf = fixtures / "gguf" / "ggml-vocab-llama-bpe.gguf"
    row = {"toksmith (GGUF)": best_ms(lambda: read_byte_level_gguf(gguf).vocab.build_model(), repeat)}
    with tempfile.TemporaryDirectory() as tmp:
        json_path = Path(tmp) / "tokenizer.json"
        json_path.write_bytes(gzip.decompress((fixtures / "hf" / "llama3" / "tokenizer.json.gz").read_bytes()))
        for label, load in (("kitoken (json)", lambda: __import__("kitoken").Kitoken.from_file(str(json_path))),
                            ("HF tokenizers (json)", lambda: __import__("tokenizers").Tokenizer.from_file(
                                str(json_path)))):
            try:
                row[label] = best_ms(load, repeat)
            except Exception as e:
                row[label] = f"unavailable: {e}"
    print("  llama3       " + "  ".join(f"{k} {v:.0f}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in row.items()))


def long_pieces(fixtures: Path, max_chars: int) -> None:
    from toksmith.formats.gguf import read_byte_level_gguf
    from toksmith.formats.tiktoken import read_tiktoken
    models = {"o200k": read_tiktoken(fixtures / "tiktoken" / "o200k_base.tiktoken").vocab.build_model(),
              "llama3": read_byte_level_gguf(fixtures / "gguf" / "ggml-vocab-llama-bpe.gguf").vocab.build_model()}
    sizes = [n for n in (1 << 17, 1 << 20, 1 << 23, 1 << 24) if n <= max_chars]
    print("one pre-token of N characters (s; the ratio is to the size 8x smaller)")
    for name, model in models.items():
        for label, unit in (("a", "a"), ("space", " "), ("cjk", "中"), ("digits", "0123456789"), ("emoji", "😀")):
            cells, last = [], None
            for n in sizes:
                data = (unit * (n // len(unit) + 1))[:n].encode()
                start = time.perf_counter()
                model.encode_split(data, [len(data)])
                took = time.perf_counter() - start
                cells.append(f"N={n}: {took:.2f}" + (f" (x{took / last:.1f})" if last else ""))
                last = took
            print(f"  {name:7s} {label:7s} " + "  ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixtures", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--max-chars", type=int, default=1 << 23)
    args = parser.parse_args()
    load_times(args.fixtures, args.repeat)
    long_pieces(args.fixtures, args.max_chars)


if __name__ == "__main__":
    main()
