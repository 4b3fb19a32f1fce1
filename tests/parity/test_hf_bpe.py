"""tokenizer.json BPE pipelines that are not the byte-level fast path, vs tokenizers 0.23.

Files built with tokenizers' own API and TRAINED with its BpeTrainer on the fixture
corpora (real vocabularies), one per option set of the BPE model (unk_token with
fuse_unk on and off, byte_fallback with the "<0xXX>" tokens Llama-style models carry,
continuing_subword_prefix and end_of_word_suffix, ignore_merges, no unk_token) and each
running some of the simple normalizers and pre-tokenizers (Strip, Prepend, Replace by a
string, Nmt, ByteLevel; Digits, CharDelimiterSplit, FixedLength, UnicodeScripts,
ByteLevel); byte-level BPE the fast path does not take (a normalizer in front); a
RoBERTa-style file (ByteLevel add_prefix_space=True) on hf/gpt2's vocabulary; and a
Llama-2-style file (BPE + byte_fallback under Prepend + Replace, no pre-tokenizer) built
from spm/llama2_tokenizer.model's pieces and the merges transformers derives from them.

For every line of every corpus (a quarter with an added token's text spliced in): ids
with the four add_special x parse_special combinations (parse_special=False is
tokenizers' encode_special_tokens=True), batch and single calls.

Decoders are not compared here (they are another stage's work: test_hf_batch_stream.py and
test_hf_decoder_files.py).
"""
from __future__ import annotations

import json

import pytest
import tokenizers
from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

import toksmith
from tests.conftest import CORPUS_FILES, LONG_RUNS, fixture_file, report
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import spliced

BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]
TRAINING_LINES = 3000      # of each corpus
SINGLE_CALLS = 300         # lines of each corpus and flag pair also encoded one call each
TOKENIZERS = f"tokenizers {tokenizers.__version__}"


# name -> (BPE options, trainer options, normalizer, pre-tokenizer, decoder)
TRAINED = {
    "unk-fuse/Strip+Nmt/CharDelimiterSplit+Digits": (
        dict(unk_token="<unk>", fuse_unk=True), dict(special_tokens=["<unk>"], limit_alphabet=300),
        normalizers.Sequence([normalizers.Strip(), normalizers.Nmt()]),
        pre_tokenizers.Sequence([pre_tokenizers.CharDelimiterSplit(" "), pre_tokenizers.Digits(individual_digits=True)]),
        None),
    "unk-unfused/Replace+Strip-right/UnicodeScripts": (
        dict(unk_token="<unk>", fuse_unk=False), dict(special_tokens=["<unk>"], limit_alphabet=250),
        normalizers.Sequence([normalizers.Replace("  ", " "), normalizers.Strip(left=False, right=True)]),
        pre_tokenizers.UnicodeScripts(), None),
    "byte_fallback/Replace+Prepend/FixedLength+Digits": (
        dict(unk_token="<unk>", fuse_unk=True, byte_fallback=True),
        dict(special_tokens=["<unk>", *BYTE_TOKENS], limit_alphabet=300),
        normalizers.Sequence([normalizers.Replace(" ", "▁"), normalizers.Prepend("▁")]),
        pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=False), pre_tokenizers.FixedLength(12)]),
        decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])),
    "prefix+suffix+ascii-byte_fallback/Nmt/CharDelimiterSplit": (
        dict(unk_token="<unk>", fuse_unk=True, byte_fallback=True, continuing_subword_prefix="##",
             end_of_word_suffix="</w>"),
        dict(special_tokens=["<unk>", *BYTE_TOKENS[:128]], limit_alphabet=250, continuing_subword_prefix="##",
             end_of_word_suffix="</w>"),
        normalizers.Nmt(), pre_tokenizers.CharDelimiterSplit(" "), decoders.BPEDecoder(suffix="</w>")),
    "ignore_merges+no-unk/Prepend/Digits": (
        dict(ignore_merges=True), dict(limit_alphabet=250),
        normalizers.Prepend("\u2581"),
        pre_tokenizers.Sequence([pre_tokenizers.CharDelimiterSplit(" "), pre_tokenizers.Digits(individual_digits=False)]),
        None),
    "byte-level/Strip/ByteLevel-prefix-space": (
        dict(), dict(initial_alphabet=pre_tokenizers.ByteLevel.alphabet()),
        normalizers.Strip(), pre_tokenizers.ByteLevel(add_prefix_space=True), decoders.ByteLevel()),
    "byte-level-normalizer/Nmt+ByteLevel/CharDelimiterSplit": (
        dict(), dict(initial_alphabet=pre_tokenizers.ByteLevel.alphabet()),
        normalizers.Sequence([normalizers.Nmt(), normalizers.ByteLevel()]),
        pre_tokenizers.CharDelimiterSplit("Ġ"), decoders.ByteLevel()),
}


