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
- refused: GGUF byte-level vocabularies (llama.cpp's clean_spaces decode rule; Llama 3's
  GGUF also adds BOS), and every non-byte-level or unrecognised vocabulary, with the
  reason in the message and an existing file left as it was. For the two GGUF files
  whose refusal is only about the pipeline, the ranks alone (rank_file_of_merge_list) are
  the official r50k_base and Meta Llama 3 rank files, byte for byte.
"""
from __future__ import annotations

import gzip
import hashlib

import pytest
import tiktoken
import tiktoken.load

import toksmith
from tests.conftest import fixture_file, multilingual_sample, report
from tests.parity.test_byte_bpe_gguf import spliced
from tests.parity.test_byte_level_merges import lines_with_special_text, tiktoken_vs_tokenizers
from tests.parity.test_hf_batch_stream import _gpt2_folder_reference
from tests.parity.test_spm_bpe_gguf import fail_on
from tests.tiktoken_reference import encoding
from toksmith.errors import UnsupportedConversionError
from toksmith.formats.tiktoken import KNOWN_ENCODINGS, LLAMA3_SHA256, PATTERN_REGEX, R50K_SHA256
from toksmith.spec import SplitPattern
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
    again = toksmith.load(written).spec.byte_level
    assert again.encoding == name
    # Same bytes, so tiktoken reads equal ranks and, with the same pattern and special
    # tokens, is the same Encoding: a corpus run adds nothing. A sample shows it runs:
    # tricky_strings.txt whole and the first 200 lines of every other corpus.
    original, copy = encoding(name, fixtures), tiktoken_on(written, name, fixtures)
    specials = sorted(original.special_tokens_set)
    texts = spliced(multilingual_sample(corpus_lines, 200), specials, seed=7)
    want = original.encode_batch(texts, allowed_special="all", num_threads=1)
    got = copy.encode_batch(texts, allowed_special="all", num_threads=1)
    ordinary = [texts[i] for i in lines_with_special_text(texts, specials)]
    mismatches = [f"line {i + 1} {t[:60]!r}" for i, (t, g, w) in enumerate(zip(texts, got, want)) if g != w]
    mismatches += [f"ordinary {t[:60]!r}" for t in ordinary
                   if copy.encode_ordinary(t) != original.encode_ordinary(t)]
    mismatches += [f"decode line {i + 1}" for i, ids in enumerate(want) if copy.decode(ids) != original.decode(ids)]
    report(f"convert {name}.tiktoken -> tiktoken: {len(texts) + len(ordinary)} lines, {len(mismatches)} "
           f"mismatches (the file is the fixture byte for byte: equal ranks, so a sample)")
    fail_on(mismatches)


@pytest.fixture(scope="module")
def byte_level_sources(fixtures, tmp_path_factory):
    """cell name -> (path toksmith.load takes, tokenizers reference, encoding read back)."""
    folder = tmp_path_factory.mktemp("to_tiktoken")
    llama3 = folder / "tokenizer.json"
    llama3.write_bytes(gzip.decompress(fixture_file(fixtures, "hf/llama3/tokenizer.json.gz").read_bytes()))
    import tokenizers
    return {"hf/gpt2": (fixture_file(fixtures, "hf/gpt2/vocab.json").parent, _gpt2_folder_reference(fixtures),
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
    compared, mismatches = tiktoken_vs_tokenizers(enc, ref, corpus_lines)
    report(f"convert {cell} -> tiktoken: {compared} lines, {len(mismatches)} mismatches")
    fail_on(mismatches)


@pytest.mark.parametrize("name, sha256, reasons", [
    ("ggml-vocab-gpt-2.gguf", R50K_SHA256, ["clean_spaces"]),
    ("ggml-vocab-llama-bpe.gguf", LLAMA3_SHA256, ["adding BOS", "clean_spaces"]),
])
def test_gguf_byte_level_refused_for_its_pipeline_only(fixtures, tmp_path, name, sha256, reasons):
    """llama.cpp decodes these with clean_spaces (a space before punctuation dropped), which a
    rank file's reader never does, and Llama 3's GGUF adds BOS: refused. Their ranks alone
    are the official rank files."""
    spec = toksmith.load(fixture_file(fixtures, f"gguf/{name}")).spec
    target = tmp_path / "out.tiktoken"
    target.write_bytes(b"old content")
    with pytest.raises(UnsupportedConversionError) as err:
        toksmith.load(fixture_file(fixtures, f"gguf/{name}")).save(target)
    for reason in reasons:
        assert reason in str(err.value)
    assert name in str(err.value) and "tiktoken rank file" in str(err.value)
    assert target.read_bytes() == b"old content"
    assert hashlib.sha256(rank_file_of_merge_list(spec)).hexdigest() == sha256
    report(f"convert {name} -> tiktoken: refused ({'; '.join(reasons)}); its ranks alone are the official "
           f"rank file byte for byte")


@pytest.mark.parametrize("relative, expected", [
    ("gguf/ggml-vocab-qwen2.gguf", ["user-defined", "no encoding a reader recognises"]),
    ("gguf/ggml-vocab-deepseek-coder.gguf", ["user-defined", "adding BOS", "single bytes"]),
    ("gguf/ggml-vocab-falcon.gguf", ["clean_spaces", "single bytes"]),
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
    report(f"convert {relative.rsplit('/', 1)[1]} -> tiktoken: refused ({'; '.join(expected)})")
