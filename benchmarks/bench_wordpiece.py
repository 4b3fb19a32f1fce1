"""WordPiece throughput, load time and peak memory: toksmith beside HF tokenizers, tokie and kitoken.

Model: all-MiniLM-L6-v2's tokenizer.json (BertNormalizer, BertPreTokenizer, WordPiece);
every library loads the same file. Then the same bert-base uncased vocabulary as llama.cpp
reads it, the BGE GGUF (llama.cpp's WPM): toksmith and llama.cpp (llama-cpp-python) load
the GGUF, tokie and HF tokenizers the tokenizer.json (ids compared with llama.cpp's). Every tokenizer encodes the same lines, one call per
line, on one thread (first pass on a freshly loaded tokenizer, warm pass beside it), then
all lines as one batch on all cores. Before timing, each peer's ids are compared with
HF tokenizers' on every line ("same ids"). Then the peak memory of loading the model and
encoding every corpus once, each library in a fresh process (max RSS, minus that of the
same process before it imported anything; Linux only).

    python benchmarks/bench_wordpiece.py ../shared/fixtures [--repeat 3]
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _common import (Peer, bench_model, llama_cpp_peer, parse_args, print_preamble, read_corpora,
                     tokenizer_json_peers, toksmith_peer)

CORPORA = ("man_en.txt", "man_de.txt", "man_ru.txt", "code_python_stdlib.py.txt", "man_zh_CN.txt", "man_ja.txt",
           "markup_html.txt")
MODEL = "hf/all-MiniLM-L6-v2/tokenizer.json"
GGUF = "gguf/ggml-vocab-bert-bge.gguf"


def peers(tokenizer_json: Path) -> dict[str, Peer]:
    """toksmith, HF tokenizers, tokie and kitoken, each reading `tokenizer_json`."""
    return {"toksmith": toksmith_peer(tokenizer_json), **tokenizer_json_peers(tokenizer_json)}


# VmHWM (the peak RSS of this process image, kB): ru_maxrss would carry the parent's peak over exec.
_MEMORY_PROBE = r"""
import json, sys
def peak_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
sys.path[:0] = json.loads(sys.argv[4])
before = peak_kb()
sys.path.insert(0, sys.argv[3])
from bench_wordpiece import peers
from pathlib import Path
peer = peers(Path(sys.argv[1]))[sys.argv[2]]
tok = peer.load()
loaded = peak_kb()
for name in json.loads(sys.argv[5]):
    for line in open(name, encoding="utf-8").read().split("\n"):
        peer.one(tok, line)
done = peak_kb()
print(json.dumps([before, loaded, done]))
"""


def peak_memory(tokenizer_json: Path, corpus_files: list[Path]) -> None:
    """Each library in a fresh process: MB of max RSS after loading, and after encoding."""
    print("\npeak memory (peak RSS over the bare interpreter's, MB): after load / after encoding every corpus")
    here = str(Path(__file__).resolve().parent)
    for name in peers(tokenizer_json):
        args = [sys.executable, "-c", _MEMORY_PROBE, str(tokenizer_json), name, here, json.dumps(sys.path),
                json.dumps([str(p) for p in corpus_files])]
        run = subprocess.run(args, capture_output=True, text=True)
        if run.returncode != 0:
            print(f"  {name:<15} unavailable: {run.stderr.strip().splitlines()[-1] if run.stderr else run.returncode}")
            continue
        before, loaded, done = json.loads(run.stdout)
        print(f"  {name:<15} {(loaded - before) / 1024:8.1f} / {(done - before) / 1024:8.1f}")


def main() -> None:
    args = parse_args(__doc__)
    root = Path(args.fixtures)
    tokenizer_json = root / MODEL
    corpora = read_corpora(root, CORPORA)
    print_preamble(args.repeat)
    bench_model("all-MiniLM-L6-v2 (WordPiece)", MODEL, peers(tokenizer_json), corpora, args.repeat,
                reference="hf-tokenizers")
    json_peers = tokenizer_json_peers(tokenizer_json)
    bench_model("BGE GGUF (llama.cpp WPM; tokie and HF on the same vocabulary's tokenizer.json)", GGUF,
                {"toksmith": toksmith_peer(root / GGUF), "llama.cpp": llama_cpp_peer(root / GGUF),
                 "tokie": json_peers["tokie"], "hf-tokenizers": json_peers["hf-tokenizers"]},
                corpora, args.repeat, reference="llama.cpp")
    peak_memory(tokenizer_json, [root / "corpus" / name for name in CORPORA])


if __name__ == "__main__":
    main()
