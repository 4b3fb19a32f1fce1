"""Property test of writers/spm_bpe_scores.py: any merge order that passes the check converts exactly.

Random BPE vocabularies over "▁abc" (pieces of 2-5 characters), whose merge list holds every
split of every piece into two vocabulary entries in a random order (so a piece's splits are
scattered and interleaved with other pieces', and runs like "▁▁▁" are ordered anyhow), and
in a third of the cases one merge fewer. Each is a tokenizer.json (legacy Prepend + Replace
normalizer, no pre-tokenizer, as transformers writes Llama's); when toksmith writes it as a
.model, sentencepiece on that .model must give tokenizers' ids on random texts; when it
refuses, the error must name an unlisted split (C1).
"""
from __future__ import annotations

import random

import pytest
import sentencepiece as spm
import tokenizers
from tokenizers import decoders, models, normalizers

import toksmith
from toksmith.writers.sentencepiece_model import write_sentencepiece_model

CHARS = "▁abc"


def random_bpe_json(rnd: random.Random, path) -> tokenizers.Tokenizer:
    pieces: set[str] = set()
    size = rnd.randint(3, 25)
    while len(pieces) < size:
        pieces.add("".join(rnd.choice(CHARS) for _ in range(rnd.randint(2, 5))))
    have = set(CHARS) | pieces
    merges = [(p[:i], p[i:]) for p in sorted(pieces) for i in range(1, len(p)) if p[:i] in have and p[i:] in have]
    rnd.shuffle(merges)
    if merges and rnd.random() < 0.3:
        merges.pop(rnd.randrange(len(merges)))
    vocab = {p: i for i, p in enumerate(["<unk>", "<s>", "</s>", *CHARS, *sorted(pieces)])}
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Metaspace()
    tok.add_special_tokens(["<unk>", "<s>", "</s>"])
    tok.save(str(path))
    return tok


@pytest.mark.parametrize("seed", range(4))
def test_random_merge_orders(tmp_path, seed):
    rnd = random.Random(seed)
    written = compared = 0
    for trial in range(60):
        path = tmp_path / f"{trial}.json"
        ref = random_bpe_json(rnd, path)
        try:
            sp = spm.SentencePieceProcessor(model_proto=write_sentencepiece_model(toksmith.load(path).spec))
        except toksmith.UnsupportedConversionError as e:
            assert "[C1]" in str(e) and "does not name" in str(e), str(e)
            continue
        written += 1
        for _ in range(150):
            text = "".join(rnd.choice("abc▁  ") for _ in range(rnd.randint(1, 16)))
            compared += 1
            assert sp.encode(text) == ref.encode(text, add_special_tokens=False).ids, (text, str(path))
    assert written >= 30 and compared >= 30 * 150
