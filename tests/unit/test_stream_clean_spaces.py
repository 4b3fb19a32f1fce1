"""Streaming decode of GGUF byte-level vocabularies whose llama_detokenize runs clean_spaces.

llama.cpp (llama_vocab::impl::detokenize) rewrites the whole decoded text of these
vocabularies at the end, in three passes over its bytes:

1. a space before ``?``, ``!``, ``.`` or ``,`` is removed;
2. ``" ' "`` becomes ``"'"``, and the byte after such a match never counts as following a
   space (llama.cpp writes NUL over the skipped space), so ``"a ' ' b"`` gives ``"a'' b"``;
3. the space of ``" 's"``, ``" 'm"``, ``" 're"``, ``" 've"`` is removed (``" 't"``,
   ``" 'd"``, ``" 'll"`` keep it), and only when the whole contraction is in the text.

The stream (src/toksmith/_core/clean_spaces.pxd) holds back only the trailing bytes whose
output can still change. Checked here, first on a decoder whose id i is byte i (expected
texts worked out by hand from llama-vocab.cpp), then against llama.cpp itself
(tests/llama_cpp_reference.py) on the fixture GGUFs:

- hand-made texts, one id per byte, every way of cutting them into feeds;
- every text of up to five characters over an alphabet that hits each branch of the passes;
- after each feed the stream has given exactly the part of the text that no later id can
  change (the common prefix of llama_detokenize over continuations that reach every branch);
- random id lists from the bytes that matter, multi-byte tokens made of them, bytes that
  make invalid UTF-8, and special tokens.

Ids come from llama.cpp's own vocabulary (llama_token_to_piece of every id).
"""
from __future__ import annotations

import functools
import itertools
import os
import random

import pytest

import toksmith
from tests import llama_cpp_reference
from tests.conftest import fixture_file
from toksmith._core.detokenizer import LlamaCppDecoder, Render, StreamDecoder

# Fixture GGUFs whose pre-tokenizer leaves llama.cpp's clean_spaces on.
CLEAN_SPACES_GGUFS = ("gpt-2", "llama-bpe")
# One character of each class the passes tell apart: space, apostrophe, punctuation, the
# letters after an apostrophe (s ~ m: space removed; t ~ d: kept; r ~ v: removed before "e"),
# "e", and any other letter.
ALPHABET = " '.strex"


class Model:
    """toksmith and llama.cpp on one fixture GGUF, and its ids for raw bytes."""

    def __init__(self, path):
        self.tok = toksmith.load(path)
        self.ref = llama_cpp_reference.load_vocab(path)
        self.byte_id: dict[int, int] = {}
        self.piece_ids: dict[bytes, int] = {}
        for i in range(self.ref.n_tokens):
            piece = self.ref.token_to_piece(i, 0, False)
            self.piece_ids.setdefault(piece, i)
            if len(piece) == 1:
                self.byte_id.setdefault(piece[0], i)
        assert len(self.byte_id) == 256, "a byte-level vocabulary has a token for every byte"

    def ids(self, raw: bytes) -> list[int]:
        """One id per byte."""
        return [self.byte_id[b] for b in raw]

    def want(self, ids, skip_special: bool = False) -> str:
        return self.ref.detokenize(ids, remove_special=skip_special,
                                   unparse_special=not skip_special).decode("utf-8", "replace")

    def stream(self, groups, skip_special: bool = False) -> list[str]:
        stream = self.tok.stream_decoder(skip_special=skip_special)
        chunks = [stream.feed(group) for group in groups]
        chunks.append(stream.finish())
        return chunks


@functools.lru_cache(maxsize=None)
def _model(path: str) -> Model:
    return Model(path)


@pytest.fixture(scope="module", params=CLEAN_SPACES_GGUFS)
def model(request, fixtures) -> Model:
    return _model(os.fspath(fixture_file(fixtures, f"gguf/ggml-vocab-{request.param}.gguf")))


def cuts(ids: list[int]):
    """Every way to cut `ids` into consecutive non-empty feeds."""
    n = len(ids)
    for marks in itertools.product((False, True), repeat=max(n - 1, 0)):
        groups, start = [], 0
        for i, mark in enumerate(marks, 1):
            if mark:
                groups.append(ids[start:i])
                start = i
        groups.append(ids[start:])
        yield groups


