"""The public API refuses misuse with a clear error instead of guessing.

Flags are keyword-only; one text where a sequence of texts is expected is a
TypeError; `Tokenizer(path)` and `rules="..."` take the documented forms; every
entry point that takes token ids (decode, StreamDecoder.feed, id_to_piece)
checks them the same way: ints and numpy integers (scalars and arrays of any
integer dtype) are ids, bool/float/str/bytes are TypeErrors, and an id outside
the vocabulary is a TokenIdError (an IndexError) naming the argument and the
vocabulary size. Expected texts come from sentencepiece on the embedded model.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import toksmith

HELLO = "Hello, world"


# ----------------------------------------------------------------- keyword-only flags


def test_encode_text_pair_is_not_taken_as_a_flag(tok):
    # An HF user's text pair: "world" used to become add_special=True.
    with pytest.raises(TypeError):
        tok.encode("Hello", "world")
    with pytest.raises(TypeError):
        tok.encode("Hello", True, False)


@pytest.mark.parametrize("call", [
    lambda t: t.encode_batch(["a"], False),
    lambda t: t.encode_batch(["a"], True, True, 2),
    lambda t: t.tokenize("a", True),
    lambda t: t.decode([5], True),
    lambda t: t.stream_decoder(True),
    lambda t: toksmith.load(toksmith.embedded_model_path("sentencepiece-demo"), "sentencepiece"),
    lambda t: toksmith.Tokenizer.from_file(toksmith.embedded_model_path("sentencepiece-demo"), "sentencepiece"),
    lambda t: toksmith.Tokenizer(toksmith.embedded_model_path("sentencepiece-demo"), "sentencepiece"),
], ids=["encode_batch", "encode_batch-all", "tokenize", "decode", "stream_decoder", "load", "from_file",
        "Tokenizer"])
def test_flags_are_keyword_only(tok, call):
    with pytest.raises(TypeError):
        call(tok)


def test_keyword_flags_still_work(tok, sp):
    ids = sp.encode(HELLO)
    assert tok.encode(HELLO, add_special=False, parse_special=True) == ids
    assert tok.encode_batch([HELLO], add_special=True, parse_special=False, num_threads=1) == [ids]
    assert tok.tokenize(HELLO, add_special=False, parse_special=False) == sp.encode(HELLO, out_type=str)
    assert tok.decode(ids, skip_special=True) == HELLO
    stream = tok.stream_decoder(skip_special=True)
    assert stream.feed(ids) + stream.finish() == HELLO


@pytest.mark.parametrize("name", ["encode", "encode_batch", "tokenize", "decode", "stream_decoder"])
def test_signatures_show_keyword_only_flags(name):
    params = list(inspect.signature(getattr(toksmith.Tokenizer, name)).parameters.values())
    flags = [p for p in params if p.name in ("add_special", "parse_special", "skip_special", "num_threads")]
    assert flags
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in flags), params


# ----------------------------------------------------------------- one text where texts are expected


@pytest.mark.parametrize("texts", ["abc", b"abc", bytearray(b"abc"), memoryview(b"abc"), 5, None],
                         ids=["str", "bytes", "bytearray", "memoryview", "int", "None"])
def test_encode_batch_refuses_one_text(tok, texts):
    # "abc" used to encode each character as its own text.
    with pytest.raises(TypeError, match="texts"):
        tok.encode_batch(texts)


# ----------------------------------------------------------------- documented forms of load / Tokenizer


def test_tokenizer_takes_a_path_like_load(tok, sp):
    path = toksmith.embedded_model_path("sentencepiece-demo")
    from pathlib import Path
    for source in (path, Path(path)):
        other = toksmith.Tokenizer(source)
        assert isinstance(other, toksmith.Tokenizer)
        assert other.encode(HELLO) == sp.encode(HELLO)
    assert toksmith.Tokenizer(tok.spec).encode(HELLO) == sp.encode(HELLO)


@pytest.mark.parametrize("bad", [5, None, b"embedded.model", ["embedded.model"]], ids=repr)
def test_tokenizer_refuses_other_sources(bad):
    with pytest.raises(TypeError, match="path"):
        toksmith.Tokenizer(bad)


@pytest.mark.parametrize("rules", ["sentencepiece", "llama.cpp", toksmith.ReferenceRules.LLAMA_CPP])
def test_rules_as_member_or_value(rules):
    path = toksmith.embedded_model_path("sentencepiece-demo")
    want = toksmith.ReferenceRules(rules) if isinstance(rules, str) else rules
    for tok in (toksmith.load(path, rules=rules), toksmith.Tokenizer(path, rules=rules),
                toksmith.Tokenizer.from_file(path, rules=rules)):
        assert tok.spec.rules is want


@pytest.mark.parametrize("bad, error", [("SentencePiece!", ValueError), ("llama_cpp", ValueError),
                                        (1, TypeError), (b"sentencepiece", TypeError)], ids=repr)
def test_unknown_rules_list_the_valid_values(bad, error):
    with pytest.raises(error) as info:
        toksmith.load(toksmith.embedded_model_path("sentencepiece-demo"), rules=bad)
    assert not isinstance(info.value, KeyError)
    message = str(info.value)
    assert "'sentencepiece'" in message and "'llama.cpp'" in message, message


# ----------------------------------------------------------------- token ids: one validation path


INT_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", ">i4", "<i8", ">u2"]


def _stream(tok, ids) -> str:
    stream = tok.stream_decoder()
    return stream.feed(ids) + stream.finish()


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_numpy_integer_arrays_are_ids_everywhere(tok, sp, dtype):
    # byte pieces of "Hi!" (the embedded model's byte pieces have ids below 127: every dtype holds them)
    want_ids = [sp.piece_to_id(f"<0x{b:02X}>") for b in b"Hi!"]
    assert all(0 < i < 127 for i in want_ids) and sp.decode(want_ids) == "Hi!"
    want = sp.decode(want_ids)
    array = np.array(want_ids, dtype=dtype)
    assert tok.decode(array) == want
    assert tok.decode(array[::-1][::-1]) == want               # a strided view
    assert _stream(tok, array) == want                         # "only integer scalar arrays..." before
    stream = tok.stream_decoder()
    assert "".join(stream.feed(x) for x in array) + stream.finish() == want   # numpy scalars
    assert tok.id_to_piece(array[0]) == sp.id_to_piece(want_ids[0])


def test_numpy_ids_above_int8(tok, sp):
    ids = sp.encode("日本語のテキスト Привет")
    assert max(ids) > 1000
    for dtype in ("int16", "int32", "int64", "uint16", "uint32", "uint64", ">i8"):
        array = np.array(ids, dtype=dtype)
        assert tok.decode(array) == _stream(tok, array) == sp.decode(ids), dtype
    assert tok.decode(np.array(ids, dtype=np.intp)) == sp.decode(ids)


def test_zero_dimensional_array_and_scalar_feed(tok, sp):
    ids = sp.encode(HELLO)
    stream = tok.stream_decoder()
    assert "".join(stream.feed(np.array(i)) for i in ids) + stream.finish() == HELLO


BAD_ID_TYPES = [(True, "bool"), (False, "bool"), (np.True_, "bool"), (1.5, "float"), (np.float64(1.0), "float"),
                ("1", "str"), (b"1", "bytes"), (None, "NoneType")]


@pytest.mark.parametrize("bad, kind", BAD_ID_TYPES, ids=[repr(b) for b, _ in BAD_ID_TYPES])
def test_non_integer_ids_are_type_errors_naming_the_argument(tok, bad, kind):
    for call, where in ((lambda: tok.decode([259, bad]), "ids[1]"),
                        (lambda: tok.stream_decoder().feed([259, bad]), "ids[1]"),
                        (lambda: tok.stream_decoder().feed(bad) if kind not in ("str", "bytes") else
                         tok.stream_decoder().feed([bad]), "ids"),
                        (lambda: tok.id_to_piece(bad), "token_id")):
        with pytest.raises(TypeError) as info:
            call()
        message = str(info.value)
        assert message.startswith(where) and kind in message, message


@pytest.mark.parametrize("container", [b"\x05\x06", bytearray(b"\x05\x06"), "56"], ids=repr)
def test_text_is_not_a_sequence_of_ids(tok, container):
    # b"\x05\x06" used to decode as ids 5 and 6.
    with pytest.raises(TypeError, match="ids"):
        tok.decode(container)
    with pytest.raises(TypeError, match="ids"):
        tok.stream_decoder().feed(container)


@pytest.mark.parametrize("array", [np.array([1.0, 2.0]), np.array([True, False]), np.array([[1, 2], [3, 4]])],
                         ids=["float64", "bool", "2-d"])
def test_non_integer_arrays_are_type_errors(tok, array):
    for call in (lambda: tok.decode(array), lambda: tok.stream_decoder().feed(array)):
        with pytest.raises(TypeError, match="ids"):
            call()


@pytest.mark.parametrize("bad", [-1, 8000, 2**31, 2**63, 2**64, -(2**70)], ids=str)
def test_out_of_range_ids_name_argument_and_vocab_size(tok, bad):
    assert tok.vocab_size == 8000
    calls = [(lambda: tok.decode([259, bad]), "ids[1]"), (lambda: tok.stream_decoder().feed([259, bad]), "ids[1]"),
             (lambda: tok.stream_decoder().feed(bad), "ids"), (lambda: tok.id_to_piece(bad), "token_id")]
    if 0 <= bad < 2**64:
        calls.append((lambda: tok.decode(np.array([259, bad], dtype=np.uint64)), "ids[1]"))
    for call, where in calls:
        with pytest.raises(toksmith.TokenIdError) as info:
            call()
        assert isinstance(info.value, IndexError)
        message = str(info.value)
        assert message.startswith(where) and str(bad) in message and "8000" in message, message


def test_a_bad_id_in_a_feed_changes_nothing(tok, sp):
    ids = sp.encode("日本語 text")
    stream = tok.stream_decoder()
    first = stream.feed(ids[:1])
    for bad in ([ids[1], 8000], [ids[1], 1.5], np.array([ids[1], -1])):
        with pytest.raises((TypeError, toksmith.TokenIdError)):
            stream.feed(bad)
    assert first + stream.feed(ids[1:]) + stream.finish() == sp.decode(ids)


# ----------------------------------------------------------------- one-line reprs


def test_reprs_are_one_short_line(tok):
    objects = [tok, tok.vocab, tok.spec, tok.spec.normalizer, tok.spec.decoder, tok.special_ids,
               tok.stream_decoder(), *tok.special_tokens]
    for obj in objects:
        text = repr(obj)
        assert "\n" not in text and len(text) <= 200, (type(obj).__name__, len(text), text[:300])
    assert "8000" in repr(tok.vocab) and "8000" in repr(tok.spec)
    assert "embedded.model" in repr(tok.spec)
    assert "StreamDecoder" in repr(tok.stream_decoder())
