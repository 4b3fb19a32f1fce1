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
import re

import pytest
import tokenizers

from tests.conftest import fixture_file
from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import TIKTOKEN
from tests.parity.test_byte_bpe_gguf import spliced
from tests.tiktoken_reference import encoding
from toksmith.formats.tiktoken import read_tiktoken
from toksmith.writers.byte_level_merges import merge_list_vocab
from toksmith.writers.tiktoken_sources import oniguruma_spelling

ENCODINGS = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")


def derived_tokenizer(merge_vocab, pat_str: str, special_tokens: dict[str, int]) -> tokenizers.Tokenizer:
    """A tokenizers Tokenizer of a derived merge-list vocabulary, built as HF's
    tiktoken-derived tokenizer.json files are (a JSON document, so ids are exact)."""
    vocab = {text.decode("utf-8"): i for i, text in enumerate(merge_vocab.texts) if text is not None}
    # The special tokens are in the model's vocabulary too, as in GPT-2's vocab.json:
    # tokenizers gives an added token that is not in the vocabulary the next free id,
    # whatever id the file says, so p50k_base's <|endoftext|> (its ranks skip 50256)
    # would move to 50280.
    vocab.update(special_tokens)
    merges = [line.decode("utf-8").split(" ") for line in merge_vocab.merges]
    document = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for text, i in sorted(special_tokens.items())],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pat_str}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": merge_vocab.ignore_merges, "vocab": vocab, "merges": merges},
    }
    return tokenizers.Tokenizer.from_str(json.dumps(document))


def lines_with_special_text(texts: list[str], specials: list[str]) -> list[int]:
    """Indices of the texts holding a special token's text: the only lines where
    parse_special can change the ids."""
    finder = re.compile("|".join(map(re.escape, sorted(specials, key=len, reverse=True))))
    return [i for i, text in enumerate(texts) if finder.search(text)]


def tiktoken_vs_tokenizers(enc, ref: tokenizers.Tokenizer, corpus_lines, *, add_special_tokens: bool = False,
                           check: Comparison | None = None) -> tuple[int, list[str]]:
    """Compare tokenizers `ref` with tiktoken `enc` on every corpus line with parse_special, on
    the lines holding a special token's text without it (elsewhere the flag cannot change an
    id), and tokenizers' decode of tiktoken's ids of every line. `add_special_tokens` is
    tokenizers' (tiktoken adds nothing). The comparisons go into `check` (a new Comparison
    against tiktoken when None; the caller finishes it); returns (comparisons made, the
    first mismatches)."""
    check = check if check is not None else Comparison("tokenizers", against=TIKTOKEN)
    specials = sorted(enc.special_tokens_set)
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, specials, seed=len(corpus) + 3)
        with_special = lines_with_special_text(texts, specials)
        for parse_special, chosen in ((True, range(len(texts))), (False, with_special)):
            batch = [texts[i] for i in chosen]
            ref.encode_special_tokens = not parse_special
            got = [e.ids for e in ref.encode_batch(batch, add_special_tokens=add_special_tokens)]
            want = (enc.encode_batch(batch, allowed_special="all", num_threads=1) if parse_special
                    else enc.encode_ordinary_batch(batch, num_threads=1))
            check.all(batch, ours=got, theirs=want, what=f"{corpus} parse_special={parse_special}")
            if parse_special:
                check.all(batch, ours=ref.decode_batch(want, skip_special_tokens=False),
                          theirs=enc.decode_batch(want, num_threads=1), what=f"{corpus} decode")
    ref.encode_special_tokens = False
    return check.compared, list(check.mismatches)


@pytest.mark.parametrize("name", ENCODINGS)
def test_derived_merges_encode_like_tiktoken(fixtures, corpus_lines, name):
    enc = encoding(name, fixtures)
    ranks = read_tiktoken(fixture_file(fixtures, f"tiktoken/{name}.tiktoken")).vocab
    derived = merge_list_vocab(ranks, name)
    ref = derived_tokenizer(derived, oniguruma_spelling(enc._pat_str), enc._special_tokens)
    assert ref.get_vocab_size(with_added_tokens=True) == len([t for t in derived.texts if t is not None]) \
        + len(enc._special_tokens)
    check = Comparison(f"derived merges of {name} in tokenizers: the first 300 lines of each corpus with "
                       f"parse_special, those with a special text also without, decode", against=TIKTOKEN)
    tiktoken_vs_tokenizers(enc, ref, {corpus: lines[:300] for corpus, lines in corpus_lines.items()}, check=check)
    check.finish()


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
