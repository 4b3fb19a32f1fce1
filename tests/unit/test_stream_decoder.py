"""`Tokenizer.stream_decoder()`: ids fed one at a time (or in groups) give decode()'s text piece by piece.

The contract (src/toksmith/_core/detokenizer.pyx):

- everything `feed` returns, then `finish()`, concatenates to ``decode(ids, skip_special)``;
- a chunk holds complete characters only: a character split over byte pieces comes out
  whole, in the call that completes it, and no text that is already complete is held back;
- malformed bytes become U+FFFD exactly as decode does (sentencepiece: one per byte;
  llama.cpp: the raw bytes decoded with errors="replace"), and finish() returns what is left;
- out-of-range ids raise TokenIdError, feed after finish raises ValueError, and a model with a
  denormalizer refuses to stream (UnsupportedFeatureError).

GGUF byte-level vocabularies whose decode runs llama.cpp's clean_spaces passes are tested in
test_stream_clean_spaces.py (and tests/parity/test_stream_decode_gguf.py).

Expected texts of the hand-built byte-piece sequences come from the references, never from
toksmith: sentencepiece for .model files, llama.cpp's llama_detokenize for GGUF files
(tests/llama_cpp_reference.py). Their ids come from the reference's own vocabulary
(sentencepiece's piece_to_id; the GGUF token list read by tests/gguf_reference.py).
"""
from __future__ import annotations

import functools
import itertools
import random
import re

import pytest

import toksmith
from tests.conftest import fixture_file
from tests.gguf_reference import read_metadata
from tests.unit import gguf_writer as gw

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

EMBEDDED = "embedded"
CORPUS_MODELS = ["spm/llama2_tokenizer.model", "gguf/ggml-vocab-llama-spm.gguf", "gguf/ggml-vocab-phi-3.gguf",
                 "spm/llama2c_tok512.model", "spm/t5_base_japanese_spiece.model", EMBEDDED]
BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>\Z")
SKIP = pytest.mark.parametrize("skip_special", [False, True], ids=["keep_special", "skip_special"])


@functools.lru_cache(maxsize=None)
def _load(path: str, rules: toksmith.ReferenceRules | None = None) -> toksmith.Tokenizer:
    return toksmith.load(path, rules=rules)


def model_path(fixtures, name: str) -> str:
    return toksmith.embedded_model_path("sentencepiece-demo") if name == EMBEDDED else str(fixture_file(fixtures, name))


def requested_path(request, name: str) -> str:
    """`name`'s path; only names other than the embedded model need TOKSMITH_FIXTURES."""
    return model_path(None if name == EMBEDDED else request.getfixturevalue("fixtures"), name)


def stream_chunks(tok, ids, skip_special: bool, groups=None) -> list[str]:
    """What the stream returns: one feed per id (or per group of ids), then finish()."""
    stream = tok.stream_decoder(skip_special=skip_special)
    if groups is None:
        chunks = list(map(stream.feed, ids))
    else:
        chunks = [stream.feed(group) for group in groups]
    chunks.append(stream.finish())
    return chunks


def assert_chunks_valid(chunks: list[str]) -> None:
    for chunk in chunks:
        assert isinstance(chunk, str)
        chunk.encode("utf-8")   # UnicodeEncodeError on a lone surrogate (half a character)


def locate_mismatch(chunks: list[str], full: str) -> str:
    """Where the streamed chunks first leave decode()'s text (for a readable failure)."""
    pos = 0
    for k, chunk in enumerate(chunks):
        if not full.startswith(chunk, pos):
            what = "finish()" if k == len(chunks) - 1 else f"feed #{k}"
            return f"{what} returned {chunk!r} at offset {pos}; decode has {full[pos:pos + len(chunk) + 8]!r}"
        pos += len(chunk)
    return f"the stream ends at offset {pos}; decode goes on with {full[pos:pos + 16]!r}"


