"""SentencePiece-style tokenizer.json files (Precompiled + Replace normalizers, Metaspace
pre-tokenizer, Unigram model) vs HF `tokenizers` 0.23 itself.

Files: the fixture rut5-large tokenizer.json (ruT5-large: nmt_nfkc charsmap, Replace " {2,}",
Metaspace, Unigram with unk_id 0, 103 special added tokens, TemplateProcessing), and
tokenizer.json files built here with tokenizers' own Python API over vocabularies trained
by its UnigramTrainer on the fixture corpora: byte_fallback on and off (with the 256
<0xXX> pieces), no unk_id, Metaspace with each prepend_scheme, split on and off and another
replacement character, the charsmaps of fixture sentencepiece .model files (nfkc and
nmt_nfkc), no normalizer, and added tokens covering special, single_word, lstrip, rstrip
and normalized.

Ids are compared for every line of every corpus (a quarter with an added token's text
spliced in): rut5 with all four add_special x parse_special combinations (parse_special
False is tokenizers' encode_special_tokens=True) and the batch API; the built files with
add_special and parse_special on for every line, and the other three combinations on a
seeded quarter of the lines (a full run of each is slow in `tokenizers`).

Decode (the Metaspace decoder, both skip_special values) is compared on the ids of every
rut5 line, and on the sampled lines of the built files.
"""
from __future__ import annotations

import json
import random

import pytest
import tokenizers
from sentencepiece import sentencepiece_model_pb2 as pb
from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers

import toksmith
from tests.conftest import CORPUS_FILES, LONG_RUNS, fixture_file
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import spliced

FLAGS = ((False, False), (False, True), (True, False), (True, True))
AGAINST = f"tokenizers {tokenizers.__version__}"


def _charsmap(fixtures, relative: str) -> bytes:
    proto = pb.ModelProto()
    proto.ParseFromString(fixture_file(fixtures, relative).read_bytes())
    assert proto.normalizer_spec.precompiled_charsmap
    return proto.normalizer_spec.precompiled_charsmap


def _sequence(charsmap: bytes | None):
    steps = [normalizers.Precompiled(charsmap)] if charsmap else []
    return normalizers.Sequence(steps + [normalizers.Replace(Regex(" {2,}"), " ")])


def _train(corpus_lines, charsmap: bytes, lines_per_corpus: int, vocab_size: int, split: bool):
    """A Unigram vocabulary trained by tokenizers' UnigramTrainer on the corpora."""
    tok = tokenizers.Tokenizer(models.Unigram())
    tok.normalizer = _sequence(charsmap)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(split=split)
    text = [line for name in CORPUS_FILES for line in corpus_lines[name][:lines_per_corpus]]
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"],
                                      unk_token="<unk>", show_progress=False, max_piece_length=16)
    tok.train_from_iterator(text, trainer)
    return [tuple(item) for item in json.loads(tok.to_str())["model"]["vocab"]]


ADDED = [AddedToken("<sep>", special=True, normalized=False, lstrip=True, rstrip=True),
         AddedToken("<extra_id_0>", special=True, normalized=False),
         AddedToken(" New York", lstrip=True),                    # not special, normalized
         AddedToken("toksmith", single_word=True, rstrip=True),
         AddedToken("the cat", normalized=False)]


def _build(vocab, *, unk_id=0, byte_fallback=False, normalizer=None, pre_tokenizer, added=True):
    if byte_fallback:
        floor = min(score for _, score in vocab) - 1.0
        vocab = list(vocab) + [(f"<0x{b:02X}>", floor) for b in range(256)]
    tok = tokenizers.Tokenizer(models.Unigram(list(vocab), unk_id=unk_id, byte_fallback=byte_fallback))
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.Metaspace()
    if added:
        tok.add_special_tokens([t for t in ADDED if t.special])
        tok.add_tokens([t for t in ADDED if not t.special])
        eos, sep = tok.token_to_id("</s>"), tok.token_to_id("<sep>")
        tok.post_processor = processors.TemplateProcessing(
            single="$A </s>", pair="<sep> $A </s> $B:1 </s>:1", special_tokens=[("</s>", eos), ("<sep>", sep)])
    return tok


