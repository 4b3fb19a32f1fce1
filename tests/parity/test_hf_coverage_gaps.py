"""Options of issue 9's component list that no other parity file exercised, vs tokenizers 0.23.3.

(docs/hf_coverage.md maps every component and option to the test that covers it; these are
the ones it found uncovered.)

- WordPiece with another continuing_subword_prefix ("@@", trained by WordPieceTrainer with
  that prefix on the corpora) and a max_input_chars_per_word of 30, with the WordPiece
  decoder of the same prefix and cleanup off;
- the ByteLevel pre-tokenizer with trim_offsets off (and add_prefix_space on), over the
  GPT-2 vocabulary, with the ByteLevel decoder's own options off;
- the Replace decoder with a regex pattern, and CTC with cleanup off, on the WordPiece file;
- the hf/gpt2 folder (vocab.json + merges.txt, no tokenizer.json) against the tokenizer
  transformers 5.23 itself builds from that folder (AutoTokenizer, offline): every line
  of every corpus with all four add_special x parse_special combinations, decode with both
  skip_special, pairs (test_hf_byte_level compares the folder on a sample, one
  add_special value, against a hand-built reference);
- BPE over characters with its merges in the legacy serialized form ("a b" strings, as
  tokenizers < 0.20 saved them; llama3's byte-level file has them too): Llama 2's .model as
  transformers' LlamaConverter converts it, merges rewritten;
- a single template that names $A twice ("$A <|endoftext|> $A:1"), with a pair template;
- a Split pre-tokenizer whose regex uses \\X (grapheme clusters), on a toy vocabulary
  (test_hf_split_graphemes.py runs \\X, \\y, \\Y patterns over a trained BPE).

Ids: every line of every corpus with add_special and parse_special on, the other three
combinations on every 8th line; decode of the ids of every line with both skip_special.
"""
from __future__ import annotations

import json

import pytest
import tokenizers
import transformers
from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers

import toksmith
from tests.conftest import CORPUS_FILES, fixture_file
from tests.parity.comparison import Comparison
from tests.parity.converted_spm import convert
from tests.parity.llama_cpp_compare import spliced

FLAGS = ((True, True), (False, False), (False, True), (True, False))   # add_special, parse_special
SAMPLE_STEP = 8
TOKENIZERS = f"tokenizers {tokenizers.__version__}"
SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]

pytestmark = pytest.mark.filterwarnings("ignore:the text starts with a BOS token")


def _every_line(corpus_lines, added) -> list[str]:
    return [text for name in CORPUS_FILES for text in spliced(corpus_lines[name], added, seed=len(name))]


def _compare(label: str, path, texts, ref=None) -> None:
    """encode_batch ids: every text with add_special and parse_special on, every SAMPLE_STEP-th
    with the other three pairs; decode of the first pair's reference ids, both skip_special."""
    tok = toksmith.load(path)
    ref = ref or tokenizers.Tokenizer.from_file(str(path))
    first = Comparison(f"{label} encode_batch ids, every line, add_special+parse_special", against=TOKENIZERS)
    others = Comparison(f"{label} encode_batch ids, every {SAMPLE_STEP}th line x 3 other flag pairs",
                        against=TOKENIZERS)
    decoded = Comparison(f"{label} decode of the reference's ids x skip_special 2", against=TOKENIZERS)
    for k, (add_special, parse_special) in enumerate(FLAGS):
        sample = texts if k == 0 else texts[::SAMPLE_STEP]
        ref.encode_special_tokens = not parse_special
        want = [e.ids for e in ref.encode_batch(sample, add_special_tokens=add_special)]
        got = tok.encode_batch(sample, add_special=add_special, parse_special=parse_special)
        (first if k == 0 else others).all(sample, ours=got, theirs=want,
                                          what=f"add_special={add_special} parse_special={parse_special}")
        if k == 0:
            for skip in (False, True):
                decoded.all(want, ours=[tok.decode(ids, skip_special=skip) for ids in want],
                            theirs=ref.decode_batch(want, skip_special_tokens=skip), what=f"skip_special={skip}")
    ref.encode_special_tokens = False
    for check in (first, others, decoded):
        check.finish()


