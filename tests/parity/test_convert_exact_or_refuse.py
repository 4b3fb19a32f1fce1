"""Conversions whose target reader would tokenize some text otherwise than the source's
reference: refused by default (UnsupportedConversionError naming why), written with
`save(..., exact=False)` / `toksmith convert --approximate` with a report of what differs.

Each refusal is shown necessary on the references themselves: the file written anyway
(exact=False), read by the target's reference, disagrees with the source's reference on
real text. Counts go to the parity report.
"""
from __future__ import annotations

import warnings

import pytest
import sentencepiece as spm
import tokenizers
from sentencepiece import sentencepiece_model_pb2 as pb

import toksmith
from tests import llama_cpp_reference
from tests.conftest import fixture_file, report
from tests.parity.comparison import Comparison

SPACE = "\u2581"
SENTENCEPIECE = f"sentencepiece {spm.__version__}"


def save_approximately(tok, path):
    """tok.save(path, exact=False), which must warn InexactConversionWarning; (path, warning)."""
    from toksmith.writers.approximation import InexactConversionWarning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = tok.save(path, exact=False)
    inexact = [w.message for w in caught if issubclass(w.category, InexactConversionWarning)]
    assert len(inexact) == 1, [str(w.message) for w in caught]
    return written, inexact[0]


# ------------------------------------------------------------- a) sentencepiece BPE -> tokenizer.json

def tied_space_runs_model(fixtures, tmp_path):
    """A Mistral/Llama-2-style SentencePiece BPE model: trained by sentencepiece on man_en.txt
    with whitespace-only pieces, then every run of U+2581 scored -1e9, as Meta's and Mistral's
    models score theirs. The trainer leaves some run lengths out (here: 9), which is what parts
    the two references."""
    prefix = tmp_path / "runs"
    spm.SentencePieceTrainer.train(
        input=str(fixture_file(fixtures, "corpus/man_en.txt")), model_prefix=str(prefix), model_type="bpe",
        vocab_size=2000, normalization_rule_name="identity", remove_extra_whitespaces=False,
        allow_whitespace_only_pieces=True, byte_fallback=True, split_digits=True, max_sentencepiece_length=16,
        num_threads=1, minloglevel=2)
    proto = pb.ModelProto()
    proto.ParseFromString(prefix.with_suffix(".model").read_bytes())
    runs = [p for p in proto.pieces if set(p.piece) == {SPACE}]
    for piece in runs:
        piece.score = -1e9
    lengths = {len(p.piece) for p in runs}
    assert max(lengths) == 16 and len(lengths) < 16, sorted(lengths)     # a length is missing
    path = tmp_path / "runs.model"
    path.write_bytes(proto.SerializeToString())
    return path


def test_spm_bpe_tied_space_runs_to_tokenizer_json_refused(fixtures, corpus_lines, tmp_path):
    model = tied_space_runs_model(fixtures, tmp_path)
    tok = toksmith.load(model)
    target = tmp_path / "runs.json"
    with pytest.raises(toksmith.UnsupportedConversionError, match=r"a run of \d+ '\u2581'") as caught:
        tok.save(target)
    assert "runs.model" in str(caught.value) and not target.exists()
    # Why: the merge list written anyway parts runs of spaces otherwise than sentencepiece.
    written, warning = save_approximately(tok, target)
    assert "a run of" in str(warning)
    hf = tokenizers.Tokenizer.from_file(str(written))
    hf.encode_special_tokens = True
    sp = spm.SentencePieceProcessor(model_file=str(model))
    lines = list(dict.fromkeys(corpus_lines["man_en.txt"])) + ["B2SUM(1)" + " " * 25 + "Các"]
    want = sp.encode(lines)
    got = [e.ids for e in hf.encode_batch(lines)]
    assert len(want) == len(got) == len(lines)
    differ = [line for line, a, b in zip(lines, want, got, strict=True) if a != b]
    report(f"convert tied-runs BPE .model -> tokenizer.json (approximate): {len(lines)} lines, "
           f"{len(differ)} differ (refused by default)")
    assert differ and all("  " in line for line in differ)


def test_spm_bpe_tied_runs_without_gaps_still_written(fixtures, corpus_lines, tmp_path):
    """Llama 2 (every run length 1..16, all -1e9) stays exact: written, and equal to
    sentencepiece on the lines with runs of spaces."""
    model = fixture_file(fixtures, "spm/llama2_tokenizer.model")
    written = toksmith.load(model).save(tmp_path / "llama2.json")
    hf = tokenizers.Tokenizer.from_file(str(written))
    hf.encode_special_tokens = True
    sp = spm.SentencePieceProcessor(model_file=str(model))
    lines = [line for line in dict.fromkeys(corpus_lines["man_en.txt"]) if "   " in line]
    lines.append("B2SUM(1)" + " " * 25 + "Các")
    with Comparison("convert llama2 .model -> tokenizer.json, lines with space runs: ids",
                    against=f"{SENTENCEPIECE} on the source .model") as check:
        check.all(lines, ours=[e.ids for e in hf.encode_batch(lines)], theirs=sp.encode(lines))


