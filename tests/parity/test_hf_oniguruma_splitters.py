"""The hand-written splitters reading Oniguruma's classes (split_patterns.oniguruma_splitter:
LlamaSplitter(oniguruma=True), O200kSplitter(oniguruma=True)) vs tokenizers 0.23.3's Split
on the same tokenizer.json patterns (GPT-2's ByteLevel regex, Llama 3's / cl100k's, Qwen 2's,
o200k's), and ByteLevel(use_regex) itself for GPT-2's:

* every line of every corpus, and LONG_RUNS;
* seeded random strings drawn from every code point next to a boundary of Oniguruma's
  \\p{L} \\p{N} \\p{M} \\s and of llama.cpp's own tables (where the two disagree), any code
  point at random, and runs of spaces, digits, letters, apostrophes (with s S ſ t T...),
  \\r \\n mixes.
"""
from __future__ import annotations

import random

import pytest
import tokenizers
from tokenizers import Regex, pre_tokenizers

from tests.conftest import LONG_RUNS
from tests.parity.comparison import Comparison
from toksmith._core.pretok_llama import (HF_GPT2_REGEX, HF_LLAMA3_REGEX, HF_QWEN2_REGEX, LlamaSplitter,
                                         codepoint_symbols)
from toksmith.hf import onig_unicode
from toksmith.hf.split_patterns import O200K_REGEX, oniguruma_splitter

TOKENIZERS = f"tokenizers {tokenizers.__version__}"
PATTERNS = {"gpt2": HF_GPT2_REGEX, "llama3": HF_LLAMA3_REGEX, "qwen2": HF_QWEN2_REGEX, "o200k": O200K_REGEX}


def _reference(pattern: str):
    split = pre_tokenizers.Split(Regex(pattern), "isolated")
    return lambda text: [piece for piece, _ in split.pre_tokenize_str(text)]


def _ours(pattern: str):
    splitter = oniguruma_splitter(pattern)
    return lambda text: [piece.decode("utf-8") for piece in splitter.split_text(text.encode("utf-8"))]


def _boundary_code_points() -> list[int]:
    """Code points at (and next to) a boundary of each class the splitters read, and where
    llama.cpp's letter/number/space flags differ from Oniguruma's."""
    points = set()
    for ranges in [onig_unicode.property_ranges(name) for name in ("L", "N", "M", "Lu", "Ll", "Lt", "Lm", "Lo")] + [
            onig_unicode.escape_ranges("s")]:
        for lo, hi in ranges:
            points.update((lo - 1, lo, hi, hi + 1))
    points.update((0x17F, 0x212A, 0x130, 0x131, 0x85, 0xA0, 0x1680, 0x180E, 0x200B, 0x2028, 0x2029,
                   0x202F, 0x205F, 0x3000, 0xFEFF, 0x1C, 0x1D, 0x1E, 0x1F))
    return sorted(p for p in points if 0 <= p < 0x110000 and not 0xD800 <= p < 0xE000)


_PIECES = [" ", "  ", "   ", "\t", "\r", "\n", "\r\n", "\n\n", " \n", "\u00a0", "\u3000", "'", "''", "'s", "'S",
           "'\u017f", "'t", "'T", "'re", "'RE", "'rE", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL", "'d", "'D",
           "s", "S", "\u017f", "a", "Z", "Ab", "aB", "ABc", "DŽ", "ǅ", "ʰ", "/", "\n/", "é", "日本", "1", "12", "123", "1234", "١٢", "½", "Ⅻ", "!", "?!", "...",
           "-", "_", "\u0301", "\u0903", "🦙", "x" * 5, "7" * 7, " " * 6, "\x0b", "\x0c", "\x1c"]


def _random_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    boundaries = _boundary_code_points()
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 14)):
            kind = rng.random()
            if kind < 0.45:
                parts.append(rng.choice(_PIECES))
            elif kind < 0.8:
                parts.append(chr(rng.choice(boundaries)))
            else:
                cp = rng.randrange(0x110000)
                parts.append(chr(cp) if not 0xD800 <= cp < 0xE000 else "x")
        texts.append("".join(parts))
    return texts


def _compare(name: str, texts: list[str], label: str) -> None:
    ours, theirs = _ours(PATTERNS[name]), _reference(PATTERNS[name])
    with Comparison(f"oniguruma splitter {name} pieces, {label}", against=f"{TOKENIZERS} Split") as check:
        for text in texts:
            check.one(text, ours(text), theirs(text))


