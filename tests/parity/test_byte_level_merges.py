"""Ranks -> merges (toksmith.writers.byte_level_merges.merge_list_vocab) against the references.

For r50k_base, p50k_base, cl100k_base and o200k_base: the merge list derived from the rank
file becomes a `tokenizers` BPE (byte-level texts, ignore_merges, no regex in the model),
behind tokenizers' Split by tiktoken's own pattern (spelled for Oniguruma: see
`oniguruma_spelling`) and a ByteLevel pre-tokenizer without regex, as Hugging Face's
tiktoken-derived files are built; tiktoken's special tokens are
added tokens with tiktoken's ids. On the first 300 lines of every corpus (a quarter with a
special-token text spliced in; every line is compared through the tokenizer.json writer,
which builds the same file, in test_convert_from_tiktoken.py): tokenizers' ids with parse_special (encode_special_tokens
False) against tiktoken's encode(allowed_special="all"), without against encode_ordinary,
and tokenizers' decode (skip_special_tokens=False) of tiktoken's ids against tiktoken's
decode. add_special is left out: neither side has anything to add (no post-processor,
tiktoken adds nothing), so it cannot matter.

The flags: parse_special is compared both ways only on the lines that hold a special
token's text (on the others it cannot change an id).

Also: the merges derived from r50k_base are exactly GPT-2's merges.txt (hf/gpt2).
"""
from __future__ import annotations

import json

import pytest

from tests.conftest import fixture_file
from tests.parity.comparison import Comparison, finish_all
from tests.parity.tiktoken_compare import derived_tokenizer, tiktoken_and_tokenizers
from tests.tiktoken_reference import encoding
from toksmith.formats.tiktoken import read_tiktoken
from toksmith.writers.byte_level_merges import merge_list_vocab
from toksmith.writers.tiktoken_sources import oniguruma_spelling

ENCODINGS = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")


@pytest.mark.parametrize("name", ENCODINGS)
def test_derived_merges_encode_like_tiktoken(fixtures, corpus_lines, name):
    enc = encoding(name, fixtures)
    ranks = read_tiktoken(fixture_file(fixtures, f"tiktoken/{name}.tiktoken")).vocab
    derived = merge_list_vocab(ranks, name)
    ref = derived_tokenizer(derived, oniguruma_spelling(enc._pat_str), enc._special_tokens)
    assert ref.get_vocab_size(with_added_tokens=True) == len([t for t in derived.texts if t is not None]) \
        + len(enc._special_tokens)
    finish_all(*tiktoken_and_tokenizers(enc, ref, {corpus: lines[:300] for corpus, lines in corpus_lines.items()},
                                        f"derived merges of {name} in tokenizers (the first 300 lines of each corpus)",
                                        written="tokenizers"))


def test_derived_r50k_merges_are_gpt2s_merges_txt(fixtures):
    derived = merge_list_vocab(read_tiktoken(fixture_file(fixtures, "tiktoken/r50k_base.tiktoken")).vocab)
    lines = fixture_file(fixtures, "hf/gpt2/merges.txt").read_bytes().split(b"\n")
    assert lines[0].startswith(b"#version")
    gpt2 = [line for line in lines[1:] if line]
    assert len(gpt2) == 50000
    check = Comparison("derived merges of r50k_base: every merge, every token's id", against="GPT-2's merges.txt "
                       "and vocab.json (hf/gpt2)")
    check.all(range(len(gpt2)), ours=derived.merges, theirs=gpt2, what="merge")
    ours = {text.decode("utf-8"): i for i, text in enumerate(derived.texts)}
    vocab = json.loads(fixture_file(fixtures, "hf/gpt2/vocab.json").read_text(encoding="utf-8"))
    theirs = {text: i for text, i in vocab.items() if i < 50256}
    tokens = sorted(ours.keys() | theirs.keys())
    check.all(tokens, ours=[ours.get(t) for t in tokens], theirs=[theirs.get(t) for t in tokens], what="token id")
    check.finish()


def test_rank_gap_stays_a_gap(fixtures):
    """p50k_base has no rank 50256 (<|endoftext|> takes that id): the merge list keeps the gap."""
    ranks = read_tiktoken(fixture_file(fixtures, "tiktoken/p50k_base.tiktoken")).vocab
    assert ranks.texts[50256] is None
    derived = merge_list_vocab(ranks)
    assert derived.texts[50256] is None and derived.special_tokens == {b"<|endoftext|>": 50256}
    assert len(derived.merges) == sum(1 for t in ranks.texts if t is not None and len(t) > 1)