# ------------------------------------------------------------- b) Unigram + byte fallback -> t5 GGUF

def test_unigram_byte_fallback_to_gguf_refused(corpus_lines, tmp_path):
    tok = toksmith.load_embedded("sentencepiece-demo")
    assert tok.spec.byte_fallback
    target = tmp_path / "d.gguf"
    with pytest.raises(toksmith.UnsupportedConversionError, match="byte fallback"):
        tok.save(target)
    assert not target.exists()
    written, warning = save_approximately(tok, target)
    assert "byte fallback" in str(warning)
    llama = llama_cpp_reference.load_vocab(written)
    sp = spm.SentencePieceProcessor(model_file=toksmith.embedded_model_path())
    lines = list(dict.fromkeys(corpus_lines["man_ja.txt"][:300] + corpus_lines["man_en.txt"][:300] + ["設"]))
    want = sp.encode(lines)
    got = [llama.tokenize(line.encode(), False, False) for line in lines]
    assert len(want) == len(got) == len(lines)
    differ = [i for i in range(len(lines)) if want[i] != got[i]]
    report(f"convert sentencepiece-demo -> t5 gguf (approximate): {len(lines)} lines, {len(differ)} differ "
           f"(refused by default)")
    byte_ids = {i for i in range(sp.get_piece_size()) if sp.is_byte(i)}
    assert byte_ids & set(want[-1]) and not byte_ids & set(got[-1])      # "設": <0xXX> pieces vs <unk>
    assert differ and all(byte_ids & set(want[i]) for i in differ)


# ------------------------------------------------------------- c) BERT tokenizer.json -> bert GGUF

# One text per cause the refusal names (module gguf_wordpiece_json.wpm_differences).
WPM_CAUSES = {"controls that are white space": ["e\x85r", "b\x0cc"],
              "marks other than Mn": ["\u20e3", "\u093e"],
              "NFD has several code points": ["\uc5b4"],
              "words over 100 characters": ["a" * 101]}


def test_wordpiece_to_bert_gguf_refused(fixtures, tmp_path):
    source = fixture_file(fixtures, "hf/all-MiniLM-L6-v2/tokenizer.json")
    tok = toksmith.load(source)
    target = tmp_path / "minilm.gguf"
    with pytest.raises(toksmith.UnsupportedConversionError) as caught:
        tok.save(target)
    assert not target.exists()
    for cause in WPM_CAUSES:
        assert cause in str(caught.value)
    written, _ = save_approximately(tok, target)
    hf = tokenizers.Tokenizer.from_file(str(source))
    hf.no_padding()
    hf.no_truncation()
    llama = llama_cpp_reference.load_vocab(written)
    compared = 0
    for cause, texts in WPM_CAUSES.items():
        for text in texts:
            compared += 1
            assert hf.encode(text, add_special_tokens=False).ids != llama.tokenize(text.encode(), False, False), \
                (cause, text)
    report(f"convert MiniLM tokenizer.json -> bert gguf (approximate): {compared} texts, one per named cause, "
           f"{compared} differ (refused by default)")


# ------------------------------------------------------------- d) exact=False and --approximate

def test_approximate_o200k_to_gguf_reports_differences(tmp_path):
    """o200k -> GGUF under llama.cpp's "gpt-4o" splitter: refused by default; written with
    exact=False, with a report counting the sample lines and code points that differ."""
    tok = toksmith.load("o200k_base")
    with pytest.raises(toksmith.UnsupportedConversionError, match="gpt-4o.*exact=False"):
        tok.save(tmp_path / "o200k.gguf")
    written, warning = save_approximately(tok, tmp_path / "o200k.gguf")
    report_ = warning.report
    assert report_.lines > 20 and report_.code_points > 300
    assert 0 < len(report_.differing_lines) < report_.lines
    assert str(report_.lines) in str(warning) and "code points" in str(warning)
    # the file holds what the warning says: toksmith reads it as llama.cpp does
    again = toksmith.load(written)
    from toksmith.writers.approximation import sample_lines
    lines = sample_lines()
    written_ids, source_ids = (again.encode_batch(list(lines), add_special=False),
                               tok.encode_batch(list(lines), add_special=False))
    assert len(written_ids) == len(source_ids) == len(lines)
    differ = [line for line, a, b in zip(lines, written_ids, source_ids, strict=True) if a != b]
    assert tuple(differ) == report_.differing_lines
    llama = llama_cpp_reference.load_vocab(written)
    with Comparison("approximate o200k gguf: ids of the approximation's sample lines, toksmith on the written file",
                    against="llama.cpp on the written file") as check:
        check.all(sample_lines(), ours=again.encode_batch(list(sample_lines()), add_special=False),
                  theirs=[llama.tokenize(line.encode(), False, False) for line in sample_lines()])


def test_exact_save_unchanged_and_flag_checked(tmp_path):
    tok = toksmith.load_embedded("sentencepiece-demo")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok.save(tmp_path / "demo.model", exact=False)       # exact anyway: no warning
    with pytest.raises(TypeError, match="exact must be a bool"):
        tok.save(tmp_path / "demo.model", exact="no")


