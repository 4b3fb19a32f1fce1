"""seed_sentencepieces_file: how the file is read, and its errors (the trained models are
compared with sentencepiece's in tests/parity/test_train_unigram_sentencepiece.py).

The rules under test are sentencepiece 0.2.3's Trainer::LoadSeedSentencePiecesFromFile,
read from its source: `piece<TAB>frequency` lines, the frequency parsed as absl's
SimpleAtoi does, a piece scored frequency x its length in characters, invalid or repeated
pieces skipped, reading stopped once seed_sentencepiece_size seeds are held.
"""
from __future__ import annotations

import struct

import pytest

import toksmith
from tests.unit.test_train_unigram_inputs import TEXTS
from toksmith.training.spm_options import SpmTrainerSpec
from toksmith.training.unigram_seed_file import float_of_integer, read_seed_file

CHARS = [(b"a", 50.0), (b"b", 20.0)]


def _read(tmp_path, content: bytes, **spec):
    path = tmp_path / "seeds.tsv"
    path.write_bytes(content)
    return read_seed_file(path, CHARS, SpmTrainerSpec(vocab_size=100, **spec))


def test_pieces_scored_by_frequency_times_characters_and_ranked(tmp_path):
    # SimpleAtoi: a sign and ASCII whitespace around the digits ("\r" of a CRLF file);
    # fields after the second are ignored
    pieces, scores = _read(tmp_path, "\u2581ab\t3\nba\t+10 \r\nbb\t 5\n\u2581\u00e9\t6\nab\t4\textra\n".encode())
    ws_ab, ws_e = "\u2581ab".encode(), "\u2581\u00e9".encode()
    # score = frequency x characters; best first, ties by the smaller UTF-8
    assert list(zip(pieces, scores)) == [(b"a", 50.0), (b"b", 20.0), (b"ba", 20.0), (ws_e, 12.0), (b"bb", 10.0),
                                         (ws_ab, 9.0), (b"ab", 8.0)]


def test_invalid_and_repeated_pieces_are_skipped(tmp_path):
    content = "a b\t9\nx\u2585\t9\na\t9\nab\t1\nab\t7\n" + "\u2581" * 3 + "x\t9\n" + "y" * 17 + "\t9\nab日\t9\n"
    pieces, _ = _read(tmp_path, content.encode())
    # a space, U+2585, a corpus character again, ab twice (the first kept), U+2581 inside,
    # 17 characters (max 16), two scripts in one piece
    assert pieces == [b"a", b"b", b"ab"]
    pieces, scores = _read(tmp_path, ("y" * 17 + "\t9\n").encode(), max_sentencepiece_length=17)
    assert pieces == [b"y" * 17, b"a", b"b"] and scores[0] == 9 * 17


def test_reading_stops_at_seed_sentencepiece_size(tmp_path):
    content = b"ab\t1\nba\t2\nbb\t3\nthis line has no tab\n"
    pieces, _ = _read(tmp_path, content, seed_sentencepiece_size=4)
    # the characters count: two of the file's pieces fit, and the bad line is never read
    assert sorted(pieces) == [b"a", b"ab", b"b", b"ba"]
    with pytest.raises(ValueError, match=r"seeds.tsv:4: expected <piece> <tab> <frequency>"):
        _read(tmp_path, content, seed_sentencepiece_size=5)


@pytest.mark.parametrize("line,message", [
    (b"ab", "expected <piece> <tab> <frequency>"),
    (b"", "expected <piece> <tab> <frequency>"),
    (b"ab\t0", "the frequency must be an integer from 1"),
    (b"ab\t-3", "the frequency must be an integer from 1"),
    (b"ab\t1.5", "the frequency must be an integer from 1"),
    (b"ab\t1_000", "the frequency must be an integer from 1"),
    (b"ab\t9223372036854775808", "the frequency must be an integer from 1"),
    (b"a\xffb\t3", "the piece is not UTF-8 (byte 1)"),
])
def test_bad_lines_name_the_file_and_line(tmp_path, line, message):
    with pytest.raises(ValueError, match=r"seeds.tsv:2: " + message.replace("(", r"\(").replace(")", r"\)")):
        _read(tmp_path, b"ab\t1\n" + line + b"\nba\t2\n")


def test_largest_frequency_and_c_float_rounding(tmp_path):
    pieces, scores = _read(tmp_path, b"ab\t9223372036854775807\n")
    # int64 max x 2 characters, as a size_t: 2^64 - 2, nearest float 2^64
    assert pieces[0] == b"ab" and scores[0] == float(1 << 64)
    # one rounding to 24 bits: 2^60 + 2^36 + 1 is above the halfway point 2^60 + 2^36
    # (rounding to a double first would lose the 1 and then tie to even, down to 2^60)
    assert float_of_integer((1 << 60) + (1 << 36) + 1) == (1 << 60) + (1 << 37)
    assert float_of_integer((1 << 60) + (1 << 36)) == 1 << 60
    for n in (0, 1, (1 << 24) - 1, (1 << 24) + 1, 123456789, (1 << 53) + 3):
        if n < (1 << 53):
            assert float_of_integer(n) == struct.unpack("f", struct.pack("f", float(n)))[0]


def test_train_unigram_with_a_seed_file(tmp_path):
    seeds = tmp_path / "seeds.tsv"
    words = sorted({w for text in TEXTS for w in text.split()})
    seeds.write_text("".join(f"\u2581{w}\t{len(w)}\n{w[:2]}\t3\n" for w in words), encoding="utf-8")
    tok = toksmith.train_unigram(iter(TEXTS), 150, seed_sentencepieces_file=seeds, show_progress=False)
    allowed = {"\u2581" + w for w in words} | {w[:2] for w in words} | {c for text in TEXTS for c in text}
    learned = [tok.id_to_piece(i) for i in range(3, tok.vocab_size)]
    assert len(learned) == 147 and all(p in allowed or p == "\u2581" for p in learned)
    path = tmp_path / "m.model"
    tok.save(path)
    from sentencepiece import sentencepiece_model_pb2 as pb
    proto = pb.ModelProto()
    proto.ParseFromString(path.read_bytes())
    assert proto.trainer_spec.seed_sentencepieces_file == str(seeds)


def test_missing_seed_file_fails_before_reading_the_corpus(tmp_path):
    def corpus():
        raise AssertionError("the corpus was read")
        yield ""
    with pytest.raises(FileNotFoundError, match="nowhere.tsv"):
        toksmith.train_unigram(corpus(), 150, seed_sentencepieces_file=tmp_path / "nowhere.tsv",
                               show_progress=False)
