"""`Tokenizer.tokenize` on tokenizer.json files equals tokenizers' `Encoding.tokens`: the
vocabulary's strings ('Ġworld' for byte-level files, '##ffa' for WordPiece, '[UNK]' for an
unknown WordPiece word), except a Unigram model's unknown token, which shows its text.

Every fixture tokenizer.json (and the GPT-2 folder), on a multilingual sample with the
special tokens' texts spliced in, for the four add_special x parse_special combinations.
The padding and truncation sections are switched off in the reference: toksmith does not
apply them (README).
"""
from __future__ import annotations

import random

import pytest
import tokenizers

import toksmith
from tests.conftest import multilingual_sample
from tests.parity.comparison import Comparison
from tests.parity.hf_reference import load_both

AGAINST = f"tokenizers {tokenizers.__version__} (Encoding.tokens)"
FILES = ["hf/llama3/tokenizer.json.gz", "hf/rut5-large/tokenizer.json", "hf/all-MiniLM-L6-v2/tokenizer.json",
         "hf/gpt2"]


@pytest.mark.parametrize("relative", FILES)
def test_tokenize_is_encoding_tokens(fixtures, corpus_lines, tmp_path, relative):
    ours, ref = load_both(fixtures, tmp_path, relative)
    specials = [t.content for t in ref.get_added_tokens_decoder().values()] or ["<|endoftext|>"]
    rng = random.Random(9)
    lines = []
    for line in multilingual_sample(corpus_lines, 300):
        at = rng.randrange(len(line) + 1)
        lines.append(line[:at] + rng.choice(specials) + line[at:])
    lines += ["unaffable ☃ 日本 \u00a0 x", "", " ", "Hello world"]
    check = Comparison(f"{relative} tokenize, multilingual sample x 4 flag combinations", against=AGAINST)
    for add_special in (False, True):
        for parse_special in (False, True):
            ref.encode_special_tokens = not parse_special
            check.all(lines, ours=[ours.tokenize(line, add_special=add_special, parse_special=parse_special)
                                   for line in lines],
                      theirs=[ref.encode(line, add_special_tokens=add_special).tokens for line in lines],
                      what=f"add_special={add_special} parse_special={parse_special}")
    check.finish()


def test_tokenize_of_an_unknown_bpe_character_is_the_unk_token(corpus_lines, tmp_path):
    # A character BPE trained on English with a small alphabet: other characters are the
    # unk token, which Encoding.tokens shows as "[UNK]" (models/bpe/model.rs), fused or not.
    check = Comparison("trained character BPE with unk_token (fuse_unk off/on) tokenize, multilingual sample",
                       against=AGAINST)
    for fuse_unk in (False, True):
        ref = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="[UNK]", fuse_unk=fuse_unk))
        ref.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
        trainer = tokenizers.trainers.BpeTrainer(vocab_size=2000, special_tokens=["[UNK]"], limit_alphabet=60)
        ref.train_from_iterator(corpus_lines["man_en.txt"], trainer)
        path = tmp_path / f"bpe-{fuse_unk}.json"
        ref.save(str(path))
        ours = toksmith.load(path)
        lines = multilingual_sample(corpus_lines, 100)
        check.all(lines, ours=[ours.tokenize(line) for line in lines],
                  theirs=[ref.encode(line, add_special_tokens=False).tokens for line in lines],
                  what=f"fuse_unk={fuse_unk}")
        assert "[UNK]" in ours.tokenize("日本 ☃")
    check.finish()