def test_cli_convert_approximate(tmp_path, capsys):
    from toksmith.cli import main
    target = tmp_path / "demo.gguf"
    assert main(["convert", "sentencepiece-demo", str(target)]) == 1
    err = capsys.readouterr().err
    assert "byte fallback" in err and "--approximate" in err and not target.exists()
    assert main(["convert", "sentencepiece-demo", str(target), "--approximate"]) == 0
    err = capsys.readouterr().err
    assert target.exists() and "byte fallback" in err and "lines encode differently" in err


def test_approximate_albert_like_unigram_to_tokenizer_json(fixtures, corpus_lines, tmp_path):
    """An ALBERT-style sentencepiece Unigram model (a USER_DEFINED "[MASK]", CONTROL [CLS] and
    [SEP]) as tokenizer.json: refused by default (sentencepiece matches user-defined pieces
    before normalizing; tokenizers' model sees them only after normalizing); with exact=False
    written with "[MASK]" a piece of the model like any other, which gives sentencepiece's
    ids on text holding it (measured: as an added token, 218 of these 400 lines differ)."""
    prefix = tmp_path / "albert"
    spm.SentencePieceTrainer.train(
        input=str(fixture_file(fixtures, "corpus/botchan.txt")), model_prefix=str(prefix), model_type="unigram",
        vocab_size=1000, user_defined_symbols=["[MASK]"], control_symbols=["[CLS]", "[SEP]"],
        num_threads=1, minloglevel=2)
    model = prefix.with_suffix(".model")
    tok = toksmith.load(model)
    with pytest.raises(toksmith.UnsupportedConversionError, match="USER_DEFINED"):
        tok.save(tmp_path / "albert.json")
    written, warning = save_approximately(tok, tmp_path / "albert.json")
    assert "USER_DEFINED" in str(warning)
    hf = tokenizers.Tokenizer.from_file(str(written))
    sp = spm.SentencePieceProcessor(model_file=str(model))
    lines = [line.replace("the", "the [MASK]") for line in corpus_lines["botchan.txt"][:400]]
    want = sp.encode(lines)
    with Comparison("convert ALBERT-like .model -> tokenizer.json (approximate, refused by default): ids of "
                    "lines holding '[MASK]'", against=f"{SENTENCEPIECE} on the source .model") as check:
        check.all(lines, ours=[e.ids for e in hf.encode_batch(lines, add_special_tokens=False)], theirs=want)


# ------------------------------------------------------------- e) found by the writer-route property test

def test_bert_gguf_to_tokenizer_json_word_starting_with_space_symbol(fixtures, tmp_path):
    """A word that starts with a literal U+2581: llama.cpp's WPM puts its phantom space before
    it all the same ("▁a" is looked up as "▁▁a": [UNK]); tokenizers' Metaspace prepends none
    to a word already starting with one (it found "▁a"). Found by
    tests/property/test_writer_routes.py."""
    source = fixture_file(fixtures, "gguf/ggml-vocab-bert-bge.gguf")
    written = toksmith.load(source).save(tmp_path / "bge.json")
    hf = tokenizers.Tokenizer.from_file(str(written))
    hf.encode_special_tokens = True
    llama = llama_cpp_reference.load_vocab(source)
    texts = ["\u2581a", "x \u2581a", ",\u2581a", "(\u2581a)", "\u65e5\u2581a", "\u2581\u2581a", "a\u2581b", "\u2581",
             "a \u2581,", "x\u3000\u2581the", "a\x0c\u2581b"]
    with Comparison("convert bert-bge gguf -> tokenizer.json, words starting with U+2581: ids",
                    against="llama.cpp on the GGUF") as check:
        check.all(texts, ours=[e.ids for e in hf.encode_batch(texts, add_special_tokens=False)],
                  theirs=[llama.tokenize(t.encode(), False, False) for t in texts])


def test_rwkv_to_gguf_refused(fixtures, tmp_path):
    """The converter's layout puts "<s>" at id 0 and "[PAD<i>]" fillers up to 65536; llama.cpp's
    RWKV trie matches their text in input, the rwkv package reads it as plain text. Found by
    tests/property/test_writer_routes.py ('  <s>')."""
    from rwkv.rwkv_tokenizer import TRIE_TOKENIZER
    txt = fixture_file(fixtures, "rwkv/rwkv_vocab_v20230424.txt")
    tok = toksmith.load(txt)
    target = tmp_path / "rwkv.gguf"
    with pytest.raises(toksmith.UnsupportedConversionError, match="<s>"):
        tok.save(target)
    assert not target.exists()
    written, _ = save_approximately(tok, target)
    trie, llama = TRIE_TOKENIZER(str(txt)), llama_cpp_reference.load_vocab(written)
    texts = ["<s>", "  <s>", "a<s>b", "x[PAD65535]y"]
    differ = [t for t in texts if trie.encode(t) != llama.tokenize(t.encode(), False, False)]
    report(f"convert rwkv .txt -> gguf (approximate): {len(texts)} texts, {len(differ)} differ (refused by default)")
    assert differ == texts
