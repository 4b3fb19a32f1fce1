"""Issue 30 item 14: `train_bpe(like=...)` takes what `toksmith.load` takes where a BPE
pipeline can be kept, and the corpus comes as `files` or `texts=`, never one for the other.

Each accepted form is checked against tokenizers 0.23.3's BpeTrainer on the reference's
own pipeline for it: a folder's tokenizer.json as tokenizers reads it; a GPT-2 folder
(vocab.json + merges.txt) as transformers builds its fast tokenizer; an embedded tiktoken
name through the tokenizer.json toksmith writes for it (that conversion is proven against
tiktoken in test_convert_from_tiktoken.py). Texts are checked against
`train_from_iterator`. The saved form is compared, as in test_train_bpe_hf.py.
"""
from __future__ import annotations

import json
import shutil

import pytest
from tokenizers import Tokenizer as HfTokenizer
from tokenizers.trainers import BpeTrainer

import toksmith
from tests.conftest import fixture_file
from tests.parity.bpe_training_pipelines import compare_trained_json, write_pipeline
from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import TOKENIZERS

VOCAB_SIZE = 1200


@pytest.fixture(scope="module")
def corpus(fixtures):
    return [str(fixture_file(fixtures, "corpus/botchan.txt")), str(fixture_file(fixtures, "corpus/man_ru.txt"))]


def _saved(ref: HfTokenizer) -> dict:
    return json.loads(HfTokenizer.from_str(ref.to_str()).to_str())


def _trained_by_reference(ref: HfTokenizer, files=None, texts=None) -> dict:
    trainer = BpeTrainer(vocab_size=VOCAB_SIZE, show_progress=False)
    if texts is not None:
        ref.train_from_iterator(texts, trainer)
    else:
        ref.train(files, trainer)
    return _saved(ref)


def _ours(tok) -> dict:
    from toksmith.spec import FileFormat
    from toksmith.writers import to_bytes
    return json.loads(to_bytes(tok.spec, FileFormat.HF_JSON))


def _assert_same(ours: dict, ref: dict, label: str) -> None:
    check = Comparison(f"train_bpe like={label}: trained vocabulary, merges, added tokens",
                       against=f"{TOKENIZERS} BpeTrainer")
    compare_trained_json(check, ours, ref)
    check.finish()


def test_like_a_folder_with_tokenizer_json(fixtures, corpus, tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(write_pipeline("gpt2", fixtures, tmp_path), folder / "tokenizer.json")
    ours = toksmith.train_bpe(corpus, VOCAB_SIZE, like=str(folder), show_progress=False)
    ref = _trained_by_reference(HfTokenizer.from_file(str(folder / "tokenizer.json")), corpus)
    _assert_same(_ours(ours), ref, "folder with tokenizer.json")


def test_like_a_gpt2_folder(fixtures, corpus):
    from transformers import AutoTokenizer
    folder = fixture_file(fixtures, "hf/gpt2/vocab.json").parent
    ours = toksmith.train_bpe(corpus, VOCAB_SIZE, like=str(folder), show_progress=False)
    ref = AutoTokenizer.from_pretrained(str(folder)).backend_tokenizer      # transformers' GPT-2 pipeline
    _assert_same(_ours(ours), _trained_by_reference(ref, corpus), "GPT-2 folder (vocab.json + merges.txt)")


def test_like_an_embedded_name(corpus, tmp_path):
    converted = toksmith.load("cl100k_base").save(tmp_path / "cl100k.json")
    ours = toksmith.train_bpe(corpus, VOCAB_SIZE, like="cl100k_base", show_progress=False)
    ref = _trained_by_reference(HfTokenizer.from_file(str(converted)), corpus)
    _assert_same(_ours(ours), ref, "'cl100k_base'")
    # a loaded tokenizer of another format is taken the same way
    again = toksmith.train_bpe(corpus, VOCAB_SIZE, like=toksmith.load_embedded("cl100k_base"), show_progress=False)
    with Comparison("train_bpe like=a loaded cl100k_base", against="itself (like='cl100k_base')") as check:
        check.one("trained tokenizer.json", _ours(again), _ours(ours))


def test_texts_are_texts_files_are_files(fixtures, corpus, tmp_path):
    """A list of str given as texts= is read as texts (tokenizers' train_from_iterator);
    given as files, a str that names no file is refused with the way to pass texts."""
    like = write_pipeline("gpt2", fixtures, tmp_path)
    lines = fixture_file(fixtures, "corpus/botchan.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:400]
    ours = toksmith.train_bpe(texts=lines, vocab_size=VOCAB_SIZE, like=str(like), show_progress=False)
    ref = _trained_by_reference(HfTokenizer.from_file(str(like)), texts=lines)
    _assert_same(_ours(ours), ref, "gpt2 tokenizer.json, texts= a list of str")
    with pytest.raises(FileNotFoundError, match=r"no such corpus file .*pass them as texts="):
        toksmith.train_bpe(lines, VOCAB_SIZE, like=str(like), show_progress=False)


def test_like_forms_that_cannot_be_kept_say_what_is_expected(fixtures, corpus, tmp_path):
    with pytest.raises(toksmith.ToksmithError, match=r"\$\.model is UnigramModel; train_bpe trains a BPE model.*"
                                                     r"train_unigram"):
        toksmith.train_bpe(corpus, VOCAB_SIZE, like=str(fixture_file(fixtures, "spm/sentencepiece_test_model.model")),
                           show_progress=False)
    with pytest.raises(toksmith.ToksmithError, match=r"\$\.model is WordPieceModel"):
        toksmith.train_bpe(corpus, VOCAB_SIZE, like=str(fixture_file(fixtures, "hf/all-MiniLM-L6-v2/tokenizer.json").parent),
                           show_progress=False)
    with pytest.raises(FileNotFoundError, match=r"like='o200k': no such file, folder or embedded tokenizer; "
                                                r"like takes .*'o200k_base'"):
        toksmith.train_bpe(corpus, VOCAB_SIZE, like="o200k", show_progress=False)
    with pytest.raises(FileNotFoundError, match="no tokenizer file in this folder"):
        toksmith.train_bpe(corpus, VOCAB_SIZE, like=str(tmp_path), show_progress=False)    # an empty folder