# text -> what llama.cpp's passes make of it, worked out by hand from llama-vocab.cpp
HAND_CASES = {
    "a .": "a.", "a ?": "a?", "a !": "a!", "a ,": "a,", " .x": ".x", "a  .": "a .", "a . , ! ?": "a.,!?",
    "it 's": "it's", "I 'm": "I'm", "we 're": "we're", "they 've": "they've",
    "don 't": "don 't", "he 'd": "he 'd", "we 'll": "we 'll", "it 'S": "it 'S",
    "a ' b": "a'b", "a ' ' b": "a'' b", " ' ": "'", "a ' 's": "a''s", "a  ' b": "a 'b",
    "x '": "x '", "x 'r": "x 'r", "x 're": "x're", "x 'rx": "x 'rx", " 's": "'s", "x ' ": "x'",
    "a '.": "a '.", "a . 's": "a.'s", "a ' .": "a '.", "  ": "  ", "'": "'", "": "",
}


def one_byte_decoder() -> LlamaCppDecoder:
    """A llama.cpp decoder with clean_spaces whose id i is the byte i (no fixture needed)."""
    return LlamaCppDecoder.build([bytes([b]) for b in range(256)], bytes([Render.RENDER_TEXT]) * 256,
                                 [-1] * 256, clean_spaces=True)


def test_hand_cases_without_fixtures():
    decoder = one_byte_decoder()
    for text, cleaned in HAND_CASES.items():
        ids = list(text.encode())
        assert decoder.decode(ids) == cleaned, text
        for groups in cuts(ids):
            stream = StreamDecoder(decoder)
            chunks = [stream.feed(group) for group in groups] + [stream.finish()]
            assert "".join(chunks) == cleaned, (text, groups, chunks)


# bytes fed one at a time -> what each feed returns, then what finish() returns
HELD_BACK = {
    b"it 's": ["i", "t", "", "", "'s", ""],             # the space waits for the letter after "'"
    b"a ,": ["a", "", ",", ""],                        # a space waits for the next byte
    b"a  ' s": ["a", "", "", "", "", "'s", ""],         # " ' " becomes "'": then " 's" loses its space
    b"a  b": ["a", "", "", "  b", ""],                   # both spaces wait: see "a  ' s"
    b"x 'rx": ["x", "", "", "", " 'rx", ""],             # " 'r" waits for "e"
    b"x 're": ["x", "", "", "", "'re", ""],
    b"a '.": ["a", "", "", " '.", ""],
    b"a ' ": ["a", "", "", "", "'"],                    # "a ' ." would keep " '": see HAND_CASES
    b"end 'v": ["e", "n", "d", "", "", "", " 'v"],       # the end of the text keeps every space
    b"\xe3 .": ["", "\ufffd", ".", ""],                  # a broken character before held ASCII
    b"\xe3\x81\x82 ": ["", "", "\u3042", "", " "],
}


def test_what_each_feed_returns_without_fixtures():
    decoder = one_byte_decoder()
    for raw, want in HELD_BACK.items():
        stream = StreamDecoder(decoder)
        got = [stream.feed(b) for b in raw] + [stream.finish()]
        assert got == want, raw
        assert "".join(want) == decoder.decode(list(raw))


def test_llama_cpp_cleans_these_vocabularies(model):
    """The reference really runs the passes on these files (else the tests below prove little)."""
    for text, cleaned in HAND_CASES.items():
        assert model.want(model.ids(text.encode())) == cleaned, text


@pytest.mark.parametrize("skip_special", [False, True])
def test_hand_cases_stream_for_every_cut(model, skip_special):
    for text, cleaned in HAND_CASES.items():
        ids = model.ids(text.encode())
        assert model.tok.decode(ids, skip_special=skip_special) == cleaned, text
        for groups in cuts(ids):
            chunks = model.stream(groups, skip_special)
            assert "".join(chunks) == cleaned, (text, groups, chunks)


def test_every_short_text_over_the_alphabet(model):
    """All 37,449 texts of up to five characters over ALPHABET, one id per byte, fed one id
    at a time and as one list."""
    failures = []
    count = 0
    for length in range(6):
        for chars in itertools.product(ALPHABET, repeat=length):
            ids = model.ids("".join(chars).encode())
            want = model.want(ids)
            count += 1
            for groups in ([[i] for i in ids], [ids]):
                got = "".join(model.stream(groups))
                if got != want:
                    failures.append(f"{''.join(chars)!r} fed as {len(groups)} groups: {got!r} != {want!r}")
    assert count == sum(len(ALPHABET) ** k for k in range(6))
    assert not failures, f"{len(failures)} of {count} texts differ:\n" + "\n".join(failures[:10])


