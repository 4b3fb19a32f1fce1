"""Byte-level BPE GGUF vocabularies against llama.cpp itself (tests/llama_cpp_reference.py).

- llama.cpp's golden ``.inp``/``.out`` files of every byte-level fixture GGUF (and the
  qwen35 pair, read from the qwen2 vocabulary with the pre-tokenizer forced to qwen35);
- every corpus line for each byte-level fixture GGUF, with a special-token text spliced
  into a seeded quarter of the lines, with (add_special, parse_special) = (False, False)
  and (True, True), through encode and encode_batch; the invalid UTF-8 lines as bytes;
- decode of llama.cpp's ids with both skip_special values against llama_detokenize, and
  decode_bytes against llama_detokenize's raw bytes.

decode(skip_special=False) is llama_detokenize(remove_special=False, unparse_special=True)
and decode(skip_special=True) is llama_detokenize(remove_special=True, unparse_special=False),
read as UTF-8 with errors="replace".
"""
from __future__ import annotations

import random

import pytest

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import fixture_file, report
from tests.gguf_copy import copy_gguf
from tests.gguf_reference import read_metadata
from tests.parity.test_spm_bpe_gguf import fail_on, golden_cases, reference_decode

BYTE_LEVEL_GGUFS = ("gpt-2", "llama-bpe", "qwen2", "falcon", "starcoder", "refact", "mpt",
                    "deepseek-coder")
CONTROL, USER_DEFINED = 3, 4   # GGUF token types


def gguf_path(fixtures, name: str):
    return fixture_file(fixtures, f"gguf/ggml-vocab-{name}.gguf")


@pytest.mark.parametrize("name", BYTE_LEVEL_GGUFS)
def test_llama_cpp_golden_files(fixtures, name):
    cases = golden_cases(fixtures, f"gguf/ggml-vocab-{name}.gguf")
    assert len(cases) == 46
    tok = toksmith.load(gguf_path(fixtures, name))
    got_batch = tok.encode_batch([text for text, _ in cases], add_special=False, parse_special=False)
    mismatches = []
    for (text, want), batch in zip(cases, got_batch):
        got = tok.encode(text, add_special=False, parse_special=False)
        if got != want or batch != want:
            mismatches.append(f"{text!r}: ours {got} / batch {batch}, llama.cpp {want}")
    report(f"ggml-vocab-{name}.gguf golden .inp/.out: {len(cases) - len(mismatches)} of "
           f"{len(cases)} match")
    fail_on(mismatches)


def test_qwen35_golden_file_with_forced_pre(fixtures, tmp_path):
    """The qwen35 pair goes with the qwen2 vocabulary read with pre="qwen35"."""
    cases = golden_cases(fixtures, "gguf/ggml-vocab-qwen35.gguf")   # no GGUF of its own: .inp/.out only
    assert len(cases) == 50
    tok = toksmith.load(gguf_path(fixtures, "qwen2"), pre="qwen35")
    mismatches = [f"{text!r}: ours {tok.encode(text, add_special=False)}, llama.cpp {want}"
                  for text, want in cases if tok.encode(text, add_special=False) != want]
    report(f"ggml-vocab-qwen35.gguf golden .inp/.out (qwen2 vocabulary, pre=qwen35): "
           f"{len(cases) - len(mismatches)} of {len(cases)} match")
    fail_on(mismatches)
    # pre= is really applied: on combining marks qwen35 (letters with \p{M}) and qwen2 differ,
    # and each matches llama.cpp reading a copy of the file with that pre name.
    copy = copy_gguf(gguf_path(fixtures, "qwen2"), tmp_path / "qwen35.gguf", {"tokenizer.ggml.pre": "qwen35"})
    qwen35_ref = llama_cpp_reference.LlamaCppVocab(copy)
    qwen2_ref = llama_cpp_reference.load_vocab(gguf_path(fixtures, "qwen2"))
    plain = toksmith.load(gguf_path(fixtures, "qwen2"))
    differ = 0
    try:
        for text in ("ภาษาไทย สวัสดีครับ", "مَرْحَبًا", "नमस्ते दुनिया", "cafe\u0301 de\u0301ja\u0300"):
            forced, default = tok.encode(text, add_special=False), plain.encode(text, add_special=False)
            assert forced == qwen35_ref.tokenize(text.encode(), False, False)
            assert default == qwen2_ref.tokenize(text.encode(), False, False)
            differ += forced != default
    finally:
        qwen35_ref.close()
    assert differ, "no text told qwen35 from qwen2: the test would not see pre= ignored"


def aborts_llama_cpp(raw: bytes) -> bool:
    """True when llama.cpp's BPE session aborts the process on `raw`: a lead byte F4-F7 with
    three continuation bytes decodes to a code point past U+10FFFF, and unicode_cpt_to_utf8
    throws an exception nothing catches. toksmith makes such a lead byte U+FFFD (see
    tests/unit/test_utf8_repair.py); these cases are left out of the comparison."""
    for i in range(len(raw) - 3):
        if 0xF4 <= raw[i] <= 0xF7 and all(raw[i + k] & 0xC0 == 0x80 for k in (1, 2, 3)):
            cp = ((raw[i] & 7) << 18) | ((raw[i + 1] & 0x3F) << 12) | ((raw[i + 2] & 0x3F) << 6) | (raw[i + 3] & 0x3F)
            if cp > 0x10FFFF:
                return True
    return False


