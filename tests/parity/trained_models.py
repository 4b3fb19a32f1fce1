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

# name -> sentencepiece trainer options for model_type="bpe" (each trains in about a second)
BPE_CONFIGS: dict[str, dict] = {
    # byte fallback + user-defined symbols (overlapping ordinary text) + control symbols
    "nmt_nfkc_bytes_userdef_control": dict(
        normalization_rule_name="nmt_nfkc", byte_fallback=True, vocab_size=4000,
        user_defined_symbols=["<sep>", "[MASK]", "http://", "ab", "ing", "の", "\u2581the"],
        control_symbols=["<ctrl>", "<extra_id_0>"], character_coverage=0.995),
    # no byte fallback: characters outside the coverage become <unk> (one per run)
    "nmt_nfkc_no_byte_fallback": dict(normalization_rule_name="nmt_nfkc", byte_fallback=False,
                                      vocab_size=4000, character_coverage=0.99),
    "identity_keep_whitespace": dict(normalization_rule_name="identity", remove_extra_whitespaces=False,
                                     vocab_size=4000, byte_fallback=True),
    "nfkc_no_dummy_prefix": dict(normalization_rule_name="nfkc", add_dummy_prefix=False, vocab_size=4000,
                                 byte_fallback=True),
    "nmt_nfkc_cf_split_digits": dict(normalization_rule_name="nmt_nfkc_cf", split_digits=True,
                                     vocab_size=4000),
    # LLaMA 2's trainer options (identity, digits split, whitespace-only pieces, byte fallback)
    "llama_like_16k": dict(normalization_rule_name="identity", remove_extra_whitespaces=False,
                           split_digits=True, allow_whitespace_only_pieces=True, byte_fallback=True,
                           vocab_size=16000, hard_vocab_limit=False, character_coverage=0.99995),
}

# name -> (BPE_CONFIGS model it is made from, every n-th merged NORMAL piece marked UNUSED).
# sentencepiece still merges into an UNUSED piece, then re-splits it into the two
# pieces it was merged from (recursively) when emitting.
BPE_UNUSED_CONFIGS: dict[str, tuple[str, int]] = {
    "unused_every_5th_bytes": ("llama_like_16k", 5),
    "unused_every_3rd_no_byte_fallback": ("nmt_nfkc_no_byte_fallback", 3),
}

TRAINING_CORPORA = ("botchan.txt", "man_en.txt", "man_ja.txt", "man_de.txt", "man_ru.txt",
                    "man_zh_CN.txt", "code_python_stdlib.py.txt")


def write_training_text(fixtures: Path, out: Path) -> Path:
    from tests.conftest import fixture_file
    parts = [fixture_file(fixtures, f"corpus/{name}").read_text(encoding="utf-8") for name in TRAINING_CORPORA]
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


def mark_unused(model: Path, every: int, out: Path) -> Path:
    """A copy of `model` with every `every`-th multi-character NORMAL piece typed UNUSED."""
    from sentencepiece import sentencepiece_model_pb2 as pb
    proto = pb.ModelProto()
    proto.ParseFromString(model.read_bytes())
    marked = 0
    for piece in proto.pieces:
        if piece.type == pb.ModelProto.SentencePiece.NORMAL and len(piece.piece) >= 2:
            marked += 1
            if marked % every == 0:
                piece.type = pb.ModelProto.SentencePiece.UNUSED
    out.write_bytes(proto.SerializeToString())
    return out
