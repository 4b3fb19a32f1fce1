"""Byte-level BPE vocabularies that lack some bytes' characters, vs `tokenizers` 0.23.

tokenizers' BpeTrainer without `initial_alphabet=ByteLevel.alphabet()` learns only the
characters its corpus holds, so a trained GPT-2 or Llama 3 style vocabulary lacks the
bytes the corpus never had. Encoding such a byte, tokenizers' BPE::merge_word leaves it
out before merging when the model has no unk_token and no byte_fallback (the bytes
around it then merge as neighbours), and makes it the unk token otherwise.

The files are trained here by tokenizers itself (BpeTrainer on English text, GPT-2's
ByteLevel pipeline and Llama 3's Split + ByteLevel with ignore_merges), then each line of
every corpus (Japanese, Chinese, Russian, ... : bytes the vocabulary lacks) is encoded
by both: ids, tokens and decoded text. Without unk_token toksmith runs the file on its
byte-level fast path (`ByteLevelBpe` with `drop_unknown_bytes`); with one, on the
general path (`HfBpe`), which turns the bytes into unk tokens as tokenizers does.
"""
from __future__ import annotations

import json

import pytest
import tokenizers
from tokenizers import Tokenizer as HfTokenizer
from tokenizers.trainers import BpeTrainer

import toksmith
from tests.conftest import fixture_file, multilingual_sample, report
from tests.parity.comparison import Comparison
from tests.parity.bpe_training_pipelines import write_pipeline
from toksmith._core.byte_bpe import ByteLevelBpe
from toksmith._core.byte_unicode import byte_unicode_encode
from toksmith._core.hf_bpe import HfBpe

TOKENIZERS = f"tokenizers {tokenizers.__version__}"

# (pipeline, unk_token, fuse_unk)
CASES = [("gpt2", None, False), ("llama3", None, False), ("gpt2", "<unk>", False), ("gpt2", "<unk>", True)]


@pytest.fixture(scope="module")
def trained(fixtures, tmp_path_factory) -> dict[str, str]:
    """Per pipeline, a tokenizer.json trained by tokenizers on English text (2,000 tokens)."""
    out = tmp_path_factory.mktemp("missing_bytes")
    corpus = [str(fixture_file(fixtures, "corpus/man_en.txt"))]
    paths = {}
    for name in ("gpt2", "llama3"):
        ref = HfTokenizer.from_file(str(write_pipeline(name, fixtures, out)))
        ref.train(corpus, BpeTrainer(vocab_size=2000, special_tokens=["<unk>"], show_progress=False))
        path = out / f"{name}-trained.json"
        path.write_text(HfTokenizer.from_str(ref.to_str()).to_str(), encoding="utf-8")
        paths[name] = str(path)
    return paths


def _with_unk(path: str, unk_token: str | None, fuse_unk: bool, out) -> str:
    data = json.loads(open(path, encoding="utf-8").read())
    data["model"]["unk_token"] = unk_token
    data["model"]["fuse_unk"] = fuse_unk
    target = out / f"unk-{unk_token is not None}-fuse-{fuse_unk}.json"
    target.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(target)


@pytest.mark.parametrize("name,unk_token,fuse_unk", CASES)
def test_vocabulary_without_some_bytes_encodes_as_tokenizers(trained, corpus_lines, tmp_path, name, unk_token,
                                                             fuse_unk):
    path = _with_unk(trained[name], unk_token, fuse_unk, tmp_path)
    ref = HfTokenizer.from_file(path)
    ours = toksmith.load(path)
    vocab = ref.get_vocab()
    missing = {b for b in range(256) if byte_unicode_encode(bytes([b])).decode("utf-8") not in vocab}
    assert len(missing) > 64, "the trained vocabulary should lack the bytes English text never has"
    model = ours.engine.model
    if unk_token is None:
        assert isinstance(model, ByteLevelBpe) and model.drops_bytes
    else:
        assert isinstance(model, HfBpe)
    lines = multilingual_sample(corpus_lines, 400)
    with_missing = sum(any(b in missing for b in text.encode("utf-8", "surrogatepass")) for text in lines)
    assert with_missing > len(lines) // 4, "the sample should hold the bytes the vocabulary lacks"
    expected = ref.encode_batch(lines, add_special_tokens=False)
    ids = [e.ids for e in expected]
    label = f"byte-level vocab without {len(missing)} bytes ({name}, unk_token={unk_token}, fuse_unk={fuse_unk})"
    report(f"{label}: {with_missing} of {len(lines)} lines with such bytes")
    with Comparison(f"{label} ids, tokens, decode", against=TOKENIZERS) as check:
        # tokenizers' default: added tokens are found (parse_special=True)
        check.all(lines, ours=[ours.encode(text, parse_special=True) for text in lines], theirs=ids, what="ids")
        check.all(lines, ours=[ours.tokenize(text, parse_special=True) for text in lines],
                  theirs=[e.tokens for e in expected], what="tokens")
        check.all(lines, ours=[ours.decode(i) for i in ids], theirs=ref.decode_batch(ids, skip_special_tokens=False),
                  what="decode")


@pytest.mark.parametrize("ignore_merges", [False, True])
def test_word_that_is_a_token_holding_an_unknown_byte(tmp_path, ignore_merges):
    """tokenizers looks a whole word up before it leaves unknown bytes out (ignore_merges),
    and merges across the gap otherwise. A vocabulary made with tokenizers' own API: every
    byte's character but 0x86's (the second byte of "Æ"), and the word "xÆy" as a token."""
    from tokenizers import models, pre_tokenizers

    def chars(raw: bytes) -> str:
        return byte_unicode_encode(raw).decode("utf-8")

    vocab = {chars(bytes([b])): b for b in range(256) if b != 0x86}
    merges = [(chars(b"x"), chars(b"y")), (chars(b"\xc3"), chars(b"y"))]
    for left, right in merges:
        vocab[left + right] = len(vocab) + 1      # ids 0-255 less 0x86: the next is 256
    vocab[chars("xÆy".encode())] = len(vocab) + 1
    ref = HfTokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=ignore_merges))
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    path = tmp_path / "unknown-byte.json"
    ref.save(str(path))
    ours = toksmith.load(str(path))
    assert isinstance(ours.engine.model, ByteLevelBpe) and ours.engine.model.drops_bytes
    for text in ("xÆy", "zxÆy", "Æy", "xÆ", "Æ", "ÆÆ xÆyÆy", "x\u0186y"):
        expected = ref.encode(text)
        assert (ours.encode(text), ours.tokenize(text)) == (expected.ids, expected.tokens), text
