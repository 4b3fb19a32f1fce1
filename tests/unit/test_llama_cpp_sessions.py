"""llama.cpp's whitespace and hybriddna BPE sessions (GGUF tokenizer.ggml.model "whitespace"
and "hybriddna"), and the pre type "whitespace" outside them, on tiny hand-written
vocabularies. Expected ids follow llama-vocab.cpp by hand (llm_tokenizer_whitespace_session,
llm_tokenizer_hybriddna_session, llama_vocab::find_bpe_rank); the parity tests compare real
vocabularies with llama.cpp itself (tests/parity/test_whitespace_model_gguf.py,
test_hybriddna_gguf.py)."""
from __future__ import annotations

import pytest

import toksmith
from tests.unit.gguf_writer import write_gguf
from tests.unit.test_gguf_byte_level import kvs
from toksmith._core.dna_regions import DnaRegionSplitter
from toksmith._core.pretok_llama import LlamaSplitter
from toksmith._core.spaced_piece_guard import SpacedPieceGuard
from toksmith._core.whitespace_session import LlamaCppLowercase
from toksmith.pretokenizers.llama_cpp import PreType, regexes_for

MARKER = "\ue000"
# "Ġ" is the space of GPT-2's byte<->unicode map; ids: a=0 b=1 Ġ=2 ab=3 Ġab=4 <|endoftext|>=5 ...
TOKENS = ["a", "b", "Ġ", "ab", "Ġab", "<|endoftext|>", "c", "d", "e", "f", "g", "h", " ", "\t", "Ã", "¤"]
MERGES = ["a b", "Ġ ab"]


def load(tmp_path, name="v", **options) -> toksmith.Tokenizer:
    return toksmith.load(write_gguf(tmp_path / f"{name}.gguf", kvs(**options)))


# ------------------------------------------------------------------ LlamaCppLowercase

@pytest.mark.parametrize("text, want", [
    ("hello, world 123", "hello, world 123"),
    ("HeLLo WORLD", "hello world"),
    ("ÀÉÎ Ärger", "àéî ärger"),
    ("ΣΑΣ", "σασ"),                    # unicode_tolower has no final sigma
    ("İ", "i"),                        # U+0130 lowers to plain i in llama.cpp's table
    ("\u3000\u00a0\t\n", "\u3000\u00a0\t\n"),
    ("日本語 🦙", "日本語 🦙"),
])
def test_lowercase_normalizer(text, want):
    assert LlamaCppLowercase().normalize_text(text.encode()) == want.encode()


def test_lowercase_normalizer_repairs_utf8_and_escapes_spaces():
    # a byte that starts no sequence becomes U+FFFD; an overlong form its shortest form
    assert LlamaCppLowercase().normalize_text(b"A\xffB\xc1\x81") == b"a\xef\xbf\xbdba"
    assert LlamaCppLowercase(escape_spaces=True).normalize_text(b"A B") == "a\u2581b".encode()
    unchanged = b"plain ascii text"
    assert LlamaCppLowercase().normalize_text(unchanged) is unchanged


# ------------------------------------------------------------------ whitespace model

def test_whitespace_model_cuts_at_whitespace_and_drops_it(tmp_path):
    tok = load(tmp_path, model="whitespace", tokens=TOKENS, merges=MERGES, pre="whitespace")
    # segments "ab", "ab", "AB" (no lowercase with pre whitespace): the spaces and tab are
    # dropped, not encoded (" " and "\t" are tokens of this vocabulary)
    assert tok.encode("ab  ab\t", add_special=False) == [3, 3]
    assert tok.encode(" \t\u3000 ", add_special=False) == []
    # Each segment is BPE'd on its own: "a" and "b" across a space never merge.
    assert tok.encode("a b", add_special=False) == [0, 1]


def test_whitespace_model_lowercases_when_the_file_says(tmp_path):
    for lowercase, want in ((True, [3, 3]), (False, [])):
        tok = load(tmp_path, f"l{lowercase}", model="whitespace", tokens=TOKENS, merges=MERGES,
                   pre="whitespace", **{"normalizer.lowercase": lowercase})
        # "AB" has no token: with lowercase it is "ab"; without, its bytes have no byte token
        assert tok.encode("AB AB", add_special=False) == want
    # pre "gpt-2" leaves llama.cpp's default on: lowercase
    tok = load(tmp_path, "g", model="whitespace", tokens=TOKENS, merges=MERGES, pre="gpt-2")
    assert tok.encode("AB  AB", add_special=False) == [3, 3]


def test_whitespace_model_tokenize_spans_point_into_the_text(tmp_path):
    tok = load(tmp_path, model="whitespace", tokens=TOKENS, merges=MERGES, pre="gpt-2")
    assert tok.tokenize("AB\tab") == ["ab", "ab"]


