"""PLaMo-2 GGUF vocabularies (tokenizer.ggml.model "plamo2") against llama.cpp itself.

The GGUF is written in the test with the `gguf` package's GGUFWriter, laid out as llama.cpp's
converter (conversion/base.py `_set_vocab_plamo`) writes one: the five <|plamo:...|> tokens
first (ids 0-4: unk, bos, eos, pad, op), 256 BYTE tokens <0xXX>, then the real scored pieces
of the sonoisa/t5-base-japanese sentencepiece Unigram model with U+2581 made a space (PLaMo's
pieces hold raw spaces; a piece whose text would repeat another is dropped), then [PADi]
UNUSED tokens scored -1000 as the converter pads them.

Compared with llama.cpp (tests/llama_cpp_reference.py):
- every corpus line, a seeded quarter with a special or [PADi] text spliced in, with
  (add_special, parse_special) = (False, False) and (True, True), through encode and
  encode_batch; decode of llama.cpp's ids with both skip_special values against
  llama_detokenize, and decode_bytes; the invalid UTF-8 lines as bytes; leading BOMs;
- texts whose best path needs byte fallback;
- small vocabularies where segmentations tie, with non-finite scores, scores of -1000
  (llama.cpp's sentinel value) and -2000 or less (never used), and token texts that are
  not well-formed UTF-8, on seeded random texts;
- seeded random id lists through decode / decode_bytes.
"""
from __future__ import annotations

import random

import pytest

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import fixture_file, report
from tests.plamo2_gguf import PLAMO_SPECIALS, sentencepiece_pieces, write_plamo2_gguf
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import compare_corpora, compare_decodes, compare_encodes, reference_decode
from toksmith.spec import Algorithm

SPM_MODEL = "spm/t5_base_japanese_spiece.model"
N_PADS = 12
FLAGS = ((False, False), (True, True))


@pytest.fixture(scope="module")
def plamo2_path(fixtures, tmp_path_factory):
    pieces = sentencepiece_pieces(fixture_file(fixtures, SPM_MODEL))
    assert len(pieces) > 30000
    return write_plamo2_gguf(tmp_path_factory.mktemp("plamo2") / "plamo2-ja.gguf", pieces, pads=N_PADS)


@pytest.fixture(scope="module")
def plamo2(plamo2_path):
    tok = toksmith.load(plamo2_path)
    ref = llama_cpp_reference.load_vocab(plamo2_path)
    assert tok.vocab_size == ref.n_tokens
    assert tok.spec.algorithm is Algorithm.PLAMO2
    return tok, ref


def test_corpora_match_llama_cpp(plamo2, corpus_lines, invalid_utf8_lines):
    tok, ref = plamo2
    specials = list(PLAMO_SPECIALS) + [f"[PAD{i}]" for i in (1, 7, N_PADS)] + ["[PAD", "[PAD1"]
    check = Comparison("PLaMo-2 GGUF (t5-base-japanese pieces) every corpus line (a seeded quarter with a special "
                       "or [PADi] text spliced in) and the invalid UTF-8 lines x 2 flag combinations (encode, "
                       "encode_batch; decode x2 and decode_bytes of llama.cpp's ids with parse_special)",
                       against="llama.cpp")
    spliced_count = compare_corpora(check, tok, ref, corpus_lines, specials, flags=FLAGS)
    compare_encodes(check, tok, ref, invalid_utf8_lines, flags=FLAGS, decode=False, label="invalid UTF-8")
    report(f"  PLaMo-2 GGUF: {spliced_count} lines with a special or [PADi] text spliced in")
    check.finish(at_least=4 * len(invalid_utf8_lines))


def test_bom_byte_fallback_and_pad_texts_match_llama_cpp(plamo2):
    tok, ref = plamo2
    texts = [
        "\ufeffHello", "\ufeff", "\ufeff\ufeffx", "a\ufeffb", "<|plamo:bos|>\ufeff吾輩は猫である",
        "\ufeff<|plamo:eos|>\ufeff", b"\xef\xbb\xbf\xff\xfe", b"\xf0\x8f\xbb\xbfoverlong BOM",
        # characters no piece holds: their UTF-8 bytes become byte tokens
        "🦙 llama 🦙🦙", "𠮷野家で𩸽を食べた", "Ωμέγα ∑ ≠ ∞", "\u0000\u0001\u007f", "ﬁ ǅ ẞ",
        "\U0010FFFF\ue000", b"\xf4\x90\x80\x80 past U+10FFFF", b"\xed\xa0\x80 surrogate", b"\xc0\x80",
        "[PAD1][PAD12][PAD123][PA[PAD", "x[PAD3]y", "[[PAD2]]", " [PAD5] ", "[PAD]",
        "", " ", "   ", "\n\n", "ab" * 500, "猫" * 300,
    ]
    check = Comparison("PLaMo-2 GGUF edge cases (BOM, byte fallback, [PADi] texts) x 2 flag combinations "
                       "(encode, encode_batch; decode x2 and decode_bytes with parse_special)", against="llama.cpp")
    wanted = compare_encodes(check, tok, ref, texts, flags=FLAGS)
    check.finish(at_least=4 * len(texts))
    # the byte fallback really ran: llama.cpp's ids of some texts are BYTE tokens (ids 5..260)
    fallback = [t for t, ids in zip(texts, wanted[0], strict=True) if any(5 <= i < 261 for i in ids)]
    assert len(fallback) >= 8, fallback


