"""PLaMo-2 throughput and load time: toksmith beside llama.cpp (llama-cpp-python's low-level API).

Both read the same GGUF: one written as llama.cpp's converter (`_set_vocab_plamo`) lays a
PLaMo-2 vocabulary out, from the 32k scored pieces of spm/t5_base_japanese_spiece.model
(U+2581 made a space; see tests/plamo2_gguf.py). Every tokenizer encodes the same lines,
one call per line (llama_tokenize with add_special and parse_special off), on one thread;
llama.cpp has no batch API. "same ids" compares with llama.cpp's ids.

    python benchmarks/bench_plamo2.py ../shared/fixtures [--repeat 3]
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from _common import bench_model, llama_cpp_peer, parse_args, print_preamble, read_corpora, toksmith_peer

SPM_MODEL = "spm/t5_base_japanese_spiece.model"
CORPORA = ("man_en.txt", "man_ja.txt", "wagahaiwa_nekodearu.txt", "code_python_stdlib.py.txt", "man_zh_CN.txt")


def plamo2_gguf(root: Path) -> Path:
    """The PLaMo-2 GGUF of the t5-ja pieces (written once, in the temporary directory)."""
    path = Path(tempfile.gettempdir()) / "toksmith-bench-plamo2.gguf"
    if not path.exists():
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.plamo2_gguf import sentencepiece_pieces, write_plamo2_gguf
        partial = path.with_suffix(".part")
        write_plamo2_gguf(partial, sentencepiece_pieces(root / SPM_MODEL), pads=12)
        partial.replace(path)
    return path


def main() -> None:
    args = parse_args(__doc__)
    root = Path(args.fixtures)
    path = plamo2_gguf(root)
    corpora = read_corpora(root, CORPORA)
    print_preamble(args.repeat)
    table = {"toksmith": toksmith_peer(path), "llama.cpp": llama_cpp_peer(path)}
    bench_model("PLaMo-2 (t5-ja pieces, 32k)", f"{SPM_MODEL} as a plamo2 GGUF", table, corpora, args.repeat,
                reference="llama.cpp")


if __name__ == "__main__":
    main()
