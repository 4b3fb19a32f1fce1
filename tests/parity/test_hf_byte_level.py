"""Byte-level BPE tokenizer.json files vs HF `tokenizers` 0.23 itself.

Files: the fixture Llama 3 tokenizer.json (Split by Llama 3's regex + ByteLevel,
ignore_merges, 256 special added tokens), and tokenizer.json files built here with
tokenizers' own Python API from the real GPT-2 vocabulary and merges (hf/gpt2): GPT-2's
ByteLevel pre-tokenizer as transformers' GPT2TokenizerFast builds it, and Qwen 2's Split
regex over the same vocabulary; with added tokens covering special, single_word, lstrip,
rstrip and normalized, and a TemplateProcessing with a pair template.

For every line of every corpus (a quarter with an added token's text spliced in): ids
with the four add_special x parse_special combinations (parse_special=False is
tokenizers' encode_special_tokens=True), the batch ids, and decode with both
skip_special values.
"""
from __future__ import annotations

import gzip
import pickle

import pytest
import tokenizers
from tokenizers import AddedToken, decoders, models, pre_tokenizers, processors

import toksmith
from tests.conftest import LONG_RUNS, fixture_file, multilingual_sample, report
from tests.parity.comparison import Comparison
from tests.parity.hf_reference import gpt2_tokenizer
from tests.parity.llama_cpp_compare import spliced
from toksmith.hf.split_patterns import QWEN2_REGEX

TOKENIZERS = f"tokenizers {tokenizers.__version__}"
SINGLE_CALLS = 400          # lines of each corpus also encoded one call each


def _files(fixtures, tmp_path_factory) -> dict[str, tuple[str, tokenizers.Tokenizer]]:
    folder = tmp_path_factory.mktemp("hf_byte_level")
    llama3 = folder / "llama3.json"
    llama3.write_bytes(gzip.decompress(fixture_file(fixtures, "hf/llama3/tokenizer.json.gz").read_bytes()))
    files = {"llama3": (str(llama3), tokenizers.Tokenizer.from_file(str(llama3)))}
    built = {
        "gpt2": gpt2_tokenizer(fixtures, pre_tokenizers.ByteLevel(add_prefix_space=False)),
        "gpt2-vocab-qwen2-split": gpt2_tokenizer(fixtures, pre_tokenizers.Sequence([
            pre_tokenizers.Split(tokenizers.Regex(QWEN2_REGEX), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])),
    }
    for name, tok in built.items():
        path = folder / f"{name}.json"
        tok.save(str(path))
        files[name] = (str(path), tokenizers.Tokenizer.from_file(str(path)))
    for _, ref in files.values():
        ref.no_padding()
        ref.no_truncation()
    return files


@pytest.fixture(scope="module")
def hf_files(fixtures, tmp_path_factory):
    return _files(fixtures, tmp_path_factory)


@pytest.mark.parametrize("name", ["llama3", "gpt2", "gpt2-vocab-qwen2-split"])
def test_corpora_match_tokenizers(hf_files, corpus_lines, name):
    path, ref = hf_files[name]
    tok = toksmith.load(path)
    added = [t.content for t in ref.get_added_tokens_decoder().values()]
    batch = Comparison(f"{name} tokenizer.json encode_batch ids x 4 add_special x parse_special", against=TOKENIZERS)
    single = Comparison(f"{name} tokenizer.json encode ids (first {SINGLE_CALLS} lines of each corpus, "
                        f"add_special + parse_special)", against=TOKENIZERS)
    decoded = Comparison(f"{name} tokenizer.json decode of the reference's ids x skip_special 2", against=TOKENIZERS)
    spliced_count = 0
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, added, seed=len(corpus))
        spliced_count += sum(a != b for a, b in zip(texts, lines))     # two lists of inputs
        for add_special in (False, True):
            for parse_special in (False, True):
                ref.encode_special_tokens = not parse_special
                want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=add_special)]
                got = tok.encode_batch(texts, add_special=add_special, parse_special=parse_special)
                batch.all(texts, ours=got, theirs=want,
                          what=f"{corpus} add_special={add_special} parse_special={parse_special}")
        # the ids of the last pair, add_special and parse_special on
        for text, ids in single.pairs(texts[:SINGLE_CALLS], want[:SINGLE_CALLS]):
            single.one(text, tok.encode(text, add_special=True, parse_special=True), ids, what=corpus)
        for skip in (False, True):
            decoded.all(want, ours=[tok.decode(ids, skip_special=skip) for ids in want],
                        theirs=ref.decode_batch(want, skip_special_tokens=skip), what=f"{corpus} skip_special={skip}")
    ref.encode_special_tokens = False
    report(f"{name} tokenizer.json: {spliced_count} of the corpus lines with an added token spliced in")
    batch.finish()
    single.finish()
    decoded.finish()