@pytest.mark.parametrize("add_space_prefix", [False, True])
def test_add_special_adds_nothing_but_detokenize_honours_flags(tmp_path, add_space_prefix):
    """llama_tokenize's PLaMo-2 case never adds BOS/EOS; llama_detokenize still drops a leading
    BOS / trailing EOS with remove_special when the file sets add_bos_token / add_eos_token,
    and strips the first piece's leading space when it sets add_space_prefix. A "</s>" token
    beside <|plamo:eos|> is NORMAL (llama.cpp takes it out of the end-of-generation tokens)."""
    pieces = [(b" a", -1.0, 1), (b"a", -2.0, 1), (b" ", -3.0, 1), (b"</s>", 0.0, 3)]

    def flags(writer):
        writer.add_add_bos_token(True)
        writer.add_add_eos_token(True)
    path = write_plamo2_gguf(tmp_path / "flags.gguf", pieces, add_space_prefix=add_space_prefix, extra=flags)
    tok, ref = toksmith.load(path), llama_cpp_reference.LlamaCppVocab(path)
    try:
        assert tok.encode(" a a") == ref.tokenize(b" a a", True, False) == [261, 261]
        for text in (b"a</s>a", b"<|plamo:eos|></s>", b" a<|plamo:bos|> a"):
            for add_special, parse_special in FLAGS:
                assert tok.encode(text, add_special=add_special, parse_special=parse_special) == \
                    ref.tokenize(text, add_special, parse_special), text
        for ids in ([1, 261, 2], [1, 1, 261, 2, 2], [261], [5 + 32, 261], [2, 1], [264, 1, 261], [263, 261],
                    [4, 261], [0, 5 + 32]):
            for skip in (False, True):
                assert tok.decode(ids, skip_special=skip) == reference_decode(ref, ids, skip), (ids, skip)
    finally:
        ref.close()


# ------------------------------------------------------------- small vocabularies, fuzzed