def stream_problem(tok, ids, skip_special: bool) -> str | None:
    """None when streaming `ids` one at a time gives decode()'s text in valid chunks."""
    full = tok.decode(ids, skip_special=skip_special)
    chunks = stream_chunks(tok, ids, skip_special)
    if "".join(chunks) != full:
        return locate_mismatch(chunks, full)
    try:
        assert_chunks_valid(chunks)
    except UnicodeEncodeError as e:
        return f"a chunk holds half a character: {e}"
    return None


def assert_timely(tok, ids, skip_special: bool) -> None:
    """After each feed, the text so far is decode(ids[:k]) minus at most the U+FFFD that
    decode gives for a character still incomplete at the end (at most 3 bytes held back)."""
    stream = tok.stream_decoder(skip_special=skip_special)
    so_far = ""
    for k, token in enumerate(ids, 1):
        so_far += stream.feed(token)
        prefix_text = tok.decode(ids[:k], skip_special=skip_special)
        assert prefix_text.startswith(so_far), (ids[:k], so_far, prefix_text)
        held = prefix_text[len(so_far):]
        assert held == "\ufffd" * len(held) and len(held) <= 3, \
            f"after {ids[:k]} the stream holds back {held!r} (streamed {so_far!r}, decode {prefix_text!r})"
    assert so_far + stream.finish() == tok.decode(ids, skip_special=skip_special)


def partitions(ids: list, rng: random.Random, limit: int = 64):
    """Ways to cut `ids` into consecutive groups: all of them for short lists, else `limit` random ones."""
    n = len(ids)
    if n <= 1:
        yield [list(ids)]
        return
    cut_sets = (itertools.product((False, True), repeat=n - 1) if n <= 7 else
                ([rng.random() < 0.4 for _ in range(n - 1)] for _ in range(limit)))
    for cuts in cut_sets:
        groups, start = [], 0
        for i, cut in enumerate(cuts, 1):
            if cut:
                groups.append(ids[start:i])
                start = i
        groups.append(ids[start:])
        yield groups


def framed(tok, ids: list[int]) -> list[int]:
    """`ids` between BOS and EOS (when the model has them), BOS not doubled."""
    bos, eos = tok.special_ids.bos, tok.special_ids.eos
    head = [bos] if bos is not None and (not ids or ids[0] != bos) else []
    return head + ids + ([eos] if eos is not None else [])


# ----------------------------------------------------------------- every corpus line


@SKIP
@pytest.mark.parametrize("model", CORPUS_MODELS)
def test_stream_every_corpus_line(fixtures, corpus_lines, model, skip_special):
    tok = _load(model_path(fixtures, model))
    failures, count, with_bytes = [], 0, 0
    byte_ids = {i for i in range(tok.vocab_size) if BYTE_PIECE.match(tok.id_to_piece(i))}
    for corpus, lines in corpus_lines.items():
        for lineno, ids in enumerate(tok.encode_batch(lines), 1):
            ids = framed(tok, ids)
            count += 1
            with_bytes += bool(byte_ids.intersection(ids))
            problem = stream_problem(tok, ids, skip_special)
            if problem:
                failures.append(f"{corpus}:{lineno}: {problem}")
    assert count > 150_000
    if byte_ids:
        assert with_bytes > 100, "the corpora should exercise byte pieces"
    assert not failures, f"{len(failures)} of {count} lines differ:\n" + "\n".join(failures[:8])


def _sample_lines(tok, corpus_lines, per_corpus: int = 25, max_ids: int = 300):
    """Lines whose ids hold byte pieces or unknown pieces (or, failing that, the first lines)."""
    interesting = {i for i in range(tok.vocab_size)
                   if BYTE_PIECE.match(tok.id_to_piece(i)) or i == tok.special_ids.unk}
    for corpus, lines in corpus_lines.items():
        encoded = tok.encode_batch(lines)
        picked = [ids for ids in encoded if interesting.intersection(ids)][:per_corpus]
        if corpus == "tricky_strings.txt":
            picked = encoded
        picked = picked or encoded[:per_corpus]
        for ids in picked:
            yield framed(tok, ids[:max_ids])