# Continuations, shortest first: three bytes complete (or break) any partial character, and
# five characters of ALPHABET decide every clean-up pass (" ' re" removes the space before it).
@functools.lru_cache(maxsize=None)
def _continuations(model: Model) -> list[list[int]]:
    conts = [model.ids(bytes([b, 0x80, 0x80])) for b in (0x80, 0x90, 0xA0, 0xBF)]
    for length in range(1, 6):
        conts += [model.ids("".join(chars).encode()) for chars in itertools.product(ALPHABET, repeat=length)]
    return conts


def settled_text(model: Model, ids: list[int], streamed: str, skip_special: bool) -> str:
    """The part of llama_detokenize(ids) that no continuation changes, or enough of it to
    compare with `streamed`: continuations are tried until their common prefix with the
    text of `ids` is no longer than `streamed`."""
    settled = model.want(ids, skip_special)
    for cont in _continuations(model):
        if len(settled) <= len(streamed):
            break
        settled = os.path.commonprefix([settled, model.want(ids + cont, skip_special)])
    return settled


TIMELY_CASES = [b"it 's", b"it 're here", b"a ' ' b .", b"don 't", b"x 'rx", b"a  .  ,", "\xe9 .".encode(),
                "\u65e5\u672c 's\u3060".encode(), "\U0001f600 ' \U0001f600".encode(), b"x ' 's",
                b"  '  'm", b"end '", b"end 'v", b"tail  ", b"a  ' s", b"x 'r '",
                b"\xe3\x81 .", b"\xe3 's", b"\xf0\x9f\x98 ' x", b"'\xe3\x81\x82 '\x80 ,"]


@pytest.mark.parametrize("skip_special", [False, True])
def test_stream_holds_back_only_what_can_still_change(model, skip_special):
    """After each id the stream has returned exactly the settled text: nothing a later id could
    still change, and nothing less (a character cut short by a held-back space is U+FFFD at
    once). One id per byte, so multi-byte characters come in pieces."""
    bos = model.tok.special_ids.bos
    for raw in TIMELY_CASES:
        ids = model.ids(raw)
        if bos is not None:
            ids = [bos] + ids
        stream = model.tok.stream_decoder(skip_special=skip_special)
        so_far = ""
        for k in range(1, len(ids) + 1):
            so_far += stream.feed(ids[k - 1])
            settled = settled_text(model, ids[:k], so_far, skip_special)
            assert so_far == settled, (raw, k, so_far, settled)
        assert so_far + stream.finish() == model.want(ids, skip_special)


def test_tokens_across_feeds_and_invalid_utf8_like_llama_cpp(model):
    """Random id lists: single bytes that matter (ASCII of the passes, lone and partial UTF-8
    bytes), the vocabulary's tokens made only of ALPHABET characters ("'s", " '", " .", ...),
    special tokens, and any id; each fed one at a time and in random groups."""
    letters = set(ALPHABET.encode() + b"?!,mdvl")
    word_ids = [i for piece, i in model.piece_ids.items()
                if piece and len(piece) > 1 and set(piece) <= letters]
    assert len(word_ids) > 20
    n = model.ref.n_tokens
    pool = ([model.byte_id[b] for b in b" '.,?!smtdrvelx"] * 4 + [model.byte_id[b] for b in range(0x80, 0x100)]
            + word_ids * 2 + list(range(n - 40, n)))
    rnd = random.Random(8)
    failures = []
    for case in range(3000):
        ids = [rnd.choice(pool) if rnd.random() < 0.9 else rnd.randrange(n) for _ in range(rnd.randint(0, 14))]
        for skip_special in (False, True):
            want = model.want(ids, skip_special)
            if model.tok.decode(ids, skip_special=skip_special) != want:
                failures.append(f"decode({ids}, skip_special={skip_special})")
            groups, start = [], 0
            while start < len(ids):
                size = rnd.randint(1, 4)
                groups.append(ids[start:start + size])
                start += size
            for feeds in ([[i] for i in ids], groups):
                got = "".join(model.stream(feeds, skip_special))
                if got != want:
                    failures.append(f"{feeds} skip_special={skip_special}: {got!r} != {want!r}")
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:10])


def test_clean_spaces_off_streams_unchanged(fixtures):
    """qwen2 turns clean_spaces off: the same texts keep their spaces, streamed as decoded."""
    m = _model(os.fspath(fixture_file(fixtures, "gguf/ggml-vocab-qwen2.gguf")))
    for text in HAND_CASES:
        ids = m.ids(text.encode())
        assert m.want(ids) == text
        assert "".join(m.stream([[i] for i in ids])) == text
