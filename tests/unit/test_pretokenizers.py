"""Native pre-tokenizers (toksmith._core.pretok_llama / pretok_tiktoken) against references.

- tiktoken's three patterns: the `regex` module (for the semantics; same
  leftmost-first rules as fancy-regex) on every corpus line and tricky string: exact. The
  Unicode version is tiktoken's own (older than `regex`'s): tests/parity/test_unicode_code_point_scan.py.
- llama.cpp's std::regex path: the linear-time VM against Python's backtracking `re`
  (ECMAScript-like leftmost-first; re.ASCII gives the "C" locale's \\s and \\d) on the same
  collapsed text llama.cpp builds, for every regex of the table that llama.cpp sends to
  std::regex. (llama.cpp's own ids for every pre name are checked end to end elsewhere.)
- llama_clean_utf8 against llama.cpp: tokenizing the raw invalid bytes and the cleaned
  text gives the same ids.
- Long inputs (2 M characters) split without crashing and cover the input exactly.
"""
from __future__ import annotations

import pickle
import random
import re

import pytest
import regex

import tiktoken_ext.openai_public as openai_public
from tests import llama_cpp_reference
from tests.conftest import fixture_file
from toksmith._core.pretok_llama import LlamaSplitter, codepoint_symbols
from toksmith._core.pretok_tiktoken import Cl100kSplitter, O200kSplitter, R50kSplitter
from toksmith.errors import ModelFormatError
from toksmith.pretokenizers import regex_program
from toksmith.pretokenizers.llama_cpp import (
    PRE_NAMES, REGEXES, PreType, bpe_model_spec, llama_clean_utf8, pre_tokenizer_spec, regexes_for,
)
from toksmith.pretokenizers.tiktoken_encodings import (
    ENCODINGS, TiktokenPattern, encoding_for_file_name, encodings_for_rank_file,
)


def _openai_constructor_dicts(monkeypatch) -> dict[str, dict]:
    # The constructors would download the rank files: read only pattern and specials.
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
    monkeypatch.setattr(openai_public, "data_gym_to_mergeable_bpe_ranks", lambda *a, **k: {})
    return {name: ctor() for name, ctor in openai_public.ENCODING_CONSTRUCTORS.items()}


@pytest.fixture(scope="module")
def sample_texts(corpus_lines, tricky_strings) -> list[str]:
    texts = [line for lines in corpus_lines.values() for line in lines]
    return texts + tricky_strings


# ----------------------------------------------------------------------------- tiktoken

SPLITTERS = {TiktokenPattern.R50K: R50kSplitter, TiktokenPattern.CL100K: Cl100kSplitter,
             TiktokenPattern.O200K: O200kSplitter}


def test_encoding_table_matches_openai_public(monkeypatch):
    dicts = _openai_constructor_dicts(monkeypatch)
    assert set(dicts) == set(ENCODINGS)
    for name, d in dicts.items():
        enc = ENCODINGS[name]
        assert enc.pattern.value == d["pat_str"], name
        assert enc.special_tokens == d["special_tokens"], name
        assert enc.explicit_n_vocab == d.get("explicit_n_vocab"), name


def test_rank_files_are_recognised(fixtures):
    for stem, names in [("r50k_base", {"gpt2", "r50k_base"}), ("p50k_base", {"p50k_base", "p50k_edit"}),
                        ("cl100k_base", {"cl100k_base"}), ("o200k_base", {"o200k_base", "o200k_harmony"})]:
        data = fixture_file(fixtures, f"tiktoken/{stem}.tiktoken").read_bytes()
        found = encodings_for_rank_file(data)
        assert {e.name for e in found} == names
        assert all(e.rank_file.n_ranks == data.count(b"\n") for e in found)
        assert encoding_for_file_name(f"some/dir/{stem}.tiktoken").name == stem
    assert encodings_for_rank_file(b"YQ== 0\n") == []


@pytest.mark.parametrize("pattern", list(TiktokenPattern), ids=lambda p: p.name)
def test_tiktoken_splitter_matches_regex_on_corpus(pattern, sample_texts):
    splitter = pattern.build_splitter()
    assert isinstance(splitter, SPLITTERS[pattern])
    compiled = regex.compile(pattern.value)
    mismatches = [text for text in sample_texts
                  if splitter.split_text(text.encode()) != [m.encode() for m in compiled.findall(text)]]
    assert not mismatches, f"{len(mismatches)} of {len(sample_texts)} differ, first {mismatches[0][:80]!r}"


