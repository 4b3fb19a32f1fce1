"""Property tests: streaming decode of random id sequences equals decode, and the reference.

Ids are drawn from the whole vocabulary, from the byte pieces (raw bytes, and the bytes of
whole characters so that valid multi-byte sequences show up often), and from the control /
unknown tokens. For every sequence and both skip_special values: the stream (fed one id at a
time, and in random groups) concatenates to decode(), every chunk is whole characters,
after each id the stream holds back at most an incomplete character, and decode equals the
reference (sentencepiece for a .model, llama.cpp's llama_detokenize for a GGUF).
"""
from __future__ import annotations

import functools

import pytest

import toksmith
from tests.conftest import fixture_file
from tests.gguf_reference import read_metadata

import sentencepiece as spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

MODELS = ["embedded", "spm/llama2_tokenizer.model", "gguf/ggml-vocab-llama-spm.gguf", "gguf/ggml-vocab-phi-3.gguf"]


class Model:
    """A toksmith tokenizer, its reference decoder, and the id pools to draw from."""

    def __init__(self, name: str, path: str):
        self.tok = toksmith.load(path)
        if path.endswith(".gguf"):
            from tests import llama_cpp_reference as reference
            vocab = reference.load_vocab(path)
            tokens = [t.decode("utf-8") for t in read_metadata(path)["tokenizer.ggml.tokens"]]
            types = read_metadata(path)["tokenizer.ggml.token_type"]
            # llama.cpp token types: 2 UNKNOWN, 3 CONTROL, 4 USER_DEFINED, 6 BYTE
            self.special = [i for i, t in enumerate(types) if t in (2, 3, 4)]
            self.byte_of = {int(p[3:5], 16): i for i, (p, t) in enumerate(zip(tokens, types)) if t == 6}
            self.reference = lambda ids, skip: vocab.detokenize(
                ids, remove_special=skip, unparse_special=not skip).decode("utf-8", "replace")
        else:
            sp = spm.SentencePieceProcessor(model_file=path)
            self.special = [i for i in range(sp.get_piece_size()) if sp.is_control(i) or sp.is_unknown(i)]
            self.byte_of = {int(sp.id_to_piece(i)[3:5], 16): i for i in range(sp.get_piece_size()) if sp.is_byte(i)}
            self.reference = lambda ids, skip: sp.decode(ids)
        assert len(self.byte_of) == 256 and self.special
        self.name = name

    def ids_strategy(self):
        n = self.tok.vocab_size
        char_bytes = st.characters(codec="utf-8").map(lambda c: [self.byte_of[b] for b in c.encode()])
        atom = st.one_of(
            st.integers(0, n - 1).map(lambda i: [i]),
            st.sampled_from(sorted(self.byte_of.values())).map(lambda i: [i]),
            st.sampled_from(self.special).map(lambda i: [i]),
            char_bytes,                                             # a whole character in byte pieces
            char_bytes.map(lambda ids: ids[:-1]),                   # ... or all but its last byte
        )
        return st.lists(atom, max_size=20).map(lambda atoms: [i for a in atoms for i in a])


@functools.lru_cache(maxsize=None)
def _model(name: str, path: str) -> Model:
    return Model(name, path)


@pytest.fixture(scope="module", params=MODELS)
def model(request):
    if request.param == "embedded":
        path = toksmith.embedded_model_path("sentencepiece-demo")
    else:
        path = str(fixture_file(request.getfixturevalue("fixtures"), request.param))
    return _model(request.param, path)


def check_stream(tok, ids, skip_special, cuts) -> str:
    want = tok.decode(ids, skip_special=skip_special)
    # one id at a time, checking every prefix
    stream = tok.stream_decoder(skip_special=skip_special)
    so_far = ""
    for k, token in enumerate(ids, 1):
        chunk = stream.feed(token)
        chunk.encode("utf-8")   # no half characters (lone surrogates)
        so_far += chunk
        prefix_text = tok.decode(ids[:k], skip_special=skip_special)
        assert prefix_text.startswith(so_far), (ids[:k], so_far, prefix_text)
        held = prefix_text[len(so_far):]
        assert held == "\ufffd" * len(held) and len(held) <= 3, (ids[:k], so_far, prefix_text)
    rest = stream.finish()
    rest.encode("utf-8")
    assert so_far + rest == want
    # in groups
    stream = tok.stream_decoder(skip_special=skip_special)
    bounds = [0] + sorted(c % (len(ids) + 1) for c in cuts) + [len(ids)]
    chunks = [stream.feed(ids[a:b]) for a, b in zip(bounds, bounds[1:])] + [stream.finish()]
    for chunk in chunks:
        chunk.encode("utf-8")
    assert "".join(chunks) == want, (bounds, chunks)
    return want


@st.composite
def id_sequences(draw, model):
    return draw(model.ids_strategy()), draw(st.lists(st.integers(0, 10_000), max_size=6))


def test_stream_equals_decode_equals_reference(model):
    @SETTINGS
    @given(id_sequences(model))
    def run(case):
        ids, cuts = case
        for skip_special in (False, True):
            want = check_stream(model.tok, ids, skip_special, cuts)
            assert want == model.reference(ids, skip_special), (ids, skip_special)

    run()


def test_stream_of_encoded_text_round_trips(model):
    """Ids of random text (as encode gives them, BOS included) stream back to decode()'s text."""
    @SETTINGS
    @given(st.text(alphabet=st.characters(codec="utf-8"), max_size=30), st.lists(st.integers(0, 10_000), max_size=4))
    def run(text, cuts):
        ids = model.tok.encode(text)
        for skip_special in (False, True):
            check_stream(model.tok, ids, skip_special, cuts)

    run()