@SKIP
@pytest.mark.parametrize("model", CORPUS_MODELS)
def test_stream_returns_text_as_soon_as_complete(fixtures, corpus_lines, model, skip_special):
    """Per prefix: after each id, the stream has given all of decode(ids[:k]) but an incomplete tail."""
    tok = _load(model_path(fixtures, model))
    for ids in _sample_lines(tok, corpus_lines):
        assert_timely(tok, ids, skip_special)


@pytest.mark.parametrize("model", ["spm/llama2_tokenizer.model", "gguf/ggml-vocab-phi-3.gguf", EMBEDDED])
def test_stream_corpus_lines_fed_in_groups(fixtures, corpus_lines, model):
    tok = _load(model_path(fixtures, model))
    rng = random.Random(11)
    for ids in _sample_lines(tok, corpus_lines, per_corpus=10):
        for skip_special in (False, True):
            want = tok.decode(ids, skip_special=skip_special)
            for groups in partitions(ids, rng, limit=8):
                chunks = stream_chunks(tok, ids, skip_special, groups)
                assert "".join(chunks) == want, locate_mismatch(chunks, want)
                assert_chunks_valid(chunks)


# ----------------------------------------------------------------- byte pieces, against the references


class SentencePieceRef:
    def __init__(self, path: str):
        self.sp = spm.SentencePieceProcessor(model_file=path)

    def piece_id(self, piece: str) -> int:
        i = self.sp.piece_to_id(piece)
        assert self.sp.id_to_piece(i) == piece, f"{piece!r} is not in the model"
        return i

    def decode(self, ids, skip_special: bool) -> str:
        return self.sp.decode(ids)   # control pieces are invisible either way


class LlamaCppRef:
    def __init__(self, path: str):
        from tests import llama_cpp_reference as reference
        self.vocab = reference.load_vocab(path)
        tokens = read_metadata(path)["tokenizer.ggml.tokens"]
        self.ids = {t.decode("utf-8"): i for i, t in enumerate(tokens)}

    def piece_id(self, piece: str) -> int:
        return self.ids[piece]

    def decode(self, ids, skip_special: bool) -> str:
        return self.vocab.detokenize(ids, remove_special=skip_special,
                                     unparse_special=not skip_special).decode("utf-8", "replace")


# name -> (path of the file toksmith loads, rules, reference class, file the reference reads)
BYTE_MODELS = {
    "llama2.model": ("spm/llama2_tokenizer.model", None, SentencePieceRef, "spm/llama2_tokenizer.model"),
    "llama2c_tok512.model": ("spm/llama2c_tok512.model", None, SentencePieceRef, "spm/llama2c_tok512.model"),
    "embedded.model": (EMBEDDED, None, SentencePieceRef, EMBEDDED),
    "llama-spm.gguf": ("gguf/ggml-vocab-llama-spm.gguf", None, LlamaCppRef, "gguf/ggml-vocab-llama-spm.gguf"),
    "phi-3.gguf": ("gguf/ggml-vocab-phi-3.gguf", None, LlamaCppRef, "gguf/ggml-vocab-phi-3.gguf"),
    # A GGUF read with sentencepiece's rules decodes like the .model it was converted from.
    "llama-spm.gguf@sentencepiece": ("gguf/ggml-vocab-llama-spm.gguf", toksmith.ReferenceRules.SENTENCEPIECE,
                                     SentencePieceRef, "spm/llama2_tokenizer.model"),
}


@functools.lru_cache(maxsize=None)
def _reference(kind, path: str):
    return kind(path)


@pytest.fixture(scope="module", params=sorted(BYTE_MODELS))
def model_and_ref(request):
    name, rules, kind, ref_name = BYTE_MODELS[request.param]
    tok = _load(requested_path(request, name), rules)
    return tok, _reference(kind, requested_path(request, ref_name))


