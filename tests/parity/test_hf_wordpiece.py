"""WordPiece and WordLevel tokenizer.json pipelines vs HF `tokenizers` 0.23 itself.

Files: the fixture all-MiniLM-L6-v2 tokenizer.json (BertNormalizer, BertPreTokenizer,
WordPiece, TemplateProcessing, 5 special added tokens), and tokenizer.json files built
here with tokenizers' own Python API around vocabularies its trainers learn from the
fixture corpora (WordPieceTrainer: uncased BERT, cased BERT; WordLevelTrainer): every
BertNormalizer option combination, the Whitespace / WhitespaceSplit / Punctuation (each
behavior) pre-tokenizers, normalizer sequences, NFC/NFD/NFKC/NFKD, a small
max_input_chars_per_word, and added tokens marked normalized (matched in normalized text).

What is compared (padding and truncation off on the reference):
- MiniLM and the main trained files: every line of every corpus, a quarter of them with
  an added token's text spliced in, encode_batch ids with the four add_special x
  parse_special combinations (parse_special=False is tokenizers' encode_special_tokens=True),
  one-call encode on the first lines, and pairs;
- the option matrix (BertNormalizer x 24, pre-tokenizers, normalizers, max chars): a
  seeded sample of ~3,500 lines (tricky_strings.txt whole, the first 200 lines of every
  other corpus, long runs) with the same four combinations;
- the normalizers and pre-tokenizers alone: every line of every corpus.
"""
from __future__ import annotations

import itertools

import pytest
import tokenizers
from tokenizers import AddedToken, models, normalizers, pre_tokenizers, processors, trainers

import toksmith
from tests.conftest import LONG_RUNS, fixture_file, multilingual_sample
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import spliced
from toksmith._core import hf_regex_stages
from toksmith._core.unicode_normalizers import HfCharNormalizer, HfUnicodeNormalizer
from toksmith._core.bert_pretokenizers import HfBertPreTokenizer, HfPunctuation, HfRunsPreTokenizer

MINILM = "hf/all-MiniLM-L6-v2/tokenizer.json"
SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
FLAGS = list(itertools.product((False, True), (False, True)))   # (add_special, parse_special)
AGAINST = f"tokenizers {tokenizers.__version__}"

# a spliced "[CLS]" at the start of a line, with add_special: toksmith warns of the doubled
# leading token (tokenizers does not warn); the ids are what is compared
pytestmark = pytest.mark.filterwarnings("ignore:the text starts with a BOS token")


def _reference(path) -> tokenizers.Tokenizer:
    ref = tokenizers.Tokenizer.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    return ref


def compare(label: str, path, texts: list[str], *, one_call: int = 200) -> None:
    """Ids of `texts` from toksmith.load(path) and tokenizers with the four flag combinations:
    encode_batch on every text, encode one call each on the first `one_call`; reported and
    asserted."""
    tok, ref = toksmith.load(path), _reference(path)
    check = Comparison(f"{label} ids x 4 flag combinations, batch + one call on the first {one_call}",
                       against=AGAINST)
    for add_special, parse_special in FLAGS:
        ref.encode_special_tokens = not parse_special
        want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=add_special)]
        flags = f"add_special={add_special} parse_special={parse_special}"
        check.all(texts, ours=tok.encode_batch(texts, add_special=add_special, parse_special=parse_special),
                  theirs=want, what=flags)
        firsts = texts[:one_call]
        check.all(firsts, ours=[tok.encode(text, add_special=add_special, parse_special=parse_special)
                                for text in firsts], theirs=want[:one_call], what=f"{flags} one call")
    check.finish()


def every_line(corpus_lines, added: list[str]) -> tuple[list[str], int]:
    """Every corpus line, a seeded quarter with an added token's text spliced in."""
    texts, count = [], 0
    for corpus, lines in corpus_lines.items():
        out = spliced(lines, added, seed=len(corpus))
        count += sum(a != b for a, b in zip(out, lines))
        texts += out
    return texts, count


@pytest.fixture(scope="module")
def sample(corpus_lines) -> list[str]:
    lines = multilingual_sample(corpus_lines, 200) + LONG_RUNS + ["x" * 150, "ÉCOLE ÉLÉMENTAIRE", "a\u0301\u0323"]
    return spliced(lines, SPECIALS, seed=7)


# ---------------------------------------------------------------------- MiniLM

