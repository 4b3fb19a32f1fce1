"""tokenizer.json pipelines other than byte-level BPE: toksmith beside HF tokenizers, tokie
and kitoken, every library reading the same file.

Models: rut5-large (sberbank-ai/ruT5-large: Precompiled charsmap + Replace normalizers,
Metaspace pre-tokenizer, Unigram model, 103 special added tokens).
Every tokenizer encodes the same lines, one call per line, on one thread (first pass on a
freshly loaded tokenizer, warm pass beside it), then all lines as one batch on all cores.
A library that is missing or cannot load a model is reported as unavailable and the
others still run; "same ids" compares every library with HF tokenizers.

    python benchmarks/bench_hf.py ../shared/fixtures [--repeat 3]
"""
from __future__ import annotations

from pathlib import Path

from _common import Peer, bench_model, parse_args, print_preamble, read_corpora, tokenizer_json_peers, toksmith_peer

CORPORA = ("man_ru.txt", "man_en.txt", "code_python_stdlib.py.txt", "man_ja.txt", "wagahaiwa_nekodearu.txt")
MODELS = {"rut5-large (Unigram, 32k)": "hf/rut5-large/tokenizer.json"}


def peers(tokenizer_json: Path) -> dict[str, Peer]:
    """toksmith, HF tokenizers, tokie and kitoken, each reading `tokenizer_json`."""
    return {"toksmith": toksmith_peer(tokenizer_json), **tokenizer_json_peers(tokenizer_json)}


def main() -> None:
    args = parse_args(__doc__)
    root = Path(args.fixtures)
    corpora = read_corpora(root, CORPORA)
    print_preamble(args.repeat)
    for label, rel in MODELS.items():
        bench_model(label, rel, peers(root / rel), corpora, args.repeat, reference="hf-tokenizers")


if __name__ == "__main__":
    main()
