"""Malformed PLaMo-2 GGUF vocabularies: a `ModelFormatError` naming the file and what is
wrong (the token, the key), never a crash; where llama.cpp refuses the same file, the test
checks that it does (tests/llama_cpp_reference.py)."""
from __future__ import annotations

import pytest

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.plamo2_gguf import write_plamo2_gguf
from tests.unit.gguf_writer import bool_kv, f32s_kv, i32s_kv, str_kv, strings_kv, u32_kv, write_gguf
from tests.unit.test_formats_errors import expect_format_error

PIECES = [(b"a", -1.0, 1), (b"b", -2.0, 1), (b"ab", -2.5, 1)]


def llama_cpp_refuses(path) -> bool:
    try:
        llama_cpp_reference.LlamaCppVocab(path).close()
    except ValueError:
        return True
    return False


def plamo2_tokens(drop: bytes | None = None) -> tuple[list[bytes], list[float], list[int]]:
    tokens = [b"<|plamo:unk|>", b"<|plamo:bos|>", b"<|plamo:eos|>", b"<|plamo:pad|>", b"<|plamo:op|>"]
    types = [2, 3, 3, 3, 3]
    tokens += [b"<0x%02X>" % b for b in range(256)]
    types += [6] * 256
    tokens += [b"a", b"b", b"ab"]
    types += [1, 1, 1]
    scores = [0.0] * (len(tokens) - 3) + [-1.0, -2.0, -2.5]
    if drop is not None:
        i = tokens.index(drop)
        del tokens[i], types[i], scores[i]
    return tokens, scores, types


def plamo2_kvs(tokens, scores, types, **replace) -> list[bytes]:
    kvs = {"general.architecture": str_kv("general.architecture", "plamo2"),
           "tokenizer.ggml.model": str_kv("tokenizer.ggml.model", "plamo2"),
           "tokenizer.ggml.tokens": strings_kv("tokenizer.ggml.tokens", tokens),
           "tokenizer.ggml.scores": f32s_kv("tokenizer.ggml.scores", scores),
           "tokenizer.ggml.token_type": i32s_kv("tokenizer.ggml.token_type", types)}
    kvs.update(replace)
    return list(kvs.values())


def test_well_formed_file_loads(tmp_path):
    path = write_gguf(tmp_path / "ok.gguf", plamo2_kvs(*plamo2_tokens()))
    tok = toksmith.load(path)
    assert tok.encode("abab") == llama_cpp_reference.load_vocab(path).tokenize(b"abab", True, False)


@pytest.mark.parametrize("missing", [b"<0x41>", b"<0x00>", b"<0xFF>"])
def test_missing_byte_token_is_named(tmp_path, missing):
    path = write_gguf(tmp_path / "nobyte.gguf", plamo2_kvs(*plamo2_tokens(drop=missing)))
    err = expect_format_error(path)
    assert missing.decode() in err.detail
    assert llama_cpp_refuses(path)   # "Byte token for <0x..> is not set"


def test_byte_token_with_id_0_counts_as_unset(tmp_path):
    """llama.cpp tells an unset byte by its token id 0, so a byte token at id 0 is refused."""
    path = write_plamo2_gguf(tmp_path / "byte0.gguf", PIECES, specials=())
    err = expect_format_error(path)
    assert "<0x00>" in err.detail and "token 0" in err.detail
    assert llama_cpp_refuses(path)


def test_code_point_past_u10ffff_is_refused(tmp_path):
    path = write_plamo2_gguf(tmp_path / "cpt.gguf", PIECES + [(b"x\xf5\x80\x80\x80", -1.0, 1)])
    err = expect_format_error(path)
    assert "U+10FFFF" in err.detail and "x\\xf5" in err.detail
    assert llama_cpp_refuses(path)   # unicode_cpt_to_utf8 throws "invalid codepoint"


def test_score_outside_int32_is_refused(tmp_path):
    """round(score * 1e4) past int32 is undefined behaviour in llama.cpp: refused, naming the token."""
    path = write_plamo2_gguf(tmp_path / "score.gguf", PIECES + [(b"big", 3e5, 1)])
    err = expect_format_error(path)
    assert "b'big'" in err.detail and "int32" in err.detail


