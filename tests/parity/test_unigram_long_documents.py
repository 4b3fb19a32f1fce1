"""Unigram on whole documents: every fixture corpus file encoded as ONE input.

Line-by-line parity cannot see what only happens deep into a long text:
sentencepiece 0.2.3 (unigram_model.cc, Model::EncodeOptimized) rebases its
float path scores whenever they pass +-100000, which changes which near-ties
win after about 28 KB of text. Here every corpus file (and the invalid-UTF-8
file) is one encode call, against the reference of each format:

- every Unigram ``.model`` (the fixture models and the ones the suite trains,
  including user-defined symbols and byte fallback) against sentencepiece;
- the UGM GGUF with sentencepiece's rules against sentencepiece on the same
  vocabulary, and with llama.cpp's rules (double sums) against llama.cpp.
"""
from __future__ import annotations

import pytest
import sentencepiece as spm   # test dependencies: parity fails, never skips, without them

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import CORPUS_FILES, fixture_file
from tests.parity.comparison import Comparison
from tests.parity.conftest import UNIGRAM_FIXTURE_MODELS
from tests.parity.excuses.spm_tiktoken_training import SENTENCEPIECE
from tests.parity.trained_models import UNIGRAM_CONFIGS
from tests.parity.ugm_reference import GGUF_UGM, model_proto_from_gguf


@pytest.fixture(scope="module")
def documents(fixtures) -> dict[str, str | bytes]:
    """Each corpus file whole (str), and the invalid-UTF-8 cases as one bytes input."""
    docs: dict[str, str | bytes] = {
        name: fixture_file(fixtures, f"corpus/{name}").read_bytes().decode("utf-8")
        for name in CORPUS_FILES}
    docs["tricky_invalid_utf8.bin"] = fixture_file(fixtures, "corpus/tricky_invalid_utf8.bin").read_bytes()
    return docs


def compare_documents(tok, reference_encode, reference_decode, documents, label: str,
                      against: str = SENTENCEPIECE) -> None:
    """encode (one call per document), encode_batch of all documents, and decode of the
    reference's ids."""
    names = list(documents)
    texts = [documents[n] for n in names]
    want = [reference_encode(text) for text in texts]
    check = Comparison(f"{label}: {len(names)} whole documents as one input each "
                       f"({sum(map(len, want))} ids; encode, encode_batch, decode)", against=against)
    check.all(names, ours=[tok.encode(text) for text in texts], theirs=want, what="encode")
    check.all(names, ours=tok.encode_batch(texts), theirs=want, what="encode_batch")
    check.all(names, ours=[tok.decode(ids) for ids in want], theirs=[reference_decode(ids) for ids in want],
              what="decode")
    check.finish()


@pytest.mark.parametrize("model", UNIGRAM_FIXTURE_MODELS)
def test_fixture_model_whole_documents(fixtures, documents, model):
    path = fixture_file(fixtures, model)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    compare_documents(toksmith.load(path), sp.encode, sp.decode, documents, f"{model} (whole documents)")


@pytest.mark.parametrize("name", sorted(UNIGRAM_CONFIGS))
def test_trained_model_whole_documents(trained_unigram_models, documents, name):
    path = trained_unigram_models[name]
    sp = spm.SentencePieceProcessor(model_file=str(path))
    compare_documents(toksmith.load(path), sp.encode, sp.decode, documents,
                      f"trained unigram {name} (whole documents)")


class WithFlags:
    """A GGUF tokenizer with fixed add_special, decoding with skip_special=True."""

    def __init__(self, tok, add_special: bool):
        self.tok, self.add_special = tok, add_special

    def encode(self, text):
        return self.tok.encode(text, add_special=self.add_special)

    def encode_batch(self, texts):
        return self.tok.encode_batch(texts, add_special=self.add_special)

    def decode(self, ids):
        return self.tok.decode(ids, skip_special=True)


def test_ugm_gguf_sentencepiece_rules_whole_documents(fixtures, documents):
    path = fixture_file(fixtures, GGUF_UGM)
    sp = spm.SentencePieceProcessor(model_proto=model_proto_from_gguf(path))
    tok = toksmith.load(path, rules=toksmith.ReferenceRules.SENTENCEPIECE)
    compare_documents(WithFlags(tok, add_special=False), sp.encode, sp.decode, documents,
                      f"{GGUF_UGM} with sentencepiece rules (whole documents)",
                      against=f"{SENTENCEPIECE} on the GGUF's vocabulary")


@pytest.mark.parametrize("add_special", [False, True])
def test_ugm_gguf_whole_documents_match_llama_cpp(fixtures, documents, add_special):
    path = fixture_file(fixtures, GGUF_UGM)
    ref = llama_cpp_reference.load_vocab(path)

    def reference_encode(text):
        return ref.tokenize(text if isinstance(text, bytes) else text.encode("utf-8"), add_special, False)

    def reference_decode(ids):
        return ref.detokenize(ids, remove_special=True, unparse_special=False).decode("utf-8", "replace")

    compare_documents(WithFlags(toksmith.load(path), add_special), reference_encode, reference_decode, documents,
                      f"{GGUF_UGM} add_special={add_special} (whole documents)", against="llama.cpp")


@pytest.mark.parametrize("kilobytes", [24, 28, 32, 90])
def test_botchan_prefixes_past_the_score_reset(fixtures, kilobytes):
    """The reported case: T5-ja on the first 32 KB of botchan.txt differed in 2,247 of
    14,052 ids, from about 28 KB on (the first rebase of sentencepiece's path scores)."""
    path = fixture_file(fixtures, "spm/t5_base_japanese_spiece.model")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    text = fixture_file(fixtures, "corpus/botchan.txt").read_bytes()[:kilobytes * 1000].decode("utf-8", "ignore")
    check = Comparison(f"t5_base_japanese_spiece.model, the first {kilobytes} KB of botchan.txt as one input",
                       against=SENTENCEPIECE)
    check.one(f"botchan.txt[:{kilobytes} KB]", toksmith.load(path).encode(text), sp.encode(text), what="encode")
    check.finish()
