"""tokenizer.json files of the pipelines BPE training is proven on, made by `tokenizers`
itself (the reference library), each with an untrained (or the real) BPE model.

>>> path = write_pipeline("whitespace", tmp_path)   # doctest: +SKIP
"""
from __future__ import annotations

import gzip
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, normalizers, pre_tokenizers, processors
from tokenizers.models import BPE

from tests.conftest import fixture_file

PIPELINES = ("gpt2", "llama3", "metaspace", "whitespace", "bert")


def write_pipeline(name: str, fixtures: Path, out_dir: Path) -> Path:
    """Write pipeline `name`'s tokenizer.json under out_dir; its path."""
    path = out_dir / f"{name}.tokenizer.json"
    if name == "llama3":
        path.write_bytes(gzip.decompress(fixture_file(fixtures, "hf/llama3/tokenizer.json.gz").read_bytes()))
        return path
    if name == "gpt2":
        # transformers' GPT2Converter: ByteLevel pre-tokenizer/decoder/post-processor
        tok = Tokenizer(BPE.from_file(str(fixture_file(fixtures, "hf/gpt2/vocab.json")),
                                      str(fixture_file(fixtures, "hf/gpt2/merges.txt"))))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
        tok.add_special_tokens([AddedToken("<|endoftext|>", special=True)])
    elif name == "metaspace":
        # SentencePiece-style BPE as transformers converts Llama 2 (byte fallback, ▁)
        tok = Tokenizer(BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    elif name == "whitespace":
        tok = Tokenizer(BPE(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
    elif name == "bert":
        tok = Tokenizer(BPE(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece(prefix="##")
    else:
        raise ValueError(name)
    tok.save(str(path))
    return path


def merges_of(model: dict) -> list[tuple[str, str]]:
    """A tokenizer.json BPE model's merges as pairs (either of tokenizers' two spellings)."""
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1)) for m in model["merges"]]


def compare_trained_json(check, ours: dict, ref: dict) -> None:
    """Compare two trained tokenizer.json documents through `check` (a Comparison): every
    token's id (tokens of either vocabulary), every merge, the added tokens and the affixes."""
    our_vocab, ref_vocab = ours["model"]["vocab"], ref["model"]["vocab"]
    tokens = sorted(our_vocab.keys() | ref_vocab.keys())
    check.all(tokens, ours=[our_vocab.get(t) for t in tokens], theirs=[ref_vocab.get(t) for t in tokens],
              what="token id")
    our_merges, ref_merges = merges_of(ours["model"]), merges_of(ref["model"])
    check.all(range(len(ref_merges)), ours=our_merges, theirs=ref_merges, what="merge")
    check.one("added_tokens", ours["added_tokens"], ref["added_tokens"], what="added tokens")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        check.one(key, ours["model"].get(key), ref["model"].get(key), what="model option")
