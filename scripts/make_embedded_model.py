"""Regenerate src/toksmith/data/embedded.model, the tokenizer the package ships.

A Unigram model trained by the sentencepiece trainer on public-domain and
freely licensed fixture corpora (English, Japanese, German, Russian,
Chinese, Python code). Byte fallback is on, so no input is ever <unk>.

    python scripts/make_embedded_model.py ../shared/fixtures
"""
import shutil
import sys
import tempfile
from pathlib import Path

import sentencepiece as spm

CORPORA = ("botchan.txt", "wagahaiwa_nekodearu.txt", "man_en.txt", "man_de.txt", "man_ru.txt",
           "man_zh_CN.txt", "code_python_stdlib.py.txt")


def main(fixtures: str) -> None:
    out = Path(__file__).resolve().parent.parent / "src" / "toksmith" / "data" / "embedded.model"
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "train.txt"
        text.write_text("".join((Path(fixtures) / "corpus" / n).read_text(encoding="utf-8")
                                for n in CORPORA), encoding="utf-8")
        spm.SentencePieceTrainer.train(
            input=str(text), model_prefix=f"{tmp}/embedded", model_type="unigram", vocab_size=8000,
            normalization_rule_name="nmt_nfkc", byte_fallback=True, character_coverage=0.9995,
            input_sentence_size=200000, shuffle_input_sentence=True, num_threads=2, minloglevel=2)
        shutil.copy(f"{tmp}/embedded.model", out)
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/fixtures")