@pytest.mark.parametrize("name", ["gpt2", "llama3"])
def test_pairs_match_tokenizers(hf_files, corpus_lines, name):
    path, ref = hf_files[name]
    tok = toksmith.load(path)
    lines = [line for line in corpus_lines["man_en.txt"] if line][:300]
    with Comparison(f"{name} tokenizer.json pairs of man_en.txt lines x add_special 2", against=TOKENIZERS) as check:
        for first, second in zip(lines, lines[1:]):     # each line with the next: inputs only
            for add_special in (False, True):
                check.one((first, second), tok.encode(first, pair=second, add_special=add_special),
                          ref.encode(first, second, add_special_tokens=add_special).ids,
                          what=f"add_special={add_special}")


def test_template_without_pair_joins_the_two_sequences(fixtures, tmp_path):
    # tokenizers' TemplateProcessing defaults its pair template to "$A:0 $B:1"
    ref = gpt2_tokenizer(fixtures, pre_tokenizers.ByteLevel(add_prefix_space=False))
    ref.post_processor = processors.TemplateProcessing(single="$A <|endoftext|>",
                                                       special_tokens=[("<|endoftext|>", 50256)])
    ref.save(str(tmp_path / "tokenizer.json"))
    tok = toksmith.load(tmp_path)
    assert tok.encode("a b") == ref.encode("a b").ids
    assert tok.encode("a b", pair="c d") == ref.encode("a b", "c d").ids


def test_pair_on_a_tokenizer_without_templates_is_refused(fixtures):
    tok = toksmith.load(fixture_file(fixtures, "tiktoken/r50k_base.tiktoken"))
    with pytest.raises(ValueError, match="pair"):
        tok.encode("a", pair="b")


def test_gpt2_folder_matches_tokenizers(fixtures, corpus_lines):
    # the folder holds vocab.json + merges.txt: built as transformers' GPT2TokenizerFast is
    vocab, merges = fixture_file(fixtures, "hf/gpt2/vocab.json"), fixture_file(fixtures, "hf/gpt2/merges.txt")
    ref = tokenizers.Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    ref.decoder = decoders.ByteLevel()
    ref.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    tok = toksmith.load(vocab.parent)
    twin = pickle.loads(pickle.dumps(tok))     # pickled by its equivalent tokenizer.json
    lines = multilingual_sample(corpus_lines, 300) + LONG_RUNS
    lines = spliced(lines, ["<|endoftext|>"], seed=1)
    with Comparison("hf/gpt2 folder (vocab.json + merges.txt) and its unpickled copy, encode_batch ids "
                    "x parse_special 2", against=TOKENIZERS) as check:
        for parse_special in (False, True):
            ref.encode_special_tokens = not parse_special
            want = [e.ids for e in ref.encode_batch(lines)]
            check.all(lines, ours=tok.encode_batch(lines, parse_special=parse_special), theirs=want,
                      what=f"parse_special={parse_special}")
            check.all(lines, ours=twin.encode_batch(lines, parse_special=parse_special), theirs=want,
                      what=f"unpickled parse_special={parse_special}")


def test_tokenizer_json_pickles_by_its_bytes(hf_files):
    path, ref = hf_files["gpt2"]
    tok = toksmith.load(path)
    copy = pickle.loads(pickle.dumps(tok))
    text = "Hello toksmith, the cat <sep/> New York<|endoftext|>"
    # the copy and the original both as tokenizers (equal to each other alone, an emptied
    # encode would pass)
    ref.encode_special_tokens = False
    want = ref.encode(text).ids
    assert copy.encode(text, parse_special=True) == tok.encode(text, parse_special=True) == want
    ref.encode_special_tokens = True                  # parse_special=False
    want_pair = ref.encode(text, "x y").ids
    ref.encode_special_tokens = False
    assert copy.encode(text, pair="x y") == tok.encode(text, pair="x y") == want_pair
