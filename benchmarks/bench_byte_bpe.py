"""Byte-level BPE throughput and load time: toksmith beside tiktoken, HF tokenizers, tokie and kitoken.

Models: OpenAI's cl100k_base, o200k_base and r50k_base (GPT-2) rank files, Llama 3
(toksmith reads the llama.cpp GGUF, the peers the same vocabulary's tokenizer.json), and
the tokenizer.json files themselves read by every library (llama3-json: Llama 3's;
gpt2-json: GPT-2's, built with `tokenizers` from hf/gpt2).
Every tokenizer encodes the same lines, one call per line, on one thread (first pass on
a freshly loaded tokenizer, warm pass beside it), then all lines as one batch on all
cores. Then each corpus file as ONE long document in one call. A library that is
missing or cannot load a model is reported as unavailable and the others still run.

    python benchmarks/bench_byte_bpe.py ../shared/fixtures [--repeat 3]
"""
from __future__ import annotations

import gzip
import os
import tempfile
from pathlib import Path

from _common import (Peer, bench_model, first_and_warm_pass, in_child, parse_args, print_preamble, read_corpora,
                     tokenizer_json_peers, toksmith_peer)

CORPORA = ("man_en.txt", "man_de.txt", "code_python_stdlib.py.txt", "man_zh_CN.txt", "man_ja.txt")
TIKTOKEN_FILES = {"cl100k_base": "tiktoken/cl100k_base.tiktoken",
                  "o200k_base": "tiktoken/o200k_base.tiktoken",
                  "r50k_base": "tiktoken/r50k_base.tiktoken"}


def tiktoken_encoding(name: str, path: Path):
    """tiktoken's own constructor for OpenAI encoding `name`, reading `path` (no download)."""
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as openai_public

    os.environ["TIKTOKEN_CACHE_DIR"] = ""   # read the file itself, never a cached copy
    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda url, expected_hash=None: \
        tiktoken.load.load_tiktoken_bpe(str(path), expected_hash=expected_hash)
    try:
        return tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())
    finally:
        openai_public.load_tiktoken_bpe = original


def tiktoken_peers(name: str, path: Path) -> dict[str, Peer]:
    def load_kitoken():
        from kitoken import Kitoken
        return Kitoken.from_tiktoken_file(str(path))

    return {
        "toksmith": toksmith_peer(path),
        "tiktoken": Peer(lambda: tiktoken_encoding(name, path), lambda t, s: t.encode_ordinary(s),
                         lambda t, xs: t.encode_ordinary_batch(xs, num_threads=os.cpu_count())),
        "kitoken": Peer(load_kitoken, lambda t, s: t.encode(s), lambda t, xs: t.encode_all(xs)),
    }


def gpt2_tokenizer_json(root: Path, out: Path) -> Path:
    """GPT-2's tokenizer.json, built with `tokenizers` from hf/gpt2's vocab.json + merges.txt."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    tok = Tokenizer(models.BPE.from_file(str(root / "hf/gpt2/vocab.json"), str(root / "hf/gpt2/merges.txt")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.save(str(out))
    return out


def long_documents(root: Path, repeat: int) -> None:
    """Each corpus file as one text in one call: toksmith vs tiktoken (cl100k, o200k)."""
    print("\n== one long document per call (the whole corpus file), one thread, first pass")
    print(f"{'model':<14}{'corpus':<28}{'toksmith MB/s':>14}{'tiktoken MB/s':>15}{'x':>7}")
    for name in ("cl100k_base", "o200k_base"):
        path = root / TIKTOKEN_FILES[name]
        ours, theirs = toksmith_peer(path), tiktoken_peers(name, path)["tiktoken"]
        for corpus in CORPORA:
            text = (root / "corpus" / corpus).read_text(encoding="utf-8")
            mb = len(text.encode()) / 1e6
            a = in_child(lambda: first_and_warm_pass(repeat, ours.load, lambda t: ours.one(t, text))[0])
            b = in_child(lambda: first_and_warm_pass(repeat, theirs.load, lambda t: theirs.one(t, text))[0])
            print(f"{name:<14}{corpus:<28}{mb / a:>14.1f}{mb / b:>15.1f}{b / a:>7.2f}")


def main() -> None:
    args = parse_args(__doc__, extra=lambda p: p.add_argument(
        "--only", action="append", help="run only this model (cl100k_base, o200k_base, r50k_base, llama3, "
                                        "llama3-json, gpt2-json, long); repeatable"))
    root = Path(args.fixtures)
    wanted = set(args.only or ("cl100k_base", "o200k_base", "r50k_base", "llama3", "llama3-json", "gpt2-json",
                               "long"))
    corpora = read_corpora(root, CORPORA)
    print_preamble(args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        for name, rel in TIKTOKEN_FILES.items():
            if name not in wanted:
                continue
            table = tiktoken_peers(name, root / rel)
            if name == "r50k_base":
                table.update(tokenizer_json_peers(gpt2_tokenizer_json(root, Path(tmp) / "gpt2.json")))
            bench_model(name, rel, table, corpora, args.repeat, reference="tiktoken")
        llama3_json = Path(tmp) / "llama3.json"
        llama3_json.write_bytes(gzip.decompress((root / "hf/llama3/tokenizer.json.gz").read_bytes()))
        if "llama3" in wanted:
            table = {"toksmith": toksmith_peer(root / "gguf/ggml-vocab-llama-bpe.gguf"), **tokenizer_json_peers(llama3_json)}
            bench_model("Llama 3 (toksmith: GGUF; peers: tokenizer.json)", "gguf/ggml-vocab-llama-bpe.gguf",
                        table, corpora, args.repeat, reference="hf-tokenizers")
        if "llama3-json" in wanted:
            table = {"toksmith": toksmith_peer(llama3_json), **tokenizer_json_peers(llama3_json)}
            bench_model("Llama 3 tokenizer.json (every library reads it)", "hf/llama3/tokenizer.json.gz",
                        table, corpora, args.repeat, reference="hf-tokenizers")
        if "gpt2-json" in wanted:
            gpt2_json = gpt2_tokenizer_json(root, Path(tmp) / "gpt2.json")
            table = {"toksmith": toksmith_peer(gpt2_json), **tokenizer_json_peers(gpt2_json)}
            bench_model("GPT-2 tokenizer.json (every library reads it)", "hf/gpt2 (built with tokenizers)",
                        table, corpora, args.repeat, reference="hf-tokenizers")
    if "long" in wanted:
        long_documents(root, args.repeat)


if __name__ == "__main__":
    main()
