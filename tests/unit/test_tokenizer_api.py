"""The public Tokenizer API, the compiled trie and the normalizer.

Reference: sentencepiece on the same file. The embedded model (a
sentencepiece unigram with byte fallback) needs no fixtures; tests that read
fixture models or corpora take the `fixtures` fixture.
"""
from __future__ import annotations

import itertools
import random
import threading
from pathlib import Path

import pytest

import toksmith
from tests.conftest import first_difference, fixture_file

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

TEXTS = [
    "Hello, world", "", " ", "   ", "\t", "\n", "a", "Hello world!  How are   you?\n",
    "  leading and trailing  ", "café naïve résumé", "日本語のテキストです。", "Привет, мир",
    "ＡＢＣ１２３ ｶﾀｶﾅ ①②③ ﬁ ㍻", "emoji 😀👍🏽👨‍👩‍👧 🇯🇵", "\x00", "a\x00b", "tab\tand\nnewline\r\n",
    "\u2581already\u2581escaped", "<s> </s> <unk> <0x41>", "ÅÅ A\u030a", "🀄" * 5, "\u200b\u200d\ufeff",
    "x" * 300, "The quick brown fox jumps over the lazy dog. " * 20, "\U0010fffd\ue000",
    "def f(x):\n    return x ** 2  # comment\n",
]

INVALID_UTF8 = [b"\xff", b"\xfe\xff", b"abc\x80def", b"\xc3", b"\xe3\x81", b"\xf0\x9f\x98", b"\xc0\x80",
                b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"caf\xe9", b"ok \xff\xfe\xfd ok", bytes(range(256))]


def embedded_proto() -> pb.ModelProto:
    proto = pb.ModelProto()
    proto.ParseFromString(Path(toksmith.embedded_model_path("sentencepiece-demo")).read_bytes())
    return proto


# ----------------------------------------------------------------- encode / decode


def test_embedded_model_is_a_byte_fallback_unigram():
    proto = embedded_proto()
    assert proto.trainer_spec.model_type == pb.TrainerSpec.UNIGRAM
    assert proto.trainer_spec.byte_fallback


@pytest.mark.parametrize("text", TEXTS)
def test_encode_str(tok, sp, text):
    want = sp.encode(text)
    assert tok.encode(text) == want
    # A .model adds neither BOS nor EOS by default, as sentencepiece's encode.
    assert tok.encode(text, add_special=False) == want


@pytest.mark.parametrize("text", TEXTS)
def test_encode_utf8_bytes_equals_str(tok, sp, text):
    assert tok.encode(text.encode("utf-8")) == sp.encode(text)


@pytest.mark.parametrize("raw", INVALID_UTF8, ids=repr)
def test_encode_invalid_utf8(tok, sp, raw):
    ids = tok.encode(raw)
    assert ids == sp.encode(raw)
    assert tok.decode(ids) == sp.decode(ids)


def test_encode_invalid_utf8_fixture_lines(tok, sp, invalid_utf8_lines):
    for raw in invalid_utf8_lines:
        assert tok.encode(raw) == sp.encode(raw), raw


def test_encode_tricky_strings(tok, sp, tricky_strings):
    for text in tricky_strings:
        ids = tok.encode(text)
        assert ids == sp.encode(text), text
        assert tok.decode(ids) == sp.decode(ids), text
        assert tok.tokenize(text) == sp.encode(text, out_type=str), text


@pytest.mark.parametrize("text", TEXTS)
def test_decode_of_encode(tok, sp, text):
    ids = sp.encode(text)
    assert tok.decode(ids) == sp.decode(ids)
    assert tok.decode(tok.encode(text)) == sp.decode(sp.encode(text))


def test_decode_random_id_sequences(tok, sp):
    """Any ids, including lone byte pieces, control and unknown pieces, decode as sentencepiece does."""
    rng = random.Random(1234)
    byte_ids = [i for i in range(sp.get_piece_size()) if sp.is_byte(i)]
    special = [i for i in range(sp.get_piece_size()) if sp.is_control(i) or sp.is_unknown(i)]
    assert byte_ids and special
    for _ in range(3000):
        pool = rng.choice([range(sp.get_piece_size()), byte_ids, byte_ids + special])
        ids = [rng.choice(pool) for _ in range(rng.randint(0, 12))]
        assert tok.decode(ids) == sp.decode(ids), ids