def test_minilm_corpora_match_tokenizers(fixtures, corpus_lines):
    path = fixture_file(fixtures, MINILM)
    texts, spliced_count = every_line(corpus_lines, SPECIALS)
    label = f"all-MiniLM-L6-v2 tokenizer.json, every corpus line ({spliced_count} with an added token spliced in)"
    compare(label, path, texts, one_call=400)
    # and the whole file decodes as tokenizers does (the WordPiece decoder: hf_decoders)
    tok, ref = toksmith.load(path), _reference(path)
    sequences = [e.ids for e in ref.encode_batch(texts)]
    decoded = Comparison(f"{label} decode x skip_special 2", against=AGAINST)
    for skip in (False, True):
        decoded.all(texts, ours=[tok.decode(ids, skip_special=skip) for ids in sequences],
                    theirs=ref.decode_batch(sequences, skip_special_tokens=skip), what=f"skip_special={skip}")
    decoded.finish()


def test_minilm_pairs_match_tokenizers(fixtures, corpus_lines):
    path = fixture_file(fixtures, MINILM)
    tok, ref = toksmith.load(path), _reference(path)
    lines = [line for line in corpus_lines["man_fr.txt"] if line][:300] + ["", "中文", "[SEP]"]
    check = Comparison("all-MiniLM-L6-v2 tokenizer.json pairs of man_fr.txt lines x add_special 2", against=AGAINST)
    for first, second in zip(lines, lines[1:]):
        for add_special in (False, True):
            check.one((first, second), tok.encode(first, pair=second, add_special=add_special, parse_special=True),
                      ref.encode(first, second, add_special_tokens=add_special).ids, what=f"add_special={add_special}")
    check.finish()


# ---------------------------------------------------------------------- trained vocabularies

def _training_lines(corpus_lines) -> list[str]:
    return [line for lines in corpus_lines.values() for line in lines]


@pytest.fixture(scope="module")
def vocabs(corpus_lines) -> dict[str, dict[str, int]]:
    """Vocabularies tokenizers' trainers learn from every corpus line."""
    lines = _training_lines(corpus_lines)
    out = {}
    for name, lowercase in (("uncased", True), ("cased", False)):
        tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=12000, special_tokens=SPECIALS))
        out[name] = tok.get_vocab()
    tok = tokenizers.Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(lines, trainers.WordLevelTrainer(vocab_size=20000, special_tokens=SPECIALS))
    out["wordlevel"] = tok.get_vocab()
    return out


def build(tmp_path, name: str, model, normalizer, pre_tokenizer, *, added=()) -> str:
    """A tokenizer.json as transformers' BertTokenizerFast lays one out, saved to tmp_path."""
    tok = tokenizers.Tokenizer(model)
    if normalizer is not None:
        tok.normalizer = normalizer
    if pre_tokenizer is not None:
        tok.pre_tokenizer = pre_tokenizer
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIALS])
    if added:
        tok.add_tokens(list(added))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    path = tmp_path / f"{name}.json"
    tok.save(str(path))
    return str(path)


def wordpiece(vocab, **kwargs):
    return models.WordPiece(vocab, unk_token="[UNK]", **kwargs)


# Added tokens marked normalized are matched in the normalized text, as their own content
# normalized (lowercased, accents stripped...); the others in the raw text.
ADDED = [AddedToken("Hello World", normalized=True), AddedToken("Café Crème", normalized=True),
         AddedToken("ＡＢＣ", normalized=True), AddedToken(" lstrip", lstrip=True, normalized=True),
         AddedToken("rstrip", rstrip=True, single_word=True, normalized=True),
         AddedToken("<raw>", normalized=False), AddedToken("<sp/>", special=True, normalized=False)]
ADDED_TEXTS = [t.content for t in ADDED] + ["hello world", "HELLO WORLD", "cafe creme", "abc", "CAFÉ CRÈME"]


@pytest.mark.parametrize("name", ["uncased", "cased"])
def test_trained_bert_files_match_tokenizers(vocabs, corpus_lines, tmp_path, name):
    path = build(tmp_path, name, wordpiece(vocabs[name]), normalizers.BertNormalizer(lowercase=name == "uncased"),
                 pre_tokenizers.BertPreTokenizer(), added=ADDED)
    texts, spliced_count = every_line(corpus_lines, SPECIALS + ADDED_TEXTS)
    compare(f"WordPiece trained ({name} BERT, 7 added tokens, normalized ones matched normalized), every corpus "
            f"line ({spliced_count} spliced)", path, texts)


def test_trained_wordlevel_matches_tokenizers(vocabs, corpus_lines, tmp_path):
    path = build(tmp_path, "wordlevel", models.WordLevel(vocabs["wordlevel"], unk_token="[UNK]"),
                 normalizers.NFKC(), pre_tokenizers.Whitespace(), added=ADDED)
    texts, spliced_count = every_line(corpus_lines, SPECIALS + ADDED_TEXTS)
    compare(f"WordLevel trained (NFKC, Whitespace, 7 added tokens), every corpus line ({spliced_count} spliced)",
            path, texts)