# Symbolic id sequences: an int is the byte piece <0xXX>, a str a piece of the vocabulary.
BYTE_CASES = {
    "two_byte_char": ["\u2581a", 0xC3, 0xA9, "\u2581the"],
    "three_byte_char": [0xE3, 0x81, 0x82],
    "four_byte_char": ["\u2581the", 0xF0, 0x9F, 0x98, 0x80, "\u2581a"],
    "chars_back_to_back": [0xE3, 0x81, 0x82, 0xF0, 0x9F, 0x98, 0x80, 0xC3, 0xA9, 0x41],
    "truncated_2_of_3_at_end": ["\u2581the", 0xE3, 0x81],
    "truncated_1_of_4_at_end": ["\u2581the", 0xF0],
    "truncated_3_of_4_at_end": [0xF0, 0x9F, 0x98],
    "invalid_byte_in_middle": ["\u2581the", 0xFF, "\u2581a"],
    "continuation_bytes_without_lead": [0x81, 0x82, "\u2581a"],
    "truncated_then_piece_then_rest": [0xE3, 0x81, "\u2581a", 0x82],
    "truncated_then_new_lead": [0xE3, 0x81, 0xE3, 0x81, 0x82],
    "lead_then_ascii_byte": [0xE2, 0x82, 0x41, "a"],
    "encoded_surrogate": [0xED, 0xA0, 0x80, "a"],
    "overlong_slash": [0xC0, 0xAF],
    "above_u10ffff": [0xF4, 0x90, 0x80, 0x80],
    "control_inside_char": [0xE3, "<s>", 0x81, 0x82],
    "unknown_inside_char": [0xE3, "<unk>", 0x81, 0x82],
    "eos_inside_char": [0xE3, 0x81, "</s>", 0x82],
    "bos_first_eos_last": ["<s>", "\u2581the", 0xE3, 0x81, 0x82, "</s>"],
    "bos_twice": ["<s>", "<s>", "\u2581a"],
    "space_byte_first": [0x20, "\u2581the"],
    "space_piece_first": ["\u2581", "\u2581the", "\u2581"],
    "only_bytes_ascii": [0x48, 0x69, 0x0A],
    "nul_byte": [0x00, "a", 0x00],
    "only_control": ["<s>", "</s>"],
    "empty": [],
}


def resolve(ref, case) -> list[int]:
    return [ref.piece_id(f"<0x{x:02X}>" if isinstance(x, int) else x) for x in case]


@SKIP
@pytest.mark.parametrize("case", sorted(BYTE_CASES))
def test_byte_pieces_stream_like_the_reference(model_and_ref, case, skip_special):
    tok, ref = model_and_ref
    ids = resolve(ref, BYTE_CASES[case])
    want = ref.decode(ids, skip_special)
    assert tok.decode(ids, skip_special=skip_special) == want
    chunks = stream_chunks(tok, ids, skip_special)
    assert "".join(chunks) == want, locate_mismatch(chunks, want)
    assert_chunks_valid(chunks)
    assert_timely(tok, ids, skip_special)
    rng = random.Random(case)
    for groups in partitions(ids, rng):
        chunks = stream_chunks(tok, ids, skip_special, groups)
        assert "".join(chunks) == want, (groups, locate_mismatch(chunks, want))
        assert_chunks_valid(chunks)


def test_a_split_character_comes_out_whole_when_complete(model_and_ref):
    tok, ref = model_and_ref
    for text in ("é", "あ", "😀"):
        ids = resolve(ref, list(text.encode()))
        assert ref.decode(ids, False) == text
        stream = tok.stream_decoder()
        # nothing while the character is incomplete, all of it with its last byte
        assert [stream.feed(i) for i in ids] == [""] * (len(ids) - 1) + [text]
        assert stream.finish() == ""


