"""tokenizers' decoders natively (toksmith._core.hf_decoders, toksmith.hf.native_decoders)
against tokenizers 0.23.3's own decoders.

- every decoder type alone and in chains, on random token lists over a pool of tokens that
  hit each rule (byte tokens valid, invalid and cut short, `<0x+F>`, suffixes, prefixes,
  replacement characters, pads, cleanup patterns, characters outside GPT-2's byte map),
  and on the real vocabularies of the fixtures (GPT-2, ruT5, MiniLM, Llama 2): random ids
  and the ids of corpus lines as the vocabulary's own library tokenizes them;
- edge cases one by one (empty lists, only byte tokens, a first token of replacement
  characters only, Strip's panics);
- decode_bytes: the raw bytes where a repair step's output is only joined or stripped;
- streaming: random cuts of the ids into feeds concatenate to decode(ids), and after each
  feed the text given so far is exactly what every continuation shares (the common
  prefix of tokenizers' decode over continuations that reach every branch).

tests/parity/test_hf_decoder_files.py runs the same over every corpus line and whole
tokenizer.json files.
"""
from __future__ import annotations

import itertools
import os
import random

import pytest
from tokenizers import decoders as D

from tests.conftest import multilingual_sample, report
from tests.hf_decoders_reference import (CONFIGS, HF, Reference, component, decode_tokens, describe, native,
                                         real_ids, vocabulary)
from toksmith._core.detokenizer import StreamDecoder
from toksmith._core.hf_decoders import (FuseStage, HfDecoder, JoinSpacesStage, ReplaceStage, StripStage,
                                        TokenKind)
from toksmith.errors import ReferenceAbortsError, TokenIdError, UnsupportedModelError
from toksmith.hf import components as c
from toksmith.hf.native_decoders import DECODER_BUILDERS, decoder_stages

# Tokens that hit every rule of every decoder.
POOL = ["a", "b", "ab", "aab", " ", "  ", "\u2581", "\u2581a", "a\u2581\u2581", "</w>", "a</w>", "<0x41>", "<0xE3>",
        "<0x81>", "<0x82>", "<0x80>", "<0xe3>", "<0x+F>", "<0x4", "<0x41>x", "##", "##a", "#", "<pad>", "|", " .",
        ".", "'", " do", " not", "\u0120", "\u0120hi", "\u00e9", "\u00c3", "\u00a9", "", "x", "\ufffd", "\u0122",
        "1>", ">"]

