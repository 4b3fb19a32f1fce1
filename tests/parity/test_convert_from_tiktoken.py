"""Rank files (.tiktoken) written as tokenizer.json and as vocab-only GGUF, checked with
the target's own reference against tiktoken on the source.

- .tiktoken -> tokenizer.json (r50k, p50k, cl100k, o200k): `tokenizers` on the written
  file against tiktoken, every corpus line with parse_special (tokenizers'
  encode_special_tokens False vs allowed_special="all"), the lines holding a special text
  also without (True vs encode_ordinary), add_special_tokens=True throughout (tiktoken
  adds nothing, so the file must add nothing when asked), decode (skip_special_tokens
  False) of tiktoken's ids. Back to .tiktoken, the file is the original byte for byte.
  Notes for the writer: tokenizers runs Oniguruma, where cl100k's `\\p{N}{1,3}+` means
  any digit run (toksmith.writers.tiktoken_sources.oniguruma_spelling); and tokenizers
  gives an added token that is not in the model vocabulary the next free id whatever
  the file says, so p50k's <|endoftext|> (50256, a gap in its ranks) must be in the
  model's vocab too, as in GPT-2's vocab.json.
- .tiktoken -> GGUF: tokenizer.ggml.pre is the name llama.cpp's converter finds
  (conversion/base.py get_vocab_base_pre: the sha256 of str(ids of its check text),
  here tiktoken's ids, which add no BOS): r50k_base -> "gpt-2".
  llama.cpp on the written file against tiktoken: ids on every line with
  (add_special, parse_special) = (True, True) and, on the lines holding a special text,
  (False, False); decode of tiktoken's ids. llama.cpp decodes "gpt-2" and "dbrx" with
  clean_spaces (tiktoken does not): decode is compared on a copy of the written file
  whose pre name is "gpt-4o" (same decoding, clean_spaces off), and the lines llama.cpp's
  clean-up changes are counted: a disagreement of the references.
  Refusals expected: cl100k_base (the converter names it "dbrx", whose llama.cpp regex is
  Llama 3's: it cuts " \\n " at the end of a text otherwise than cl100k's `\\s++$`), p50k_base (its check-text hash is in no entry of the converter's
  table, so llama.cpp's converter names no pre-tokenizer), o200k_base (the hash gives
  "gpt-4o", but llama.cpp's gpt-4o splitter cuts otherwise than tiktoken's o200k
  pattern on upper-case non-ASCII letters: on "BEISPIELE FÜR KODIERUNGEN" from man_de.txt
  llama.cpp gives ...454, 8858, 49... where tiktoken gives ...454, 150247... (" FÜR");
  142 corpus lines differ).
  Llama 3's rank file (no fixture here) hashes to "smaug-bpe", not "llama-bpe": the
  converter's "llama-bpe" entry is the hash of ids with Meta-Llama-3's BOS.
"""
from __future__ import annotations

import hashlib

import pytest
import tokenizers

import toksmith
from tests import llama_cpp_reference
from tests.conftest import fixture_file, multilingual_sample, report
from tests.gguf_copy import copy_gguf
from tests.gguf_reference import read_metadata
from tests.parity.comparison import Comparison, finish_all
from tests.parity.llama_cpp_compare import spliced
from tests.parity.tiktoken_compare import TOKENIZERS, tiktoken_and_llama_cpp, tiktoken_and_tokenizers
from tests.tiktoken_reference import encoding
from toksmith.errors import InexactConversionWarning, UnsupportedConversionError

RANK_FILES = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")

# Parity: llama.cpp conversion/base.py get_vocab_base_pre: chktxt, and the entries of its
# table these encodings' ids hash to.
CHKTXT = ('\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n🚀 (normal) 😶\u200d🌫️ (multiple emojis concatenated) '
          '✅ 🦙🦙 3 33 333 3333 33333 333333 3333333 33333333 3.3 3..3 3...3 កាន់តែពិសេសអាច😁 ?我想在apple工作1314151天～ '
          '------======= нещо на Български \'\'\'\'\'\'```````""""......!!!!!!?????? I\'ve been \'told he\'s there, '
          '\'RE you sure? \'M not sure I\'ll make it, \'D you like some tea? We\'Ve a\'lL')
CONVERTER_PRE = {"3ce83efda5659b07b1ad37ca97ca5797ea4285d9b9ab0dc679e4a720c9da7454": "gpt-2",
                 "a8594e3edff7c29c003940395316294b2c623e09894deebbc65f33f1515df79e": "dbrx",
                 "ccc2ef013c104be7bae2965776d611e1d7a8a2a9c547dd93a682c9a9fc80352e": "gpt-4o"}


