"""Whole-character starts (toksmith._core.char_starts) on real vocabularies: the model with
them gives the ids of the model merging from bytes, and of tiktoken on the rank files.

Pieces are built to hit the guards: every token that crosses a character's edge (it
starts with trailing bytes, ends inside a character, or holds bytes of two characters)
is completed into text with real characters around it, and those are mixed with runs of
common and rare characters of many scripts, malformed UTF-8 and long (heap) pieces.
"""
from __future__ import annotations

import random

import pytest
import tiktoken

from tests.conftest import fixture_file
from tests.parity.comparison import Comparison
from tests.unit.test_tiktoken_files import tiktoken_constructor
from toksmith._core.byte_bpe import ByteLevelBpe
from toksmith._core.byte_bpe import MergeOrder as CoreMergeOrder
from toksmith.formats.gguf import read_byte_level_gguf
from toksmith.formats.tiktoken import read_tiktoken
from toksmith.vocab import MergeOrder

RANK_FILES = ("r50k_base", "cl100k_base", "o200k_base")
GGUFS = ("gpt-2", "llama-bpe", "qwen2", "falcon", "starcoder", "refact", "mpt", "deepseek-coder")
CROSSING_SAMPLE = 4000      # tokens holding bytes of two characters, per vocabulary (all others are kept)


def both_models(vocab):
    """(with character starts, from bytes) for a ByteLevelVocab, as vocab.build_model() builds it."""
    order = CoreMergeOrder.MERGE_LIST if vocab.merge_order is MergeOrder.MERGE_LIST else CoreMergeOrder.TOKEN_RANK
    return [ByteLevelBpe.build(vocab.texts, vocab.merges, order=order, ignore_merges=vocab.ignore_merges,
                               byte_unicode=vocab.byte_unicode, llama_byte_fallback=vocab.llama_byte_fallback,
                               utf8_symbols=vocab.utf8_symbols, hex_byte_fallback=vocab.hex_byte_fallback,
                               whole_newline_runs=vocab.whole_newline_runs, char_starts=flag)
            for flag in (True, False)]


def is_trail(b: int) -> bool:
    return 0x80 <= b < 0xC0


def char_length(lead: int) -> int:
    return 2 if 0xC2 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if 0xF0 <= lead < 0xF5 else 1


@pytest.fixture(scope="module")
def characters(corpus_lines) -> list[str]:
    """The distinct non-ASCII characters of the corpora, then random ones of the BMP and beyond."""
    seen = dict.fromkeys(c for lines in corpus_lines.values() for line in lines for c in line if ord(c) > 127)
    rng = random.Random(8)
    rare = [chr(rng.choice([rng.randrange(0x80, 0x800), rng.randrange(0x3400, 0xA000),
                            rng.randrange(0xAC00, 0xD7A4), rng.randrange(0xE000, 0x10000),
                            rng.randrange(0x10000, 0x30000)])) for _ in range(3000)]
    return [c for c in list(seen) + rare if not 0xD800 <= ord(c) < 0xE000]


def guard_pieces(token_texts: list[bytes], characters: list[str], seed: int) -> list[bytes]:
    rng = random.Random(seed)
    chars = [c.encode() for c in characters]
    by_suffix, by_prefix = {}, {}
    for c in chars:
        for k in range(1, len(c)):
            by_suffix.setdefault(c[k:], []).append(c)
            by_prefix.setdefault(c[:k], []).append(c)
    context = chars + [b" ", b"x", b"A", b"1", b"\n", b"'", b"\xef\xbc\x8c"]

    def around(core: bytes) -> bytes:
        before = b"".join(rng.choice(context) for _ in range(rng.randrange(4)))
        after = b"".join(rng.choice(context) for _ in range(rng.randrange(4)))
        return before + core + after

    crossing, edge = [], []
    for t in token_texts:
        if not t or all(b < 0x80 for b in t):
            continue
        lead_trails = 0
        while lead_trails < len(t) and is_trail(t[lead_trails]):
            lead_trails += 1
        last = max((i for i, b in enumerate(t) if not is_trail(b)), default=None)
        open_end = last is not None and char_length(t[last]) > len(t) - last
        if lead_trails or open_end:
            edge.append((t, lead_trails, last if open_end else None))
        elif sum(1 for b in t if not is_trail(b)) > 1:
            crossing.append(t)
    pieces = []
    for t, lead_trails, last in edge:
        core = t
        if lead_trails:
            whole = rng.choice(by_suffix.get(t[:lead_trails], [b"\xe4" + b"\x80" * (2 - lead_trails)]))
            core = whole[:-lead_trails] + core
        if last is not None:
            have = t[last:]
            core += rng.choice(by_prefix.get(have, [have + b"\x80" * (char_length(t[last]) - len(have))]))[len(have):]
        pieces += [around(core), core]
    for t in rng.sample(crossing, min(CROSSING_SAMPLE, len(crossing))):
        pieces.append(around(t))
    for _ in range(3000):
        run = b"".join(rng.choice(chars) for _ in range(rng.choice([1, 2, 3, 5, 9, 17, 40])))
        if rng.random() < 0.2:
            cut = rng.randrange(len(run) + 1)
            run = run[:cut] + rng.choice([b"\x80", b"\xff", b"\xe4\xb8", b"\xc3", b"\xf0\x9f"]) + run[cut:]
        pieces.append(around(run))
    pieces.append(b"".join(rng.choice(chars) for _ in range(5000)))
    return pieces


def compare(name, fast, slow, pieces, reference=None):
    """The model with character starts against the one merging from bytes (toksmith against
    itself), and with `reference` (tiktoken's encode_single_piece) against tiktoken."""
    got = fast.encode_pieces(pieces)
    with Comparison(f"character starts, {name}: guard pieces (model stage encode_pieces)",
                    against="itself (character starts vs starts from bytes)") as check:
        check.all(pieces, ours=got, theirs=slow.encode_pieces(pieces))
    if reference is not None:
        with Comparison(f"character starts, {name}: guard pieces (model stage encode_pieces)",
                        against="tiktoken 0.14.0") as check:
            check.all(pieces, ours=got, theirs=[reference(p) for p in pieces])


@pytest.mark.parametrize("name", RANK_FILES)
def test_rank_files(fixtures, characters, name):
    vocab = read_tiktoken(fixture_file(fixtures, f"tiktoken/{name}.tiktoken")).vocab
    constructor = tiktoken_constructor(name, fixtures)
    encoding = tiktoken.Encoding(name=name, pat_str=constructor["pat_str"],
                                 mergeable_ranks=constructor["mergeable_ranks"],
                                 special_tokens=constructor["special_tokens"])
    pieces = guard_pieces([vocab.token_bytes(i) or b"" for i in range(len(vocab.texts))], characters, 1)
    compare(name, *both_models(vocab), pieces, encoding._core_bpe.encode_single_piece)


@pytest.mark.parametrize("name", GGUFS)
def test_gguf_vocabularies(fixtures, characters, name):
    vocab = read_byte_level_gguf(fixture_file(fixtures, f"gguf/ggml-vocab-{name}.gguf")).vocab
    pieces = guard_pieces([vocab.token_bytes(i) or b"" for i in range(len(vocab.texts))], characters, 2)
    compare(name, *both_models(vocab), pieces)
