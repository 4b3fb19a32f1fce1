"""tiktoken rank files: recognition of OpenAI's encodings (and Llama 3's), their special
tokens as tiktoken itself defines them, and clear errors for broken files."""
from __future__ import annotations

import base64

import pytest
import tiktoken
import tiktoken.load

import toksmith
from tiktoken_ext import openai_public

from tests.conftest import fixture_file
from toksmith.errors import ModelFormatError
from toksmith.formats import detect_format, read_spec
from toksmith.formats.tiktoken import (KNOWN_ENCODINGS, PATTERN_REGEX, looks_like_rank_file, parse_tiktoken,
                                       read_tiktoken)
from toksmith.spec import FileFormat, SplitPattern

FILE_OF = {"r50k_base": "r50k_base", "p50k_base": "p50k_base", "p50k_edit": "p50k_base",
           "cl100k_base": "cl100k_base", "o200k_base": "o200k_base", "o200k_harmony": "o200k_base"}


def tiktoken_constructor(name: str, fixtures) -> dict:
    """tiktoken's own constructor dict for an encoding, its rank file read from the fixtures."""
    path = fixture_file(fixtures, f"tiktoken/{FILE_OF[name]}.tiktoken")
    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *args, **kwargs: tiktoken.load.load_tiktoken_bpe(str(path))
    try:
        return openai_public.ENCODING_CONSTRUCTORS[name]()
    finally:
        openai_public.load_tiktoken_bpe = original


@pytest.mark.parametrize("name", list(FILE_OF))
def test_openai_encodings_get_tiktokens_pattern_and_special_tokens(fixtures, name):
    want = tiktoken_constructor(name, fixtures)
    spec = read_tiktoken(fixture_file(fixtures, f"tiktoken/{FILE_OF[name]}.tiktoken"),
                         encoding=name if name != FILE_OF[name] else None)
    assert spec.encoding == name
    assert PATTERN_REGEX[spec.pattern] == want["pat_str"]
    assert spec.vocab.special_tokens == {k.encode(): v for k, v in want["special_tokens"].items()}
    ranks = want["mergeable_ranks"]
    assert sum(t is not None for t in spec.vocab.texts) == len(ranks)
    assert all(spec.vocab.texts[rank] == token for token, rank in ranks.items())


def test_recognised_by_content_not_name(fixtures, tmp_path):
    data = fixture_file(fixtures, "tiktoken/cl100k_base.tiktoken").read_bytes()
    renamed = tmp_path / "tokenizer.model"
    renamed.write_bytes(data)
    assert detect_format(data[:1024], str(renamed)) is FileFormat.TIKTOKEN
    assert read_tiktoken(renamed).encoding == "cl100k_base"
    # loaded as the rank file it is, not as a protobuf
    assert read_spec(renamed).file_format is FileFormat.TIKTOKEN
    original = toksmith.load(fixture_file(fixtures, "tiktoken/cl100k_base.tiktoken"))
    assert toksmith.load(renamed).encode("Hello, world <|endoftext|>", parse_special=True) == \
        original.encode("Hello, world <|endoftext|>", parse_special=True)


def test_llama3_tokenizer_model_is_recognised(fixtures, tmp_path):
    # Llama 3's original tokenizer.model: the first 128000 tokens of llama.cpp's llama-bpe
    # vocabulary, written as a rank file; its special tokens are the GGUF's 128000..128255.
    from toksmith._core.byte_unicode import byte_unicode_decode
    from toksmith.formats.gguf import read_gguf_metadata
    meta = read_gguf_metadata(fixture_file(fixtures, "gguf/ggml-vocab-llama-bpe.gguf"))
    texts = meta["tokenizer.ggml.tokens"]
    lines = b"".join(base64.b64encode(byte_unicode_decode(t)) + b" %d\n" % i for i, t in enumerate(texts[:128000]))
    path = tmp_path / "tokenizer.model"
    path.write_bytes(lines)
    spec = read_tiktoken(path)
    assert spec.encoding == "llama3" and spec.pattern is SplitPattern.LLAMA3
    assert spec.vocab.special_tokens == {t: 128000 + i for i, t in enumerate(texts[128000:])}


def rank_file_of(tokens: list[bytes]) -> bytes:
    """A rank file giving `tokens` the ranks 0, 1, ..."""
    return b"".join(base64.b64encode(t) + b" %d\n" % rank for rank, t in enumerate(tokens))


ALL_BYTES = [bytes([b]) for b in range(256)]


def test_other_rank_files_take_pattern_and_special_tokens():
    data = rank_file_of(ALL_BYTES + [b"ab"])
    with pytest.raises(ModelFormatError, match="pattern="):
        parse_tiktoken(data, "mine.tiktoken")
    spec = parse_tiktoken(data, "mine.tiktoken", pattern=PATTERN_REGEX[SplitPattern.CL100K],
                          special_tokens={"<|end|>": 257})
    assert spec.pattern is SplitPattern.CL100K and spec.encoding is None
    assert spec.vocab.special_tokens == {b"<|end|>": 257} and len(spec.vocab) == 258
    assert spec.vocab.build_model().encode_piece(b"ab") == [256]
    assert parse_tiktoken(data, "m", pattern=r"\w+|\s+").pattern == r"\w+|\s+"
    with pytest.raises(ModelFormatError, match="rank of the token"):
        parse_tiktoken(data, "m", pattern=SplitPattern.R50K, special_tokens={"<|end|>": 1})
    with pytest.raises(ValueError, match="not an id"):
        parse_tiktoken(data, "m", pattern=SplitPattern.R50K, special_tokens={"<|x|>": -5})
    with pytest.raises(ValueError, match="encoding="):
        parse_tiktoken(data, "m", encoding="cl200k")