@pytest.mark.parametrize("case", ["truncated_2_of_3_at_end", "truncated_1_of_4_at_end", "truncated_3_of_4_at_end"])
def test_finish_flushes_a_truncated_character_as_decode_does(model_and_ref, case):
    tok, ref = model_and_ref
    ids = resolve(ref, BYTE_CASES[case])
    want = ref.decode(ids, False)
    assert want.endswith("\ufffd")
    stream = tok.stream_decoder()
    before = "".join(stream.feed(i) for i in ids)
    assert "\ufffd" not in before   # the incomplete bytes were held, not guessed at
    rest = stream.finish()
    assert rest and set(rest) == {"\ufffd"}
    assert before + rest == want


def test_feed_a_whole_list_at_once(model_and_ref):
    tok, ref = model_and_ref
    for case in BYTE_CASES.values():
        ids = resolve(ref, case)
        for skip_special in (False, True):
            want = ref.decode(ids, skip_special)
            for container in (list, tuple, iter, lambda x: (i for i in x)):
                stream = tok.stream_decoder(skip_special=skip_special)
                assert stream.feed(container(ids)) + stream.finish() == want, (case, container)


def test_interleaved_streams_are_independent(model_and_ref):
    tok, ref = model_and_ref
    a = resolve(ref, BYTE_CASES["chars_back_to_back"])
    b = resolve(ref, BYTE_CASES["truncated_then_piece_then_rest"])
    sa, sb = tok.stream_decoder(), tok.stream_decoder()
    out_a, out_b = [], []
    for x, y in itertools.zip_longest(a, b):
        if x is not None:
            out_a.append(sa.feed(x))
        if y is not None:
            out_b.append(sb.feed(y))
    assert "".join(out_a) + sa.finish() == ref.decode(a, False)
    assert "".join(out_b) + sb.finish() == ref.decode(b, False)


def test_every_single_id_streams_like_decode(fixtures):
    """Each id of a byte-fallback vocabulary alone, and after a pending lead byte."""
    for name in ("spm/llama2_tokenizer.model", "gguf/ggml-vocab-phi-3.gguf"):
        tok = _load(model_path(fixtures, name))
        lead = tok.piece_to_id("<0xE3>")
        for i in range(tok.vocab_size):
            for ids in ([i], [lead, i]):
                for skip_special in (False, True):
                    problem = stream_problem(tok, ids, skip_special)
                    assert problem is None, (name, ids, skip_special, problem)


# ----------------------------------------------------------------- llama.cpp's BOS/EOS removal


def test_skip_special_drops_a_trailing_eos_only_at_the_end(tmp_path):
    """A GGUF whose EOS is a NORMAL token and that adds EOS: skip_special (remove_special)
    drops one trailing EOS, so the stream must hold an EOS back until it knows more."""
    tokens = ["<pad>", "</s>", "<unk>", "\u2581", "a", "b", "\u2581ab"]
    path = gw.write_gguf(tmp_path / "eos_a.gguf", gw.vocab_kvs(
        "t5", tokens, [0.0, 0.0, 0.0, -2.0, -3.0, -3.0, -1.0], [3, 3, 2, 1, 1, 1, 1], architecture="t5",
        eos_token_id=4, unknown_token_id=2, padding_token_id=0, add_eos_token=True, add_space_prefix=True))
    from tests import llama_cpp_reference as reference
    vocab = reference.load_vocab(path)
    tok = toksmith.load(path)
    a, ab = tokens.index("a"), tokens.index("\u2581ab")
    assert vocab.tokenize(b"ab", True, False) == [ab, a]   # the file adds EOS = "a"
    for ids in ([ab, a], [a, ab], [a], [a, a], [ab, a, a], [a, ab, a], [ab], [], [0, a, 1]):
        for skip_special in (False, True):
            want = vocab.detokenize(ids, remove_special=skip_special,
                                    unparse_special=not skip_special).decode("utf-8", "replace")
            assert tok.decode(ids, skip_special=skip_special) == want, (ids, skip_special)
            chunks = stream_chunks(tok, ids, skip_special)
            assert "".join(chunks) == want, (ids, skip_special, chunks)
            assert_timely(tok, ids, skip_special)


