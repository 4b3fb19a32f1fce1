"""encode_batch and stream_decoder() for every kind of tokenizer.json, vs tokenizers 0.23.3.

The other parity files compare encode_batch for each model kind and stream only the GPT-2
based files of test_hf_decoder_files.py; here every kind of file runs both, with the
decoder its kind ships with:

- BPE over characters, trained by tokenizers' BpeTrainer on the corpora: end_of_word_suffix
  "</w>" with the BPEDecoder, and continuing_subword_prefix "##" with fuse_unk and the
  WordPiece decoder; Llama 2's .model converted by transformers (byte_fallback, decoder
  Replace/ByteFallback/Fuse/Strip);
- byte-level BPE: hf/llama3 and the hf/gpt2 folder (the reference built from its
  vocab.json + merges.txt as transformers' GPT2TokenizerFast builds it);
- Unigram: hf/rut5-large, and t5_base_japanese_spiece.model as transformers 5's T5Tokenizer
  builds it (Metaspace decoder);
- WordPiece: hf/all-MiniLM-L6-v2 (WordPiece decoder);
- WordLevel, trained by WordLevelTrainer: words without a decoder, and characters with
  the CTC decoder (a wav2vec2-style vocabulary: "|" word delimiter, "<pad>").

For each: encode_batch ids with the four add_special x parse_special combinations on
~2,300 lines (tricky_strings whole, 150 lines of every other corpus, LONG_RUNS; added
tokens spliced into a quarter); then for the ids of those lines (add_special on) and 600
random id lists (added and special ids among them), with both skip_special values:
decode == tokenizers' decode, and the stream fed in random slices of 1 to 5 ids (every
7th list one id at a time) joins to the same text. Where tokenizers panics on an id list,
toksmith must refuse with ReferenceAbortsError.
"""
from __future__ import annotations

import gzip
import random

import pytest
import tokenizers
from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers

import toksmith
from tests.conftest import CORPUS_FILES, LONG_RUNS, fixture_file, multilingual_sample, report
from tests.hf_decoders_reference import REFUSED, ours_or_refused, reference_or_refused
from tests.parity.comparison import Comparison
from tests.parity.converted_spm import convert, from_tokenizer_class
from tests.parity.hf_reference import gpt2_folder_reference
from tests.parity.llama_cpp_compare import spliced

FLAGS = ((False, False), (False, True), (True, False), (True, True))   # add_special, parse_special
TRAINING_LINES = 1500       # of each corpus
RANDOM_LISTS = 600
TOKENIZERS = f"tokenizers {tokenizers.__version__}"

pytestmark = pytest.mark.filterwarnings("ignore:the text starts with a BOS token")

ADDED = [AddedToken("<s>", special=True, normalized=False), AddedToken("</s>", special=True, normalized=False),
         AddedToken("<sep/>", special=True, lstrip=True, rstrip=True, normalized=False),
         AddedToken(" New York", lstrip=True), AddedToken("toksmith", single_word=True),
         AddedToken("the cat", normalized=False)]


def _training_text(corpus_lines) -> list[str]:
    return [line for name in CORPUS_FILES for line in corpus_lines[name][:TRAINING_LINES]]


def _finish(tok: tokenizers.Tokenizer, path) -> str:
    """Added tokens and a "<s> $A </s>" template, saved to `path`."""
    tok.add_special_tokens([t for t in ADDED if t.special])
    tok.add_tokens([t for t in ADDED if not t.special])
    bos, eos = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                                       special_tokens=[("<s>", bos), ("</s>", eos)])
    tok.save(str(path))
    return str(path)


def _bpe_suffix(corpus_lines, path) -> str:
    tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(_training_text(corpus_lines), trainers.BpeTrainer(
        vocab_size=6000, special_tokens=["<unk>"], end_of_word_suffix="</w>", limit_alphabet=400,
        show_progress=False))
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    return _finish(tok, path)


def _bpe_prefix(corpus_lines, path) -> str:
    tok = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##", fuse_unk=True))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(_training_text(corpus_lines), trainers.BpeTrainer(
        vocab_size=6000, special_tokens=["[UNK]"], continuing_subword_prefix="##", limit_alphabet=300,
        show_progress=False))
    tok.decoder = decoders.WordPiece(prefix="##")
    return _finish(tok, path)


def _wordlevel_words(corpus_lines, path) -> str:
    tok = tokenizers.Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.train_from_iterator(_training_text(corpus_lines), trainers.WordLevelTrainer(
        vocab_size=8000, special_tokens=["[UNK]"], show_progress=False))
    return _finish(tok, path)


def _wordlevel_ctc(corpus_lines, path) -> str:
    """Characters as a CTC acoustic model's vocabulary: spaces become the "|" delimiter."""
    tok = tokenizers.Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.Lowercase(), normalizers.Replace(" ", "|")])
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.train_from_iterator(_training_text(corpus_lines), trainers.WordLevelTrainer(
        vocab_size=1500, special_tokens=["<pad>", "<unk>"], show_progress=False))
    tok.decoder = decoders.CTC(pad_token="<pad>", word_delimiter_token="|", cleanup=True)
    return _finish(tok, path)