TIE_PIECES = [
    # equal totals: "ab" = "a" + "b", "abc" = "ab" + "c" = "a" + "bc"
    (b"a", -1.0, 1), (b"b", -1.0, 1), (b"c", -1.5, 1), (b"ab", -2.0, 1), (b"bc", -2.5, 1),
    (b"abc", -3.5, 1),
    # scores equal only after round(score * 1e4)
    (b"d", -1.00001, 1), (b"e", -1.00002, 1), (b"de", -2.00003, 1),
    # score * 1e4 exactly halfway: std::round goes away from zero (313, -313), so "f f" beats
    # "ff" (625) and "gg" (-625) beats "g g"; rounding half to even would pick the others
    (b"f", 0.03125, 1), (b"ff", 0.0625, 1), (b"g", -0.03125, 1), (b"gg", -0.0625, 1),
    # non-finite scores (never used), -1000 (llama.cpp's sentinel value), -2000 and less (never used)
    (b"ca", float("nan"), 1), (b"ba", float("inf"), 1), (b"cb", float("-inf"), 1),
    (b"dd", -1000.0, 1), (b"ee", -2000.0, 1), (b"eee", -2500.0, 1), (b"ad", -1000.0, 5),
    # other token types take part in the DP
    (b"<u>", -0.5, 4), (b"cc", -0.25, 5), (b"<c>", -0.5, 3),
    # multi-byte and long pieces, ties across them
    ("é".encode(), -1.0, 1), ("éa".encode(), -2.0, 1), ("日本".encode(), -2.0, 1), ("日".encode(), -1.0, 1),
    ("本".encode(), -1.0, 1), (b"abcabcabc", -9.0, 1), (b"bca", -3.0, 1),
    # texts that are not well-formed UTF-8, or not in shortest form
    (b"\xffa", -0.5, 1), (b"\xc0\x80b", -0.5, 1), ("\ufffd".encode(), -0.5, 1), (b"\xed\xa0\x80", -0.5, 1),
    # a BYTE token whose text is no <0xXX> (never a piece, printed as its text)
    (b"<0xZZ>", -0.1, 6), (b"<0x4g>", -0.1, 6),
]
ALPHABET = ["a", "b", "c", "d", "e", "f", "g", "é", "日", "本", "<u>", "<c>", "\ufffd", "\x00", "\ufeff", "🦙"]
RAW_ALPHABET = [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf5\x80\x80\x80", b"\x80"]


def test_ties_scores_and_odd_texts_match_llama_cpp(tmp_path):
    path = write_plamo2_gguf(tmp_path / "ties.gguf", TIE_PIECES, pads=3)
    tok, ref = toksmith.load(path), llama_cpp_reference.LlamaCppVocab(path)
    rnd = random.Random(5)
    texts = []
    # every string of up to 5 letters over "abcde"
    strings = [""]
    for _ in range(5):
        strings = [s + c for s in strings for c in "abcde"]
        texts += strings
    for _ in range(3000):
        parts = [rnd.choice(ALPHABET) for _ in range(rnd.randint(1, 14))]
        text = "".join(parts).encode()
        if rnd.random() < 0.3:
            at = rnd.randint(0, len(text))
            text = text[:at] + rnd.choice(RAW_ALPHABET) + text[at:]
        texts.append(text)
    texts += ["[PAD1]", "[PAD2][PAD3]", "x[PAD1", "adad", "dddd", "eeee"]
    check = Comparison("PLaMo-2 tie/score/odd-text vocabulary: texts x 2 flag combinations (encode, encode_batch; "
                       "decode x2 and decode_bytes with parse_special), 2000 random id lists (decode x2, "
                       "decode_bytes)", against="llama.cpp")
    try:
        compare_encodes(check, tok, ref, texts, flags=FLAGS)
        # the ties are real: "ab" and "a b" cost the same, and llama.cpp keeps the longer piece
        ids = {t: i for i, t in enumerate(tok.vocab.pieces)}
        assert ref.tokenize(b"ab", False, False) == [ids[b"ab"]]
        assert ref.tokenize(b"abc", False, False) == [ids[b"abc"]]
        assert ref.tokenize(b"de", False, False) == [ids[b"de"]]
        assert ref.tokenize(b"ff", False, False) == [ids[b"f"], ids[b"f"]]
        assert ref.tokenize(b"gg", False, False) == [ids[b"gg"]]
        n = tok.vocab_size
        rnd_ids = [[rnd.randrange(n) for _ in range(rnd.randint(0, 8))] for _ in range(2000)]
        compare_decodes(check, tok, ref, rnd_ids)
    finally:
        ref.close()
    check.finish(at_least=4 * len(texts) + 3 * len(rnd_ids))


def test_random_id_lists_decode_like_detokenize(plamo2):
    tok, ref = plamo2
    n = tok.vocab_size
    pool = list(range(0, 300)) + list(range(n - 40, n))
    rnd = random.Random(11)
    cases = 3000
    with Comparison("PLaMo-2 GGUF random id lists (decode x2, decode_bytes)",
                    against="llama.cpp (llama_detokenize)") as check:
        compare_decodes(check, tok, ref, [[rnd.choice(pool) if rnd.random() < 0.7 else rnd.randrange(n)
                                           for _ in range(rnd.randint(0, 10))] for _ in range(cases)])



def test_grouped_table_build_equals_literal_build(plamo2_path, tmp_path):
    """The table built from key groups (every text in shortest UTF-8 form) is the one built
    string by string as llm_tokenizer_plamo2::build builds it; the tie vocabulary above, whose
    texts are not all well-formed, is built string by string (and matched llama.cpp)."""
    from toksmith._core.plamo2 import Plamo2
    from toksmith.formats.gguf import read_gguf
    spec = read_gguf(plamo2_path)
    args = (list(spec.vocab.pieces), spec.vocab.types, list(spec.vocab.scores))
    grouped, literal = Plamo2(*args).table(), Plamo2(*args, literal=True).table()
    assert len(grouped[0]) > 100000 and grouped == literal
    spec = read_gguf(write_plamo2_gguf(tmp_path / "canonical.gguf", [p for p in TIE_PIECES if _canonical(p[0])]))
    args = (list(spec.vocab.pieces), spec.vocab.types, list(spec.vocab.scores))
    assert Plamo2(*args).table() == Plamo2(*args, literal=True).table()


def _canonical(text: bytes) -> bool:
    try:
        text.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return False
    return True
