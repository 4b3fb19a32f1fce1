"""PLaMo-2 throughput and load time: toksmith beside llama.cpp (llama-cpp-python's low-level API).

Both read the same GGUF: one written as llama.cpp's converter (`_set_vocab_plamo`) lays a
PLaMo-2 vocabulary out, from the 32k scored pieces of spm/t5_base_japanese_spiece.model
(U+2581 made a space; see tests/plamo2_gguf.py). Every tokenizer encodes the same lines,
one call per line (llama_tokenize with add_special and parse_special off), on one thread;
llama.cpp has no batch API. "same ids" compares with llama.cpp's ids.

    python benchmarks/bench_plamo2.py ../shared/fixtures [--repeat 3]
"""
from __future__ import annotations

import ctypes
import sys
import tempfile
from pathlib import Path

from _common import Peer, bench_model, parse_args, print_preamble, read_corpora, toksmith_peer

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


class LlamaCppVocab:
    """A vocab-only llama.cpp model; `encode` is one llama_tokenize call."""

    def __init__(self, path: Path):
        import llama_cpp as lc
        self._lc = lc
        self._quiet = lc.llama_log_callback(lambda level, text, data: None)
        lc.llama_log_set(self._quiet, ctypes.c_void_p(0))
        lc.llama_backend_init()
        params = lc.llama_model_default_params()
        params.vocab_only = True
        self._model = lc.llama_model_load_from_file(str(path).encode(), params)
        if not self._model:
            raise ValueError(f"llama.cpp could not load {path}")
        self._vocab = lc.llama_model_get_vocab(self._model)
        self._buf = (lc.llama_token * 4096)()

    def encode(self, text: str) -> list[int]:
        raw = text.encode()
        if len(raw) + 8 > len(self._buf):
            self._buf = (self._lc.llama_token * (2 * len(raw) + 8))()
        n = self._lc.llama_tokenize(self._vocab, raw, len(raw), self._buf, len(self._buf), False, False)
        return self._buf[:n]


def main() -> None:
    args = parse_args(__doc__)
    root = Path(args.fixtures)
    path = plamo2_gguf(root)
    corpora = read_corpora(root, CORPORA)
    print_preamble(args.repeat)
    table = {"toksmith": toksmith_peer(path),
             "llama.cpp": Peer(lambda: LlamaCppVocab(path), lambda t, s: t.encode(s), None)}
    bench_model("PLaMo-2 (t5-ja pieces, 32k)", f"{SPM_MODEL} as a plamo2 GGUF", table, corpora, args.repeat,
                reference="llama.cpp")


if __name__ == "__main__":
    main()