@pytest.fixture(scope="module")
def files(fixtures, corpus_lines, tmp_path_factory):
    """name -> (what toksmith.load takes, the tokenizers reference)."""
    folder = tmp_path_factory.mktemp("hf_batch_stream")
    llama3 = folder / "llama3.json"
    llama3.write_bytes(gzip.decompress(fixture_file(fixtures, "hf/llama3/tokenizer.json.gz").read_bytes()))
    llama2 = folder / "llama2-converted.json"
    convert(str(fixture_file(fixtures, "spm/llama2_tokenizer.model")), "LlamaConverter", legacy=True).save(str(llama2))
    t5 = folder / "t5-japanese-T5Tokenizer.json"
    from_tokenizer_class(str(fixture_file(fixtures, "spm/t5_base_japanese_spiece.model")), "T5Tokenizer").save(str(t5))
    paths = {
        "bpe-chars-suffix-BPEDecoder": _bpe_suffix(corpus_lines, folder / "bpe-suffix.json"),
        "bpe-chars-prefix-WordPieceDecoder": _bpe_prefix(corpus_lines, folder / "bpe-prefix.json"),
        "bpe-byte-fallback-llama2-converted": str(llama2),
        "byte-level-llama3": str(llama3),
        "unigram-rut5": str(fixture_file(fixtures, "hf/rut5-large/tokenizer.json")),
        "unigram-t5-japanese-T5Tokenizer": str(t5),
        "wordpiece-MiniLM": str(fixture_file(fixtures, "hf/all-MiniLM-L6-v2/tokenizer.json")),
        "wordlevel-words": _wordlevel_words(corpus_lines, folder / "wordlevel-words.json"),
        "wordlevel-chars-CTC": _wordlevel_ctc(corpus_lines, folder / "wordlevel-ctc.json"),
    }
    out = {name: (path, tokenizers.Tokenizer.from_file(path)) for name, path in paths.items()}
    out["byte-level-gpt2-folder"] = (fixture_file(fixtures, "hf/gpt2/vocab.json").parent,
                                     gpt2_folder_reference(fixtures))
    for _, ref in out.values():
        ref.no_padding()
        ref.no_truncation()
    return out


def _stream(tok, ids, rnd, skip: bool, one_at_a_time: bool) -> str:
    stream = tok.stream_decoder(skip_special=skip)
    out, i = [], 0
    while i < len(ids):
        k = 1 if one_at_a_time else rnd.randint(1, 5)
        out.append(stream.feed(ids[i:i + k]))
        i += k
    return "".join(out) + stream.finish()


NAMES = ["bpe-chars-suffix-BPEDecoder", "bpe-chars-prefix-WordPieceDecoder", "bpe-byte-fallback-llama2-converted",
         "byte-level-llama3", "byte-level-gpt2-folder", "unigram-rut5", "unigram-t5-japanese-T5Tokenizer",
         "wordpiece-MiniLM", "wordlevel-words", "wordlevel-chars-CTC"]


def _random_id_lists(ref, rnd) -> list[list[int]]:
    """RANDOM_LISTS id lists of 0 to 12 ids, a fifth of them added tokens' ids."""
    n = ref.get_vocab_size()
    added_ids = list(ref.get_added_tokens_decoder())
    return [[rnd.choice(added_ids) if added_ids and rnd.random() < 0.2 else rnd.randrange(n)
             for _ in range(rnd.randint(0, 12))] for _ in range(RANDOM_LISTS)]


@pytest.mark.parametrize("name", NAMES)
def test_batch_and_stream_match_tokenizers(files, corpus_lines, name):
    path, ref = files[name]
    tok = toksmith.load(path)
    assert tok.vocab_size == ref.get_vocab_size()
    added = [t.content for t in ref.get_added_tokens_decoder().values()][:30]
    texts = spliced(multilingual_sample(corpus_lines, 150) + LONG_RUNS, added, seed=11)
    ids = Comparison(f"{name} encode_batch ids, 4 add_special x parse_special", against=TOKENIZERS)
    for add_special, parse_special in FLAGS:
        ref.encode_special_tokens = not parse_special
        want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=add_special)]
        got = tok.encode_batch(texts, add_special=add_special, parse_special=parse_special)
        ids.all(texts, ours=got, theirs=want, what=f"add_special={add_special} parse_special={parse_special}")
    ids.finish(at_least=4 * len(texts))
    ref.encode_special_tokens = False
    rnd = random.Random(13)
    seqs = list(want) + _random_id_lists(ref, rnd)    # the ids of add_special + parse_special, and random
    decoded = Comparison(f"{name} decode of {len(seqs)} id lists ({RANDOM_LISTS} random) x skip_special 2",
                         against=TOKENIZERS)
    streamed = Comparison(f"{name} stream_decoder of the same id lists", against=TOKENIZERS)
    refused = 0
    for skip in (False, True):
        for k, seq in enumerate(seqs):
            want_text = reference_or_refused(ref.decode, seq, skip_special_tokens=skip)
            decoded.one(seq, ours_or_refused(tok.decode, seq, skip_special=skip), want_text,
                        what=f"skip_special={skip}")
            if want_text is REFUSED:
                refused += 1
            else:
                streamed.one(seq, _stream(tok, seq, rnd, skip, one_at_a_time=k % 7 == 0), want_text,
                             what=f"skip_special={skip}")
    decoded.finish(at_least=2 * len(seqs))
    streamed.finish(at_least=2 * len(seqs) - refused)
    report(f"{name}: {refused} of those decodes where tokenizers panics, refused alike by toksmith "
           f"(ReferenceAbortsError) and not streamed")
