"""Very long single pre-tokens through byte-level BPE, vs tiktoken and llama.cpp.

A pre-token of thousands of symbols is merged through a queue of rank buckets
(rank_queue.pxd), and one holding a byte pair that no symbol's text holds is cut there
into pieces encoded alone (ByteLevelBpe._next_cut). Both must give exactly the
reference's ids. Real vocabularies order their merges so that a merge's result ranks
after its parts; the queue must also be exact when they do not, so each vocabulary is
also tried with its ranks (tiktoken) or merges (llama.cpp) shuffled.

The pieces are long runs built from the corpora (letters only, one pre-token under
GPT-2's regex; emoji and CJK runs; mixed scripts) and walks over the vocabulary's own
tokens joined only where a symbol may span the junction. The test works out from the
vocabulary which pieces hold a cut and which are long with none (the queue's case), and
requires both kinds.
"""
from __future__ import annotations

import base64
import random

import pytest
import regex
import tiktoken

from tests import llama_cpp_reference
from tests.conftest import fixture_file
from tests.parity.byte_bpe_pieces import GPT2, gguf_copy, whole_under
from tests.parity.comparison import Comparison
from toksmith._core.byte_bpe import ByteLevelBpe, MergeOrder
from toksmith._core.byte_unicode import byte_unicode_decode
from toksmith._core.wire import parse_gguf_metadata
from toksmith.formats.gguf import read_byte_level_gguf
from toksmith.formats.tiktoken import read_tiktoken

QUEUE_MIN_SYMBOLS = 4096   # byte_bpe.pyx: pre-tokens this long are merged through the rank queue


def long_runs(corpus_lines: dict[str, list[str]], seed: str) -> list[str]:
    """Runs of letters (every script of the corpora), emoji and CJK, 5k-12k characters."""
    rng = random.Random(seed)
    letters = {}
    for lines in corpus_lines.values():
        for line in lines:
            for word in regex.findall(r"\p{L}+", line):
                letters[word] = None
    words = list(letters)
    runs = []
    for _ in range(6):
        run = ""
        while len(run) < rng.randrange(5000, 12000):
            run += rng.choice(words)
        runs.append(run)
    emoji = [chr(c) for c in range(0x1F600, 0x1F650)] + ["🦙", "👍🏽", "🇯🇵"]
    cjk = [chr(c) for c in range(0x4E00, 0x4E00 + 400)]
    for pool in (emoji, cjk, emoji + cjk):
        runs.append("".join(rng.choice(pool) for _ in range(rng.randrange(3000, 6000))))
    runs += ["a" * 9000, "é" * 5000, "日本語" * 2000, "🦙😀" * 2500]
    return runs


def token_walks(texts: list[bytes], joined: set[bytes], seed: str, count: int = 4) -> list[bytes]:
    """Concatenations of random tokens, up to 5k-9k bytes, with no cut at any junction (a
    walk ends early where no token may follow its last byte)."""
    rng = random.Random(seed)
    texts = sorted(t for t in texts if len(t) > 1)
    followers = {last: [t for t in texts if bytes([last, t[0]]) in joined] for last in range(256)}
    walks = []
    for _ in range(count):
        walk = bytearray(rng.choice(texts))
        goal = rng.randrange(5000, 9000)
        while len(walk) < goal and followers[walk[-1]]:
            walk += rng.choice(followers[walk[-1]])
        walks.append(bytes(walk))
    return walks


def joined_pairs(texts) -> set[bytes]:
    """Every adjacent byte pair inside some text: the pairs a symbol may span."""
    pairs = set()
    for text in texts:
        pairs.update(text[i:i + 2] for i in range(len(text) - 1))
    return pairs


def kinds(pieces: list[bytes], joined: set[bytes]) -> tuple[int, int]:
    """(pieces holding a cut, pieces of QUEUE_MIN_SYMBOLS+ bytes holding none)."""
    cut = sum(any(p[i:i + 2] not in joined for i in range(len(p) - 1)) for p in pieces)
    uncut_long = sum(len(p) >= QUEUE_MIN_SYMBOLS and all(p[i:i + 2] in joined for i in range(len(p) - 1))
                     for p in pieces)
    return cut, uncut_long


def rank_file(ranks: dict[bytes, int]) -> bytes:
    return b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in sorted(ranks.items(), key=lambda kv: kv[1]))