def test_decode_accepts_any_int_sequence(tok, sp):
    ids = sp.encode("Hello, world")
    assert tok.decode(tuple(ids)) == tok.decode(iter(ids)) == tok.decode(ids) == "Hello, world"
    assert tok.decode([]) == ""


@pytest.mark.parametrize("convert", [bytearray, memoryview], ids=["bytearray", "memoryview"])
def test_bytes_like_input(tok, sp, convert):
    for text in TEXTS:
        assert tok.encode(convert(text.encode())) == sp.encode(text), text
    for raw in INVALID_UTF8:
        assert tok.encode(convert(raw)) == sp.encode(raw), raw
    assert tok.encode_batch([convert(b"Hello"), convert(b"\xff")]) == [sp.encode("Hello"), sp.encode(b"\xff")]


def test_str_and_bytes_subclasses(tok, sp):
    class Text(str):
        pass

    class Raw(bytes):
        pass

    assert tok.encode(Text("Hello world")) == sp.encode("Hello world")
    assert tok.encode(Raw(b"Hello world")) == sp.encode("Hello world")


@pytest.mark.parametrize("value", [5, None, 3.5, ["a"], ("a",), object()], ids=lambda value: type(value).__name__)
def test_encode_rejects_non_text(tok, value):
    with pytest.raises(TypeError):
        tok.encode(value)
    with pytest.raises(TypeError):
        tok.encode_batch(["fine", value])
    with pytest.raises(TypeError):
        tok.tokenize(value)


def test_lone_surrogate_is_a_value_error(tok):
    # A str with a lone surrogate has no UTF-8 form; the error is a ValueError, not a crash.
    for call in (tok.encode, tok.tokenize, lambda text: tok.encode_batch(["ok", text])):
        with pytest.raises(UnicodeEncodeError):
            call("a\ud800b")


# ----------------------------------------------------------------- encode_batch


@pytest.mark.parametrize("num_threads", [None, 1, 2, 8])
def test_encode_batch_equals_encode(tok, sp, num_threads):
    rng = random.Random(num_threads or 0)
    texts = TEXTS * 8 + [t.encode() for t in TEXTS] + INVALID_UTF8
    rng.shuffle(texts)
    got = tok.encode_batch(texts, num_threads=num_threads)
    assert got == [tok.encode(t) for t in texts]
    assert got == sp.encode(texts)


@pytest.mark.parametrize("num_threads", [None, 1, 2, 8])
def test_encode_batch_empty(tok, num_threads):
    assert tok.encode_batch([], num_threads=num_threads) == []
    assert tok.encode_batch([""], num_threads=num_threads) == [[]]


def test_encode_batch_takes_any_iterable(tok, sp):
    assert tok.encode_batch(t for t in TEXTS) == sp.encode(TEXTS)
    assert tok.encode_batch(tuple(TEXTS), num_threads=3) == sp.encode(TEXTS)


def test_encode_batch_many_short_texts(tok, sp):
    rng = random.Random(5)
    words = "the of and to in is was for on that with as by it at from".split() + ["日本", "ü", "😀"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 6))) for _ in range(3000)]
    assert tok.encode_batch(texts, num_threads=8) == sp.encode(texts)


@pytest.mark.parametrize("num_threads", [1, 2])
def test_encode_batch_error_after_lists_were_built(tok, sp, num_threads):
    # encode_batch builds the id lists of finished texts while later ones are encoded: a
    # text that fails far into a long batch still raises encode()'s error, and the next
    # batch is whole.
    texts = [f"line {i} of a batch long enough to be built in parts" for i in range(6000)]
    with pytest.raises(UnicodeEncodeError) as batch_error:
        tok.encode_batch(texts[:4000] + ["a\ud800b"] + texts[4000:], num_threads=num_threads)
    with pytest.raises(UnicodeEncodeError) as single_error:
        tok.encode("a\ud800b")
    assert str(batch_error.value) == str(single_error.value)
    assert tok.encode_batch(texts, num_threads=num_threads) == sp.encode(texts)