@pytest.fixture(scope="module")
def wordpiece_at(corpus_lines, tmp_path_factory) -> str:
    tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]", continuing_subword_prefix="@@",
                                                max_input_chars_per_word=30))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    lines = [line for name in CORPUS_FILES for line in corpus_lines[name][:2000]]
    tok.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=8000, special_tokens=SPECIALS,
                                                             continuing_subword_prefix="@@", show_progress=False))
    tok.decoder = decoders.WordPiece(prefix="@@", cleanup=False)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIALS])
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls))
    path = tmp_path_factory.mktemp("hf_gaps") / "wordpiece-at.json"
    tok.save(str(path))
    return str(path)


def test_wordpiece_other_prefix_matches_tokenizers(wordpiece_at, corpus_lines):
    data = tokenizers.Tokenizer.from_file(wordpiece_at)
    assert any(t.startswith("@@") for t in data.get_vocab())
    _compare("WordPiece continuing_subword_prefix '@@', max_input_chars_per_word 30, decoder WordPiece('@@', "
             "cleanup off)", wordpiece_at, _every_line(corpus_lines, SPECIALS))


@pytest.mark.parametrize("decoder_name", ["Replace-regex", "CTC-no-cleanup"])
def test_decoder_options_on_wordpiece_ids(wordpiece_at, corpus_lines, tmp_path, decoder_name):
    ref = tokenizers.Tokenizer.from_file(wordpiece_at)
    ref.decoder = {
        "Replace-regex": decoders.Sequence([decoders.Replace(Regex(r"@@|\d+"), "#"), decoders.Fuse()]),
        "CTC-no-cleanup": decoders.CTC(pad_token="[PAD]", word_delimiter_token="@@", cleanup=False),
    }[decoder_name]
    path = tmp_path / f"{decoder_name}.json"
    ref.save(str(path))
    ref = tokenizers.Tokenizer.from_file(str(path))
    tok = toksmith.load(path)
    texts = _every_line(corpus_lines, SPECIALS)[::4]
    seqs = [e.ids for e in ref.encode_batch(texts)]
    pad = ref.token_to_id("[PAD]")
    padded = [ids[:3] + [pad, pad] + ids[3:] for ids in seqs[:2000]]
    seqs += padded
    with Comparison(f"decoder {decoder_name} on WordPiece '@@' ids of every 4th line, and {len(padded)} of them "
                    f"with [PAD] inserted, x skip_special 2", against=TOKENIZERS) as check:
        for skip in (False, True):
            check.all(seqs, ours=[tok.decode(ids, skip_special=skip) for ids in seqs],
                      theirs=ref.decode_batch(seqs, skip_special_tokens=skip), what=f"skip_special={skip}")


def test_byte_level_trim_offsets_off_matches_tokenizers(fixtures, corpus_lines, tmp_path):
    vocab, merges = fixture_file(fixtures, "hf/gpt2/vocab.json"), fixture_file(fixtures, "hf/gpt2/merges.txt")
    ref = tokenizers.Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True, trim_offsets=False)
    ref.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    ref.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    path = tmp_path / "gpt2-trim-off.json"
    ref.save(str(path))
    _compare("ByteLevel pre-tokenizer add_prefix_space on, trim_offsets off (GPT-2 vocabulary)", path,
             _every_line(corpus_lines, ["<|endoftext|>"]))


def test_gpt2_folder_matches_transformers_build_on_every_line(fixtures, corpus_lines):
    folder = fixture_file(fixtures, "hf/gpt2/vocab.json").parent
    built = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    ref = tokenizers.Tokenizer.from_str(built.backend_tokenizer.to_str())
    ref.no_padding()
    ref.no_truncation()
    tok = toksmith.load(folder)
    texts = _every_line(corpus_lines, ["<|endoftext|>"])
    # the folder's template is "$A" alone: tokenizers' ids are the same for both add_special
    # values (the template checked, and the ids on every 8th line), so tokenizers runs once per
    # parse_special and toksmith's add_special=False ids are compared with its add_special=True ids
    template = json.loads(ref.post_processor.__getstate__())
    assert template["single"] == [{"Sequence": {"id": "A", "type_id": 0}}] and not template["special_tokens"]
    label = "hf/gpt2 folder vs the tokenizer transformers builds from it"
    ids = Comparison(f"{label}: encode_batch ids, every line x 4 flag pairs (add_special=False against "
                     f"tokenizers' add_special=True ids)", against=TOKENIZERS)
    decoded = Comparison(f"{label}: decode of the reference's ids x skip_special 2", against=TOKENIZERS)
    for parse_special in (True, False):
        ref.encode_special_tokens = not parse_special
        want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=True)]
        assert [e.ids for e in ref.encode_batch(texts[::SAMPLE_STEP], add_special_tokens=False)] == \
            want[::SAMPLE_STEP]                           # the reference against itself
        for add_special in (True, False):
            got = tok.encode_batch(texts, add_special=add_special, parse_special=parse_special)
            ids.all(texts, ours=got, theirs=want, what=f"add_special={add_special} parse_special={parse_special}")
        if parse_special:
            for skip in (False, True):
                decoded.all(want, ours=[tok.decode(i, skip_special=skip) for i in want],
                            theirs=ref.decode_batch(want, skip_special_tokens=skip), what=f"skip_special={skip}")
    ref.encode_special_tokens = False
    lines = [line for line in corpus_lines["man_en.txt"] if line.strip()][:100]
    pairs = Comparison(f"{label}: pairs of man_en.txt lines", against=TOKENIZERS)
    for first, second in zip(lines, lines[1:]):             # each line with the next: inputs only
        pairs.one((first, second), tok.encode(first, pair=second), ref.encode(first, second).ids)
    for check in (ids, decoded, pairs):
        check.finish()