# ------------------------------------------------------------------ pre "whitespace" elsewhere

def test_whitespace_pre_under_gpt2_model_refuses_what_llama_cpp_aborts_on(tmp_path):
    tok = load(tmp_path, tokens=TOKENS, merges=MERGES, pre="whitespace")
    # one space between pieces is a one-character pre-token: fine (" " is token 12)
    assert tok.encode("ab ab", add_special=False) == [3, 12, 3]
    for text in ("ab  ab", "a \tb", "x\u3000 y", "  "):
        with pytest.raises(toksmith.ReferenceAbortsError, match="find_bpe_rank") as err:
            tok.encode(text)
        assert isinstance(err.value, ValueError) and isinstance(err.value, toksmith.ToksmithError)
        with pytest.raises(toksmith.ReferenceAbortsError):
            tok.encode_batch(["ab", text])
    # whitespace runs without a space are merged as usual (no assert in llama.cpp)
    assert tok.encode("ab\t\tab", add_special=False) == [3, 13, 13, 3]
    assert tok.encode("ab ab", add_special=False) == [3, 12, 3], "the tokenizer still works"


def test_spaced_piece_guard_splits_like_its_inner_splitter():
    inner = LlamaSplitter(regexes_for(PreType.WHITESPACE))
    guard = SpacedPieceGuard(inner)
    assert guard.split_text(b"ab c\n\nd") == inner.split_text(b"ab c\n\nd") == [b"ab", b" ", b"c", b"\n\n", b"d"]
    with pytest.raises(toksmith.ReferenceAbortsError):
        guard.split_text(b"ab \nc")


# ------------------------------------------------------------------ hybriddna model

DNA_TOKENS = TOKENS + ["<dna>", "</dna>", "<oov>", "ACGTAC" + MARKER, "AAAAAA" + MARKER, "CAAAAA" + MARKER]
DNA, END, OOV, ACGTAC, AAAAAA, CAAAAA = range(len(TOKENS), len(TOKENS) + 6)


def test_hybriddna_regions_become_kmers(tmp_path):
    tok = load(tmp_path, model="hybriddna", tokens=DNA_TOKENS, merges=MERGES)
    enc = lambda text: tok.encode(text, add_special=False)   # noqa: E731
    assert enc("ab<dna>acgtacA</dna>ab") == [3, DNA, ACGTAC, AAAAAA, END, 3]
    assert enc("<dna>acgTAC") == [DNA, ACGTAC]                     # unterminated: to the end
    assert enc("<dna></dna>") == [DNA, END]                          # empty region
    assert enc("<dna>c</dna>") == [DNA, CAAAAA, END]                 # padded with 'A'
    assert enc("<dna>NNNNNNc</dna>") == [DNA, OOV, CAAAAA, END]      # no such k-mer
    assert enc("<dna>é</dna>") == [DNA, OOV, END]                    # raw bytes, not characters
    # the marker-stripped texts are the pieces and the decoded text
    assert tok.id_to_piece(ACGTAC) == "ACGTAC"
    assert tok.decode([DNA, ACGTAC, CAAAAA, END]) == "<dna>ACGTACCAAAAA</dna>"


def test_hybriddna_long_region(tmp_path):
    tok = load(tmp_path, model="hybriddna", tokens=DNA_TOKENS, merges=MERGES)
    ids = tok.encode("<dna>" + "acgtac" * 200_000 + "c</dna>", add_special=False)
    assert ids == [DNA] + [ACGTAC] * 200_000 + [CAAAAA, END]


def test_hybriddna_without_oov_is_plain_bpe(tmp_path):
    tokens = [t for t in DNA_TOKENS if t != "<oov>"]
    tok = load(tmp_path, "dna", model="hybriddna", tokens=tokens, merges=MERGES)
    plain = load(tmp_path, "plain", model="gpt2", tokens=tokens, merges=MERGES)
    for text in ("<dna>ACGTAC</dna>", "ab <dna>ab"):
        assert tok.encode(text, add_special=False) == plain.encode(text, add_special=False)


def test_dna_region_splitter_checks_its_kmers():
    with pytest.raises(ValueError, match="6 bytes"):
        DnaRegionSplitter(None, 1, 2, 3, {b"ACGT": 4})
    splitter = DnaRegionSplitter(None, 1, 2, 3, {b"ACGTAC": 4})
    assert splitter.kmer_id(b"ACGTAC") == 4 and splitter.kmer_id(b"ACGTAA") == 3
    with pytest.raises(ValueError):
        splitter.kmer_id(b"ACG")
