"""`toksmith train bpe`, `toksmith train unigram` and `toksmith train spm-bpe` (src/toksmith/cli_train.py), run as
``python -m toksmith.cli``.

The trained file is compared with what tokenizers' own BpeTrainer learns with the same
options on the same corpus (tests/parity/test_train_bpe_hf.py proves the trainer itself on
every pipeline; here: files, directories and stdin reach it as the trainer reads files).
"""
from __future__ import annotations

import json

import pytest
from tokenizers import Tokenizer as HfTokenizer
from tokenizers.trainers import BpeTrainer

from tests.conftest import fixture_file
from tests.parity.bpe_training_pipelines import write_pipeline
from tests.unit.test_cli import assert_cli_error, cli

CORPORA = ("botchan.txt", "man_ru.txt")
VOCAB_SIZE = 600


@pytest.fixture(scope="module")
def like(fixtures, tmp_path_factory):
    return write_pipeline("gpt2", fixtures, tmp_path_factory.mktemp("like"))


@pytest.fixture(scope="module")
def corpus_files(fixtures) -> list[str]:
    return [str(fixture_file(fixtures, f"corpus/{name}")) for name in CORPORA]


@pytest.fixture(scope="module")
def reference(like, corpus_files) -> dict:
    ref = HfTokenizer.from_file(str(like))
    ref.train(corpus_files, BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=["<pad>"], min_frequency=2,
                                       show_progress=False))
    return json.loads(HfTokenizer.from_str(ref.to_str()).to_str())   # the saved form


