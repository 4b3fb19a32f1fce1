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
from tests.conftest import LONG_RUNS, first_difference, fixture_file, multilingual_sample, report
from tests.parity.test_byte_bpe_gguf import spliced
from toksmith._core import hf_regex_stages
from toksmith._core.unicode_normalizers import HfCharNormalizer, HfUnicodeNormalizer
from toksmith._core.bert_pretokenizers import HfBertPreTokenizer, HfPunctuation, HfRunsPreTokenizer

MINILM = "hf/all-MiniLM-L6-v2/tokenizer.json"
SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
FLAGS = list(itertools.product((False, True), (False, True)))   # (add_special, parse_special)

# a spliced "[CLS]" at the start of a line, with add_special: toksmith warns of the doubled
# leading token (tokenizers does not warn); the ids are what is compared
pytestmark = pytest.mark.filterwarnings("ignore:the text starts with a BOS token")


def _reference(path) -> tokenizers.Tokenizer:
    ref = tokenizers.Tokenizer.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    return ref


def compare(name: str, path, texts: list[str], *, one_call: int = 200) -> int:
    """Ids of `texts` from toksmith.load(path) and tokenizers, four flag combinations;
    fails on the first difference. Returns the number of texts compared per combination."""
    tok, ref = toksmith.load(path), _reference(path)
    for add_special, parse_special in FLAGS:
        ref.encode_special_tokens = not parse_special
        want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=add_special)]
        got = tok.encode_batch(texts, add_special=add_special, parse_special=parse_special)
        for text, g, w in zip(texts, got, want):
            if g != w:
                pytest.fail(f"{name} add_special={add_special} parse_special={parse_special} {text[:80]!r}: "
                            f"{first_difference(g, w)}")
        for text, w in zip(texts[:one_call], want):
            assert tok.encode(text, add_special=add_special, parse_special=parse_special) == w, (name, text[:80])
    return len(texts)


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
    compared = compare("MiniLM", path, texts, one_call=400)
    # and the whole file decodes as tokenizers does (the WordPiece decoder: hf_decoders)
    tok, ref = toksmith.load(path), _reference(path)
    for skip in (False, True):
        for text, e in zip(texts, ref.encode_batch(texts)):
            assert tok.decode(e.ids, skip_special=skip) == ref.decode(e.ids, skip_special_tokens=skip), text[:80]
    report(f"all-MiniLM-L6-v2 tokenizer.json vs tokenizers: {compared} lines ({spliced_count} with an added "
           f"token spliced in) x 4 flag combinations, batch and one call, and decode x 2: 0 mismatches")


def test_minilm_pairs_match_tokenizers(fixtures, corpus_lines):
    path = fixture_file(fixtures, MINILM)
    tok, ref = toksmith.load(path), _reference(path)
    lines = [line for line in corpus_lines["man_fr.txt"] if line][:300] + ["", "中文", "[SEP]"]
    for first, second in zip(lines, lines[1:]):
        for add_special in (False, True):
            want = ref.encode(first, second, add_special_tokens=add_special).ids
            assert tok.encode(first, pair=second, add_special=add_special, parse_special=True) == want, \
                (first[:40], second[:40])


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
    compared = compare(f"trained {name}", path, texts)
    report(f"WordPiece trained ({name} BERT, 7 added tokens, normalized ones matched normalized) vs tokenizers: "
           f"{compared} lines ({spliced_count} spliced) x 4 flag combinations: 0 mismatches")


def test_trained_wordlevel_matches_tokenizers(vocabs, corpus_lines, tmp_path):
    path = build(tmp_path, "wordlevel", models.WordLevel(vocabs["wordlevel"], unk_token="[UNK]"),
                 normalizers.NFKC(), pre_tokenizers.Whitespace(), added=ADDED)
    texts, spliced_count = every_line(corpus_lines, SPECIALS + ADDED_TEXTS)
    compared = compare("trained WordLevel", path, texts)
    report(f"WordLevel trained (NFKC, Whitespace, 7 added tokens) vs tokenizers: {compared} lines "
           f"({spliced_count} spliced) x 4 flag combinations: 0 mismatches")


