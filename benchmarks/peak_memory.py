"""Peak memory of loading a tokenizer.json and encoding the corpora: toksmith beside HF
tokenizers, tokie and kitoken, each library in a process of its own.

For every (file, library): a child process imports the library, notes its peak RSS
(the baseline), loads the file and notes the peak again (printed: "load MB", the growth),
reads the corpora, then encodes every line one call each (results dropped) and prints
how far encoding raised the peak beyond that ("encode MB"). A library that cannot load a
file is listed as unavailable. `--load-only` skips the corpora (load MB only).

    python benchmarks/peak_memory.py ../shared/fixtures [--load-only]
"""
from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CORPORA = ("man_en.txt", "man_de.txt", "code_python_stdlib.py.txt", "man_zh_CN.txt", "man_ja.txt")

# library -> (import line, load expression with {path}, encode expression of one line `s` on `t`)
LIBRARIES = {
    "toksmith": ("import toksmith", "toksmith.load({path!r})", "t.encode(s, add_special=False)"),
    "hf-tokenizers": ("import tokenizers", "tokenizers.Tokenizer.from_file({path!r})",
                      "t.encode(s, add_special_tokens=False).ids"),
    "tokie": ("import tokie", "tokie.Tokenizer.from_json({path!r})", "t.encode(s, add_special_tokens=False).ids"),
    "kitoken": ("from kitoken import Kitoken", "Kitoken.from_tokenizers_file({path!r})", "t.encode(s)"),
}

CHILD = """
import json, resource, sys
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
{import_line}
base = peak_mb()
t = {load}
loaded = peak_mb()
lines = []
for name in ({corpora!r} if {encode_too!r} else ()):
    with open({root!r} + "/corpus/" + name, encoding="utf-8", newline="") as f:
        lines += [line[:-1] if line.endswith("\\n") else line for line in f]
before = peak_mb()
for s in lines:
    {encode}
print(json.dumps({{"load": loaded - base, "encode": peak_mb() - before}}))
"""


def measure(library: str, path: Path, root: Path, encode_too: bool = True) -> str:
    import_line, load, encode = LIBRARIES[library]
    code = CHILD.format(import_line=import_line, corpora=CORPORA, root=str(root), encode_too=encode_too,
                        load=load.format(path=str(path)), encode=encode)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        return f"unavailable: {last[:90]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return f"{result['load']:>9.1f}" + (f"{result['encode']:>12.1f}" if encode_too else "")


def tokenizer_files(root: Path, tmp: Path) -> dict[str, Path]:
    """The tokenizer.json files measured (Llama 3's unpacked, GPT-2's built with tokenizers)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    llama3 = tmp / "llama3.json"
    llama3.write_bytes(gzip.decompress((root / "hf/llama3/tokenizer.json.gz").read_bytes()))
    gpt2 = Tokenizer(models.BPE.from_file(str(root / "hf/gpt2/vocab.json"), str(root / "hf/gpt2/merges.txt")))
    gpt2.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    gpt2.decoder = decoders.ByteLevel()
    gpt2.save(str(tmp / "gpt2.json"))
    return {"Llama 3": llama3, "GPT-2": tmp / "gpt2.json",
            "rut5-large (Unigram)": root / "hf/rut5-large/tokenizer.json",
            "all-MiniLM-L6-v2 (WordPiece)": root / "hf/all-MiniLM-L6-v2/tokenizer.json"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixtures", nargs="?", default="../shared/fixtures")
    parser.add_argument("--load-only", action="store_true", help="measure loading only, not encoding")
    args = parser.parse_args()
    root = Path(args.fixtures).resolve()
    print("peak RSS growth, MB: by loading (over the imported library)" + ("" if args.load_only else
          f", then by encoding {', '.join(CORPORA)} one call per line (over the loaded tokenizer and the read corpora)"))
    with tempfile.TemporaryDirectory() as tmp:
        for label, path in tokenizer_files(root, Path(tmp)).items():
            print(f"\n== {label}\n{'library':<16}{'load MB':>9}" + ("" if args.load_only else f"{'encode MB':>12}"))
            for library in LIBRARIES:
                print(f"{library:<16}{measure(library, path, root, not args.load_only)}")


if __name__ == "__main__":
    main()