def _trained(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _same_model(ours: dict, ref: dict) -> None:
    assert ours["model"]["vocab"] == ref["model"]["vocab"]
    assert [tuple(m) for m in ours["model"]["merges"]] == [tuple(m) for m in ref["model"]["merges"]]
    assert ours["added_tokens"] == ref["added_tokens"]


OPTIONS = ("--vocab-size", str(VOCAB_SIZE), "--special-token", "<pad>", "--min-frequency", "2", "-q")


def test_train_files_as_tokenizers_trainer(like, corpus_files, reference, tmp_path):
    out = tmp_path / "new.json"
    result = cli("train", "bpe", "--like", str(like), "-o", str(out), *OPTIONS, *corpus_files)
    assert result.returncode == 0, result.stderr.decode()
    _same_model(_trained(out), reference)


def test_train_directory_and_stdin_read_like_files(like, corpus_files, reference, tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i, path in enumerate(corpus_files):   # names sort in the files' order
        (folder / f"{i}.txt").write_bytes(open(path, "rb").read())
    (folder / ".hidden").write_bytes(b"\xff not read")
    from_dir, from_stdin = tmp_path / "dir.json", tmp_path / "stdin.json"
    result = cli("train", "bpe", "--like", str(like), "-o", str(from_dir), *OPTIONS, str(folder))
    assert result.returncode == 0, result.stderr.decode()
    _same_model(_trained(from_dir), reference)
    text = b"".join(open(path, "rb").read() for path in corpus_files)
    result = cli("train", "bpe", "--like", str(like), "-o", str(from_stdin), *OPTIONS, stdin=text)
    assert result.returncode == 0, result.stderr.decode()
    _same_model(_trained(from_stdin), reference)


def test_train_errors_leave_no_file(like, corpus_files, tmp_path):
    out = tmp_path / "new.json"
    empty = tmp_path / "empty"
    empty.mkdir()
    base = ("train", "bpe", "--like", str(like), "-o", str(out), "-q")
    assert_cli_error(cli(*base, "--vocab-size", "100", str(empty)), "holds no corpus file")
    assert_cli_error(cli(*base, "--vocab-size", "100", str(tmp_path / "missing.txt")), "no such corpus file")
    assert_cli_error(cli(*base, "--vocab-size", "100", stdin=b"good line\nbad \xff byte\n"),
                     "<stdin>: byte offset 14: not UTF-8")
    assert_cli_error(cli(*base, "--vocab-size", "10", corpus_files[0]), "vocab_size 10 is smaller")
    assert_cli_error(cli(*base, "--vocab-size", "100", "-", corpus_files[0]), "cannot be mixed")
    assert not out.exists()
    # A target that cannot hold the result (a .model cannot hold GPT-2's byte-level pipeline).
    model = tmp_path / "new.model"
    assert_cli_error(cli("train", "bpe", "--like", str(like), "-o", str(model), "-q", "--vocab-size", "300",
                         corpus_files[0]), "cannot")
    assert not model.exists()
    assert list(tmp_path.iterdir()) == [empty]


# ------------------------------------------------------------------ toksmith train unigram

UNIGRAM_OPTIONS = ("--vocab-size", "1500", "--byte-fallback", "--control-symbols", "<sep>,<cls>", "-q")


@pytest.fixture(scope="module")
def unigram_reference(corpus_files, tmp_path_factory) -> bytes:
    """The .model toksmith.train_unigram writes for the same corpus and options (the trainer
    itself is compared with sentencepiece's in tests/parity/test_train_unigram_sentencepiece.py)."""
    import toksmith
    path = tmp_path_factory.mktemp("unigram") / "api.model"
    toksmith.train_unigram(corpus_files, 1500, byte_fallback=True, control_symbols=["<sep>", "<cls>"],
                           show_progress=False).save(path)
    return path.read_bytes()


def test_train_unigram_files_directory_stdin(corpus_files, unigram_reference, tmp_path):
    import sentencepiece as spm
    out = tmp_path / "files.model"
    result = cli("train", "unigram", "-o", str(out), *UNIGRAM_OPTIONS, *corpus_files)
    assert result.returncode == 0, result.stderr.decode()
    assert out.read_bytes() == unigram_reference
    sp = spm.SentencePieceProcessor(model_file=str(out))
    assert sp.get_piece_size() == 1500 and sp.id_to_piece(3) == "<sep>" and sp.is_byte(5)
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i, path in enumerate(corpus_files):
        (folder / f"{i}.txt").write_bytes(open(path, "rb").read())
    from_dir, from_stdin = tmp_path / "dir.model", tmp_path / "stdin.model"
    assert cli("train", "unigram", "-o", str(from_dir), *UNIGRAM_OPTIONS, str(folder)).returncode == 0
    text = b"".join(open(path, "rb").read() for path in corpus_files)
    assert cli("train", "unigram", "-o", str(from_stdin), *UNIGRAM_OPTIONS, stdin=text).returncode == 0
    assert from_dir.read_bytes() == from_stdin.read_bytes() == unigram_reference


def test_train_unigram_json_and_gguf_outputs(corpus_files, unigram_reference, tmp_path):
    import toksmith
    from tokenizers import Tokenizer as HfTokenizer
    model = tmp_path / "m.model"
    model.write_bytes(unigram_reference)
    want = toksmith.load(model)
    out = tmp_path / "tokenizer.json"
    result = cli("train", "unigram", "-o", str(out), *UNIGRAM_OPTIONS, corpus_files[0], corpus_files[1])
    assert result.returncode == 0, result.stderr.decode()
    got = toksmith.load(out)
    assert [got.id_to_piece(i) for i in range(1500)] == [want.id_to_piece(i) for i in range(1500)]
    assert HfTokenizer.from_file(str(out)).get_vocab_size() == 1500
    # llama.cpp's UGM has no byte fallback: a GGUF of this model would read text otherwise
    # (issue 30 item 3), so the trainer's GGUF output is refused and nothing is written ...
    out = tmp_path / "m.gguf"
    result = cli("train", "unigram", "-o", str(out), *UNIGRAM_OPTIONS, corpus_files[0], corpus_files[1])
    assert result.returncode == 1 and b"byte fallback" in result.stderr and not out.exists()
    # ... and without byte fallback it is written, with the pieces train_unigram gives.
    options = [option for option in UNIGRAM_OPTIONS if option != "--byte-fallback"]
    result = cli("train", "unigram", "-o", str(out), *options, corpus_files[0], corpus_files[1])
    assert result.returncode == 0, result.stderr.decode()
    want = toksmith.train_unigram(corpus_files[:2], 1500, control_symbols=["<sep>", "<cls>"], show_progress=False)
    got = toksmith.load(out)
    assert [got.id_to_piece(i) for i in range(1500)] == [want.id_to_piece(i) for i in range(1500)]


def test_train_unigram_errors_leave_no_file(corpus_files, tmp_path):
    out = tmp_path / "m.model"
    empty = tmp_path / "empty"
    empty.mkdir()
    base = ("train", "unigram", "-o", str(out), "-q")
    assert_cli_error(cli(*base, "--vocab-size", "1000", str(empty)), "holds no corpus file")
    assert_cli_error(cli(*base, "--vocab-size", "1000", str(tmp_path / "missing.txt")), "no such corpus file")
    assert_cli_error(cli(*base, "--vocab-size", "1000", stdin=b"good line\nbad \xff byte\n"),
                     "<stdin>: byte offset 14: not UTF-8")
    assert_cli_error(cli(*base, "--vocab-size", "1000", stdin=b"\n\n"), "the corpus is empty")
    assert_cli_error(cli(*base, "--vocab-size", "50", corpus_files[0]), "vocab_size 50 is smaller")
    assert_cli_error(cli(*base, "--vocab-size", "1000", "--shrinking-factor", "0.1", corpus_files[0]),
                     "shrinking_factor must be in")
    assert not out.exists()
    # a tokenizer.json cannot hold user-defined symbols: refused, nothing written
    json_out = tmp_path / "tokenizer.json"
    assert_cli_error(cli("train", "unigram", "-o", str(json_out), "-q", "--vocab-size", "1000",
                         "--user-defined-symbols", "<a>", corpus_files[0]), "USER_DEFINED")
    assert list(tmp_path.iterdir()) == [empty]


# ---------------------------------------------------------------- byte-stream (no --like)

def _api_bytes(tmp_path, name, source, vocab_size, **options) -> bytes:
    import toksmith
    path = tmp_path / name
    toksmith.train_bpe(source, vocab_size, show_progress=False, **options).save(str(path))
    return path.read_bytes()


def test_byte_stream_from_files_folders_and_stdin(corpus_files, tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i, path in enumerate(corpus_files):   # names sort in the files' order
        (folder / f"{i}.txt").write_bytes(open(path, "rb").read())
    want = _api_bytes(tmp_path, "api.json", corpus_files, VOCAB_SIZE, min_frequency=2)
    for name, inputs in (("files.json", corpus_files), ("folder.json", [str(folder)]),
                         ("corpus_dir.json", ["--corpus-dir", str(folder)])):
        out = tmp_path / name
        result = cli("train", "bpe", "--vocab-size", str(VOCAB_SIZE), "--min-frequency", "2", "-o", str(out), *inputs)
        assert result.returncode == 0, result.stderr.decode()
        assert out.read_bytes() == want, name
        # not a terminal: no progress bar, one line saying what was written
        assert result.stderr.decode().splitlines() == [f"toksmith: wrote {out} ({VOCAB_SIZE} tokens)"]
    # standard input is one sequence of bytes (here not UTF-8: a byte-stream reads bytes)
    data = open(corpus_files[1], "rb").read()[1:] + b"\xff\xfe"
    out = tmp_path / "stdin.json"
    result = cli("train", "bpe", "--vocab-size", "400", "--ascii-only", "-q", "-o", str(out), stdin=data)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stderr == b""
    assert out.read_bytes() == _api_bytes(tmp_path, "stdin_api.json", iter([data]), 400, ascii_only=True)


def test_byte_stream_errors_leave_no_file(corpus_files, like, tmp_path):
    out = tmp_path / "new.json"
    empty = tmp_path / "empty"
    empty.mkdir()
    base = ("train", "bpe", "-o", str(out), "-q")
    assert_cli_error(cli(*base, "--vocab-size", "300", "--corpus-dir", str(empty)), "holds no corpus file")
    assert_cli_error(cli(*base, "--vocab-size", "300", "--corpus-dir", corpus_files[0]), "not a directory")
    assert_cli_error(cli(*base, "--vocab-size", "300", stdin=b""), "the corpus is empty")
    assert_cli_error(cli(*base, "--vocab-size", "200", corpus_files[0]), "vocab_size 200 is smaller", "260 tokens")
    assert_cli_error(cli(*base, "--vocab-size", "300", "--special-token", "<s>", corpus_files[0]),
                     "special_tokens is an option of a like= pipeline")
    assert_cli_error(cli(*base, "--vocab-size", "300", "--like", str(like), "--ascii-only", corpus_files[0]),
                     "ascii_only is an option of the byte-stream configuration")
    assert not out.exists()
    # a .model cannot hold the byte-level pipeline: nothing written
    model = tmp_path / "new.model"
    assert_cli_error(cli("train", "bpe", "-o", str(model), "-q", "--vocab-size", "300", corpus_files[0]), "cannot")
    assert list(tmp_path.iterdir()) == [empty]


# ------------------------------------------------------------------ toksmith train spm-bpe

SPM_BPE_OPTIONS = ("--vocab-size", "1500", "--byte-fallback", "--user-defined-symbols", "<sep>", "-q")


def test_train_spm_bpe_files_and_stdin_as_the_api(corpus_files, tmp_path):
    """The CLI writes what toksmith.train_sentencepiece_bpe writes (the trainer itself is
    compared with spm_train in tests/parity/test_train_spm_bpe_sentencepiece.py)."""
    import sentencepiece as spm

    import toksmith
    api = tmp_path / "api.model"
    toksmith.train_sentencepiece_bpe(corpus_files, 1500, byte_fallback=True, user_defined_symbols=["<sep>"],
                                     show_progress=False).save(api)
    out, from_stdin = tmp_path / "files.model", tmp_path / "stdin.model"
    result = cli("train", "spm-bpe", "-o", str(out), *SPM_BPE_OPTIONS, *corpus_files)
    assert result.returncode == 0, result.stderr.decode()
    text = b"".join(open(path, "rb").read() for path in corpus_files)
    assert cli("train", "spm-bpe", "-o", str(from_stdin), *SPM_BPE_OPTIONS, stdin=text).returncode == 0
    assert out.read_bytes() == from_stdin.read_bytes() == api.read_bytes()
    sp = spm.SentencePieceProcessor(model_file=str(out))
    assert sp.get_piece_size() == 1500 and sp.id_to_piece(3) == "<sep>" and sp.is_byte(4)
    json_out = tmp_path / "tokenizer.json"
    assert cli("train", "spm-bpe", "-o", str(json_out), "-q", "--vocab-size", "1500", *corpus_files).returncode == 0
    assert toksmith.load(json_out).vocab_size == 1500


def test_train_spm_bpe_errors_leave_no_file(corpus_files, tmp_path):
    out = tmp_path / "m.model"
    base = ("train", "spm-bpe", "-o", str(out), "-q")
    assert_cli_error(cli(*base, "--vocab-size", "1000", stdin=b"\n\n"), "the corpus is empty")
    assert_cli_error(cli(*base, "--vocab-size", "1000", stdin=b"good line\nbad \xff byte\n"), "not UTF-8")
    assert_cli_error(cli(*base, "--vocab-size", "50", corpus_files[0]), "vocab_size 50 is smaller")
    assert_cli_error(cli(*base, "--vocab-size", "100000", corpus_files[0]), "Vocabulary size too high")
    # a Unigram-only flag is not a flag of the BPE trainer
    result = cli(*base, "--vocab-size", "1000", "--shrinking-factor", "0.7", corpus_files[0])
    assert result.returncode == 2 and b"unrecognized arguments" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_train_unigram_seed_file_flag(corpus_files, tmp_path):
    """--seed-sentencepieces-file reaches train_unigram (the model equals the API's); the
    BPE trainer has no such flag (sentencepiece: Unigram only)."""
    import toksmith
    seeds = tmp_path / "seeds.tsv"
    words = {w for path in corpus_files for w in open(path, encoding="utf-8").read().split()}
    seeds.write_text("".join(f"\u2581{w}\t{len(w)}\n" for w in sorted(words)), encoding="utf-8")
    api = tmp_path / "api.model"
    toksmith.train_unigram(corpus_files, 1000, seed_sentencepieces_file=str(seeds), show_progress=False).save(api)
    out = tmp_path / "cli.model"
    result = cli("train", "unigram", "-o", str(out), "-q", "--vocab-size", "1000", "--seed-sentencepieces-file",
                 str(seeds), *corpus_files)
    assert result.returncode == 0, result.stderr.decode()
    assert out.read_bytes() == api.read_bytes()
    bad = tmp_path / "bpe.model"
    result = cli("train", "spm-bpe", "-o", str(bad), "-q", "--vocab-size", "1000", "--seed-sentencepieces-file",
                 str(seeds), *corpus_files)
    assert result.returncode == 2 and b"unrecognized arguments" in result.stderr and not bad.exists()
    assert_cli_error(cli("train", "unigram", "-o", str(bad), "-q", "--vocab-size", "1000",
                         "--seed-sentencepieces-file", str(tmp_path / "none.tsv"), *corpus_files), "none.tsv")
    assert not bad.exists()
