"""`toksmith.train_bpe(..., like=None)` (the byte-stream configuration): what it reads,
and bad input refused with clear errors before any file is written.

tests/parity/test_train_byte_stream.py proves the vocabulary and merges against a naive
implementation of the rules and the trained file against `tokenizers`; here: the kinds of
input reach the trainer as the rules say (a file or item is one sequence of bytes).
"""
from __future__ import annotations

import io
import json
import os

import pytest

import toksmith
from tests.conftest import fixture_file
from toksmith.training.corpus import CorpusError


def _model(tok) -> dict:
    """The trained tokenizer.json's model section (vocabulary and merges)."""
    from toksmith.writers import to_bytes
    from toksmith.spec import FileFormat
    return json.loads(to_bytes(tok.spec, FileFormat.HF_JSON))["model"]


def _train(source, vocab_size=300, **options) -> dict:
    return _model(toksmith.train_bpe(source, vocab_size, show_progress=False, num_threads=2, **options))


@pytest.fixture()
def two_files(fixtures, tmp_path):
    """Two slices of fixture corpora, the second not valid UTF-8 (cut inside a character)."""
    a = fixture_file(fixtures, "corpus/botchan.txt").read_bytes()[:3000]
    ja = fixture_file(fixtures, "corpus/man_ja.txt").read_bytes()
    at = next(i for i in range(5000, len(ja)) if 0x80 <= ja[i] < 0xC0)     # inside a character
    b = ja[at:at + 3000]
    with pytest.raises(UnicodeDecodeError):
        b.decode("utf-8")
    paths = [tmp_path / "a.txt", tmp_path / "b.txt"]
    paths[0].write_bytes(a)
    paths[1].write_bytes(b)
    return paths, [a, b]


def test_every_kind_of_input_is_one_sequence_per_file_or_item(two_files, tmp_path):
    paths, data = two_files
    want = _train([str(p) for p in paths])
    assert _train(iter(data)) == want                                    # bytes items
    assert _train(iter([io.BytesIO(d) for d in data])) == want           # binary streams
    assert _train(str(tmp_path)) == want                                 # a directory, in path order
    assert _train([tmp_path]) == want
    assert _train(iter([data[0].decode("utf-8"), data[1]])) == want      # str items are their UTF-8
    # a hidden file in the folder is not read
    (tmp_path / ".hidden").write_bytes(b"zz" * 1000)
    assert _train(str(tmp_path)) == want


def test_no_merge_crosses_a_file_or_item(tmp_path):
    (tmp_path / "1.txt").write_bytes(b"xxxx")
    (tmp_path / "2.txt").write_bytes(b"yyyy")
    apart = _train(str(tmp_path), 280)
    together = _train(iter([b"xxxxyyyy"]), 280)
    def spans(model):
        return any("x" in text and "y" in text for text in model["vocab"])
    assert not spans(apart) and spans(together)


def test_duplicate_items_count_as_often_as_they_occur():
    # "ab" in 3 items beats "cd" in 2 (the duplicates are kept once, with their count)
    model = _train(iter([b"ab", b"cd", b"ab", b"cd", b"ab"]), 261)
    assert model["merges"] == [["a", "b"]]


def test_invalid_utf8_is_read_as_bytes(fixtures):
    path = fixture_file(fixtures, "corpus/tricky_invalid_utf8.bin")
    data = path.read_bytes()
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    model = _train(str(path), 320)
    assert len(model["vocab"]) == 320
    assert model == _train(iter([data]), 320)
    ascii_model = _train(str(path), 150, ascii_only=True)
    assert all(ord(c) < 0x7F for text in ascii_model["vocab"] if not text.startswith("<|") for c in text)


