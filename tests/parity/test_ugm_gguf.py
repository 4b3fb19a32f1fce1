"""The T5/UGM GGUF against sentencepiece on the same vocabulary.

sentencepiece gets a ModelProto built from the GGUF's own pieces, scores,
token types, charsmap and whitespace flags; toksmith loads the GGUF file.
"""
from __future__ import annotations

import pytest
import sentencepiece as spm

import toksmith
from tests.conftest import fixture_file
from tests.parity.compare import compare_corpora
from tests.parity.comparison import Comparison
from tests.parity.excuses.gguf import UGM_EXACT_TIE, ScoredText
from tests.parity.excuses.spm_tiktoken_training import SENTENCEPIECE
from tests.parity.ugm_reference import GGUF_UGM, model_proto_from_gguf


@pytest.fixture(scope="module")
def gguf_path(fixtures):
    return fixture_file(fixtures, GGUF_UGM)


@pytest.fixture(scope="module")
def reference(gguf_path):
    return spm.SentencePieceProcessor(model_proto=model_proto_from_gguf(gguf_path))


class WithoutSpecials:
    """The GGUF tokenizer with add_special=False, as the comparison needs."""

    def __init__(self, tok):
        self.tok = tok

    def encode(self, text):
        return self.tok.encode(text, add_special=False)

    def encode_batch(self, texts):
        return self.tok.encode_batch(texts, add_special=False)

    def tokenize(self, text):
        return self.tok.tokenize(text)

    def decode(self, ids):
        return self.tok.decode(ids)


def test_gguf_with_sentencepiece_rules_matches_sentencepiece(gguf_path, reference, corpus_lines,
                                                             invalid_utf8_lines):
    tok = toksmith.load(gguf_path, rules=toksmith.ReferenceRules.SENTENCEPIECE)
    compare_corpora(WithoutSpecials(tok), reference, corpus_lines, invalid_utf8_lines,
                    f"{GGUF_UGM}: toksmith on the GGUF (sentencepiece rules, add_special=False)",
                    against=f"{SENTENCEPIECE} on a .model built from the GGUF's pieces (model_proto_from_gguf)")


def test_gguf_llama_cpp_rules_differ_from_sentencepiece_only_on_exact_ties(
        gguf_path, reference, corpus_lines):
    """llama.cpp's UGM sums scores in double, sentencepiece in float.

    Where the two disagree, both segmentations must be the same text in as many pieces with
    the same total score in exact arithmetic: a tie broken differently, never a worse path.
    """
    tok = toksmith.load(gguf_path)
    assert tok.spec.rules is toksmith.ReferenceRules.LLAMA_CPP
    pieces, scores = tok.vocab.pieces, tok.vocab.scores
    # today 83 on the full corpora
    check = Comparison(f"{GGUF_UGM} (llama.cpp rules) every corpus line (encode_batch)", against="sentencepiece 0.2.3",
                       excuses={UGM_EXACT_TIE: 90})
    for corpus, lines in corpus_lines.items():
        ours, theirs = tok.encode_batch(lines, add_special=False), reference.encode(lines)
        check.all([ScoredText(line, pieces, scores) for line in lines], ours=ours, theirs=theirs, what=corpus)
        # where the segmentations differ, the decoded texts must still agree
        for line, mine, want in check.pairs(lines, ours, theirs):
            if mine != want:
                check.one(line, tok.decode(mine), reference.decode(want), what=f"{corpus} decode of a tie")
    check.finish()


def test_gguf_ugm_adds_bos_and_eos_from_metadata(gguf_path, reference):
    tok = toksmith.load(gguf_path)
    # The file sets add_bos_token and add_eos_token; llama_tokenize with
    # add_special=true puts BOS first and EOS last.
    special = tok.special_ids
    body = reference.encode("Hello world")
    assert tok.encode("Hello world") == [special.bos, *body, special.eos]
    assert tok.encode("Hello world", add_special=False) == body
    assert tok.encode("", add_special=True) == [special.bos, special.eos]