@pytest.fixture(scope="module")
def built_files(fixtures, corpus_lines, tmp_path_factory):
    nfkc = _charsmap(fixtures, "spm/sentencepiece_test_model.model")
    nmt_nfkc = _charsmap(fixtures, "spm/t5_base_japanese_spiece.model")
    words = _train(corpus_lines, nfkc, 300, 3000, split=True)
    lines = _train(corpus_lines, nmt_nfkc, 150, 3000, split=False)
    meta = pre_tokenizers.Metaspace
    built = {
        "nfkc-always-split": _build(words, normalizer=_sequence(nfkc), pre_tokenizer=meta()),
        "nfkc-byte-fallback": _build(words, byte_fallback=True, normalizer=_sequence(nfkc), pre_tokenizer=meta()),
        "nfkc-first-nosplit": _build(words, normalizer=_sequence(nfkc),
                                     pre_tokenizer=meta(prepend_scheme="first", split=False)),
        "nmt-never-split": _build(lines, normalizer=_sequence(nmt_nfkc), pre_tokenizer=meta(prepend_scheme="never")),
        "nmt-nosplit-byte-fallback-first": _build(lines, byte_fallback=True, normalizer=_sequence(nmt_nfkc),
                                                  pre_tokenizer=meta(prepend_scheme="first", split=False)),
        "underscore-first-split": _build(words, normalizer=normalizers.Sequence([normalizers.Precompiled(nfkc)]),
                                         pre_tokenizer=meta(replacement="_", prepend_scheme="first")),
        "no-normalizer": _build(lines, pre_tokenizer=meta(), added=False),
    }
    folder = tmp_path_factory.mktemp("hf_unigram")
    files = {}
    for name, tok in built.items():
        path = folder / f"{name}.json"
        tok.save(str(path))
        files[name] = (path, tokenizers.Tokenizer.from_file(str(path)))
    files["no-unk-id"] = _no_unk_file(folder, words, nfkc)
    return files


def _no_unk_file(folder, vocab, charsmap):
    tok = _build(vocab, unk_id=None, normalizer=_sequence(charsmap), pre_tokenizer=pre_tokenizers.Metaspace())
    path = folder / "no-unk-id.json"
    tok.save(str(path))
    return path, tokenizers.Tokenizer.from_file(str(path))


def _long_runs(corpus: str) -> list[str]:
    return LONG_RUNS if corpus == "tricky_strings.txt" else []


def _compare(ids: Comparison, tok, ref, texts, add_special, parse_special, where, decoded: Comparison | None = None):
    """encode_batch ids of `texts` into `ids`; with `decoded`, the decode of tokenizers' ids
    with both skip_special values into it too."""
    ref.encode_special_tokens = not parse_special
    want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=add_special)]
    flags = f"{where} add_special={add_special} parse_special={parse_special}"
    ids.all(texts, ours=tok.encode_batch(texts, add_special=add_special, parse_special=parse_special), theirs=want,
            what=flags)
    if decoded is not None:
        for skip in (False, True):
            decoded.all(texts, ours=[tok.decode(sequence, skip_special=skip) for sequence in want],
                        theirs=ref.decode_batch(want, skip_special_tokens=skip), what=f"{flags} skip_special={skip}")


def test_rut5_corpora_match_tokenizers(fixtures, corpus_lines):
    path = fixture_file(fixtures, "hf/rut5-large/tokenizer.json")
    ref = tokenizers.Tokenizer.from_file(str(path))
    tok = toksmith.load(path)
    assert tok.vocab_size == ref.get_vocab_size()
    added = [t.content for t in ref.get_added_tokens_decoder().values()]
    label = "rut5-large tokenizer.json, every corpus line (a quarter with an added token spliced in)"
    ids = Comparison(f"{label} ids x 4 flag combinations in a batch, one call each on the first 300 of each corpus",
                     against=AGAINST)
    decoded = Comparison(f"{label} decode x skip_special 2", against=AGAINST)
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, added, seed=len(corpus)) + _long_runs(corpus)
        for add_special, parse_special in FLAGS:
            _compare(ids, tok, ref, texts, add_special, parse_special, corpus,
                     decoded if (add_special, parse_special) == (True, True) else None)
        ref.encode_special_tokens = False
        firsts = texts[:300]
        ids.all(firsts, ours=[tok.encode(text, add_special=True, parse_special=True) for text in firsts],
                theirs=[ref.encode(text).ids for text in firsts], what=f"{corpus} one call")
    ids.finish()
    decoded.finish()


def test_rut5_pairs_match_tokenizers(fixtures, corpus_lines):
    path = fixture_file(fixtures, "hf/rut5-large/tokenizer.json")
    ref = tokenizers.Tokenizer.from_file(str(path))
    tok = toksmith.load(path)
    lines = [line for line in corpus_lines["man_ru.txt"] if line][:200]
    check = Comparison("rut5-large tokenizer.json pairs of man_ru.txt lines x add_special 2", against=AGAINST)
    for first, second in zip(lines, lines[1:]):
        for add_special in (False, True):
            check.one((first, second), tok.encode(first, pair=second, add_special=add_special),
                      ref.encode(first, second, add_special_tokens=add_special).ids, what=f"add_special={add_special}")
    check.finish()