def _with_added_tokens(tok: Tokenizer) -> Tokenizer:
    """Added tokens of every kind and a template around the sequence, as real files have."""
    tok.add_special_tokens([AddedToken("<s>", special=True, normalized=False),
                            AddedToken("</s>", special=True, normalized=False)])
    tok.add_tokens([AddedToken(" New York", lstrip=True),                 # normalized (the default)
                    AddedToken("toksmith", single_word=True, rstrip=True),
                    AddedToken("<sep/>", special=True, lstrip=True, rstrip=True, normalized=False),
                    AddedToken("the cat", normalized=False)])
    s, e = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", s), ("</s>", e)])
    return tok


def _train(name: str) -> Tokenizer:
    bpe_options, trainer_options, normalizer, pre_tokenizer, decoder = TRAINED[name]
    tok = Tokenizer(models.BPE(**bpe_options))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoder
    return tok


@pytest.fixture(scope="module")
def trained(fixtures, tmp_path_factory):
    """name -> path of the trained tokenizer.json (trained on first use, on the first
    TRAINING_LINES lines of every corpus)."""
    folder = tmp_path_factory.mktemp("hf_bpe")
    text = folder / "train.txt"
    with open(text, "w", encoding="utf-8") as out:
        for name in CORPUS_FILES:
            lines = fixture_file(fixtures, f"corpus/{name}").read_text(encoding="utf-8").split("\n")
            out.write("\n".join(lines[:TRAINING_LINES]) + "\n")
    made: dict[str, str] = {}

    def get(name: str) -> str:
        if name not in made:
            bpe_options, trainer_options, *_ = TRAINED[name]
            tok = _train(name)
            tok.train([str(text)], trainers.BpeTrainer(vocab_size=4000, show_progress=False, **trainer_options))
            path = folder / (name.replace("/", "_") + ".json")
            _with_added_tokens(tok).save(str(path))
            made[name] = str(path)
        return made[name]
    return get


def compare_corpus(path: str, tok, corpus_lines, label: str) -> None:
    """Every corpus line (a quarter spliced with an added token's text) x 4 flag pairs, by
    encode_batch; the first SINGLE_CALLS lines of each also by encode."""
    ref = Tokenizer.from_file(path)
    ref.no_padding()
    ref.no_truncation()
    added = [t.content for t in ref.get_added_tokens_decoder().values()]
    batch = Comparison(f"{label} encode_batch ids x 4 add_special x parse_special", against=TOKENIZERS)
    single = Comparison(f"{label} encode ids (first {SINGLE_CALLS} lines of each corpus) x 4 flag pairs",
                        against=TOKENIZERS)
    spliced_count = 0
    for corpus, lines in [*corpus_lines.items(), ("LONG_RUNS", LONG_RUNS)]:
        texts = spliced(lines, added, seed=len(corpus))
        spliced_count += sum(a != b for a, b in zip(texts, lines))     # two lists of inputs
        for add_special in (False, True):
            for parse_special in (False, True):
                flags = f"{corpus} add_special={add_special} parse_special={parse_special}"
                ref.encode_special_tokens = not parse_special
                want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=add_special)]
                got = tok.encode_batch(texts, add_special=add_special, parse_special=parse_special)
                batch.all(texts, ours=got, theirs=want, what=flags)
                for text, ids in single.pairs(texts[:SINGLE_CALLS], want[:SINGLE_CALLS]):
                    single.one(text, tok.encode(text, add_special=add_special, parse_special=parse_special), ids,
                               what=flags)
    report(f"{label}: {spliced_count} of the lines with an added token spliced in")
    batch.finish()
    single.finish()


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
@pytest.mark.parametrize("name", TRAINED)
def test_trained_bpe_matches_tokenizers(trained, corpus_lines, name):
    path = trained(name)
    tok = toksmith.load(path)
    model = json.loads(open(path, encoding="utf-8").read())["model"]
    assert model["type"] == "BPE" and len(model["merges"]) > 1000
    compare_corpus(path, tok, corpus_lines, f"tokenizer.json BPE {name} ({len(model['vocab'])} tokens)")


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
def test_roberta_style_add_prefix_space(fixtures, corpus_lines, tmp_path):
    # RoBERTa: GPT-2's vocabulary, ByteLevel(add_prefix_space=True), <s> A </s>
    vocab, merges = fixture_file(fixtures, "hf/gpt2/vocab.json"), fixture_file(fixtures, "hf/gpt2/merges.txt")
    tok = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ("<s>", "</s>", "<pad>")])
    tok.add_special_tokens([AddedToken("<mask>", special=True, lstrip=True, normalized=False)])
    tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                      ("<s>", tok.token_to_id("<s>")))
    path = tmp_path / "roberta.json"
    tok.save(str(path))
    compare_corpus(str(path), toksmith.load(str(path)), corpus_lines, "RoBERTa-style tokenizer.json (add_prefix_space)")