def test_char_bpe_with_string_merges_matches_tokenizers(fixtures, corpus_lines, tmp_path):
    data = json.loads(convert(str(fixture_file(fixtures, "spm/llama2_tokenizer.model")), "LlamaConverter",
                              legacy=True).to_str())
    assert all(isinstance(m, list) and len(m) == 2 and " " not in "".join(m) for m in data["model"]["merges"])
    data["model"]["merges"] = [" ".join(m) for m in data["model"]["merges"]]
    path = tmp_path / "llama2-string-merges.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    _compare("BPE (characters, byte_fallback) with 'a b' string merges, Llama 2 converted", path,
             _every_line(corpus_lines, ["<s>", "</s>", "<unk>"]))


def test_split_on_grapheme_clusters(fixtures, corpus_lines, tmp_path):
    ref = tokenizers.Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "e\u0301": 2}, unk_token="[UNK]"))
    ref.pre_tokenizer = pre_tokenizers.Split(Regex(r"\X"), behavior="isolated")
    path = tmp_path / "split-graphemes.json"
    ref.save(str(path))
    lines = [line for name in CORPUS_FILES for line in corpus_lines[name][:200]]
    with Comparison("Split(\\X isolated) over a toy WordLevel vocabulary, encode_batch ids of the first 200 "
                    "lines of each corpus", against=TOKENIZERS) as check:
        check.all(lines, ours=toksmith.load(path).encode_batch(lines), theirs=[e.ids for e in ref.encode_batch(lines)])


def test_single_template_with_the_sequence_twice(fixtures, corpus_lines, tmp_path):
    # tokenizers applies the template's order even with add_special_tokens off (only the
    # special tokens go), so the text is there twice either way.
    vocab, merges = fixture_file(fixtures, "hf/gpt2/vocab.json"), fixture_file(fixtures, "hf/gpt2/merges.txt")
    ref = tokenizers.Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    ref.decoder = decoders.ByteLevel()
    ref.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    ref.post_processor = processors.TemplateProcessing(single="$A <|endoftext|> $A:1",
                                                       pair="$A <|endoftext|> $B:1 <|endoftext|>",
                                                       special_tokens=[("<|endoftext|>", 50256)])
    path = tmp_path / "single-twice.json"
    ref.save(str(path))
    texts = _every_line(corpus_lines, ["<|endoftext|>"])
    label = "TemplateProcessing single '$A <|endoftext|> $A:1' (GPT-2 vocabulary)"
    _compare(label, path, texts, ref)
    tok = toksmith.load(path)
    ref.encode_special_tokens = False                     # parse_special=True
    with Comparison(f"{label} pairs of every 8th line of the first 4000 x add_special 2, and tokens of "
                    f"'Hello world'", against=TOKENIZERS) as check:
        for add_special in (True, False):
            check.one("Hello world", tok.tokenize("Hello world", add_special=add_special),
                      ref.encode("Hello world", add_special_tokens=add_special).tokens, what="tokens")
            for first, second in zip(texts[:4000:8], texts[1:4000:8]):     # inputs only
                check.one((first, second), tok.encode(first, pair=second, add_special=add_special, parse_special=True),
                          ref.encode(first, second, add_special_tokens=add_special).ids,
                          what=f"pair add_special={add_special}")