def test_skip_special_bos_keeps_the_first_space(fixtures):
    """llama_detokenize with remove_special drops a leading BOS and then keeps the next
    token's space (llama.cpp's remove_space is cleared); the stream must agree."""
    ref = LlamaCppRef(str(fixture_file(fixtures, "gguf/ggml-vocab-llama-spm.gguf")))
    tok = _load(str(fixture_file(fixtures, "gguf/ggml-vocab-llama-spm.gguf")))
    for case in (["<s>", "\u2581the"], ["\u2581the"], ["<s>", "<s>", "\u2581the"], ["</s>", "\u2581the"]):
        ids = resolve(ref, case)
        for skip_special in (False, True):
            want = ref.decode(ids, skip_special)
            assert "".join(stream_chunks(tok, ids, skip_special)) == want == tok.decode(ids, skip_special=skip_special)


# ----------------------------------------------------------------- API edges


@pytest.fixture(scope="module")
def llama2(fixtures):
    return _load(str(fixture_file(fixtures, "spm/llama2_tokenizer.model")))


@pytest.fixture(scope="module", params=["spm/llama2_tokenizer.model", "gguf/ggml-vocab-llama-spm.gguf", EMBEDDED])
def any_tok(request):
    return _load(requested_path(request, request.param))


def test_out_of_range_ids_raise_token_id_error(any_tok):
    n = any_tok.vocab_size
    for bad in (n, n + 1, -1, -n, 2**31, 2**70, -(2**70)):
        stream = any_tok.stream_decoder()
        with pytest.raises(toksmith.TokenIdError) as info:
            stream.feed(bad)
        assert isinstance(info.value, IndexError) and str(bad) in str(info.value)
        with pytest.raises(toksmith.TokenIdError):
            any_tok.stream_decoder().feed([5, bad])
        with pytest.raises(toksmith.TokenIdError):
            any_tok.decode([bad])   # same error as decode


def test_non_integer_ids_raise_type_error(any_tok):
    for bad in (1.5, 2.0, "5", None, [1.0], [None]):
        with pytest.raises(TypeError):
            any_tok.stream_decoder().feed(bad)


def test_index_like_ids_are_accepted(any_tok):
    class Index:
        def __init__(self, value):
            self.value = value

        def __index__(self):
            return self.value

    ids = any_tok.encode("Hello, world", add_special=False)
    want = any_tok.decode(ids)
    stream = any_tok.stream_decoder()
    assert "".join(stream.feed(Index(i)) for i in ids) + stream.finish() == want
    stream = any_tok.stream_decoder()
    assert stream.feed([Index(i) for i in ids]) + stream.finish() == want
    stream = any_tok.stream_decoder()
    assert stream.feed(range(0)) + stream.finish() == ""
    with pytest.raises(TypeError, match="bool"):   # a bool is no token id, as in decode()
        any_tok.stream_decoder().feed(True)


def test_empty_feeds_and_empty_stream(any_tok):
    stream = any_tok.stream_decoder()
    assert stream.feed([]) == "" and stream.feed(()) == "" and stream.finish() == ""
    assert any_tok.decode([]) == ""


def test_feed_after_finish_raises_and_finish_is_idempotent(any_tok):
    ids = any_tok.encode("Hello", add_special=False)
    stream = any_tok.stream_decoder()
    text = stream.feed(ids) + stream.finish()
    assert text == any_tok.decode(ids)
    assert stream.finish() == ""
    with pytest.raises(ValueError):
        stream.feed(ids[0])
    with pytest.raises(ValueError):
        stream.feed([])
    assert stream.finish() == ""


def test_failed_type_check_keeps_the_stream_usable(llama2):
    stream = llama2.stream_decoder()
    first = stream.feed(llama2.piece_to_id("\u2581the"))
    with pytest.raises(TypeError):
        stream.feed(1.5)
    rest = stream.feed(llama2.piece_to_id("\u2581a")) + stream.finish()
    assert first + rest == llama2.decode([llama2.piece_to_id("\u2581the"), llama2.piece_to_id("\u2581a")])