@pytest.mark.parametrize("pattern", list(TiktokenPattern), ids=lambda p: p.name)
def test_tiktoken_splitter_matches_regex_on_random_tricky_text(pattern):
    # Letters of every case class (Lu Ll Lt Lm Lo M), contractions with long s, digits of
    # other scripts, Unicode spaces, newlines, '/', punctuation, emoji.
    alphabet = list("aAzZ'sStTlLvVeErRdDmM \t\n\r/1,.!$_") + [
        "\u0663", "\u4e2d", "\u01c5", "\u02b0", "\u0301", "\u0915", "\u093f", "\u00a0", "\u2003",
        "\u017f", "\u2167", "\U0001f600", "\u3000", "\x85"]
    splitter = pattern.build_splitter()
    compiled = regex.compile(pattern.value)
    rng = random.Random(8)
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        assert splitter.split_text(text.encode()) == [m.encode() for m in compiled.findall(text)], repr(text)


# ----------------------------------------------------------------------------- llama.cpp


def test_every_pre_name_builds_a_splitter():
    assert len(PRE_NAMES) >= 90
    built = {}
    for name, spec in PRE_NAMES.items():
        if spec.pre_type not in built:
            built[spec.pre_type] = spec.build_splitter()
        assert built[spec.pre_type].regexes == regexes_for(spec.pre_type)
    assert len(built) >= 55


def test_unknown_pre_name_is_a_clear_error():
    with pytest.raises(ModelFormatError) as err:
        pre_tokenizer_spec("no-such-pre", source="model.gguf")
    assert "model.gguf" in str(err.value) and "'no-such-pre'" in str(err.value)
    assert "llama-bpe" in str(err.value) and "qwen35" in str(err.value)
    assert pre_tokenizer_spec(None).pre_type == PreType.DEFAULT
    with pytest.raises(ModelFormatError, match="gemma4"):
        bpe_model_spec("llama", source="model.gguf")


def _std_regex_reference(regex_text: str, text: str) -> list[str]:
    """llama.cpp's unicode_regex_split for one regex, with Python's backtracking `re`."""
    collapsed = regex_program.uses_categories(regex_text)
    pattern = regex_program.collapse_pattern(regex_text) if collapsed else regex_text
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"  # ECMAScript $ (no multiline) is the end only
    symbols = "".join(chr(codepoint_symbols(ord(c))[0 if collapsed else 1]) for c in text)
    pieces, start = [], 0
    for m in re.finditer(pattern, symbols, re.ASCII):
        if m.start() > start:
            pieces.append(text[start:m.start()])
        pieces.append(text[m.start():m.end()])
        start = m.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def _vm_regexes() -> list[str]:
    custom = {"\\p{Han}+", "\\p{AFMoE_digits}", "(?=(\\d{3})+(?!\\d))", "\\d{1,3}(?=(?:\\d{3})*\\b)"}
    return sorted({r for regexes in REGEXES.values() for r in regexes if r not in custom})


@pytest.mark.parametrize("regex_text", _vm_regexes(), ids=lambda r: r[:40])
def test_vm_matches_backtracking_regex_on_collapsed_text(regex_text, corpus_lines, tricky_strings):
    vm = LlamaSplitter([regex_text], force_vm=True)
    texts = [line for lines in corpus_lines.values() for line in lines[:120]] + tricky_strings
    rng = random.Random(5)
    alphabet = list("aA'sS  \t\n\r/1,.!$<>IMGZ") + ["\u4e2d", "\u01c5", "\u0301", "\u00a0", "\u3000",
                                                  "\u0663", "\U0001f600", "\u00e9", "\u0915\u093f"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14))) for _ in range(1500)]
    for text in texts:
        want = [p.encode() for p in _std_regex_reference(regex_text, text)]
        assert vm.split_text(text.encode()) == want, repr(text[:80])


HAND_WRITTEN = [(PreType.JAIS2, 0), (PreType.GPT4O, 0), (PreType.GRANITE_EMB_MULTI, 0), (PreType.TEKKEN, 0),
                (PreType.TINY_AYA, 1), (PreType.YOUTU, 1)]


@pytest.mark.parametrize("pre_type,index", HAND_WRITTEN, ids=lambda x: getattr(x, "name", str(x)))
def test_hand_written_splitter_matches_its_regex(pre_type, index, corpus_lines):
    # llama.cpp runs these regexes on std::regex; toksmith's hand-written splitters (JAIS2's
    # whitespace cascade would make the VM quadratic; the o200k-shaped ones are hot) must
    # give what the VM gives on the same regex.
    regex_text = regexes_for(pre_type)[index]
    native, vm = LlamaSplitter([regex_text]), LlamaSplitter([regex_text], force_vm=True)
    rng = random.Random(11)
    alphabet = list("aAzZ'sStTlLvVeErRdDmM  \t\n\r/1,.!$") + [
        "\u0663", "\u4e2d", "\u01c5", "\u02b0", "\u0301", "\u0915", "\u093f", "\u00a0", "\u3000",
        "\u017f", "\U0001f600", "\x85", "\u00e9", "\u00c9"]
    texts = [" " * n + tail for n in range(0, 1100, 7) for tail in ("", "x", "\n", " x", "\t\n  y")]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14))) for _ in range(8000)]
    texts += [line for lines in corpus_lines.values() for line in lines[:150]]
    for text in texts:
        assert native.split_text(text.encode()) == vm.split_text(text.encode()), repr(text[:60])


