"""RWKV vocabulary files: the .txt literal parser against Python's own, and bad files
(.txt and GGUF) refused with a `ModelFormatError` naming the file and the line or token."""
from __future__ import annotations

import ast
import os
import random

import pytest

import toksmith
from tests.conftest import fixture_file
from tests.rwkv_gguf import write_rwkv_gguf
from toksmith.formats.rwkv import python_literal_bytes
from toksmith.spec import FileFormat

NORMAL = 1


def literal_value(literal: str) -> bytes:
    """What the rwkv package makes of a literal (it evals it; literal_eval is the safe same)."""
    value = ast.literal_eval(literal)
    return value.encode("utf-8") if isinstance(value, str) else value


def test_every_literal_of_the_world_vocabulary_reads_as_python_reads_it(fixtures):
    text = fixture_file(fixtures, "rwkv/rwkv_vocab_v20230424.txt").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) == 65529
    for line in lines:
        literal = line[line.index(" ") + 1:line.rindex(" ")]
        assert python_literal_bytes(literal) == literal_value(literal), line


def test_reprs_of_random_values_read_back():
    rnd = random.Random(1)
    alphabet = "ab'\"\\ \t\n\r\x00\x7f\x80\xff\u0100\u2028\u4e00\U0001f600"
    for _ in range(3000):
        data = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 12)))
        assert python_literal_bytes(repr(data)) == data
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12)))
        assert python_literal_bytes(repr(text)) == text.encode("utf-8")


@pytest.mark.parametrize("literal", [
    r"'\a\b\f\v\0\01\101\377'", r"b'\a\b\f\v\0\01\101\377'", r"'\777'", r"'\N{BULLET}\u00e9\U0001F600'",
    r"b'\N{BULLET}\u00e9'", r"'\q\8\ '", r"b'\q'", '"it\'s"', "'say \"hi\"'", r"B'\x7F'", "''", 'b""',
    r"'\\'", r"'\''",
])
@pytest.mark.filterwarnings("ignore:invalid:DeprecationWarning")   # Python's, for \q and \777
def test_escape_forms_read_as_python_reads_them(literal):
    assert python_literal_bytes(literal) == literal_value(literal)


def write_txt(tmp_path, lines: list[str], name: str = "rwkv_vocab_test.txt"):
    path = tmp_path / name
    path.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    return path


GOOD = ["1 'a' 1", "2 'b' 1", "3 'ab' 2"]


@pytest.mark.parametrize("bad, where", [
    ("4 'abc 3", "line 4 (id 4): \"'abc\" is not a Python str or bytes literal"),
    ("4 __import__('os').getcwd() 1", "line 4 (id 4): \"__import__('os').getcwd()\" is not a Python"),
    ("4 'abc' 4", "line 4 (id 4): token 'abc' is 3 bytes, the line says 4"),
    ("3 'c' 1", "line 4: id 3 is given twice"),
    ("x4 'c' 1", "line 4: the id 'x4' is not a decimal integer"),
    ("-4 'c' 1", "line 4: the id '-4' is not a decimal integer"),
    ("4 'c' one", "line 4 (id 4): the length 'one' is not a decimal integer"),
    ("4 'c'", "line 4: \"4 'c'\" is not 'id literal length'"),
    ("", "line 4: '' is not 'id literal length'"),
    ("4 b'\u00e9' 2", "a bytes literal holds only ASCII characters"),
    (r"4 '\x4' 1", "truncated \\xXX escape"),
    (r"4 '\ud800' 3", "a lone surrogate has no UTF-8 bytes"),
    ("4 'a\\' 1", "the closing ' is escaped"),
    ("4 'a'b' 3", "an unescaped ' ends the literal"),
    ("99999999 'c' 1", "line 4: the id 99999999 is too large"),
    (r"4 b'\777' 1", "octal escape \\777 is past a byte's range"),
])
def test_bad_txt_lines_are_refused_naming_the_line(tmp_path, bad, where):
    path = write_txt(tmp_path, GOOD + [bad] + ["5 'z' 1"])
    with pytest.raises(toksmith.ModelFormatError) as info:
        toksmith.load(path)
    assert str(info.value).startswith(f"{path}: ")
    assert where in str(info.value)


def test_txt_that_is_not_utf8_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "rwkv_vocab_test.txt"
    path.write_bytes(b"1 'a' 1\n2 '\xff' 1\n")
    with pytest.raises(toksmith.ModelFormatError, match=r"line 2: not UTF-8 \(byte 0xff"):
        toksmith.load(path)


def test_txt_without_lines_is_refused(tmp_path):
    from toksmith.formats.rwkv import parse_rwkv_vocab
    with pytest.raises(toksmith.ModelFormatError, match="x.txt: the vocabulary has no lines"):
        parse_rwkv_vocab(b"", "x.txt")
    path = tmp_path / "rwkv_vocab_test.txt"
    path.write_bytes(b"\n")
    with pytest.raises(toksmith.ModelFormatError, match="line 1: '' is not 'id literal length'"):
        toksmith.load(path)


