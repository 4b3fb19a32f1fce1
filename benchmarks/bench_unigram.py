"""Unigram throughput and load time: toksmith beside sentencepiece, HF tokenizers and tokie.

Every tokenizer encodes the same lines, one call per line (per-call overhead
counts), on one thread; then the whole corpus as one batch on all cores. The
HF and tokie tokenizers are built from the same .model (Precompiled charsmap
normalizer, Metaspace pre-tokenizer, Unigram model), as HF's T5 converter does.
A library that is missing or cannot load the model is reported as unavailable.

    python benchmarks/bench_unigram.py ../shared/fixtures [--repeat 3]
"""
from __future__ import annotations

from pathlib import Path

from _common import run, standard_peers

MODELS = {"t5-ja (32k)": "spm/t5_base_japanese_spiece.model",
          "spm-test (1k)": "spm/sentencepiece_test_model.model"}
CORPORA = ("man_en.txt", "man_ja.txt", "botchan.txt", "wagahaiwa_nekodearu.txt")


def build_hf_json(model_path: Path, out: Path) -> Path:
    """A tokenizer.json equivalent to a sentencepiece Unigram .model."""
    from sentencepiece import sentencepiece_model_pb2 as pb
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    proto = pb.ModelProto()
    proto.ParseFromString(model_path.read_bytes())
    vocab = [(p.piece, p.score) for p in proto.pieces]
    unk = next(i for i, p in enumerate(proto.pieces) if p.type == 2)
    tok = Tokenizer(models.Unigram(vocab, unk_id=unk, byte_fallback=proto.trainer_spec.byte_fallback))
    steps = []
    if proto.normalizer_spec.precompiled_charsmap:
        steps.append(normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap))
    steps.append(normalizers.Replace(Regex(" {2,}"), " "))
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.save(str(out))
    return out


def main() -> None:
    run(__doc__, CORPORA, MODELS, build_hf_json, standard_peers)


if __name__ == "__main__":
    main()