@pytest.mark.parametrize("shuffled", [False, True], ids=["ranks", "shuffled-ranks"])
def test_long_pieces_match_tiktoken(fixtures, corpus_lines, tmp_path, shuffled):
    ranks = {}
    for line in fixture_file(fixtures, "tiktoken/cl100k_base.tiktoken").read_bytes().splitlines():
        if line:
            text, rank = line.split()
            ranks[base64.b64decode(text)] = int(rank)
    if shuffled:
        # the ranks of the tokens of 2+ bytes, dealt out again at random
        rng = random.Random("shuffled cl100k")
        long_tokens = [t for t in ranks if len(t) > 1]
        values = [ranks[t] for t in long_tokens]
        rng.shuffle(values)
        ranks.update(zip(long_tokens, values, strict=True))
    path = tmp_path / "cl100k_base.tiktoken"
    path.write_bytes(rank_file(ranks))
    model = read_tiktoken(path).vocab.build_model()
    encoding = tiktoken.Encoding(name="long-pieces", pat_str=r"\S+", mergeable_ranks=ranks, special_tokens={})
    pieces = [run.encode() for run in long_runs(corpus_lines, "tiktoken")]
    pieces += [bytes(random.Random(k).randrange(256) for _ in range(6000)) for k in range(2)]
    joined = joined_pairs(ranks)
    pieces += token_walks(list(ranks), joined, "tiktoken")
    cut, uncut_long = kinds(pieces, joined)
    assert cut >= 3 and uncut_long >= 3, (cut, uncut_long)
    with Comparison(f"long pieces, cl100k {'shuffled ranks' if shuffled else 'ranks'} ({cut} with a cut, "
                    f"{uncut_long} of {QUEUE_MIN_SYMBOLS}+ bytes without; model stage encode_piece)",
                    against="tiktoken 0.14.0") as check:
        check.all(pieces, ours=[model.encode_piece(p) for p in pieces],
                  theirs=[encoding._core_bpe.encode_single_piece(p) for p in pieces])


@pytest.mark.parametrize("shuffled", [False, True], ids=["merges", "shuffled-merges"])
def test_long_pieces_match_llama_cpp(fixtures, corpus_lines, tmp_path, shuffled):
    src = fixture_file(fixtures, "gguf/ggml-vocab-gpt-2.gguf")
    path = src
    merges = parse_gguf_metadata(src.read_bytes())[2]["tokenizer.ggml.merges"]
    if shuffled:
        merges = list(merges)
        random.Random("shuffled gpt-2").shuffle(merges)
        path = tmp_path / "gpt-2-shuffled-merges.gguf"
        gguf_copy(src, path, **{"tokenizer.ggml.merges": merges})
    spec = read_byte_level_gguf(path)
    model = spec.vocab.build_model()
    ref = llama_cpp_reference.load_vocab(path)
    # one pre-token each under llama.cpp's GPT-2 regex
    pieces = [run.encode() for run in long_runs(corpus_lines, "llama.cpp") if whole_under(run, GPT2)]
    symbol_texts = [byte_unicode_decode(t) for t in spec.vocab.texts if t is not None]
    symbol_texts += [byte_unicode_decode(m.replace(b" ", b"", 1)) for m in merges]
    symbol_texts = [t for t in symbol_texts if t is not None]
    joined = joined_pairs(symbol_texts)
    letter_tokens = [t for t in symbol_texts if regex.fullmatch(r"\p{L}+", t.decode("utf-8", "replace"))]
    pieces += [w for w in token_walks(letter_tokens, joined, "llama.cpp") if whole_under(w.decode(), GPT2)]
    cut, uncut_long = kinds(pieces, joined)
    assert cut >= 3 and uncut_long >= 3, (cut, uncut_long)
    with Comparison(f"long pieces, gpt-2 {'shuffled merges' if shuffled else 'merges'} ({cut} with a cut, "
                    f"{uncut_long} of {QUEUE_MIN_SYMBOLS}+ bytes without; model stage encode_piece)",
                    against="llama.cpp") as check:
        check.all(pieces, ours=[model.encode_piece(p) for p in pieces],
                  theirs=[ref.tokenize(p, add_special=False, parse_special=False) for p in pieces])


def test_random_small_vocabularies_on_long_pieces_match_tiktoken():
    # Few letters and random ranks: same-rank pairs overlap everywhere and merges often
    # rank below their parts, so the queue's order (leftmost first among equal ranks,
    # lower ranks first as they appear) decides the result.
    rng = random.Random("small vocabularies")
    check = Comparison("long pieces, 40 random small vocabularies (model stage encode_piece)", against="tiktoken 0.14.0")
    for case in range(40):
        letters = b"abc"[:rng.randrange(2, 4)]
        texts = {bytes([c]) for c in letters}
        while len(texts) < rng.randrange(8, 40):
            texts.add(bytes(rng.choice(letters) for _ in range(rng.randrange(2, 6))))
        order = list(texts)
        rng.shuffle(order)
        ranks = {t: r for r, t in enumerate(order)}
        encoding = tiktoken.Encoding(name=f"small-{case}", pat_str=r"\S+", mergeable_ranks=ranks, special_tokens={})
        model = ByteLevelBpe.build(order, order=MergeOrder.TOKEN_RANK, ignore_merges=True)
        for length in (QUEUE_MIN_SYMBOLS + 1, 6000, 100):
            piece = bytes(rng.choice(letters) for _ in range(length))
            check.one(piece, model.encode_piece(piece), encoding._core_bpe.encode_single_piece(piece))
    check.finish(at_least=120)
