"""Writing tiktoken rank files (toksmith.writers.tiktoken_file), checked with tiktoken itself.

Cells:

- each fixture rank file -> .tiktoken: the written file is the fixture byte for byte;
  tiktoken's `load_tiktoken_bpe` reads the same ranks from it, so tiktoken on it (with
  the encoding's own pattern and special tokens) is the original Encoding; shown on a
  sample (tricky_strings.txt and 200 lines of each corpus, special texts spliced in,
  allowed_special="all", encode_ordinary on the lines holding a special text, decode)
  rather than every line, which would repeat the same computation.
- hf/gpt2 (the vocab.json + merges.txt folder) and hf/llama3/tokenizer.json.gz ->
  .tiktoken: tiktoken on the written file, with the pattern and special tokens of the
  encoding toksmith's reader recognises it as (r50k_base: tiktoken's own constructor;
  llama3: Meta's llama/tokenizer.py pattern and special tokens), against `tokenizers` on
  the source: every corpus line with parse_special (tokenizers' encode_special_tokens
  False vs allowed_special="all"), the lines holding a special text also without
  (encode_special_tokens True vs encode_ordinary), and tokenizers' decode
  (skip_special_tokens=False) vs tiktoken's. add_special is not varied: both sources'
  post-processor is ByteLevel, which adds no token, and tiktoken adds none.
- gguf/ggml-vocab-gpt-2.gguf -> .tiktoken: the written file is r50k_base's, byte for
  byte; tiktoken on it against llama.cpp on the GGUF, ids on every line, decode without
  llama.cpp's clean_spaces (see the test: the references disagree there).
- refused: Llama 3's GGUF (llama.cpp adds BOS; its ranks alone are Meta's rank file byte
  for byte), and every non-byte-level or unrecognised vocabulary, with the reason in the
  message and an existing file left as it was.
"""
from __future__ import annotations

import gzip
import hashlib

import pytest
import tiktoken
import tiktoken.load
import tokenizers

import toksmith
from tests import llama_cpp_reference
from tests.conftest import fixture_file, multilingual_sample, report
from tests.gguf_copy import copy_gguf
from tests.parity.comparison import Comparison, finish_all
from tests.parity.conversion_compare import toksmith_on_written_file
from tests.parity.hf_reference import gpt2_folder_reference
from tests.parity.llama_cpp_compare import spliced
from tests.parity.tiktoken_compare import (TIKTOKEN, derived_tokenizer, lines_with_special_text, tiktoken_and_llama_cpp,
                                           tiktoken_and_tokenizers)
from tests.tiktoken_reference import encoding
from toksmith.errors import InexactConversionWarning, UnsupportedConversionError
from toksmith.formats.tiktoken import KNOWN_ENCODINGS, LLAMA3_SHA256, PATTERN_REGEX
from toksmith.formats.tiktoken import read_tiktoken
from toksmith.spec import SplitPattern
from toksmith.writers.byte_level_merges import merge_list_vocab
from toksmith.writers.tiktoken_sources import oniguruma_spelling
from toksmith.writers.tiktoken_file import rank_file_of_merge_list

RANK_FILES = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")


def read_ranks(path) -> dict[bytes, int]:
    return tiktoken.load.load_tiktoken_bpe(str(path))


def tiktoken_on(path, encoding_name: str, fixtures) -> tiktoken.Encoding:
    """tiktoken on the rank file `path`, with the pattern and special tokens of `encoding_name`
    as their reference defines them (tiktoken's constructor; Meta's tokenizer.py for llama3)."""
    if encoding_name == "llama3":
        # Parity: meta-llama/llama3 llama/tokenizer.py pat_str and special tokens
        pat_str = PATTERN_REGEX[SplitPattern.LLAMA3]
        specials = KNOWN_ENCODINGS["llama3"].special_tokens
    else:
        original = encoding(encoding_name, fixtures)
        pat_str, specials = original._pat_str, original._special_tokens
    return tiktoken.Encoding(name=f"written-{encoding_name}", pat_str=pat_str,
                             mergeable_ranks=read_ranks(path), special_tokens=specials)


