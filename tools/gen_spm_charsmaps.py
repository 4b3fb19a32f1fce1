"""Generate src/toksmith/data/spm_<rule>.charsmap.gz: sentencepiece's precompiled charsmaps.

`spm_train --normalization_rule_name=RULE` writes into the model's normalizer_spec the
precompiled charsmap sentencepiece embeds for RULE (builder.cc GetPrecompiledCharsMap,
the blobs of normalization_rule.h). toksmith's Unigram trainer ships the same bytes so
that it never imports sentencepiece at run time. They are taken here from sentencepiece
itself (the pinned test dependency, 0.2.3): `SentencePieceNormalizer(rule_name=RULE)`
populates a NormalizerSpec exactly as the trainer does (PopulateNormalizerSpec), and its
serialized spec holds the blob. "identity" has no charsmap (an empty blob) and no file.

Usage: python tools/gen_spm_charsmaps.py     (writes the files, prints their sizes)
"""
from __future__ import annotations

import gzip
import sys
from pathlib import Path

RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf")
OUT = Path(__file__).resolve().parent.parent / "src" / "toksmith" / "data"


def charsmap(rule: str) -> bytes:
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb
    spec = pb.NormalizerSpec.FromString(spm.SentencePieceNormalizer(rule_name=rule).serialized_normalizer_spec())
    if spec.name != rule or not spec.precompiled_charsmap:
        raise SystemExit(f"{rule}: sentencepiece gave no charsmap (name {spec.name!r})")
    return spec.precompiled_charsmap


def main() -> None:
    import sentencepiece as spm
    if spm.__version__ != "0.2.3":
        sys.exit(f"sentencepiece {spm.__version__}: the charsmaps must come from 0.2.3, the tested reference")
    for rule in RULES:
        blob = charsmap(rule)
        path = OUT / f"spm_{rule}.charsmap.gz"
        # mtime=0: the same bytes on every run
        path.write_bytes(gzip.compress(blob, compresslevel=9, mtime=0))
        print(f"{path.name}: {len(blob)} bytes, {path.stat().st_size} compressed")


if __name__ == "__main__":
    main()
