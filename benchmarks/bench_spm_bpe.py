"""SentencePiece-BPE (LLaMA 2) throughput and load time: toksmith beside sentencepiece, HF tokenizers, tokie and kitoken.

Every tokenizer encodes the same lines, one call per line (per-call overhead
counts), on one thread; then the whole corpus as one batch on all cores with
the library's batch API. toksmith, sentencepiece and kitoken read the .model
itself; HF tokenizers and tokie read a LLaMA-2 style tokenizer.json built here
from the same .model (Prepend+Replace normalizer, no pre-tokenizer, BPE with
byte fallback). "same ids as spm" is the share of lines whose ids equal
sentencepiece's. A library that is missing or cannot load the model is
reported as unavailable and the others still run.

    python benchmarks/bench_spm_bpe.py ../shared/fixtures [--repeat 3]
"""
from __future__ import annotations

from pathlib import Path

from _common import Peer, run, standard_peers

MODELS = {"llama2 (32k)": "spm/llama2_tokenizer.model"}
CORPORA = ("man_en.txt", "man_de.txt", "code_python_stdlib.py.txt", "man_zh_CN.txt")


def build_hf_json(model_path: Path, out: Path) -> Path:
    """A tokenizer.json equivalent to a sentencepiece BPE .model (identity normalizer, dummy prefix).

    sentencepiece merges the adjacent pair whose union is the piece with the
    highest score, leftmost first on ties. The merge list holds every split of
    every normal piece into two normal pieces, ranked by the union's score and
    then its id: that reproduces sentencepiece's ids, also on runs of spaces,
    whose pieces (e.g. "▁▁", "▁▁▁▁") all share one score. Control and unknown
    pieces are added as special tokens, as in LLaMA 2's own tokenizer.json, so
    unlike sentencepiece HF and tokie read a literal "<s>" in text as id 1 (no
    line of the corpora here holds one).
    """
    from sentencepiece import sentencepiece_model_pb2 as pb
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers

    proto = pb.ModelProto()
    proto.ParseFromString(model_path.read_bytes())
    if proto.trainer_spec.model_type != pb.TrainerSpec.BPE:
        raise ValueError(f"{model_path}: not a BPE model")
    spec = proto.normalizer_spec
    if spec.precompiled_charsmap or spec.remove_extra_whitespaces or not spec.add_dummy_prefix:
        raise ValueError(f"{model_path}: only LLaMA-style normalization (identity, dummy prefix) is built here")
    normal = pb.ModelProto.SentencePiece.NORMAL
    vocab = {p.piece: i for i, p in enumerate(proto.pieces)}
    score = {p.piece: p.score for p in proto.pieces if p.type == normal}
    merges = sorted(((piece[:k], piece[k:]) for piece in score for k in range(1, len(piece))
                     if piece[:k] in score and piece[k:] in score),
                    key=lambda m: (-score[m[0] + m[1]], vocab[m[0] + m[1]], vocab[m[0]]))
    unk = proto.pieces[proto.trainer_spec.unk_id].piece
    tok = Tokenizer(models.BPE(vocab, merges, unk_token=unk, fuse_unk=True,
                               byte_fallback=proto.trainer_spec.byte_fallback))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken(p.piece, special=True, normalized=False)
                            for p in proto.pieces if p.type in (pb.ModelProto.SentencePiece.UNKNOWN,
                                                                pb.ModelProto.SentencePiece.CONTROL)])
    tok.save(str(out))
    return out


def _load_kitoken(model_path: Path):
    from kitoken import Kitoken
    return Kitoken.from_sentencepiece_file(str(model_path))


def peers(model_path: Path, hf_json: Path) -> dict[str, Peer]:
    table = standard_peers(model_path, hf_json)
    table["kitoken"] = Peer(lambda: _load_kitoken(model_path),
                            lambda t, s: t.encode(s),
                            lambda t, xs: t.encode_all(xs))
    return table


def main() -> None:
    run(__doc__, CORPORA, MODELS, build_hf_json, peers)


if __name__ == "__main__":
    main()