def test_llama_clean_utf8_matches_llama_cpp(fixtures, invalid_utf8_lines):
    vocab = llama_cpp_reference.load_vocab(fixture_file(fixtures, "gguf/ggml-vocab-gpt-2.gguf"))
    def past_max_codepoint(raw: bytes) -> bool:  # llama.cpp throws (aborts) on those
        return any(0xF5 <= b <= 0xF7 or (b == 0xF4 and i + 1 < len(raw) and raw[i + 1] >= 0x90)
                   for i, b in enumerate(raw))

    cases = [line for line in invalid_utf8_lines if not past_max_codepoint(line)]
    assert len(cases) >= 15
    rng = random.Random(3)
    pool = [0x61, 0x20, 0x80, 0xBF, 0xC0, 0xC1, 0xC3, 0xA9, 0xE0, 0xE2, 0x82, 0xED, 0xA0, 0xF0, 0x9F, 0xF4, 0x8F, 0xF8, 0xFF]
    randoms = [bytes(rng.choice(pool) for _ in range(rng.randint(1, 10))) for _ in range(600)]
    cases += [raw for raw in randoms if not past_max_codepoint(raw)]
    for raw in cases:
        cleaned = llama_clean_utf8(raw)
        cleaned.decode("utf-8", "surrogatepass")  # well-formed from here on
        assert vocab.tokenize(raw, False, False) == vocab.tokenize(cleaned, False, False), raw


def _all_splitters():
    out = [(p.name, p.build_splitter()) for p in TiktokenPattern]
    seen = set()
    for pre_type in PreType:
        regexes = regexes_for(pre_type)
        if regexes not in seen:
            seen.add(regexes)
            out.append((pre_type.name, LlamaSplitter(regexes)))
    return out


@pytest.mark.parametrize("name,splitter", _all_splitters(), ids=lambda x: x if isinstance(x, str) else "")
def test_long_inputs_split_without_crash_and_cover_the_text(name, splitter):
    # (bounded stack, no quadratic rescans: JAIS2 on the VM took hours here)
    for unit in ("a", " ", "7", "\u4e2d", " \n"):
        text = (unit * (2_000_000 // len(unit))).encode()
        pieces = splitter.split_text(text)
        assert b"".join(pieces) == text and all(pieces), (name, unit)


def test_splitters_pickle():
    for name, splitter in _all_splitters()[:6]:
        clone = pickle.loads(pickle.dumps(splitter))
        assert clone.split_text(b"It's 2024, hello  world!\n") == splitter.split_text(b"It's 2024, hello  world!\n")


@pytest.mark.parametrize("oniguruma", [False, True])
def test_byte_splitters_match_their_codepoint_twins(oniguruma, corpus_lines):
    """A GPT-2 / Llama 3 / Qwen 2 regex alone splits over the bytes (llama_bytes.pxi): the
    same cuts as the codepoint splitters of llama_splitters.pxi, invalid UTF-8 included."""
    from toksmith._core import pretok_llama as pl
    regexes = ([pl.HF_GPT2_REGEX, pl.HF_LLAMA3_REGEX, pl.HF_QWEN2_REGEX] if oniguruma
               else [pl.GPT2_REGEX, *pl.LLAMA3_REGEXES, pl.QWEN2_REGEX])
    rng = random.Random(5)
    pieces = [b"\xff", b"\xc0\x80", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf7\xbf\xbf\xbf",
              b"\xc3", b"\xe6\x97", b"'", b" ", b"  ", b"\t", b"\r\n", b"\n", b"a", b"Z", b"1", b"123", b"!",
              b"'s", b"'S", b"'ll", b"'\xc5\xbf", b"\xc5\xbf", "\u00a0\u3000\u0663\u4e2d\u0301".encode(),
              # runs past eight bytes and the ASCII neighbours of the letters: the word and
              # space scans read eight bytes at a time
              b"abcdefghijklm", b"NOPQRSTUVWXYZ", b"         ", b"@", b"[", b"`", b"{", b"\x7f"]
    texts = [b"".join(rng.choice(pieces) if rng.random() < 0.8 else bytes([rng.randrange(256)])
                      for _ in range(rng.randint(1, 20))) for _ in range(20000)]
    texts += [line.encode() for lines in corpus_lines.values() for line in lines[:300]]
    for regex in regexes:
        fast = LlamaSplitter([regex], oniguruma=oniguruma)
        slow = LlamaSplitter([regex], oniguruma=oniguruma, by_codepoints=True)
        for text in texts:
            assert fast.split_text(text) == slow.split_text(text), (regex, text)