@pytest.mark.parametrize("num_threads", [0, -1, -8])
def test_encode_batch_rejects_bad_num_threads(tok, num_threads):
    with pytest.raises(ValueError):
        tok.encode_batch(["a", "b"], num_threads=num_threads)
    with pytest.raises(ValueError):
        tok.encode_batch([], num_threads=num_threads)


# ----------------------------------------------------------------- decode errors


@pytest.mark.parametrize("bad", [-1, 8000, 2**31, 2**63, 2**70, -(2**70)], ids=str)
def test_decode_out_of_range_id(tok, sp, bad):
    if bad == 8000:
        assert sp.get_piece_size() == 8000
    with pytest.raises(toksmith.TokenIdError) as info:
        tok.decode([5, bad, 6])
    assert isinstance(info.value, IndexError)
    assert str(bad) in str(info.value)


def test_decode_vocab_size_is_out_of_range(tok):
    with pytest.raises(toksmith.TokenIdError):
        tok.decode([tok.vocab_size])
    tok.decode([tok.vocab_size - 1])


@pytest.mark.parametrize("bad", ["1", b"1", None, [1]], ids=repr)
def test_decode_rejects_non_int_ids(tok, bad):
    with pytest.raises(TypeError):
        tok.decode([1, bad])


def test_decode_rejects_float_ids(tok, sp):
    with pytest.raises(TypeError):
        sp.decode([259.9, 2372])
    with pytest.raises(TypeError):
        tok.decode([259.9, 2372])


# ----------------------------------------------------------------- vocabulary


def test_vocab_size(tok, sp):
    assert tok.vocab_size == sp.get_piece_size() == len(embedded_proto().pieces)


def test_id_to_piece_and_piece_to_id_for_every_id(tok, sp):
    for i in range(sp.get_piece_size()):
        piece = sp.id_to_piece(i)
        assert tok.id_to_piece(i) == piece, i
        assert tok.piece_to_id(piece) == sp.piece_to_id(piece), piece


def test_piece_to_id_missing_piece(tok, sp):
    for piece in ["surely-not-a-piece", "", "\u2581\u2581\u2581\u2581xyzzy", "<pad>"]:
        if sp.piece_to_id(piece) == sp.unk_id() and piece != sp.id_to_piece(sp.unk_id()):
            assert tok.piece_to_id(piece) is None, piece


def test_id_to_piece_out_of_range(tok):
    for bad in (-1, tok.vocab_size, 10**6):
        with pytest.raises(toksmith.TokenIdError):
            tok.id_to_piece(bad)


def test_special_ids(tok, sp):
    special = tok.special_ids
    assert special.unk == sp.unk_id()
    assert special.bos == sp.bos_id()
    assert special.eos == sp.eos_id()
    assert special.pad == (None if sp.pad_id() < 0 else sp.pad_id())


@pytest.mark.parametrize("text", TEXTS + INVALID_UTF8, ids=repr)
def test_tokenize(tok, sp, text):
    assert tok.tokenize(text) == sp.encode(text, out_type=str)


# ----------------------------------------------------------------- large inputs


def assert_same_long_ids(got: list[int], want: list[int]) -> None:
    """`got == want` for id lists too long for pytest's difflib report (quadratic)."""
    if got != want:
        pytest.fail(first_difference(got, want))


@pytest.mark.parametrize("text", [
    pytest.param("a" * 200_000, id="a*200k"),
    pytest.param(" " * 2_000_000, id="space*2M"),
    pytest.param("あ" * 200_000, id="hiragana*200k"),
    pytest.param("😀" * 100_000, id="emoji*100k-byte-fallback"),
    pytest.param("\x00" * 100_000, id="nul*100k"),
    pytest.param("ab " * 100_000, id="ab_space*100k"),
])
def test_long_repeated_text(tok, sp, text):
    ids = tok.encode(text)
    assert_same_long_ids(ids, sp.encode(text))
    assert tok.decode(ids) == sp.decode(ids)