def test_trained_pairs_match_tokenizers(vocabs, corpus_lines, tmp_path):
    path = build(tmp_path, "pairs", wordpiece(vocabs["cased"]), normalizers.BertNormalizer(lowercase=False),
                 pre_tokenizers.BertPreTokenizer(), added=ADDED)
    tok, ref = toksmith.load(path), _reference(path)
    lines = [line for line in corpus_lines["man_de.txt"] if line][:200]
    check = Comparison("WordPiece trained (cased BERT) pairs of man_de.txt lines x add_special 2", against=AGAINST)
    for first, second in zip(lines, lines[1:]):
        for add_special in (False, True):
            check.one((first, second), tok.encode(first, pair=second, add_special=add_special, parse_special=True),
                      ref.encode(first, second, add_special_tokens=add_special).ids, what=f"add_special={add_special}")
    check.finish()


def _bert_matrix():
    for clean, chinese, strip, lower in itertools.product((True, False), (True, False), (None, True, False),
                                                          (True, False)):
        yield (f"bert-clean{clean:d}-chinese{chinese:d}-strip{strip}-lower{lower:d}",
               normalizers.BertNormalizer(clean_text=clean, handle_chinese_chars=chinese, strip_accents=strip,
                                          lowercase=lower))


MATRIX_NORMALIZERS = [
    *_bert_matrix(),
    ("nfd-lowercase-stripaccents", normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(),
                                                         normalizers.StripAccents()])),
    ("nfkc", normalizers.NFKC()), ("nfc", normalizers.NFC()), ("nfd", normalizers.NFD()), ("nfkd", normalizers.NFKD()),
    ("nfkc-lowercase", normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])),
    ("lowercase", normalizers.Lowercase()), ("stripaccents", normalizers.StripAccents()), ("none", None),
]


@pytest.mark.parametrize("name,normalizer", MATRIX_NORMALIZERS, ids=[n for n, _ in MATRIX_NORMALIZERS])
def test_normalizer_matrix_matches_tokenizers(vocabs, sample, tmp_path, name, normalizer):
    path = build(tmp_path, name, wordpiece(vocabs["uncased"]), normalizer, pre_tokenizers.BertPreTokenizer(),
                 added=ADDED)
    compare(f"WordPiece option matrix, normalizer {name}, seeded sample", path, spliced(sample, ADDED_TEXTS, seed=3))


MATRIX_PRE_TOKENIZERS = [
    ("whitespace", pre_tokenizers.Whitespace()), ("whitespace-split", pre_tokenizers.WhitespaceSplit()),
    *[(f"punctuation-{b}", pre_tokenizers.Punctuation(behavior=b))
      for b in ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")],
    ("whitespace-split-then-punctuation", pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                                   pre_tokenizers.Punctuation()])),
    ("none", None),
]


@pytest.mark.parametrize("name,pre_tokenizer", MATRIX_PRE_TOKENIZERS, ids=[n for n, _ in MATRIX_PRE_TOKENIZERS])
def test_pre_tokenizer_matrix_matches_tokenizers(vocabs, sample, tmp_path, name, pre_tokenizer):
    path = build(tmp_path, name, wordpiece(vocabs["uncased"]), normalizers.BertNormalizer(), pre_tokenizer)
    compare(f"WordPiece option matrix, pre-tokenizer {name}, seeded sample", path, sample)


@pytest.mark.parametrize("max_chars", [1, 5, 12])
def test_small_max_input_chars_per_word_matches_tokenizers(vocabs, sample, tmp_path, max_chars):
    path = build(tmp_path, f"max{max_chars}", wordpiece(vocabs["cased"], max_input_chars_per_word=max_chars),
                 normalizers.BertNormalizer(lowercase=False), pre_tokenizers.BertPreTokenizer())
    compare(f"WordPiece option matrix, max_input_chars_per_word={max_chars}, seeded sample", path, sample)


def test_wordlevel_matrix_matches_tokenizers(vocabs, sample, tmp_path):
    for pre_name, pre_tokenizer in MATRIX_PRE_TOKENIZERS[:3]:
        path = build(tmp_path, f"wl-{pre_name}", models.WordLevel(vocabs["wordlevel"], unk_token="[UNK]"),
                     normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]), pre_tokenizer, added=ADDED)
        compare(f"WordLevel option matrix, pre-tokenizer {pre_name}, seeded sample", path,
                spliced(sample, ADDED_TEXTS, seed=4))