@pytest.mark.parametrize("name", RANK_FILES)
def test_rank_file_written_back_byte_for_byte(fixtures, corpus_lines, tmp_path, name):
    source = fixture_file(fixtures, f"tiktoken/{name}.tiktoken")
    written = toksmith.load(source).save(tmp_path / f"{name}.tiktoken")
    assert written.read_bytes() == source.read_bytes()
    assert read_ranks(written) == read_ranks(source)
    again = toksmith.load(written)
    assert again.spec.byte_level.encoding == name
    # Same bytes, so tiktoken reads equal ranks and, with the same pattern and special
    # tokens, is the same Encoding: a corpus run adds nothing. A sample shows it runs:
    # tricky_strings.txt whole and the first 200 lines of every other corpus.
    original, copy = encoding(name, fixtures), tiktoken_on(written, name, fixtures)
    specials = sorted(original.special_tokens_set)
    texts = spliced(multilingual_sample(corpus_lines, 200), specials, seed=7)
    ordinary = [texts[i] for i in lines_with_special_text(texts, specials)]
    against = f"{TIKTOKEN} on the fixture (the file is the fixture byte for byte: equal ranks, so a sample)"
    label = f"convert {name}.tiktoken -> tiktoken"
    ids = Comparison(f"{label}: ids, allowed_special='all'", against=against)
    ordinary_ids = Comparison(f"{label}: encode_ordinary of the lines holding a special text", against=against)
    decode = Comparison(f"{label}: decode", against=against)
    want = original.encode_batch(texts, allowed_special="all", num_threads=1)
    ids.all(texts, ours=copy.encode_batch(texts, allowed_special="all", num_threads=1), theirs=want)
    ordinary_ids.all(ordinary, ours=copy.encode_ordinary_batch(ordinary, num_threads=1),
                     theirs=original.encode_ordinary_batch(ordinary, num_threads=1))
    decode.all(want, ours=copy.decode_batch(want, num_threads=1), theirs=original.decode_batch(want, num_threads=1))
    with_toksmith = Comparison(f"{label}: toksmith on the written file, ids, parse_special",
                               against=f"{TIKTOKEN} on the written file")
    with_toksmith.all(texts, ours=again.encode_batch(texts, parse_special=True),
                      theirs=copy.encode_batch(texts, allowed_special="all", num_threads=1))
    finish_all(ids, ordinary_ids, decode, with_toksmith)


@pytest.fixture(scope="module")
def byte_level_sources(fixtures, tmp_path_factory):
    """cell name -> (path toksmith.load takes, tokenizers reference, encoding read back)."""
    folder = tmp_path_factory.mktemp("to_tiktoken")
    llama3 = folder / "tokenizer.json"
    llama3.write_bytes(gzip.decompress(fixture_file(fixtures, "hf/llama3/tokenizer.json.gz").read_bytes()))
    return {"hf/gpt2": (fixture_file(fixtures, "hf/gpt2/vocab.json").parent, gpt2_folder_reference(fixtures),
                        "r50k_base"),
            "hf/llama3/tokenizer.json.gz": (llama3, tokenizers.Tokenizer.from_file(str(llama3)), "llama3")}


@pytest.mark.parametrize("cell", ["hf/gpt2", "hf/llama3/tokenizer.json.gz"])
def test_byte_level_tokenizer_json_to_tiktoken(fixtures, corpus_lines, byte_level_sources, tmp_path, cell):
    path, ref, encoding_name = byte_level_sources[cell]
    ref.no_padding()
    ref.no_truncation()
    written = toksmith.load(path).save(tmp_path / "written.tiktoken")
    # the written file is recognised as the encoding whose pattern and special tokens the source has
    assert toksmith.load(written).spec.byte_level.encoding == encoding_name
    enc = tiktoken_on(written, encoding_name, fixtures)
    assert set(enc._special_tokens.items()) == {(t.content, i) for i, t in ref.get_added_tokens_decoder().items()}
    label = f"convert {cell} -> tiktoken"
    sample = spliced(multilingual_sample(corpus_lines, 200), sorted(enc.special_tokens_set), seed=7)
    again = toksmith_on_written_file(f"{label} (tricky_strings and 200 lines of each corpus)", written, sample,
                                     enc.encode_batch(sample, allowed_special="all", num_threads=1),
                                     against=f"{TIKTOKEN} on the written file", parse_special=True)
    finish_all(*tiktoken_and_tokenizers(enc, ref, corpus_lines, label, written="tiktoken"), again)


def test_gpt2_gguf_to_tiktoken(fixtures, corpus_lines, tmp_path):
    """tiktoken on the rank file written from GPT-2's GGUF against llama.cpp on the GGUF.

    Decode is where the references disagree: llama.cpp decodes this vocabulary with its
    clean_spaces rule (pre "gpt-2": the space before punctuation dropped), tiktoken decodes
    every token's bytes, and a rank file has no way to say otherwise. So tiktoken's decode
    is compared with llama.cpp's on the same GGUF with the pre name "gpt-4o" (clean_spaces
    off, decoding otherwise the same), and the lines where llama.cpp's own decode differs
    are counted and reported."""
    source = fixture_file(fixtures, "gguf/ggml-vocab-gpt-2.gguf")
    # exact=False: tiktoken's Unicode 16 classes differ from llama.cpp's tables (U+1C89 ...;
    # test_convert_unicode_tables.py), which the corpus lines do not hold.
    with pytest.warns(InexactConversionWarning, match=r"\\p\{L\} differs"):
        written = toksmith.load(source).save(tmp_path / "gpt2.tiktoken", exact=False)
    assert written.read_bytes() == fixture_file(fixtures, "tiktoken/r50k_base.tiktoken").read_bytes()
    again = toksmith.load(written)
    assert again.spec.byte_level.encoding == "r50k_base"
    enc = tiktoken_on(written, "r50k_base", fixtures)
    ref = llama_cpp_reference.load_vocab(source)
    unclean = llama_cpp_reference.load_vocab(copy_gguf(source, tmp_path / "gpt2-no-clean-spaces.gguf",
                                                       {"tokenizer.ggml.pre": "gpt-4o"}))
    label = "convert ggml-vocab-gpt-2.gguf -> tiktoken"
    sample = spliced(multilingual_sample(corpus_lines, 200), sorted(enc.special_tokens_set), seed=11)
    with_toksmith = Comparison(f"{label} (tricky_strings and 200 lines of each corpus): toksmith on the written file, "
                               f"ids, parse_special", against=f"{TIKTOKEN} on the written file")
    with_toksmith.all(sample, ours=again.encode_batch(sample, parse_special=True),
                      theirs=enc.encode_batch(sample, allowed_special="all", num_threads=1))
    finish_all(*tiktoken_and_llama_cpp(enc, ref, unclean, corpus_lines, label, seed=11, written="tiktoken"),
               with_toksmith)