@pytest.mark.parametrize("name", PATTERNS)
def test_every_corpus_line(name, corpus_lines):
    texts = [line for lines in corpus_lines.values() for line in lines] + LONG_RUNS
    _compare(name, texts, "corpus lines")


@pytest.mark.parametrize("name", PATTERNS)
def test_random_boundary_strings(name):
    _compare(name, _random_texts(9, 30000), "random strings")


@pytest.mark.parametrize("name", PATTERNS)
def test_every_boundary_code_point_in_context(name):
    """Each boundary code point alone and between letters, digits, spaces, apostrophes."""
    contexts = ["{}", "a{}", "{}a", " {}", "{} ", "{}  x", "'{}", "1{}2", "{}\n", "\n{}", "!{}", "{}{}"]
    texts = [ctx.format(chr(cp), chr(cp)) if ctx == "{}{}" else ctx.format(chr(cp))
             for cp in _boundary_code_points() for ctx in contexts]
    _compare(name, texts, "boundary code points x contexts")


def test_gpt2_splitter_is_byte_levels_regex(corpus_lines):
    """ByteLevel(use_regex) pieces, mapped back to bytes, are the GPT-2 splitter's."""
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    ours = LlamaSplitter([HF_GPT2_REGEX], oniguruma=True)
    decode = {v: k for k, v in _bytes_to_unicode().items()}
    texts = corpus_lines["tricky_strings.txt"] + _random_texts(11, 3000) + LONG_RUNS
    with Comparison("oniguruma splitter gpt2 pieces (bytes)", against=f"{TOKENIZERS} ByteLevel(use_regex)") as check:
        for text in texts:
            theirs = [bytes(decode[ch] for ch in piece) for piece, _ in byte_level.pre_tokenize_str(text)]
            check.one(text, ours.split_text(text.encode("utf-8")), theirs)


def _bytes_to_unicode() -> dict[int, str]:
    visible = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    mapping, extra = {}, 0
    for b in range(256):
        if b in visible:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


def test_refuses_other_patterns_and_pickles():
    import pickle
    with pytest.raises(ValueError):
        LlamaSplitter([r"\s+"], oniguruma=True)
    assert oniguruma_splitter(r"\s+") is None
    # the unpickled splitters split as tokenizers does (equal to the originals alone, emptied
    # output would pass)
    o200k = oniguruma_splitter(O200K_REGEX)
    want = [piece.encode() for piece in _reference(O200K_REGEX)("HelloWorld's")]
    assert pickle.loads(pickle.dumps(o200k)).split_text(b"HelloWorld's") == o200k.split_text(b"HelloWorld's") == want
    splitter = LlamaSplitter([HF_LLAMA3_REGEX], oniguruma=True)
    again = pickle.loads(pickle.dumps(splitter))
    want = [piece.encode() for piece in _reference(HF_LLAMA3_REGEX)("it'\u017f ok")]
    assert again.oniguruma
    assert again.split_text("it'\u017f ok".encode()) == splitter.split_text("it'\u017f ok".encode()) == want
    assert codepoint_symbols(0x4E2D)[0] == 0xD2   # llama.cpp mode unchanged


@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_byte_level_pretokenizer_alone(add_prefix_space):
    """tokenizer.json's ByteLevel pre-tokenizer stage (RoBERTa's add_prefix_space, the
    general path) splits with the same splitter (it used tiktoken's r50k tables: 845 of
    these strings differed)."""
    from toksmith.hf import components as c
    from toksmith.hf.native_pretokenizers import byte_level_pretokenizer
    ref = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space, use_regex=True)
    ours = byte_level_pretokenizer(c.ByteLevel(add_prefix_space=add_prefix_space, trim_offsets=True,
                                               use_regex=True))
    texts = _random_texts(9, 20000) + LONG_RUNS
    with Comparison(f"ByteLevel pre-tokenizer stage (add_prefix_space={add_prefix_space}) pieces, random strings",
                    against=f"{TOKENIZERS} ByteLevel") as check:
        for text in texts:
            check.one(text, [p.decode() for p in ours.split_text(text.encode())],
                      [p for p, _ in ref.pre_tokenize_str(text)])
