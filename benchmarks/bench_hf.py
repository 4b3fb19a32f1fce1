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

from _common import Peer, bench_model, parse_args, print_preamble, read_corpora

CORPORA = ("man_ru.txt", "man_en.txt", "code_python_stdlib.py.txt", "man_ja.txt", "wagahaiwa_nekodearu.txt")
MODELS = {"rut5-large (Unigram, 32k)": "hf/rut5-large/tokenizer.json"}


def peers(tokenizer_json: Path) -> dict[str, Peer]:
    def load_toksmith():
        import toksmith
        return toksmith.load(tokenizer_json)

    def load_hf():
        from tokenizers import Tokenizer
        return Tokenizer.from_file(str(tokenizer_json))

    def load_tokie():
        import tokie
        return tokie.Tokenizer.from_json(str(tokenizer_json))

    def load_kitoken():
        from kitoken import Kitoken
        return Kitoken.from_tokenizers_file(str(tokenizer_json))

    return {
        "toksmith": Peer(load_toksmith, lambda t, s: t.encode(s, add_special=False),
                         lambda t, xs: t.encode_batch(xs, add_special=False)),
        "hf-tokenizers": Peer(load_hf, lambda t, s: t.encode(s, add_special_tokens=False).ids,
                              lambda t, xs: [e.ids for e in t.encode_batch(xs, add_special_tokens=False)]),
        "tokie": Peer(load_tokie, lambda t, s: t.encode(s, add_special_tokens=False).ids,
                      lambda t, xs: [e.ids for e in t.encode_batch(xs, add_special_tokens=False)]),
        "kitoken": Peer(load_kitoken, lambda t, s: t.encode(s), lambda t, xs: t.encode_all(xs)),
    }


def main() -> None:
    args = parse_args(__doc__)
    root = Path(args.fixtures)
    corpora = read_corpora(root, CORPORA)
    print_preamble(args.repeat)
    for label, rel in MODELS.items():
        bench_model(label, rel, peers(root / rel), corpora, args.repeat, reference="hf-tokenizers")


if __name__ == "__main__":
    main()