@pytest.mark.parametrize("dropped", [[0xE4], [0x00, 0x01, 0x02, 0x80], list(range(0x80, 0x100))])
def test_rank_file_missing_single_bytes_is_refused(tmp_path, dropped):
    """Parity: tiktoken 0.14 loads such a file and panics at encode time on a text holding
    a missing byte ("中文测试" needs 0xE4); toksmith refuses the file, naming the bytes."""
    tokens = [t for t in ALL_BYTES if t[0] not in dropped] + [b"ab", "中".encode()]
    with pytest.raises(ModelFormatError) as err:
        parse_tiktoken(rank_file_of(tokens), "mine.tiktoken", pattern=SplitPattern.O200K)
    message = str(err.value)
    assert message.startswith("mine.tiktoken: ") and f"no token for {len(dropped)} of the 256 single bytes" in message
    assert f"0x{dropped[0]:02X}" in message and f"0x{dropped[-1]:02X}" in message
    path = tmp_path / "mine.tiktoken"
    path.write_bytes(rank_file_of(tokens))
    with pytest.raises(ModelFormatError, match="single bytes"):
        toksmith.load(path, pattern=SplitPattern.O200K)


def test_rank_file_missing_single_bytes_fails_in_tiktoken_too():
    """The reference cannot encode with such a file either: a text holding the byte panics."""
    ranks = {t: i for i, t in enumerate([t for t in ALL_BYTES if t[0] != 0xE4] + ["中".encode()])}
    enc = tiktoken.Encoding(name="gap", pat_str=PATTERN_REGEX[SplitPattern.O200K], mergeable_ranks=ranks,
                            special_tokens={})
    with pytest.raises(BaseException) as err:   # pyo3's PanicException derives from BaseException
        enc.encode("中文测试")
    assert "Panic" in type(err.value).__name__


def test_encoding_must_match_the_file(fixtures):
    data = fixture_file(fixtures, "tiktoken/r50k_base.tiktoken").read_bytes()
    with pytest.raises(ModelFormatError, match="r50k_base's ranks"):
        parse_tiktoken(data, "x.tiktoken", encoding="cl100k_base")


@pytest.mark.parametrize("data, message", [
    (b"", "empty"),
    (b"\n\n", "empty"),
    (b"YQ== 0\nYQ== 1\n", "line 2: the token b'a' is given twice .first on line 1"),
    (b"YQ== 0\nYg== 0\n", "line 2: rank 0 is given twice"),
    (b"YQ== 0\n!!!! 1\n", "line 2: the token b'!!!!' is not base64"),
    (b"YQ== 0\nYQ 1\n", "line 2: the token b'YQ' is not base64"),
    (b"YQ== 0\nYg== one\n", "line 2: the rank b'one' is not a number"),
    (b"YQ== -1\n", "line 1: the rank b'-1' is not a number"),
    (b"YQ== 99999999999999999999\n", "line 1: the rank .* is not a number from 0 to 2147483646"),
    (b"YQ== 0\nYg== 2000000000\n", "ranks are missing"),
    (b"YQ== 0\nYg== 1 2\n", "line 2: expected 'base64 rank'"),
    (b"YQ== 0\nYg", "line 2: expected 'base64 rank'"),                 # cut in a line
])
def test_broken_rank_files(data, message):
    with pytest.raises(ModelFormatError, match=message) as e:
        parse_tiktoken(data, "broken.tiktoken", pattern=SplitPattern.R50K)
    assert e.value.path == "broken.tiktoken"


def test_truncated_file_of_a_known_name(fixtures, tmp_path):
    data = fixture_file(fixtures, "tiktoken/cl100k_base.tiktoken").read_bytes()
    cut = tmp_path / "cl100k_base.tiktoken"
    cut.write_bytes(data[:data.rindex(b"\n", 0, len(data) // 2) + 1])   # whole lines, half of them
    with pytest.raises(ModelFormatError, match="truncated"):
        read_tiktoken(cut)
    # the same lines with CRLF endings: other bytes, the same ranks
    crlf = tmp_path / "o200k_base.tiktoken"
    crlf.write_bytes(fixture_file(fixtures, "tiktoken/o200k_base.tiktoken").read_bytes().replace(b"\n", b"\r\n"))
    assert read_tiktoken(crlf).encoding == "o200k_base"


def test_rank_file_detection():
    assert looks_like_rank_file(b"IQ== 0\nIg== 1\nIw== 2\n")
    assert looks_like_rank_file(b"IQ== 0\r\nIg== 1")
    assert not looks_like_rank_file(b"\n\x05<unk>\x15\x00\x00")            # a protobuf
    assert not looks_like_rank_file(b"hello world\n")
    assert not looks_like_rank_file(b"GGUF\x03\x00\x00\x00")
    assert set(KNOWN_ENCODINGS) == set(FILE_OF) | {"llama3"}