def test_one_megabyte_text(tok, sp):
    # Past +-100000 sentencepiece rebases its float path scores (kScoreResetThreshold).
    rng = random.Random(42)
    alphabet = ("abcdefghijklmnopqrstuvwxyz" * 4 + "ABCDEFGHIJ0123456789" + " " * 20 + ".,;:!?\n\t"
                + "éüßñçøå" + "日本語のテキスト" + "Привет" + "😀🇯🇵" + "ＡＢＣ①")
    text = "".join(rng.choice(alphabet) for _ in range(1_000_000))
    assert len(text.encode()) > 1_000_000
    ids = tok.encode(text)
    assert_same_long_ids(ids, sp.encode(text))
    assert tok.decode(ids) == sp.decode(ids)


@pytest.mark.parametrize("prefix", ["日本" * 30_000, "the " * 100_000], ids=["cjk*30k", "the*100k"])
def test_long_prefix_keeps_the_best_segmentation(tok, sp, prefix):
    text = prefix + " wpab"
    # '日本'*30000 + ' wpab' once ended ▁w pa b (918, 1177, 336) where sentencepiece
    # gives ▁w p ab (918, 321, 1403): float path scores without the reference's rebasing.
    pieces = sp.encode(text, out_type=str)
    # The reference picks the higher-scoring split of "pab", as the exact sums say.
    score = {p: sp.get_score(sp.piece_to_id(p)) for p in ("p", "ab", "pa", "b")}
    assert score["p"] + score["ab"] > score["pa"] + score["b"]
    assert pieces[-2:] == ["p", "ab"]
    assert_same_long_ids(tok.encode(text), sp.encode(text))


# ----------------------------------------------------------------- threads


def test_concurrent_encode_from_python_threads(tok, sp):
    rng = random.Random(3)
    texts = TEXTS * 6 + INVALID_UTF8 + ["w" * rng.randint(1, 5000) + " end" for _ in range(20)]
    want = sp.encode(texts)
    results: dict[int, list] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def work(worker: int) -> None:
        try:
            order = list(range(len(texts)))
            random.Random(worker).shuffle(order)
            barrier.wait()
            got = [None] * len(texts)
            for _ in range(3):
                for i in order:
                    got[i] = tok.encode(texts[i])
                batch = tok.encode_batch(texts, num_threads=2)
                assert batch == want
                for i in order[:50]:
                    assert tok.decode(got[i]) == tok.decode(want[i])
            results[worker] = got
        except BaseException as e:   # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert sorted(results) == [0, 1, 2, 3]
    for worker, got in results.items():
        assert got == want, worker


# ----------------------------------------------------------------- trie


def test_trie_matches_dict_on_random_keys():
    from toksmith._core.trie import DoubleArrayTrie
    rng = random.Random(2024)
    for trial, size in enumerate([1, 2, 3, 10, 100, 1000, 20_000]):
        # Narrow alphabets give deep shared prefixes; the full one gives wide nodes.
        alphabet = [bytes([b]) for b in (b"ab\x00\xff" if trial % 2 else range(256))]
        keys: set[bytes] = set()
        while len(keys) < size:
            keys.add(b"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 16))))
        key_list = sorted(keys, key=lambda _: rng.random())
        values = [rng.randrange(0, 2**31 - 1) for _ in key_list]
        expected = dict(zip(key_list, values))
        trie = DoubleArrayTrie.build(key_list, values)
        for key, value in expected.items():
            assert trie.lookup(key) == value, key
        probes = [b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 17))) for _ in range(3000)]
        probes += [k[:-1] for k in key_list] + [k + b"\x00" for k in key_list[:200]] + [b""]
        for probe in probes:
            assert trie.lookup(probe) == expected.get(probe, -1), probe


def test_trie_all_single_bytes_and_prefix_chains():
    from toksmith._core.trie import DoubleArrayTrie
    keys = [bytes([b]) for b in range(256)] + [b"\xff" * n for n in range(2, 40)] + [b"\x00" * n for n in range(2, 40)]
    trie = DoubleArrayTrie.build(keys, list(range(len(keys))))
    for i, key in enumerate(keys):
        assert trie.lookup(key) == i
    assert trie.lookup(b"\xff" * 40) == -1
    assert trie.lookup(b"\x00\x01") == -1