def test_empty_corpus_is_refused(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(CorpusError, match="the corpus is empty"):
        toksmith.train_bpe(str(empty), 300)
    with pytest.raises(CorpusError, match="the corpus is empty"):
        toksmith.train_bpe(iter(["", b""]), 300)
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(CorpusError, match="holds no corpus file"):
        toksmith.train_bpe(str(folder), 300)
    (folder / ".hidden").write_bytes(b"text")
    if hasattr(os, "mkfifo"):
        os.mkfifo(folder / "pipe")                      # not a regular file: never opened
    (folder / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(CorpusError, match="holds no corpus file"):
        toksmith.train_bpe([str(folder)], 300)
    with pytest.raises(CorpusError, match=r"none of the corpus's 6 bytes is in the ascii_only alphabet"):
        toksmith.train_bpe(iter(["日本"]), 300, ascii_only=True)


def test_unreadable_file_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "secret.txt"
    path.write_bytes(b"text")
    path.chmod(0)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # root reads every file: the permission check is made to answer as for another user
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if os.fspath(p) == str(path)
                            else real_access(p, mode, **kw))
    with pytest.raises(CorpusError, match=r"secret\.txt: not readable"):
        toksmith.train_bpe(str(tmp_path), 300)


def test_missing_file_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt: no such corpus file"):
        toksmith.train_bpe([str(tmp_path / "nope.txt")], 300)


def test_vocab_size_below_base_vocabulary():
    with pytest.raises(ValueError, match=r"vocab_size 259 is smaller than the base vocabulary .*: 260 tokens"):
        toksmith.train_bpe(iter(["abc"]), 259)
    with pytest.raises(ValueError, match=r"vocab_size 101 is smaller .*ascii_only.*: 102 tokens"):
        toksmith.train_bpe(iter(["abc"]), 101, ascii_only=True)
    assert toksmith.train_bpe(iter(["abc"]), 260).vocab_size == 260
    tok = toksmith.train_bpe(iter(["abc"]), 102, ascii_only=True)
    assert tok.vocab_size == 102
    assert [tok.id_to_piece(i) for i in (0, 3, 4, 5, 6, 7, 101)] == ["<|unk|>", "<|pad|>", "\t", "\n", "\r", " ", "~"]


def test_min_frequency_stops_training():
    model = _train(iter(["abab cdcd"]), 400, min_frequency=2)
    assert model["merges"][0] == ["a", "b"] and len(model["vocab"]) < 400
    assert _train(iter(["abcd"]), 400, min_frequency=2)["merges"] == []


def test_special_token_text_is_never_learnt():
    # "<|eos|>" stands 64 times, each of its neighbours 8 times: merging it from "<|", "eo",
    # "s|" and ">" leaves ("<|eo", "s|>") the most frequent pair, which is never merged
    texts = [f"{c}<|eos|>{d}" for c in "abcdefgh" for d in "ijklmnop"]
    model = _train(iter(texts), 600)
    merges = [tuple(m) for m in model["merges"]]
    assert merges[:5] == [("<", "|"), ("e", "o"), ("s", "|"), ("<|", "eo"), ("s|", ">")]
    assert ("<|eo", "s|>") not in merges and model["vocab"]["<|eos|>"] == 2
    assert "a<|eos|>i" in model["vocab"]            # inside a longer token it is plain text


def test_pipeline_options_are_refused_without_like():
    for name, value in (("special_tokens", ["<s>"]), ("initial_alphabet", ["a"]), ("limit_alphabet", 100),
                        ("max_token_length", 8), ("continuing_subword_prefix", "##"), ("end_of_word_suffix", "</w>")):
        with pytest.raises(ValueError, match=rf"{name} is an option of a like= pipeline"):
            toksmith.train_bpe(iter(["abc"]), 300, **{name: value})


def test_ascii_only_is_refused_with_like(tmp_path):
    from tokenizers import Tokenizer as HfTokenizer
    from tokenizers.models import BPE
    like = tmp_path / "like.json"
    HfTokenizer(BPE()).save(str(like))
    with pytest.raises(ValueError, match="ascii_only is an option of the byte-stream configuration"):
        toksmith.train_bpe(iter(["abc"]), 300, like=str(like), ascii_only=True)


def test_bad_arguments():
    with pytest.raises(ValueError, match="vocab_size"):
        toksmith.train_bpe(iter(["a"]), -1)
    with pytest.raises(TypeError, match="min_frequency"):
        toksmith.train_bpe(iter(["a"]), 300, min_frequency="2")
    with pytest.raises(ValueError, match="num_threads"):
        toksmith.train_bpe(iter(["a"]), 300, num_threads=0)
    with pytest.raises(TypeError, match="ascii_only must be a bool"):
        toksmith.train_bpe(iter(["a"]), 300, ascii_only="yes")
    with pytest.raises(TypeError, match="item 1 of the corpus is a int"):
        toksmith.train_bpe(iter(["a", 5]), 300)
    with pytest.raises(TypeError, match="files must be a path or a list of paths"):
        toksmith.train_bpe(42, 300)
    with pytest.raises(CorpusError, match="text 0 of the corpus: character 1: a lone surrogate"):
        toksmith.train_bpe(iter(["a\ud800"]), 300)
    with pytest.raises(TypeError, match="a corpus stream must be binary"):
        toksmith.train_bpe(iter([io.StringIO("text")]), 300)


def test_progress_bars_only_when_asked(capsys):
    toksmith.train_bpe(iter(["abcabc" * 50]), 300, show_progress=True)
    err = capsys.readouterr().err
    assert "Reading bytes" in err and "Learning merges" in err
    toksmith.train_bpe(iter(["abcabc" * 50]), 300, show_progress=False)
    assert capsys.readouterr().err == ""
    toksmith.train_bpe(iter(["abcabc" * 50]), 300)       # stderr is not a terminal here: quiet
    assert capsys.readouterr().err == ""


def test_long_tokens_are_not_copied_over_and_over():
    """Issue 30 item 10: one repetitive line learns tokens as long as the corpus ("abc"
    merged up to 3 x 2**k bytes: 2.8 bytes of tokens per corpus byte); the trained file
    is made from them without a Python copy per stage (texts, dict, JSON str, its UTF-8):
    the Python objects alive at once stay under 20 bytes per corpus byte (28 before)."""
    import tracemalloc
    size = 1 << 20
    line = (b"abc" * (size // 3 + 1))[:size]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        tok = toksmith.train_bpe(iter([line]), 400, show_progress=False, num_threads=1)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert max(len(tok.decode_bytes([i])) for i in range(tok.vocab_size)) > size // 2     # the long tokens are learnt
    assert peak < 20 * size, f"{peak / size:.1f} bytes of Python objects per corpus byte"