def test_trained_pairs_match_tokenizers(vocabs, corpus_lines, tmp_path):
    path = build(tmp_path, "pairs", wordpiece(vocabs["cased"]), normalizers.BertNormalizer(lowercase=False),
                 pre_tokenizers.BertPreTokenizer(), added=ADDED)
    tok, ref = toksmith.load(path), _reference(path)
    lines = [line for line in corpus_lines["man_de.txt"] if line][:200]
    for first, second in zip(lines, lines[1:]):
        for add_special in (False, True):
            assert tok.encode(first, pair=second, add_special=add_special, parse_special=True) == \
                ref.encode(first, second, add_special_tokens=add_special).ids


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
    compare(name, path, spliced(sample, ADDED_TEXTS, seed=3))


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
    compare(name, path, sample)


@pytest.mark.parametrize("max_chars", [1, 5, 12])
def test_small_max_input_chars_per_word_matches_tokenizers(vocabs, sample, tmp_path, max_chars):
    path = build(tmp_path, f"max{max_chars}", wordpiece(vocabs["cased"], max_input_chars_per_word=max_chars),
                 normalizers.BertNormalizer(lowercase=False), pre_tokenizers.BertPreTokenizer())
    compare(f"max_input_chars_per_word={max_chars}", path, sample)


def test_wordlevel_matrix_matches_tokenizers(vocabs, sample, tmp_path):
    for pre_name, pre_tokenizer in MATRIX_PRE_TOKENIZERS[:3]:
        path = build(tmp_path, f"wl-{pre_name}", models.WordLevel(vocabs["wordlevel"], unk_token="[UNK]"),
                     normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]), pre_tokenizer, added=ADDED)
        compare(f"WordLevel {pre_name}", path, spliced(sample, ADDED_TEXTS, seed=4))


def test_missing_unk_token_fails_like_tokenizers(vocabs, tmp_path):
    vocab = {k: i for k, i in vocabs["wordlevel"].items() if k != "[UNK]"}
    path = build(tmp_path, "no-unk", models.WordLevel(vocab, unk_token="[UNK]"), None, pre_tokenizers.Whitespace())
    tok, ref = toksmith.load(path), _reference(path)
    word = next(iter(vocab))
    assert tok.encode(word, add_special=False) == ref.encode(word, add_special_tokens=False).ids
    with pytest.raises(Exception, match="Missing"):
        ref.encode("qqqqzzzz")
    with pytest.raises(ValueError, match="unk token"):
        tok.encode("qqqqzzzz")


def test_matrix_report(sample):
    report(f"WordPiece/WordLevel option matrix vs tokenizers: {len(MATRIX_NORMALIZERS)} normalizers, "
           f"{len(MATRIX_PRE_TOKENIZERS)} pre-tokenizers, 3 max_input_chars_per_word, 3 WordLevel files, "
           f"each on a seeded sample of {len(sample)} lines x 4 flag combinations: 0 mismatches")


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
    # each corpus is one text of its lines joined by newlines: one call per corpus and side
    for name, ref in STAGE_NORMALIZERS:
        ours = _native_normalizer(ref)
        for corpus, lines in corpus_lines.items():
            text = "\n".join(lines)
            if ours.normalize_text(text) != ref.normalize_str(text):
                for line in lines:
                    assert ours.normalize_text(line) == ref.normalize_str(line), (name, corpus, line[:80])
    total = sum(len(lines) for lines in corpus_lines.values())
    report(f"HF normalizers alone vs tokenizers: {len(STAGE_NORMALIZERS)} configurations x {total} corpus lines: "
           f"0 mismatches")


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


def test_pre_tokenizers_alone_on_every_line(corpus_lines):
    for name, ref, ours in STAGE_PRE_TOKENIZERS:
        for corpus, lines in corpus_lines.items():
            text = "\n".join(lines)
            got = [p.decode("utf-8") for p in ours.split_text(text.encode("utf-8"))]
            if got != [p for p, _ in ref.pre_tokenize_str(text)]:
                for line in lines:
                    assert [p.decode("utf-8") for p in ours.split_text(line.encode("utf-8"))] == \
                        [p for p, _ in ref.pre_tokenize_str(line)], (name, corpus, line[:80])
    total = sum(len(lines) for lines in corpus_lines.values())
    report(f"HF pre-tokenizers alone vs tokenizers: {len(STAGE_PRE_TOKENIZERS)} x {total} corpus lines: "
           f"0 mismatches")
