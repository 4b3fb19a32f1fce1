"""RWKV throughput: toksmith beside the rwkv package's TRIE_TOKENIZER and llama.cpp.

Two tables: RWKV's own rwkv_vocab_v20230424.txt read by toksmith and by the rwkv
package (TRIE_TOKENIZER, pure Python); then a GGUF written from that file with the
`gguf` package as llama.cpp's converter writes it (tests/rwkv_gguf.py), read by toksmith
and by llama.cpp (llama_tokenize through llama-cpp-python's ctypes API, one call a line:
_common.llama_cpp_peer). Every tokenizer encodes the same lines, one
call per line, on one thread (first pass on a freshly loaded tokenizer, warm pass beside
it), each library in a forked process of its own; toksmith's batch API is timed beside.
"same ids" compares with the reference of each table.

    python benchmarks/bench_rwkv.py ../shared/fixtures [--repeat 3]
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from _common import Peer, bench_model, llama_cpp_peer, parse_args, print_preamble, read_corpora, toksmith_peer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # tests.rwkv_gguf

CORPORA = ("man_en.txt", "man_de.txt", "man_ru.txt", "code_python_stdlib.py.txt", "man_zh_CN.txt", "man_ja.txt",
           "markup_html.txt")
VOCAB_TXT = "rwkv/rwkv_vocab_v20230424.txt"


def _load_trie_tokenizer(vocab_txt: Path):
    from rwkv.rwkv_tokenizer import TRIE_TOKENIZER
    return TRIE_TOKENIZER(str(vocab_txt))


def txt_peers(vocab_txt: Path) -> dict[str, Peer]:
    return {"toksmith": toksmith_peer(vocab_txt),
            "rwkv": Peer(lambda: _load_trie_tokenizer(vocab_txt), lambda t, s: t.encode(s), None)}


def gguf_peers(gguf_path: Path) -> dict[str, Peer]:
    return {"toksmith": toksmith_peer(gguf_path), "llama.cpp": llama_cpp_peer(gguf_path)}


def main() -> None:
    args = parse_args(__doc__)
    root = Path(args.fixtures)
    vocab_txt = root / VOCAB_TXT
    corpora = read_corpora(root, CORPORA)
    print_preamble(args.repeat)
    bench_model("RWKV world vocabulary (.txt)", VOCAB_TXT, txt_peers(vocab_txt), corpora, args.repeat,
                reference="rwkv")
    from tests.rwkv_gguf import write_rwkv_world_gguf
    with tempfile.TemporaryDirectory() as tmp:
        gguf_path = Path(write_rwkv_world_gguf(vocab_txt, Path(tmp) / "rwkv-world.gguf"))
        bench_model("RWKV world vocabulary (GGUF, as llama.cpp's converter writes it)", "rwkv-world.gguf",
                    gguf_peers(gguf_path), corpora, args.repeat, reference="llama.cpp")


if __name__ == "__main__":
    main()
