"""SentencePiece models the test suite trains itself, one per option real models use."""
from __future__ import annotations

from pathlib import Path

# name -> sentencepiece trainer options (model_type is added by the caller)
UNIGRAM_CONFIGS: dict[str, dict] = {
    # byte fallback + user-defined symbols (overlapping ordinary text) + control symbols
    "nmt_nfkc_bytes_userdef_control": dict(
        normalization_rule_name="nmt_nfkc", byte_fallback=True, vocab_size=3000,
        user_defined_symbols=["<sep>", "[MASK]", "http://", "ab", "ing", "の", "\u2581the"],
        control_symbols=["<ctrl>", "<extra_id_0>"], character_coverage=0.995),
    "nfkc_no_dummy_prefix": dict(normalization_rule_name="nfkc", add_dummy_prefix=False, vocab_size=3000),
    "identity_keep_whitespace": dict(normalization_rule_name="identity", remove_extra_whitespaces=False,
                                     vocab_size=3000, byte_fallback=True),
    "nmt_nfkc_cf_split_digits": dict(normalization_rule_name="nmt_nfkc_cf", split_digits=True,
                                     vocab_size=3000),
    "large_vocab_32k": dict(normalization_rule_name="nmt_nfkc", vocab_size=32000, hard_vocab_limit=False,
                            character_coverage=0.9999),
}

TRAINING_CORPORA = ("botchan.txt", "man_en.txt", "man_ja.txt", "man_de.txt", "man_ru.txt",
                    "man_zh_CN.txt", "code_python_stdlib.py.txt")


def write_training_text(fixtures: Path, out: Path) -> Path:
    parts = [(fixtures / "corpus" / name).read_text(encoding="utf-8") for name in TRAINING_CORPORA]
    out.write_text("".join(parts), encoding="utf-8")
    return out


def train(name: str, options: dict, model_type: str, text: Path, out_dir: Path) -> Path:
    import sentencepiece as spm
    prefix = out_dir / f"{model_type}_{name}"
    spm.SentencePieceTrainer.train(
        input=str(text), model_prefix=str(prefix), model_type=model_type,
        input_sentence_size=60000, shuffle_input_sentence=True, seed_sentencepiece_size=200000,
        num_threads=2, minloglevel=2, **options)
    return prefix.with_suffix(".model")