def test_txt_is_recognised_by_content_whatever_its_name(tmp_path):
    path = write_txt(tmp_path, GOOD, name="vocab.txt")
    tok = toksmith.load(path)
    assert tok.spec.file_format is FileFormat.RWKV_VOCAB
    assert tok.encode("aab") == [1, 3]
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(b"1 'a' 1\r\n2 b'b' 1\r\n")
    assert toksmith.load(crlf).encode("ab") == [1, 2]


def test_bert_vocab_txt_is_not_taken_for_rwkv(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[PAD]\n[unused0]\n[UNK]\nthe\n##s\n")
    with pytest.raises(toksmith.ModelFormatError) as info:
        toksmith.load(path)
    assert "rwkv" not in str(info.value).lower()


def test_txt_flags_change_nothing_and_rules_are_its_own(tmp_path):
    """The .txt vocabulary has no special tokens, no BOS/EOS."""
    tok = toksmith.load(write_txt(tmp_path, GOOD + ["4 '<s>' 3", "5 '<' 1", "6 's' 1", "7 '>' 1"]))
    for flags in ((False, False), (True, False), (False, True), (True, True)):
        assert tok.encode("ab<s>", add_special=flags[0], parse_special=flags[1]) == [3, 4]
    assert tok.decode([3, 4], skip_special=True) == tok.decode([3, 4]) == "ab<s>"
    assert tok.special_tokens == ()
    with pytest.raises(toksmith.UnsupportedFeatureError, match="rwkv's rules only"):
        toksmith.load(write_txt(tmp_path, GOOD), rules="llama.cpp")


def test_txt_byte_without_token_fails_the_encode(tmp_path):
    """The rwkv package fails on such a byte (TRIE.find_longest: UnboundLocalError); so does
    toksmith, with a ValueError; other texts encode."""
    from rwkv.rwkv_tokenizer import TRIE_TOKENIZER
    path = write_txt(tmp_path, GOOD + ["4 'cd' 2"])
    tok, ref = toksmith.load(path), TRIE_TOKENIZER(str(path))
    assert tok.encode("abcd") == ref.encode("abcd") == [3, 4]
    for text in ("abz", "abc"):
        with pytest.raises(UnboundLocalError):
            ref.encode(text)
        with pytest.raises(ValueError, match="no token of the vocabulary matches"):
            tok.encode(text)


# ------------------------------------------------------------------ bad GGUF vocabularies

def tiny_gguf(tmp_path, tokens: list[bytes], **kwargs) -> str:
    return write_rwkv_gguf(tmp_path / "tiny.gguf", tokens, [NORMAL] * len(tokens), **kwargs)


def test_gguf_with_a_text_twice_is_refused(tmp_path):
    path = tiny_gguf(tmp_path, [b"\\n", b"a", b"b", b"a"])
    with pytest.raises(toksmith.ModelFormatError, match=r"tokenizer.ggml.tokens\[3\] b'a' is a text already defined"):
        toksmith.load(path)


def test_gguf_where_llama_cpp_would_loop_is_refused(tmp_path):
    path = tiny_gguf(tmp_path, [b"\\n", b"a", b"\\xe6\\x97\\xa5"])
    with pytest.raises(toksmith.ModelFormatError) as info:
        toksmith.load(path)
    message = str(info.value)
    assert message.count(os.fspath(path)) == 1
    assert "token 2 b'\\\\xe6\\\\x97\\\\xa5' starts with the byte 0xe6" in message and "loop" in message


def test_gguf_texts_with_equal_bytes_keep_the_later_id(tmp_path):
    """\\x61 and a are different texts (llama.cpp loads them) with the same bytes."""
    tok = toksmith.load(tiny_gguf(tmp_path, [b"\\n", b"a", b"\\x61", b"b"]))
    assert tok.encode("ab") == [2, 3]
    assert tok.decode([1, 2]) == "aa"


def test_gguf_options_that_do_not_apply(tmp_path):
    path = tiny_gguf(tmp_path, [b"\\n", b"a"])
    with pytest.raises(toksmith.UnsupportedModelError, match="pre='gpt2' applies to BPE vocabularies only"):
        toksmith.load(path, pre="gpt2")
    with pytest.raises(toksmith.UnsupportedFeatureError, match="llama.cpp's rules only"):
        toksmith.load(path, rules="rwkv")


def test_gguf_rwkv_tokenizer_pickles(tmp_path):
    import pickle
    tok = toksmith.load(tiny_gguf(tmp_path, [b"\\n", b"a", b"b", b"ab"]))
    assert pickle.loads(pickle.dumps(tok)).encode("abba\n") == tok.encode("abba\n") == [3, 2, 1, 0]