def _generate_merges(vocab: dict[str, int], vocab_scores: list[tuple[str, float]]) -> list[tuple[str, str]]:
    """The merges transformers' LlamaConverter derives from a sentencepiece BPE model
    (convert_slow_tokenizer.generate_merges, transformers 4.4x-5.x): every split of a
    piece into two pieces, ordered by the piece's score (best first), then the lengths."""
    merges = []
    for piece, score in dict(vocab_scores).items():
        local = [(piece[:i], piece[i:], score) for i in range(1, len(piece))
                 if piece[:i] in vocab and piece[i:] in vocab]
        merges.extend(sorted(local, key=lambda x: (vocab[x[0]], vocab[x[1]])))
    merges = sorted(merges, key=lambda val: (val[2], len(val[0]), len(val[1])), reverse=True)
    return [(a, b) for a, b, _ in merges]


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
def test_llama2_style_file(fixtures, corpus_lines, tmp_path):
    """A Llama-2 tokenizer.json as LlamaConverter (legacy) builds it from tokenizer.model."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=str(fixture_file(fixtures, "spm/llama2_tokenizer.model")))
    pieces = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    vocab = {piece: i for i, (piece, _) in enumerate(pieces)}
    tok = Tokenizer(models.BPE(vocab, _generate_merges(vocab, pieces), unk_token="<unk>", fuse_unk=True,
                               byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(content=" ", left=1)])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ("<unk>", "<s>", "</s>")])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    path = tmp_path / "llama2.json"
    tok.save(str(path))
    compare_corpus(str(path), toksmith.load(str(path)), corpus_lines,
                   f"Llama-2-style tokenizer.json ({len(tok.get_vocab())} tokens, BPE + byte_fallback)")


def test_bytes_with_invalid_utf8_are_decoded_first(trained, invalid_utf8_lines):
    path = trained("byte_fallback/Replace+Prepend/FixedLength+Digits")
    tok, ref = toksmith.load(path), Tokenizer.from_file(path)
    # tokenizers takes str: the bytes as Python decodes them with "replace"
    with Comparison("trained byte_fallback BPE, invalid UTF-8 bytes as text with U+FFFD",
                    against=TOKENIZERS) as check:
        for raw in invalid_utf8_lines:
            check.one(raw, tok.encode(raw), ref.encode(raw.decode("utf-8", "replace")).ids)


def test_dropout_is_refused(tmp_path):
    tok = Tokenizer(models.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")], dropout=0.1))
    path = tmp_path / "dropout.json"
    tok.save(str(path))
    with pytest.raises(toksmith.ModelFormatError, match="dropout"):
        toksmith.load(path)
    # dropout 0 is no dropout: deterministic, and loads
    data = json.loads(path.read_text())
    data["model"]["dropout"] = 0.0
    path.write_text(json.dumps(data))
    assert toksmith.load(path).encode("abab", add_special=False) == [2, 2]