def test_repeated_text_is_refused(tmp_path):
    path = write_plamo2_gguf(tmp_path / "twice.gguf", PIECES + [(b"a", -3.0, 1)])
    err = expect_format_error(path)
    assert "b'a'" in err.detail


@pytest.mark.parametrize("key, kv", [
    ("tokenizer.ggml.scores", strings_kv("tokenizer.ggml.scores", [b"1"] * 264)),
    ("tokenizer.ggml.scores", f32s_kv("tokenizer.ggml.scores", [0.0] * 10)),
    ("tokenizer.ggml.token_type", f32s_kv("tokenizer.ggml.token_type", [1.0] * 264)),
    ("tokenizer.ggml.tokens", i32s_kv("tokenizer.ggml.tokens", [1] * 264)),
    ("tokenizer.ggml.tokens", strings_kv("tokenizer.ggml.tokens", [])),
])
def test_wrong_array_types_name_the_key(tmp_path, key, kv):
    path = write_gguf(tmp_path / "arrays.gguf", plamo2_kvs(*plamo2_tokens(), **{key: kv}))
    err = expect_format_error(path)
    assert key in err.detail


@pytest.mark.parametrize("kv, key", [
    (u32_kv("tokenizer.ggml.add_space_prefix", 1), "tokenizer.ggml.add_space_prefix"),
    (u32_kv("tokenizer.ggml.add_bos_token", 1), "tokenizer.ggml.add_bos_token"),
    (str_kv("tokenizer.ggml.bos_token_id", "1"), "tokenizer.ggml.bos_token_id"),
    (bool_kv("tokenizer.ggml.eot_token_id", True), "tokenizer.ggml.eot_token_id"),
    (u32_kv("tokenizer.ggml.pre", 0), "tokenizer.ggml.pre"),
])
def test_wrong_scalar_types_name_the_key(tmp_path, kv, key):
    path = write_gguf(tmp_path / "scalars.gguf", plamo2_kvs(*plamo2_tokens()) + [kv])
    err = expect_format_error(path)
    assert key in err.detail
    assert llama_cpp_refuses(path)


def test_token_types_out_of_range_and_int_scores_load_like_llama_cpp(tmp_path):
    """A token type outside 0..6 is UNDEFINED (a piece); INT32 scores are read as floats."""
    tokens, scores, types = plamo2_tokens()
    types[-1] = 99
    path = write_gguf(tmp_path / "odd.gguf", plamo2_kvs(
        tokens, scores, types, **{"tokenizer.ggml.scores": i32s_kv("tokenizer.ggml.scores",
                                                                   [int(s) for s in scores])}))
    tok = toksmith.load(path)
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        for text in (b"ab", b"aab", b"abb", b"ba", b"\xff"):
            assert tok.encode(text) == ref.tokenize(text, True, True), text
    finally:
        ref.close()



def test_mutated_files_load_or_raise_model_format_error(tmp_path):
    """Seeded byte flips anywhere in a small PLaMo-2 GGUF: each copy loads (and encodes random
    bytes) or raises ModelFormatError, never another error or a crash."""
    import random
    data = bytearray(write_gguf(tmp_path / "base.gguf", plamo2_kvs(*plamo2_tokens())).read_bytes())
    rnd = random.Random(3)
    loaded = refused = 0
    for k in range(300):
        mutated = bytearray(data)
        for _ in range(rnd.randint(1, 4)):
            mutated[rnd.randrange(len(mutated))] = rnd.randrange(256)
        path = tmp_path / f"m{k}.gguf"
        path.write_bytes(bytes(mutated))
        try:
            tok = toksmith.load(path)
        except toksmith.ModelFormatError:
            refused += 1
            continue
        loaded += 1
        for _ in range(5):
            text = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 40)))
            ids = tok.encode(text, parse_special=True)
            assert all(0 <= i < tok.vocab_size for i in ids)
            tok.decode(ids)
    assert loaded and refused


@pytest.mark.parametrize("rules", ["sentencepiece", "tiktoken", "hf"])
def test_other_rules_are_refused(tmp_path, rules):
    path = write_gguf(tmp_path / "ok.gguf", plamo2_kvs(*plamo2_tokens()))
    with pytest.raises(toksmith.UnsupportedFeatureError, match="llama.cpp"):
        toksmith.load(path, rules=rules)
