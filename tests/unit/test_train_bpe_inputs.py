"""`toksmith.train_bpe` on bad input: clear errors naming what was wrong, nothing half-made.

The `like` pipelines are made by `tokenizers` (the reference library) in a temporary folder.
"""
from __future__ import annotations

import pytest
from tokenizers import Tokenizer as HfTokenizer
from tokenizers import normalizers, pre_tokenizers
from tokenizers.models import BPE, WordPiece

import toksmith
from toksmith.training.corpus import CorpusError


@pytest.fixture()
def like(tmp_path):
    tok = HfTokenizer(BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "like.json"
    tok.save(str(path))
    return str(path)


def test_empty_corpus_is_refused(like, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(CorpusError, match="empty"):
        toksmith.train_bpe([str(empty)], 100, like=like)
    with pytest.raises(CorpusError, match="empty"):
        toksmith.train_bpe(iter(["", "   \n"]), 100, like=like)


def test_vocab_size_below_alphabet_and_specials(like):
    with pytest.raises(ValueError, match=r"vocab_size 4 is smaller .* \(6 tokens\)"):
        toksmith.train_bpe(iter(["abc abd"]), 4, like=like, special_tokens=["[UNK]", "[PAD]"])
    tok = toksmith.train_bpe(iter(["abc abd"]), 6, like=like, special_tokens=["[UNK]", "[PAD]"])
    assert tok.vocab_size == 6


def test_non_utf8_file_names_file_and_offset(like, tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("first line\nna\u00efve\n".encode("utf-8") + b"caf\xe9\n")
    with pytest.raises(CorpusError, match=r"latin1\.txt: byte offset 21: not UTF-8"):
        toksmith.train_bpe([str(bad)], 100, like=like)


def test_non_utf8_fixture_file(fixtures, like):
    path = fixtures / "corpus" / "tricky_invalid_utf8.bin"
    with pytest.raises(UnicodeDecodeError) as python_says:
        path.read_bytes().decode("utf-8")
    with pytest.raises(CorpusError, match=rf"tricky_invalid_utf8\.bin: byte offset {python_says.value.start}: "):
        toksmith.train_bpe(str(path), 100, like=like)


def test_missing_file_and_directory(like, tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt: no such corpus file"):
        toksmith.train_bpe([str(tmp_path / "nope.txt")], 100, like=like)
    with pytest.raises(CorpusError, match="is a directory"):
        toksmith.train_bpe(str(tmp_path), 100, like=like)


def test_like_must_be_bpe_tokenizer_json(tmp_path):
    tok = HfTokenizer(WordPiece(vocab={"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer()
    path = tmp_path / "wordpiece.json"
    tok.save(str(path))
    with pytest.raises(toksmith.ToksmithError, match=r"wordpiece\.json: \$\.model is WordPieceModel"):
        toksmith.train_bpe(iter(["a"]), 10, like=str(path))
    with pytest.raises(TypeError, match="like must be"):
        toksmith.train_bpe(iter(["a"]), 10, like=42)


def test_bad_options(like):
    with pytest.raises(ValueError, match="vocab_size"):
        toksmith.train_bpe(iter(["a"]), -1, like=like)
    with pytest.raises(TypeError, match="special_tokens must be a list"):
        toksmith.train_bpe(iter(["a"]), 10, like=like, special_tokens="[UNK]")
    with pytest.raises(ValueError, match="num_threads"):
        toksmith.train_bpe(iter(["a"]), 10, like=like, num_threads=0)
    with pytest.raises(TypeError, match="text 1 of the corpus is a bytes"):
        toksmith.train_bpe(iter(["a", b"b"]), 10, like=like)


def test_trained_tokenizer_round_trips(like, tmp_path):
    """A loaded toksmith Tokenizer works as `like`, and the result saves and loads."""
    base = toksmith.train_bpe(iter(["low lower lowest newest widest"] * 5), 30, like=like)
    tok = toksmith.train_bpe(iter(["low lower lowest newest widest"] * 5), 30, like=base)
    out = tmp_path / "trained.json"
    tok.save(str(out))
    again = toksmith.load(str(out))
    assert again.encode("lowest newest") == tok.encode("lowest newest")
    assert tok.decode(tok.encode("lowest")) == "lowest"


def test_lone_surrogate_text_is_refused(like):
    with pytest.raises(CorpusError, match="text 1 of the corpus: character 2: a lone surrogate"):
        toksmith.train_bpe(iter(["ok", "ab\ud800c"]), 10, like=like)


def test_show_progress_bars(like, capsys):
    tok = toksmith.train_bpe(iter(["low lower lowest"] * 3), 20, like=like, show_progress=True)
    err = capsys.readouterr().err
    assert "Counting words" in err and "Learning merges" in err
    assert 7 < tok.vocab_size <= 20


def test_blocks_keep_lines_whole(tmp_path, monkeypatch):
    """Files are cut into blocks at line ends only, also for lines longer than a block."""
    from toksmith.training import corpus
    monkeypatch.setattr(corpus, "BLOCK_BYTES", 16)
    path = tmp_path / "lines.txt"
    text = "short\n" + "x" * 50 + "\r\n" + "é" * 20 + "\nlast line without end"
    path.write_text(text, encoding="utf-8", newline="")
    blocks = [b for batch in corpus.corpus_batches(str(path)) for b in batch.blocks]
    assert b"".join(blocks) == text.encode("utf-8")
    assert len(blocks) == 4 and all(b.endswith(b"\n") for b in blocks[:-1])


def test_corpus_comes_as_files_or_texts(like, tmp_path):
    """Issue 30 item 14: a list of str given as files names files (a text is refused with
    the way to pass it); texts= takes any iterable of str, streamed; not both, not neither."""
    texts = ["Project Gutenberg's Botchan (Master Darling), by Kin-nosuke Natsume", "low lower lowest"]
    with pytest.raises(FileNotFoundError, match=r"Project Gutenberg's Botchan .*: no such corpus file \(files= names "
                                                r"corpus files; to train on strings of text, pass them as texts="):
        toksmith.train_bpe(texts, 100, like=like)
    path = tmp_path / "corpus.txt"
    path.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    def pieces(tok):
        return [tok.id_to_piece(i) for i in range(tok.vocab_size)]
    from_file = pieces(toksmith.train_bpe([str(path)], 100, like=like))
    lines = [t + "\n" for t in texts]
    assert pieces(toksmith.train_bpe(texts=lines, vocab_size=100, like=like)) == from_file
    assert pieces(toksmith.train_bpe(texts=(t for t in lines), vocab_size=100, like=like)) == from_file
    with pytest.raises(ValueError, match="give files or texts=, not both"):
        toksmith.train_bpe([str(path)], 100, texts=lines, like=like)
    with pytest.raises(TypeError, match="no corpus: give files"):
        toksmith.train_bpe(vocab_size=100, like=like)
    with pytest.raises(TypeError, match="texts must be an iterable of str .* not a single str: pass texts=\\[text\\]"):
        toksmith.train_bpe(texts="low lower", vocab_size=100, like=like)
    with pytest.raises(TypeError, match="needs vocab_size"):
        toksmith.train_bpe(texts=lines, like=like)