@pytest.mark.parametrize("name", ["nfkc-always-split", "nfkc-byte-fallback", "nfkc-first-nosplit", "nmt-never-split",
                                  "nmt-nosplit-byte-fallback-first", "underscore-first-split", "no-normalizer"])
def test_built_files_match_tokenizers(built_files, corpus_lines, name):
    path, ref = built_files[name]
    tok = toksmith.load(path)
    added = [t.content for t in ADDED]
    rnd = random.Random(name)
    label = f"{name} (built, trained Unigram) tokenizer.json"
    ids = Comparison(f"{label} ids: every corpus line with add_special+parse_special, a seeded quarter with the "
                     "other 3 flag combinations", against=AGAINST)
    decoded = Comparison(f"{label} decode x skip_special 2 of the quarter's ids without add_special", against=AGAINST)
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, added, seed=len(corpus)) + _long_runs(corpus)
        _compare(ids, tok, ref, texts, True, True, corpus)
        sample = [t for t in texts if rnd.random() < 0.25]
        for add_special, parse_special in FLAGS[:3]:
            _compare(ids, tok, ref, sample, add_special, parse_special, corpus, None if add_special else decoded)
    ref.encode_special_tokens = False
    ids.finish()
    decoded.finish()


def test_byte_fallback_is_exercised(built_files, corpus_lines):
    # the trained vocabularies miss characters of the corpora: byte pieces are emitted
    path, ref = built_files["nfkc-byte-fallback"]
    tok = toksmith.load(path)
    byte_ids = {ref.token_to_id(f"<0x{b:02X}>") for b in range(256)}
    lines = corpus_lines["man_zh_CN.txt"][:300] + corpus_lines["tricky_strings.txt"]
    assert any(set(ids) & byte_ids for ids in tok.encode_batch(lines))


def test_without_unk_id_an_unknown_character_is_an_error(built_files, corpus_lines):
    path, ref = built_files["no-unk-id"]
    tok = toksmith.load(path)
    # and a line with a character of no corpus (runic), unknown however few lines trained the
    # vocabulary (TOKSMITH_PARITY_SAMPLE)
    lines = [line for corpus in ("man_en.txt", "man_zh_CN.txt", "tricky_strings.txt", "man_ru.txt")
             for line in corpus_lines[corpus][:400]] + ["\u16a0 runic"]
    want = [_unk_id_missing_or(lambda: ref.encode(line).ids, Exception) for line in lines]
    check = Comparison("no-unk-id (built) tokenizer.json ids, or the unk_id error on both sides", against=AGAINST)
    check.all(lines, ours=[_unk_id_missing_or(lambda: tok.encode(line, parse_special=True), ValueError)
                           for line in lines], theirs=want)
    check.finish()
    # both outcomes occur: unknown characters and lines without one
    assert UNK_ID_MISSING in want and any(w != UNK_ID_MISSING for w in want)


UNK_ID_MISSING = "unk_id missing"


def _unk_id_missing_or(call, error_type):
    """call()'s ids, or UNK_ID_MISSING where it raises `error_type` naming unk_id (tokenizers:
    "Encountered an unknown token but `unk_id` is missing"); any other error propagates."""
    try:
        return call()
    except error_type as error:
        if "unk_id" not in str(error):
            raise
        return UNK_ID_MISSING


def test_unigram_rules_on_a_small_vocabulary(tmp_path):
    # ties keep the first candidate (shortest piece at the earliest start), unknown runs are
    # fused and looked up by their text, byte fallback needs every byte piece
    vocab = [("<unk>", 0.0), ("▁", -1.0), ("a", -2.0), ("b", -2.0), ("ab", -4.0), ("xy", -30.0),
             ("<0x78>", -9.0), ("<0xC3>", -9.0), ("<0xA9>", -9.0)]
    check = Comparison("Unigram rules on a 9-piece vocabulary x byte_fallback off/on", against=AGAINST)
    for byte_fallback in (False, True):
        ref = tokenizers.Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=byte_fallback))
        ref.pre_tokenizer = pre_tokenizers.Metaspace()
        ref.save(str(tmp_path / "t.json"))
        tok = toksmith.load(tmp_path / "t.json")
        texts = ["ab", "a b", "abab", "xy", "xyz", "x", "é", "éx", "zz", "a zz b", "xé", "", " ", "ab xy"]
        check.all(texts, ours=[tok.encode(text) for text in texts], theirs=[ref.encode(text).ids for text in texts],
                  what=f"byte_fallback={byte_fallback}")
    check.finish()