def test_llama3_gguf_refused_for_its_bos_rule_only(fixtures, tmp_path):
    """llama.cpp adds BOS with add_special for pre "llama-bpe"; a rank file's reader adds
    nothing: refused, an existing file kept. The ranks alone are Meta's Llama 3 rank file."""
    path = fixture_file(fixtures, "gguf/ggml-vocab-llama-bpe.gguf")
    tok = toksmith.load(path)
    target = tmp_path / "out.tiktoken"
    target.write_bytes(b"old content")
    with pytest.raises(UnsupportedConversionError) as err:
        tok.save(target)
    message = str(err.value)
    assert "ggml-vocab-llama-bpe.gguf" in message and "tiktoken rank file" in message
    assert "adding BOS" in message and "; " not in message, message      # the only reason
    assert target.read_bytes() == b"old content"
    assert hashlib.sha256(rank_file_of_merge_list(tok.spec)).hexdigest() == LLAMA3_SHA256
    report("convert ggml-vocab-llama-bpe.gguf -> tiktoken: refused (adding BOS with add_special); its ranks "
           "alone are Meta's Llama 3 rank file byte for byte")


def test_tokenizer_json_with_tiktokens_cl100k_regex_text_refused(fixtures, tmp_path):
    """cl100k's pattern as tiktoken writes it, given to tokenizers, cuts digit runs whole
    (Oniguruma reads `\\p{N}{1,3}+` as `(\\p{N}{1,3})+`): on cl100k's own merges, such a
    file tokenizes otherwise than the rank file, so it is refused; spelled for Oniguruma
    it is written, and is cl100k_base's file byte for byte."""
    enc = encoding("cl100k_base", fixtures)
    derived = merge_list_vocab(read_tiktoken(fixture_file(fixtures, "tiktoken/cl100k_base.tiktoken")).vocab)
    verbatim, spelled = tmp_path / "verbatim.json", tmp_path / "spelled.json"
    derived_tokenizer(derived, enc._pat_str, enc._special_tokens).save(str(verbatim))
    derived_tokenizer(derived, oniguruma_spelling(enc._pat_str), enc._special_tokens).save(str(spelled))
    assert tokenizers.Tokenizer.from_file(str(verbatim)).encode("1919").ids != enc.encode_ordinary("1919")
    with pytest.raises(UnsupportedConversionError, match="the pre-tokenizer"):
        toksmith.load(verbatim).save(tmp_path / "verbatim.tiktoken")
    written = toksmith.load(spelled).save(tmp_path / "spelled.tiktoken")
    assert written.read_bytes() == fixture_file(fixtures, "tiktoken/cl100k_base.tiktoken").read_bytes()


@pytest.mark.parametrize("relative, expected", [
    ("gguf/ggml-vocab-qwen2.gguf", ["user-defined", "no encoding a reader recognises"]),
    ("gguf/ggml-vocab-deepseek-coder.gguf", ["user-defined", "adding BOS", "single bytes"]),
    ("gguf/ggml-vocab-falcon.gguf", ["single bytes"]),
    ("gguf/ggml-vocab-llama-spm.gguf", ["spm-bpe model"]),
    ("gguf/ggml-vocab-bert-bge.gguf", ["wordpiece model"]),
    ("gguf/ggml-vocab-nomic-bert-moe.gguf", ["unigram model"]),
    ("hf/all-MiniLM-L6-v2/tokenizer.json", ["wordpiece model"]),
    ("hf/rut5-large/tokenizer.json", ["unigram model"]),
    ("spm/llama2_tokenizer.model", ["spm-bpe model"]),
    ("spm/t5_base_japanese_spiece.model", ["unigram model"]),
    ("rwkv/rwkv_vocab_v20230424.txt", ["rwkv model"]),
])
def test_other_sources_refused(fixtures, tmp_path, relative, expected):
    target = tmp_path / "out.tiktoken"
    with pytest.raises(UnsupportedConversionError) as err:
        toksmith.load(fixture_file(fixtures, relative)).save(target)
    message = str(err.value)
    assert relative.rsplit("/", 1)[1] in message and "tiktoken rank file" in message
    for part in expected:
        assert part in message, message
    assert not target.exists()
    report(f"convert {relative} -> tiktoken: refused ({'; '.join(expected)})")