def converter_pre_name(enc) -> str | None:
    """The pre name llama.cpp's converter gives a tokenizer whose ids these are."""
    return CONVERTER_PRE.get(hashlib.sha256(str(enc.encode_ordinary(CHKTXT)).encode()).hexdigest())


def rank_file(fixtures, name: str):
    return fixture_file(fixtures, f"tiktoken/{name}.tiktoken")


@pytest.mark.parametrize("name", RANK_FILES)
def test_converter_pre_names(fixtures, name):
    """What the GGUF cells expect, from tiktoken's ids of the converter's check text."""
    want = {"r50k_base": "gpt-2", "p50k_base": None, "cl100k_base": "dbrx", "o200k_base": "gpt-4o"}[name]
    assert converter_pre_name(encoding(name, fixtures)) == want


@pytest.mark.parametrize("name", RANK_FILES)
def test_tiktoken_to_tokenizer_json(fixtures, corpus_lines, tmp_path, name):
    path = toksmith.load(rank_file(fixtures, name)).save(tmp_path / "tokenizer.json")
    ref = tokenizers.Tokenizer.from_file(str(path))
    enc = encoding(name, fixtures)
    assert {(t.content, i) for i, t in ref.get_added_tokens_decoder().items() if t.special} == \
        set(enc._special_tokens.items())
    label = f"convert {name}.tiktoken -> tokenizer.json"
    again = toksmith.load(path)
    sample = spliced(multilingual_sample(corpus_lines, 200), sorted(enc.special_tokens_set), seed=7)
    with_toksmith = Comparison(f"{label} (tricky_strings and 200 lines of each corpus): toksmith on the written file, "
                               f"ids, parse_special", against=f"{TOKENIZERS} on the written file")
    ref.encode_special_tokens = False
    with_toksmith.all(sample, ours=again.encode_batch(sample, parse_special=True),
                      theirs=[e.ids for e in ref.encode_batch(sample, add_special_tokens=True)])
    finish_all(*tiktoken_and_tokenizers(enc, ref, corpus_lines, label, written="tokenizers", add_special_tokens=True),
               with_toksmith)
    back = again.save(tmp_path / "back.tiktoken")
    assert back.read_bytes() == rank_file(fixtures, name).read_bytes()


@pytest.mark.parametrize("name", ["r50k_base"])
def test_tiktoken_to_gguf(fixtures, corpus_lines, tmp_path, name):
    enc = encoding(name, fixtures)
    # exact=False: tiktoken's Unicode 16 classes differ from llama.cpp's tables (U+1C89 ...;
    # test_convert_unicode_tables.py), which the corpus lines do not hold.
    with pytest.warns(InexactConversionWarning, match=r"\\p\{L\} differs"):
        path = toksmith.load(rank_file(fixtures, name)).save(tmp_path / f"{name}.gguf", exact=False)
    meta = read_metadata(path)
    assert meta["tokenizer.ggml.model"] == b"gpt2"
    assert meta["tokenizer.ggml.pre"].decode() == converter_pre_name(enc)
    ref = llama_cpp_reference.load_vocab(path)
    assert ref.n_tokens == enc.n_vocab
    unclean = llama_cpp_reference.load_vocab(copy_gguf(path, tmp_path / "no-clean-spaces.gguf",
                                                       {"tokenizer.ggml.pre": "gpt-4o"}))
    finish_all(*tiktoken_and_llama_cpp(enc, ref, unclean, corpus_lines, f"convert {name}.tiktoken -> gguf",
                                       seed=13, written="llama.cpp"))
    with pytest.warns(InexactConversionWarning):
        back = toksmith.load(path).save(tmp_path / "back.tiktoken", exact=False)
    assert back.read_bytes() == rank_file(fixtures, name).read_bytes()


@pytest.mark.parametrize("name, reason", [("p50k_base", "no tokenizer.ggml.pre name"), ("o200k_base", "'gpt-4o'"),
                                          ("cl100k_base", "'dbrx'")])
def test_tiktoken_to_gguf_refused(fixtures, tmp_path, name, reason):
    target = tmp_path / f"{name}.gguf"
    with pytest.raises(UnsupportedConversionError) as err:
        toksmith.load(rank_file(fixtures, name)).save(target)
    assert reason in str(err.value) and f"{name}.tiktoken" in str(err.value)
    assert not target.exists()
    report(f"convert {name}.tiktoken -> gguf: refused ({err.value.missing[0][:80]})")