def special_texts_of(path) -> list[str]:
    meta = read_metadata(path)
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    return [t.decode("utf-8") for t, k in zip(tokens, types) if k in (CONTROL, USER_DEFINED)]


def spliced(lines: list[str], specials: list[str], seed: int) -> list[str]:
    """Each line, a seeded quarter of them with a special-token text inserted somewhere."""
    rnd = random.Random(seed)
    out = []
    for line in lines:
        if specials and rnd.random() < 0.25:
            at = rnd.randint(0, len(line))
            line = line[:at] + rnd.choice(specials) + line[at:]
        out.append(line)
    return out


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")   # llama.cpp warns too
@pytest.mark.parametrize("name", BYTE_LEVEL_GGUFS)
def test_corpora_match_llama_cpp(fixtures, corpus_lines, invalid_utf8_lines, name):
    path = gguf_path(fixtures, name)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    assert tok.vocab_size == ref.n_tokens
    specials = special_texts_of(path)
    mismatches = []
    compared = spliced_count = 0
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, specials, seed=len(corpus))
        spliced_count += sum(a != b for a, b in zip(texts, lines))
        for add_special, parse_special in ((False, False), (True, True)):
            got_batch = tok.encode_batch(texts, add_special=add_special, parse_special=parse_special)
            for i, (text, batch) in enumerate(zip(texts, got_batch)):
                want = ref.tokenize(text.encode("utf-8"), add_special, parse_special)
                got = tok.encode(text, add_special=add_special, parse_special=parse_special)
                if got != want or batch != want:
                    mismatches.append(f"{corpus}:{i + 1} (add_special={add_special}, parse_special="
                                      f"{parse_special}) {text[:60]!r}\n  ours {got}\n  llama.cpp {want}")
                    continue
                if not parse_special:
                    continue
                for skip in (False, True):
                    expected = reference_decode(ref, want, skip)
                    if tok.decode(want, skip_special=skip) != expected:
                        mismatches.append(f"{corpus}:{i + 1} decode(skip_special={skip}) {text[:60]!r}: "
                                          f"{tok.decode(want, skip_special=skip)!r} != {expected!r}")
                raw = ref.detokenize(want, remove_special=False, unparse_special=True)
                if tok.decode_bytes(want) != raw:
                    mismatches.append(f"{corpus}:{i + 1} decode_bytes {text[:60]!r}")
        compared += len(lines)
    for raw in invalid_utf8_lines:
        if aborts_llama_cpp(raw):
            continue
        compared += 1
        for add_special, parse_special in ((False, False), (True, True)):
            want = ref.tokenize(raw, add_special, parse_special)
            got = tok.encode(raw, add_special=add_special, parse_special=parse_special)
            if got != want:
                mismatches.append(f"invalid UTF-8 {raw!r}: ours {got}, llama.cpp {want}")
    report(f"ggml-vocab-{name}.gguf vs llama.cpp: {compared} lines ({spliced_count} with a special "
           f"text spliced in) x 2 flag combinations (ids, batch ids; decode x2 and decode_bytes "
           f"for parse_special), {len(mismatches)} mismatches")
    fail_on(mismatches)


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe"])
def test_random_invalid_utf8_matches_llama_cpp(fixtures, name):
    """Seeded random byte strings heavy in broken sequences (llama.cpp decodes each
    structurally and makes every byte that starts no sequence U+FFFD)."""
    from tests.unit.test_utf8_repair import random_bytes
    path = gguf_path(fixtures, name)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    texts = [raw for raw in random_bytes(3, 6000) if not aborts_llama_cpp(raw)]
    mismatches = [f"{raw!r}: ours {ids}, llama.cpp {ref.tokenize(raw, False, False)}"
                  for raw, ids in zip(texts, tok.encode_batch(texts, add_special=False))
                  if ids != ref.tokenize(raw, False, False)]
    report(f"ggml-vocab-{name}.gguf random invalid UTF-8 vs llama.cpp: {len(texts)} byte strings, "
           f"{len(mismatches)} mismatches")
    fail_on(mismatches)


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe"])
def test_random_id_lists_decode_like_detokenize(fixtures, name):
    """Seeded random id lists, weighted to single-byte tokens (partial UTF-8) and specials."""
    path = gguf_path(fixtures, name)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    n = tok.vocab_size
    pool = list(range(256)) + list(range(n - 300, n))
    rnd = random.Random(11)
    mismatches = []
    cases = 3000
    for _ in range(cases):
        ids = [rnd.choice(pool) if rnd.random() < 0.7 else rnd.randrange(n)
               for _ in range(rnd.randint(0, 10))]
        for skip in (False, True):
            want = reference_decode(ref, ids, skip)
            if tok.decode(ids, skip_special=skip) != want:
                mismatches.append(f"decode({ids}, skip_special={skip}): "
                                  f"{tok.decode(ids, skip_special=skip)!r} != {want!r}")
        if tok.decode_bytes(ids) != ref.detokenize(ids, remove_special=False, unparse_special=True):
            mismatches.append(f"decode_bytes({ids})")
    report(f"ggml-vocab-{name}.gguf random id lists vs llama_detokenize: {cases} lists x 3, "
           f"{len(mismatches)} mismatches")
    fail_on(mismatches)
