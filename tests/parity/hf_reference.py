"""tokenizers references that several parity tests build: GPT-2's vocab.json + merges.txt
folder as tokenizers reads it, and a fixture loaded by both toksmith and tokenizers."""
from __future__ import annotations

import gzip

import tokenizers
from tokenizers import AddedToken, decoders, models, pre_tokenizers, processors

import toksmith
from tests.conftest import fixture_file


def tokenizers_ids(tokenizer: tokenizers.Tokenizer, text: str, *, add_special: bool) -> list[int]:
    """tokenizers' ids of `text` (its encode_special_tokens as the caller set it; for
    functools.partial: an excuse case's `ours_on` / `theirs_on`)."""
    return tokenizer.encode(text, add_special_tokens=add_special).ids


def gpt2_folder_reference(fixtures) -> tokenizers.Tokenizer:
    """GPT-2's folder (vocab.json, merges.txt) in tokenizers, with <|endoftext|>, no prefix space."""
    vocab, merges = fixture_file(fixtures, "hf/gpt2/vocab.json"), fixture_file(fixtures, "hf/gpt2/merges.txt")
    ref = tokenizers.Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    ref.decoder = decoders.ByteLevel()
    ref.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    return ref


def gpt2_tokenizer(fixtures, pre_tokenizer) -> tokenizers.Tokenizer:
    """GPT-2's folder in tokenizers with `pre_tokenizer`, added tokens of each kind and a template."""
    vocab, merges = fixture_file(fixtures, "hf/gpt2/vocab.json"), fixture_file(fixtures, "hf/gpt2/merges.txt")
    tok = tokenizers.Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    tok.add_tokens([AddedToken(" New York", lstrip=True),                 # normalized (the default)
                    AddedToken("toksmith", single_word=True, rstrip=True),
                    AddedToken("<sep/>", special=True, lstrip=True, rstrip=True, normalized=False),
                    AddedToken("the cat", normalized=False)])
    eot = tok.token_to_id("<|endoftext|>")
    sep = tok.token_to_id("<sep/>")
    tok.post_processor = processors.TemplateProcessing(
        single="$A <|endoftext|>", pair="<sep/> $A <|endoftext|> $B:1 <|endoftext|>:1",
        special_tokens=[("<|endoftext|>", eot), ("<sep/>", sep)])
    return tok


def load_both(fixtures, tmp_path, relative: str):
    """(toksmith, tokenizers) on a fixture tokenizer.json (gzipped or not) or the GPT-2 folder."""
    path = fixture_file(fixtures, relative) if relative != "hf/gpt2" else fixtures / relative
    if relative.endswith(".gz"):
        plain = tmp_path / "tokenizer.json"
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        path = plain
    if path.is_dir():
        # Parity: transformers' GPT2TokenizerFast: the folder's vocab and merges in a
        # byte-level BPE with GPT-2's pre-tokenizer and decoder, no prefix space.
        model = tokenizers.models.BPE.from_file(str(path / "vocab.json"), str(path / "merges.txt"))
        ref = tokenizers.Tokenizer(model)
        ref.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
        ref.decoder = tokenizers.decoders.ByteLevel()
        ref.add_special_tokens(["<|endoftext|>"])
    else:
        ref = tokenizers.Tokenizer.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    return toksmith.load(path), ref