def test_trie_empty():
    from toksmith._core.trie import DoubleArrayTrie
    trie = DoubleArrayTrie.build([], [])
    assert trie.lookup(b"") == -1
    assert trie.lookup(b"a") == -1


def test_trie_rejects_bad_keys():
    from toksmith._core.trie import DoubleArrayTrie
    with pytest.raises(ValueError):
        DoubleArrayTrie.build([b"a", b"b", b"a"], [1, 2, 3])
    with pytest.raises(ValueError):
        DoubleArrayTrie.build([b"same", b"same"], [1, 1])
    with pytest.raises(ValueError):
        DoubleArrayTrie.build([b""], [1])
    with pytest.raises(ValueError):
        DoubleArrayTrie.build([b"a", b""], [1, 2])
    with pytest.raises(ValueError):
        DoubleArrayTrie.build([b"a", b"b"], [1])
    with pytest.raises(TypeError):
        DoubleArrayTrie.build(["text"], [1])


# ----------------------------------------------------------------- normalizer

FLAG_COMBINATIONS = list(itertools.product([True, False], repeat=3))
NORMALIZER_EXTRA = ["", " ", "  a  b  ", "\u3000x\u3000y\u3000", "ｶﾞｷﾞ", "①②", "a\u00a0b", " \t\n ", "ﬁ ﬂ",
                    "\u2581x", "x\u2581 \u2581", "e\u0301", "\x00a\x00", "  ", "Ａ　Ｂ"]


def normalizer_pair(proto: pb.ModelProto, flags):
    """(sentencepiece with the flags set, toksmith Normalizer with the same charsmap and flags)."""
    from toksmith._core.normalizer import SentencePieceNormalizer as Normalizer
    add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces = flags
    copy = pb.ModelProto()
    copy.CopyFrom(proto)
    spec = copy.normalizer_spec
    spec.add_dummy_prefix = add_dummy_prefix
    spec.remove_extra_whitespaces = remove_extra_whitespaces
    spec.escape_whitespaces = escape_whitespaces
    sp = spm.SentencePieceProcessor(model_proto=copy.SerializeToString())
    normalizer = Normalizer(spec.precompiled_charsmap, add_dummy_prefix=add_dummy_prefix,
                            remove_extra_whitespaces=remove_extra_whitespaces,
                            escape_whitespaces=escape_whitespaces)
    return sp, normalizer


def check_normalizer(proto, texts):
    for flags in FLAG_COMBINATIONS:
        sp, normalizer = normalizer_pair(proto, flags)
        for text in texts:
            if isinstance(text, bytes):
                want = sp.normalize(text).decode("utf-8")
            else:
                want = sp.normalize(text)
            assert normalizer.normalize_text(text) == want, (flags, text)


def test_normalizer_embedded_charsmap():
    check_normalizer(embedded_proto(), TEXTS + NORMALIZER_EXTRA + INVALID_UTF8)


def test_normalizer_identity():
    proto = embedded_proto()
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.precompiled_charsmap = b""
    check_normalizer(proto, TEXTS + NORMALIZER_EXTRA + INVALID_UTF8)


@pytest.mark.parametrize("model", ["spm/sentencepiece_test_model.model", "spm/t5_base_japanese_spiece.model"])
def test_normalizer_fixture_charsmaps_on_tricky_strings(fixtures, tricky_strings, invalid_utf8_lines, model):
    proto = pb.ModelProto()
    proto.ParseFromString(fixture_file(fixtures, model).read_bytes())
    assert proto.normalizer_spec.precompiled_charsmap
    check_normalizer(proto, tricky_strings + NORMALIZER_EXTRA + invalid_utf8_lines)


def test_normalizer_embedded_charsmap_on_tricky_strings(tricky_strings):
    check_normalizer(embedded_proto(), tricky_strings)


def test_normalizer_rejects_corrupt_charsmap():
    from toksmith._core.normalizer import SentencePieceNormalizer as Normalizer
    blob = embedded_proto().normalizer_spec.precompiled_charsmap
    for bad in (b"\x01", b"\x01\x02\x03\x04", b"\xff\xff\xff\xff" + blob[4:], blob[:4] + blob[4:100]):
        with pytest.raises(ValueError):
            Normalizer(bad)