def test_missing_unk_token_fails_like_tokenizers(vocabs, tmp_path):
    vocab = {k: i for k, i in vocabs["wordlevel"].items() if k != "[UNK]"}
    path = build(tmp_path, "no-unk", models.WordLevel(vocab, unk_token="[UNK]"), None, pre_tokenizers.Whitespace())
    tok, ref = toksmith.load(path), _reference(path)
    word = next(iter(vocab))
    check = Comparison("WordLevel without its unk token, a word of the vocabulary", against=AGAINST)
    check.one(word, tok.encode(word, add_special=False), ref.encode(word, add_special_tokens=False).ids)
    check.finish()
    with pytest.raises(Exception, match="Missing"):
        ref.encode("qqqqzzzz")
    with pytest.raises(ValueError, match="unk token"):
        tok.encode("qqqqzzzz")


# ---------------------------------------------------------------------- stages alone, every line

STAGE_NORMALIZERS = [
    # strip_accents None behaves as strip_accents=lowercase: the 16 distinct BertNormalizers
    *[(n, ref) for n, ref in MATRIX_NORMALIZERS if n.startswith("bert") and "stripNone" not in n],
    ("nfc", normalizers.NFC()), ("nfd", normalizers.NFD()), ("nfkc", normalizers.NFKC()), ("nfkd", normalizers.NFKD()),
    ("lowercase", normalizers.Lowercase()), ("stripaccents", normalizers.StripAccents()),
]


def _native_normalizer(ref):
    cls = type(ref).__name__
    if cls == "BertNormalizer":
        return HfCharNormalizer.bert(clean_text=ref.clean_text, handle_chinese_chars=ref.handle_chinese_chars,
                                     strip_accents=ref.strip_accents, lowercase=ref.lowercase)
    if cls == "Lowercase":
        return HfCharNormalizer.lowercase_only()
    if cls == "StripAccents":
        return HfCharNormalizer.strip_accents_only()
    return HfUnicodeNormalizer(cls)


def test_normalizers_alone_on_every_line(corpus_lines):
    # each corpus is one text of its lines joined by newlines: one call (and one comparison)
    # per corpus and side; where a corpus differs its lines are compared one by one too, to
    # name them (the corpus' difference fails the test either way)
    check = Comparison(f"HF normalizers alone ({len(STAGE_NORMALIZERS)} configurations), each corpus joined "
                       "into one text", against=AGAINST)
    for name, ref in STAGE_NORMALIZERS:
        ours = _native_normalizer(ref)
        for corpus, lines in corpus_lines.items():
            text = "\n".join(lines)
            if not check.one(f"{name} {corpus}", ours.normalize_text(text), ref.normalize_str(text)):
                check.all(lines, ours=[ours.normalize_text(line) for line in lines],
                          theirs=[ref.normalize_str(line) for line in lines], what=f"{name} {corpus} line")
    check.finish()


def _split_code(behavior: str) -> int:
    """tokenizers' behavior name -> the code HfPunctuation takes."""
    return getattr(hf_regex_stages, "SPLIT_" + behavior.upper())


STAGE_PRE_TOKENIZERS = [
    ("BertPreTokenizer", pre_tokenizers.BertPreTokenizer(), HfBertPreTokenizer()),
    ("Whitespace", pre_tokenizers.Whitespace(), HfRunsPreTokenizer.whitespace()),
    ("WhitespaceSplit", pre_tokenizers.WhitespaceSplit(), HfRunsPreTokenizer.whitespace_split()),
    *[(f"Punctuation({b})", pre_tokenizers.Punctuation(behavior=b), HfPunctuation(_split_code(b)))
      for b in ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")],
]


def _pieces(stage, text: str) -> list[str]:
    return [p.decode("utf-8") for p in stage.split_text(text.encode("utf-8"))]


def test_pre_tokenizers_alone_on_every_line(corpus_lines):
    # as the normalizers above: one comparison per corpus joined into one text, its lines one
    # by one where it differs
    check = Comparison(f"HF pre-tokenizers alone ({len(STAGE_PRE_TOKENIZERS)} configurations), each corpus joined "
                       "into one text", against=AGAINST)
    for name, ref, ours in STAGE_PRE_TOKENIZERS:
        for corpus, lines in corpus_lines.items():
            text = "\n".join(lines)
            if not check.one(f"{name} {corpus}", _pieces(ours, text), [p for p, _ in ref.pre_tokenize_str(text)]):
                check.all(lines, ours=[_pieces(ours, line) for line in lines],
                          theirs=[[p for p, _ in ref.pre_tokenize_str(line)] for line in lines],
                          what=f"{name} {corpus} line")
    check.finish()