# Decoders over POOL. The last three are chains where one stage waits for what an earlier
# stage holds back, although every way that can come out would let it go on: several
# replacing stages after a Fuse (each holds the start of a match its own input leaves
# open), WordPiece's space before a token that ByteFallback's held run will make. There
# the stream may give text a few characters late (checked for never early only).
TOY_CONFIGS = [
    None,
    D.BPEDecoder(), D.BPEDecoder(suffix=""), D.BPEDecoder(suffix="ab"),
    D.ByteFallback(), D.ByteLevel(), D.Fuse(),
    D.CTC(), D.CTC(pad_token="a", word_delimiter_token="", cleanup=True), D.CTC(cleanup=False),
    D.Metaspace(), D.Metaspace(prepend_scheme="never"), D.Metaspace(replacement="a", prepend_scheme="first"),
    D.Replace("ab", "X"), D.Replace("aab", "a"), D.Replace("", "X"), D.Replace("\u2581", " "), D.Replace("a", "ab"),
    D.Strip(" ", 1, 0), D.Strip("a", 2, 1), D.Strip(" ", 0, 2),
    D.WordPiece(), D.WordPiece(prefix="a", cleanup=False), D.WordPiece(prefix=""),
    D.Sequence([D.Replace("\u2581", " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 1, 0)]),
    D.Sequence([D.ByteFallback(), D.Fuse(), D.Metaspace()]),
    D.Sequence([D.ByteLevel(), D.Strip(" ", 1, 1)]),
    D.Sequence([D.Fuse(), D.ByteFallback(), D.BPEDecoder(suffix="a"), D.Replace("ab", "b")]),
    D.Sequence([D.Fuse(), D.Replace("aab", "a"), D.WordPiece(), D.BPEDecoder(suffix="a")]),
    D.Sequence([D.ByteFallback(), D.CTC(), D.WordPiece(), D.BPEDecoder(suffix="a")]),
    D.Sequence([D.ByteFallback(), D.Strip(" ", 0, 1), D.CTC(), D.Fuse(), D.CTC(pad_token=" "), D.Fuse(),
                D.Strip("a", 1, 1)]),
]
LATE_BY_DESIGN = TOY_CONFIGS[-3:]


def _ids(tokens: list[str]) -> list[int]:
    return [POOL.index(t) for t in tokens]


def _stream(decoder: HfDecoder, ids: list[int], rnd: random.Random) -> list[str]:
    stream = StreamDecoder(decoder)
    pieces, i = [], 0
    while i < len(ids):
        k = rnd.randint(1, 4)
        pieces.append(stream.feed(ids[i:i + k]) if k > 1 else stream.feed(ids[i]))
        i += k
    return pieces + [stream.finish()]


def _decode_or_refusal(decoder: HfDecoder, ids: list[int]) -> str | None:
    try:
        return decoder.decode(ids)
    except ReferenceAbortsError:
        return None


# ---------------------------------------------------------------------- the registry

def test_every_decoder_type_has_a_builder():
    for member in c.Decoder.__args__:
        assert member in DECODER_BUILDERS, member
    assert type(None) in DECODER_BUILDERS


def test_regex_replace_refused_by_its_path_where_the_matcher_refuses():
    # a back-reference has no linear-time match: refused, naming the decoder's JSON path
    ref = D.Sequence([D.Fuse(), D.Replace(__import__("tokenizers").Regex(r"(a)\1"), " ")])
    with pytest.raises(UnsupportedModelError, match=r"\$\.decoder\.decoders\[1\]"):
        decoder_stages(HF, component(ref), "$.decoder", False)


REGEX_CONFIGS = [
    lambda R: D.Replace(R(r"\s+"), " "),
    lambda R: D.Replace(R(r"a*"), "X"),
    lambda R: D.Replace(R(r"(?<=a)b|^\u2581"), ""),
    lambda R: D.Sequence([D.Replace(R("\u2581+"), " "), D.ByteFallback(), D.Fuse(), D.Replace(R(r" ?\.$"), "!")]),
    lambda R: D.Sequence([D.ByteFallback(), D.Fuse(), D.Replace(R(r"\p{L}+"), "w")]),
]


@pytest.mark.parametrize("make", REGEX_CONFIGS)
def test_regex_replace_matches_tokenizers(make):
    from tokenizers import Regex
    ref = make(Regex)
    decoder = native(ref, POOL)
    rnd = random.Random(9)
    for _ in range(2000):
        tokens = [rnd.choice(POOL) for _ in range(rnd.randint(0, 9))]
        want = decode_tokens(ref, tokens)
        ids = _ids(tokens)
        assert decoder.decode(ids) == want, tokens
        assert "".join(_stream(decoder, ids, rnd)) == want, tokens


def test_stages_belong_to_one_decoder():
    stage = FuseStage()
    HfDecoder.build([b"a"], b"\0", [stage])
    with pytest.raises(ValueError, match="fresh"):
        HfDecoder.build([b"a"], b"\0", [stage])


def test_chains_skip_what_changes_nothing():
    # Strip(0, 0), Replace(x, x), and the prefix of WordPiece after a Fuse
    ref = D.Sequence([D.Fuse(), D.Strip(" ", 0, 0), D.Replace("a", "a"), D.WordPiece(cleanup=False)])
    assert native(ref, ["a"]).stage_names == ["FuseStage"]
    assert native(None, ["a"]).stage_names == ["JoinSpacesStage"]
    assert native(D.CTC(), ["a"]).stage_names[:2] == ["DedupStage", "ReplaceStage"]


# ---------------------------------------------------------------------- random token lists

@pytest.mark.parametrize("ref", TOY_CONFIGS, ids=describe)
def test_random_token_lists_match_tokenizers(ref):
    """Decode and a randomly cut stream, 2,000 lists of up to 9 tokens from POOL."""
    decoder = native(ref, POOL)
    rnd = random.Random(len(describe(ref)))
    failures = []
    for _ in range(2000):
        tokens = [rnd.choice(POOL) for _ in range(rnd.randint(0, 9))]
        want = decode_tokens(ref, tokens)
        ids = _ids(tokens)
        got = _decode_or_refusal(decoder, ids)
        if got != want:
            failures.append(f"{tokens}: {got!r} != {want!r}")
        elif want is not None and "".join(_stream(decoder, ids, rnd)) != want:
            failures.append(f"{tokens} streamed: {_stream(decoder, ids, random.Random(0))} != {want!r}")
    assert not failures, "\n".join(failures[:10])


# ---------------------------------------------------------------------- edge cases

EDGE_CASES = [
    # (decoder, tokens)
    *[(ref, []) for ref in TOY_CONFIGS],
    *[(ref, [""]) for ref in TOY_CONFIGS],
    *[(ref, ["", ""]) for ref in TOY_CONFIGS],
    (D.ByteFallback(), ["<0xE3>", "<0x81>", "<0x82>"]),              # one valid run: one token
    (D.ByteFallback(), ["<0xE3>", "<0x81>"]),                        # cut short: U+FFFD per byte token
    (D.ByteFallback(), ["<0xE3>", "<0x81>", "a", "<0x82>"]),         # a token ends the run
    (D.ByteFallback(), ["<0x80>", "<0x41>", "<0xE3>"]),              # invalid at once
    (D.ByteFallback(), ["<0x+F>", "<0xe3>", "<0x81>", "<0x82>", "<0x-1>", "<0x 1>", "<0x\u00e9>"]),
    (D.Sequence([D.ByteFallback(), D.Strip("\ufffd", 1, 0)]), ["<0x80>", "<0x80>"]),
    (D.Sequence([D.ByteFallback(), D.WordPiece()]), ["<0xE3>", "<0x81>", "<0x82>", "##a", "<0x80>"]),
    (D.Metaspace(), ["\u2581\u2581a\u2581", "\u2581b\u2581"]),         # every one of the first token's
    (D.Metaspace(prepend_scheme="first"), ["\u2581\u2581", "\u2581"]),
    (D.Metaspace(prepend_scheme="never"), ["\u2581\u2581a", "\u2581"]),
    (D.Sequence([D.Fuse(), D.Metaspace()]), ["\u2581a", "\u2581b"]),  # one token after a Fuse
    (D.BPEDecoder(), ["a</w>b</w>", "c</w>d</w>"]),                   # the last token's suffixes: ""
    (D.BPEDecoder(), ["a</w> b", "c"]),
    (D.BPEDecoder(suffix=""), ["ab", "c"]),
    (D.Sequence([D.Fuse(), D.BPEDecoder()]), ["a</w>", "b</w>"]),
    (D.WordPiece(), ["a", "#", "##", "##b", " .", "do", "not", " do not", "it", "'s"]),  # cleanup per token
    (D.WordPiece(), ["a", "'", "s"]),
    (D.CTC(), ["a", "a", "<pad>", "a", "|", "|", "b", "<pad><pad>", "", ""]),
    (D.CTC(), ["<pad>", "a"]),
    (D.Sequence([D.CTC(), D.WordPiece()]), ["<pad>", "a", "##b", "<pad>", "c"]),  # dropped tokens are gone
    (D.Sequence([D.Fuse(), D.CTC(), D.Strip(" ", 0, 1)]), ["<pad>"]),     # no token left: no panic
    (D.Sequence([D.Fuse(), D.CTC(), D.Fuse(), D.Strip(" ", 0, 1)]), ["<pad>"]),  # Fuse makes one again
    (D.ByteLevel(), ["\u0120hi", "a b", "\u00e3\u0123", "\u0123"]),   # a character outside the map: UTF-8 kept
    (D.ByteLevel(), ["\u00e3", "\u0123", "\u0124"]),                  # a character across tokens
    (D.ByteLevel(), ["\u00e3", "a", "\u00ff"]),                       # cut short, invalid lead
    (D.Sequence([D.ByteLevel(), D.ByteLevel()]), ["\u00e3\u0123\u0124"]),
    (D.Replace("", "X"), ["", "ab", "\u00e9"]),
    (D.Replace("aa", "X"), ["aaa", "aaaa"]),
    (D.Replace("ab", "abab"), ["abab", "aab"]),
    (D.Strip(" ", 1, 0), [" "]),
    (D.Strip(" ", 3, 0), ["  "]),
    (D.Strip(" ", 1, 1), ["  "]),
    (D.Strip(" ", 2, 3), ["     x "]),
    (D.Strip("\u00e9", 1, 1), ["\u00e9a\u00e9\u00e9"]),
    # tokenizers panics on these (index out of bounds): toksmith refuses them
    (D.Strip(" ", 0, 1), [""]),
    (D.Strip(" ", 0, 3), ["  "]),
    (D.Strip(" ", 1, 1), [" "]),
    (D.Sequence([D.Fuse(), D.Strip(" ", 2, 2)]), [" ", " "]),
]


@pytest.mark.parametrize("ref, tokens", EDGE_CASES, ids=lambda x: repr(x)[:60] if isinstance(x, list) else describe(x))
def test_edge_cases(ref, tokens):
    texts = sorted(set(tokens) | {"x"})
    decoder = native(ref, texts)
    ids = [texts.index(t) for t in tokens]
    want = decode_tokens(ref, tokens)
    if want is None:
        with pytest.raises(ReferenceAbortsError, match="panics in its Strip decoder"):
            decoder.decode(ids)
        stream = StreamDecoder(decoder)
        with pytest.raises(ReferenceAbortsError):
            for i in ids:
                stream.feed(i)
            stream.finish()
        return
    assert decoder.decode(ids) == want
    for cut in range(len(ids) + 1):
        stream = StreamDecoder(decoder)
        assert stream.feed(ids[:cut]) + stream.feed(ids[cut:]) + stream.finish() == want


def test_strip_every_short_token():
    """Every token of up to 5 characters over {content, two others}, Strip(start, stop) for
    start, stop < 4, alone and after a Fuse of one token per character."""
    count = 0
    for content, others in ((" ", "xé"), ("é", "e\u00e8")):
        alphabet = [content, *others]
        for start, stop in itertools.product(range(4), repeat=2):
            ref = D.Strip(content, start, stop)
            alone = native(ref, ["".join(t) for n in range(6) for t in itertools.product(alphabet, repeat=n)])
            fused = native(D.Sequence([D.Fuse(), ref]), alphabet)
            for n in range(6):
                for chars in itertools.product(alphabet, repeat=n):
                    want = decode_tokens(ref, ["".join(chars)])
                    token_id = [i for i in range(alone.n_pieces) if alone.piece(i) == "".join(chars).encode()][0]
                    assert _decode_or_refusal(alone, [token_id]) == want, (content, start, stop, chars)
                    ids = [alphabet.index(ch) for ch in chars]
                    assert _decode_or_refusal(fused, ids) == want, (content, start, stop, chars)
                    if want is not None:
                        assert "".join(_stream(fused, ids, random.Random(n))) == want
                    count += 1
    assert count == 2 * 16 * sum(3 ** n for n in range(6))


# ---------------------------------------------------------------------- real vocabularies

@pytest.fixture(scope="module")
def real_sample(fixtures, corpus_lines):
    """Per vocabulary: ids of corpus lines (the reference library's tokenization), then
    random ids: uniform over the vocabulary and from its most telling tokens."""
    lines = multilingual_sample(corpus_lines, 25)
    sample = {}
    for name in CONFIGS:
        texts = vocabulary(fixtures, name)
        rnd = random.Random(len(texts))
        telling = [i for i, t in enumerate(texts) if t.startswith(("<0x", "\u2581", "##", "\u0120", "["))
                   or set(t) <= set(" .,?!'\u2581\u0120")]
        seqs = real_ids(fixtures, name, lines)
        n_lines = len(seqs)
        seqs += [[rnd.randrange(len(texts)) for _ in range(rnd.randint(0, 12))] for _ in range(300)]
        seqs += [[rnd.choice(telling) for _ in range(rnd.randint(1, 12))] for _ in range(300)]
        sample[name] = (texts, seqs, n_lines)
    return sample


@pytest.mark.parametrize("name", list(CONFIGS))
def test_real_vocabularies_match_tokenizers(real_sample, name):
    texts, seqs, n_lines = real_sample[name]
    rnd = random.Random(3)
    compared = 0
    for ref in CONFIGS[name]:
        decoder = native(ref, texts)
        want = Reference(ref, texts).decode_batch(seqs)
        for k, (ids, w) in enumerate(zip(seqs, want)):
            got = _decode_or_refusal(decoder, ids)
            assert got == w, (name, describe(ref), [texts[i] for i in ids][:20])
            if w is not None and k < n_lines and "\ufffd" not in w:
                # no UTF-8 repair happened: decode_bytes is the text's bytes
                assert decoder.decode_bytes(ids) == w.encode(), (name, describe(ref), ids)
            if w is not None and rnd.random() < 0.2:
                assert "".join(_stream(decoder, ids, rnd)) == w, (name, describe(ref), ids)
        compared += len(seqs)
    report(f"hf decoders on the {name} vocabulary: {len(seqs)} id lists ({n_lines} corpus lines) x "
           f"{len(CONFIGS[name])} decoders = {compared} decodes vs tokenizers: 0 mismatches")


# ---------------------------------------------------------------------- skip_special, missing ids

def test_special_and_missing_ids():
    kinds = bytes([TokenKind.TOKEN_TEXT, TokenKind.TOKEN_SPECIAL, TokenKind.TOKEN_MISSING])
    decoder = HfDecoder.build([b"a", b"<s>", b""], kinds, [JoinSpacesStage()])
    assert decoder.decode([1, 0, 1, 0]) == "<s> a <s> a"
    assert decoder.decode([1, 0, 1, 0], skip_special=True) == "a a"
    stream = StreamDecoder(decoder, skip_special=True)
    assert stream.feed([1, 0]) + stream.feed(1) + stream.feed(0) + stream.finish() == "a a"
    with pytest.raises(TokenIdError, match="token id 2"):
        decoder.decode([0, 2])
    # a feed with a missing id changes nothing
    stream = StreamDecoder(decoder)
    assert stream.feed(0) == "a"
    with pytest.raises(TokenIdError):
        stream.feed([0, 2])
    assert stream.feed(1) + stream.finish() == " <s>"
    with pytest.raises(TokenIdError):
        decoder.decode([0, 3])


def test_a_failed_stream_says_so():
    decoder = native(D.Strip(" ", 0, 1), ["", "a"])
    stream = StreamDecoder(decoder)
    assert stream.feed(1) == "a"
    with pytest.raises(ReferenceAbortsError):
        stream.feed(0)
    with pytest.raises(ValueError, match="failed earlier"):
        stream.feed(1)


# ---------------------------------------------------------------------- decode_bytes

def test_decode_bytes_keeps_raw_bytes_where_no_later_stage_looks():
    bytes_of = {f"<0x{b:02X}>": bytes([b]) for b in range(256)}
    texts = ["\u2581a", "b", *bytes_of]
    ids = [texts.index(t) for t in ("\u2581a", "<0xE3>", "<0x81>", "b", "<0x80>", "<0xE3>")]
    # Llama 2's chain: its runs' bytes as they are, one leading space stripped
    llama2 = D.Sequence([D.Replace("\u2581", " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 1, 0)])
    decoder = native(llama2, texts)
    assert decoder.decode(ids) == decode_tokens(llama2, [texts[i] for i in ids]) == "a\ufffd\ufffdb\ufffd\ufffd"
    assert decoder.decode_bytes(ids) == b"a\xe3\x81b\x80\xe3"
    # ByteLevel then Strip: the raw bytes; then a Replace of a non-ASCII pattern: the text
    gpt2 = ["\u0120a", "\u00e3", "\u0123", "\u00e9"]
    ids = [0, 1, 2, 3]
    assert native(D.Sequence([D.ByteLevel(), D.Strip(" ", 1, 0)]), gpt2).decode_bytes(ids) == b"a\xe3\x81\xe9"
    ref = D.Sequence([D.ByteLevel(), D.Replace("\u00e9", "e")])
    assert native(ref, gpt2).decode_bytes(ids) == decode_tokens(ref, gpt2).encode()
    # CTC compares tokens: U+FFFD tokens are equal where their bytes are not
    ref = D.Sequence([D.ByteFallback(), D.CTC()])
    ids = [texts.index(t) for t in ("<0x80>", "<0x81>", "b")]
    assert native(ref, texts).decode_bytes(ids) == decode_tokens(ref, [texts[i] for i in ids]).encode() \
        == "\ufffdb".encode()


# ---------------------------------------------------------------------- streaming: as soon as settled

def settled_text(ref, tokens: list[str], streamed: str, continuations) -> str | None:
    """The part of tokenizers' decode(tokens) that no continuation changes, or enough of it
    to compare with `streamed`: continuations are tried until their common prefix with the
    text of `tokens` is no longer than `streamed` (None: every decode panics)."""
    settled = decode_tokens(ref, tokens)
    for cont in continuations:
        if settled is not None and len(settled) <= len(streamed):
            break
        text = decode_tokens(ref, tokens + cont)
        if text is not None:
            settled = text if settled is None else os.path.commonprefix([settled, text])
    return settled


def _toy_continuations():
    completers = ["<0x80>", "<0x81>", "<0x82>", "\u00a9", "\u0122"]
    conts = [[]] + [[t] for t in POOL]
    conts += [list(x) for n in (2, 3) for x in itertools.product(completers, repeat=n)]
    conts += [[a, b] for a in POOL for b in POOL]
    return conts


@pytest.mark.parametrize("ref", TOY_CONFIGS, ids=describe)
def test_stream_gives_text_as_soon_as_it_is_settled(ref):
    """After each id, the stream has given exactly what every continuation shares."""
    decoder = native(ref, POOL)
    conts = _toy_continuations()
    rnd = random.Random(11)
    exact = ref not in LATE_BY_DESIGN
    for _ in range(40):
        tokens = [rnd.choice(POOL) for _ in range(rnd.randint(1, 7))]
        if decode_tokens(ref, tokens) is None:
            continue
        stream = StreamDecoder(decoder)
        so_far = ""
        for k, token in enumerate(tokens, 1):
            try:
                so_far += stream.feed(POOL.index(token))
            except ReferenceAbortsError:
                break
            settled = settled_text(ref, tokens[:k], so_far, conts)
            if settled is None:
                continue
            assert settled.startswith(so_far), ("too early", tokens[:k], so_far, settled)
            if exact:
                assert so_far == settled, ("too late", tokens[:k], so_far, settled)


@pytest.mark.parametrize("name, ref", [("llama2", CONFIGS["llama2"][0]), ("llama2", CONFIGS["llama2"][4]),
                                       ("gpt2", CONFIGS["gpt2"][3]), ("rut5", CONFIGS["rut5"][4]),
                                       ("minilm", CONFIGS["minilm"][0])],
                         ids=lambda x: x if isinstance(x, str) else describe(x))
def test_real_streams_give_text_as_soon_as_it_is_settled(real_sample, name, ref):
    texts, seqs, n_lines = real_sample[name]
    decoder = native(ref, texts)
    index = {t: i for i, t in enumerate(texts)}
    pool = [t for t in ("\u2581", "\u2581a", "a", ".", "\u0120", "\u0120a", "\u010a", "<0x41>", "<0x80>", "<0xE3>",
                        "##a", "[CLS]", "'", "s", "\u00c3", "\u00e3", "\u00a9") if t in index]
    completers = [t for t in ("<0x80>", "<0xA0>", "<0xBF>", "\u0122", "\u00a9", "\u0142") if t in index]
    conts = [[]] + [[index[t]] for t in pool] + \
        [[index[a] for a in x] for n in (2, 3) for x in itertools.product(completers, repeat=n)]
    ref_ids = Reference(ref, texts)
    rnd = random.Random(4)
    for ids in rnd.sample([s for s in seqs if s], 25):
        ids = ids[:40]
        stream = StreamDecoder(decoder)
        so_far = ""
        for k in range(1, len(ids) + 1):
            so_far += stream.feed(ids[k - 1])
            settled = ref_ids.decode(ids[:k])
            for cont in conts:
                if settled is None or len(settled) <= len(so_far):
                    break
                text = ref_ids.decode(ids[:k] + cont)
                if text is not None:
                    settled = os.path.commonprefix([settled, text])
            if settled is not None:
                assert so_far == settled, (name, [texts[i] for i in ids[:k]], so_far, settled)


def test_replace_holds_only_what_a_match_can_change():
    """A Replace after a Fuse, one id per character: for patterns with self-overlaps and
    contents that share their start, after each id the stream has given exactly what
    every continuation (all, up to three characters) shares."""
    alphabet = ["a", "b", "c"]
    conts = [list(x) for n in range(4) for x in itertools.product(alphabet, repeat=n)]
    for pattern, content in itertools.product(["a", "ab", "aab", "aba", "abab", "bab"],
                                              ["", "a", "ab", "aa", "abc", "x", "aab"]):
        ref = D.Sequence([D.Fuse(), D.Replace(pattern, content)])
        decoder = native(ref, alphabet)
        for n in range(7):
            for chars in itertools.product(alphabet[:2] if n > 4 else alphabet, repeat=n):
                chars = list(chars)
                stream = StreamDecoder(decoder)
                so_far = ""
                for k in range(1, n + 1):
                    so_far += stream.feed(alphabet.index(chars[k - 1]))
                    settled = os.path.commonprefix([decode_tokens(ref, chars[:k] + cont) for cont in conts])
                    assert so_far == settled, (pattern, content, chars[:k], so_far, settled)
                assert so_far + stream.finish() == decode_tokens(ref, chars)


def test_stage_constructors_check_their_arguments():
    with pytest.raises(ValueError):
        StripStage(b"ab", 1, 0)
    with pytest.raises(ValueError):
        StripStage(b" ", -1, 0)
    assert HfDecoder.build([b"ab"], b"\0", [ReplaceStage(b"b", b"c")]).decode([0, 0]) == "acac"


# ---------------------------------------------------------------------- whole files

def _word_level_file(ref_tok) -> tuple:
    from toksmith.hf.pipeline import hf_tokenizer_spec
    from toksmith.hf.reader import read_hf_json
    hf = read_hf_json(ref_tok.to_str(), "tokenizer.json")
    return hf_tokenizer_spec(hf), hf


def test_normalized_added_tokens_decode_as_their_normalized_form(monkeypatch):
    """Parity: AddedVocabulary::simple_id_to_token: an added token marked `normalized`
    decodes as its normalized form, and skip_special tests that form against the special
    contents ("SPEC" lower-cased is no special token's content, so it stays). Lowercase
    runs here as llama.cpp's lower-casing (the same on ASCII) until its own stage lands."""
    import tokenizers
    from tokenizers import AddedToken, models, normalizers

    from toksmith._core.whitespace_session import LlamaCppLowercase
    from toksmith.hf.native_decoders import build_decoder
    from toksmith.hf.native_normalizers import NORMALIZER_BUILDERS
    if c.Lowercase not in NORMALIZER_BUILDERS:
        monkeypatch.setitem(NORMALIZER_BUILDERS, c.Lowercase, lambda hf, component, path: LlamaCppLowercase())
    ref = tokenizers.Tokenizer(models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
    ref.normalizer = normalizers.Lowercase()
    ref.decoder = D.WordPiece()
    ref.add_tokens([AddedToken("HeLLo", normalized=True), AddedToken("KEEP", normalized=False)])
    ref.add_special_tokens([AddedToken("SPEC", normalized=True, special=True), AddedToken("S2", special=True,
                                                                                         normalized=False)])
    spec, hf = _word_level_file(ref)
    decoder = build_decoder(spec, hf)
    for ids in ([0, 2, 3, 4, 5, 0], [4, 5], [5, 2], []):
        for skip in (False, True):
            assert decoder.decode(ids, skip_special=skip) == ref.decode(ids, skip_special_tokens=skip), (ids, skip)
    assert decoder.piece(2) == b"HeLLo"      # tokenize's piece: the content


def test_files_refuse_a_regex_replace_and_overlong_chains(monkeypatch):
    import tokenizers
    from tokenizers import models

    from toksmith.hf import native_decoders
    ref = tokenizers.Tokenizer(models.WordLevel({"a": 0}, unk_token="a"))
    # a back-reference: no native matcher runs it (and without one, no Regex runs)
    ref.decoder = D.Sequence([D.ByteFallback(), D.Replace(tokenizers.Regex(r"(a)\1"), "b")])
    spec, hf = _word_level_file(ref)
    with pytest.raises(UnsupportedModelError, match=r"tokenizer\.json: \$\.decoder\.decoders\[1\]"):
        native_decoders.build_decoder(spec, hf)
    ref.decoder = D.Sequence([D.Fuse()] * 5)
    spec, hf = _word_level_file(ref)
    monkeypatch.setattr(native_decoders, "MAX_STAGES", 4)
    with pytest.raises(UnsupportedModelError, match="5 decoder stages"):
        native_decoders.build_decoder(spec, hf)


def test_a_trained_byte_level_file_decodes_and_streams_through_load(tmp_path, corpus_lines):
    """A byte-level BPE tokenizer.json trained by tokenizers on a corpus sample, with a chain
    decoder and a special token, through toksmith.load: decode both ways and streams."""
    import tokenizers
    from tokenizers import AddedToken, models, pre_tokenizers, trainers

    import toksmith
    lines = multilingual_sample(corpus_lines, 60)
    ref = tokenizers.Tokenizer(models.BPE())
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    ref.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=600, show_progress=False,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    ref.add_special_tokens([AddedToken("<eot>", special=True, normalized=False)])
    ref.decoder = D.Sequence([D.ByteLevel(), D.Replace(" the", " THE"), D.Strip(" ", 1, 0)])
    ref.save(str(tmp_path / "tokenizer.json"))
    tok = toksmith.load(tmp_path / "tokenizer.json")
    rnd = random.Random(2)
    eot = ref.token_to_id("<eot>")
    for line in lines:
        ids = ref.encode(line).ids
        ids = ids[:len(ids) // 2] + [eot] + ids[len(ids) // 2:]
        for skip in (False, True):
            want = ref.decode(ids, skip_special_tokens=skip)
            assert tok.decode(ids, skip_special=skip) == want
            stream = tok.stream_decoder(skip_special=skip)
            pieces, i = [], 0
            while i < len(ids):
                k = rnd.randint(1, 3)
                pieces.append(stream.feed(ids[i:i + k]))
                i += k
            assert "".join(pieces) + stream.finish() == want