@pytest.mark.parametrize("model", ["spm/llama2_tokenizer.model", "gguf/ggml-vocab-llama-spm.gguf"])
def test_failed_feed_loses_nothing(fixtures, model):
    tok = _load(str(fixture_file(fixtures, model)))
    the, a = tok.piece_to_id("\u2581the"), tok.piece_to_id("\u2581a")
    e3, x81 = (tok.piece_to_id(f"<0x{b:02X}>") for b in (0xE3, 0x81))
    failures = []
    for failing_valid in ([the], [e3, x81]):
        stream = tok.stream_decoder()
        with pytest.raises(toksmith.TokenIdError):
            stream.feed(failing_valid + [tok.vocab_size])
        text = stream.feed(a) + stream.finish()
        # atomic (the failed call did nothing) or lossless (its valid ids count): either is fine
        allowed = (tok.decode([a]), tok.decode(failing_valid + [a]))
        if text not in allowed:
            failures.append((failing_valid, text, allowed))
    assert not failures


def test_stream_decoder_is_a_new_object_each_time(llama2):
    a, b = llama2.stream_decoder(), llama2.stream_decoder(skip_special=True)
    assert a is not b
    assert type(a).__name__ == "StreamDecoder"


def test_denormalizer_model_refuses_to_stream(fixtures, tmp_path):
    proto = pb.ModelProto()
    proto.ParseFromString(fixture_file(fixtures, "spm/sentencepiece_test_model.model").read_bytes())
    assert proto.normalizer_spec.precompiled_charsmap
    proto.denormalizer_spec.precompiled_charsmap = proto.normalizer_spec.precompiled_charsmap
    proto.denormalizer_spec.add_dummy_prefix = False
    proto.denormalizer_spec.remove_extra_whitespaces = False
    data = proto.SerializeToString()
    sp = spm.SentencePieceProcessor(model_proto=data)
    path = tmp_path / "denorm.model"
    path.write_bytes(data)
    tok = toksmith.load(path)
    for skip_special in (False, True):
        with pytest.raises(toksmith.UnsupportedFeatureError) as info:
            tok.stream_decoder(skip_special=skip_special)
        assert isinstance(info.value, NotImplementedError)
        assert "denormalizer" in str(info.value) and "decode()" in str(info.value)
    ids = sp.encode("Hello, world ＡＢＣ")
    assert tok.decode(ids) == sp.decode(ids)   # decode still works


def test_models_without_denormalizer_stream(fixtures):
    for name in CORPUS_MODELS + ["gguf/ggml-vocab-nomic-bert-moe.gguf", "spm/sentencepiece_test_model.model"]:
        proto_checked = name.endswith(".model") and name != EMBEDDED
        if proto_checked:
            proto = pb.ModelProto()
            proto.ParseFromString(fixture_file(fixtures, name).read_bytes())
            assert not proto.denormalizer_spec.precompiled_charsmap
        _load(model_path(fixtures, name)).stream_decoder()


def test_rank_file_streams_like_decode(fixtures):
    """Byte-level tokens end inside characters: the stream holds them until complete."""
    tok = toksmith.load(fixture_file(fixtures, "tiktoken/cl100k_base.tiktoken"))
    rnd = random.Random(3)
    texts = ["日本語のテキスト 😀 🇯🇵 café", "<|endoftext|> and text", "\u0301\u200b x"]
    for text in texts:
        ids = tok.encode(text, parse_special=True)
        for skip_special in (False, True):
            stream = tok.stream_decoder(skip_special=skip_special)
            assert "".join(stream.feed(i) for i in ids) + stream.finish() == \
                tok.decode(ids, skip_special=skip_special)
    for _ in range(500):   # partial UTF-8 from random single-byte tokens
        ids = [rnd.randrange(256) for _ in range(rnd.randint(0, 8))]
        stream = tok.stream_decoder()
        assert "".join(stream.feed(i) for i in ids) + stream.finish() == tok.decode(ids)
