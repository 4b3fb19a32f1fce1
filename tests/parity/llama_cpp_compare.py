"""Comparisons with llama.cpp that the GGUF parity tests share (the reference: tests/llama_cpp_reference.py).

Every comparison goes through a `tests.parity.comparison.Comparison`, which counts what it
compared and fails on a lost output. decode(skip_special=False) is
llama_detokenize(remove_special=False, unparse_special=True) and decode(skip_special=True) is
llama_detokenize(remove_special=True, unparse_special=False), read as UTF-8 with
errors="replace" (`reference_decode`); decode_bytes is the first one's raw bytes.

    check = Comparison("ggml-vocab-bert-bge.gguf corpora", against="llama.cpp")
    compare_encodes(check, tok, ref, lines, flags=[(False, False), (True, True)])
    compare_decodes(check, tok, ref, [[1, 2, 3], [4]])
    check.finish()
"""
from __future__ import annotations

import random

from tests.conftest import fixture_file
from tests.gguf_reference import read_metadata
from tests.parity.comparison import Comparison

BYTE_LEVEL_GGUFS = ("gpt-2", "llama-bpe", "qwen2", "falcon", "starcoder", "refact", "mpt",
                    "deepseek-coder")
CONTROL, USER_DEFINED = 3, 4   # GGUF token types


def gguf_path(fixtures, name: str):
    return fixture_file(fixtures, f"gguf/ggml-vocab-{name}.gguf")


def special_texts_of(path) -> list[str]:
    """The CONTROL and USER_DEFINED token texts of a GGUF, read by the gguf package."""
    meta = read_metadata(path)
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    return [t.decode("utf-8") for t, k in zip(tokens, types, strict=True) if k in (CONTROL, USER_DEFINED)]




def reference_decode(vocab, ids: list[int], skip_special: bool) -> str:
    raw = vocab.detokenize(ids, remove_special=skip_special, unparse_special=not skip_special)
    return raw.decode("utf-8", errors="replace")


def llama_cpp_ids(ref, text: str, *, add_special: bool, parse_special: bool = False) -> list[int]:
    """llama.cpp's ids of `text` (for functools.partial: an excuse case's `reference_on`)."""
    return ref.tokenize(text.encode("utf-8"), add_special, parse_special)


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


def flags_tag(add_special: bool, parse_special: bool) -> str:
    return f"(add_special={add_special}, parse_special={parse_special})"


def compare_encodes(check: Comparison, tok, ref, texts, *, flags, decode: bool = True,
                    single: bool = True, decode_bytes: bool = True, label: str = "") -> list[list[list[int]]]:
    """encode_batch (and with `single`, encode) of each text (str, or bytes passed as they are)
    under each (add_special, parse_special) of `flags` against llama_tokenize; with `decode`,
    for the flag pairs with parse_special, `compare_decodes` of llama.cpp's ids (whatever ours
    were). Returns llama.cpp's ids per flag pair."""
    raw_texts = [t.encode("utf-8") if isinstance(t, str) else t for t in texts]
    prefix = f"{label} " if label else ""
    wanted = []
    for add_special, parse_special in flags:
        tag = flags_tag(add_special, parse_special)
        want = [ref.tokenize(raw, add_special, parse_special) for raw in raw_texts]
        wanted.append(want)
        check.all(texts, ours=tok.encode_batch(texts, add_special=add_special, parse_special=parse_special),
                  theirs=want, what=f"{prefix}encode_batch {tag}")
        if single:
            check.all(texts, ours=[tok.encode(t, add_special=add_special, parse_special=parse_special)
                                   for t in texts], theirs=want, what=f"{prefix}encode {tag}")
        if decode and parse_special:
            compare_decodes(check, tok, ref, want, with_bytes=decode_bytes, label=label)
    return wanted


def compare_corpora(check: Comparison, tok, ref, corpus_lines: dict[str, list[str]], specials: list[str], *,
                    flags, decode_bytes: bool = True) -> int:
    """`compare_encodes` over every corpus, a seeded quarter of each corpus's lines with one of
    `specials` spliced in; returns how many lines were spliced."""
    spliced_count = 0
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, specials, seed=len(corpus))
        spliced_count += sum(a != b for a, b in check.pairs(texts, lines))
        compare_encodes(check, tok, ref, texts, flags=flags, decode_bytes=decode_bytes, label=corpus)
    return spliced_count


def compare_decodes(check: Comparison, tok, ref, id_lists, *, with_bytes: bool = True, label: str = "") -> None:
    """decode with both skip_special values (and with `with_bytes`, decode_bytes) of each id
    list against llama_detokenize."""
    prefix = f"{label} " if label else ""
    for ids in id_lists:
        for skip in (False, True):
            check.one(ids, tok.decode(ids, skip_special=skip), reference_decode(ref, ids, skip),
                      what=f"{prefix}decode(skip_special={skip})")
        if with_bytes:
            check.one(ids, tok.decode_bytes(ids), ref.detokenize(ids, remove_special=False, unparse_special=True),
                      what=f"{prefix}decode_bytes")


def aborts_llama_cpp(raw: bytes) -> bool:
    """True when llama.cpp's BPE session aborts the process on `raw`: a lead byte F4-F7 with
    three continuation bytes decodes to a code point past U+10FFFF, and unicode_cpt_to_utf8
    throws an exception nothing catches (llama-cpp-python 0.3.36). toksmith makes such a lead
    byte U+FFFD (see tests/unit/test_utf8_repair.py)."""
    for i in range(len(raw) - 3):
        if 0xF4 <= raw[i] <= 0xF7 and all(raw[i + k] & 0xC0 == 0x80 for k in (1, 2, 3)):
            cp = ((raw[i] & 7) << 18) | ((raw[i + 1] & 0x3F) << 12) | ((raw[i + 2] & 0x3F) << 6) | (raw[i + 3] & 0x3F)
            if cp > 0x10FFFF:
                return True
    return False


def llama_cpp_survives(raws: list[bytes], *, at_most: int) -> list[bytes]:
    """`raws` less those llama.cpp aborts the process on (`aborts_llama_cpp`): they cannot be
    compared in this process. At most `at_most` may be left out (each caller says today's count)."""
    kept = [raw for raw in raws if not aborts_llama_cpp(raw)]
    left_out = len(raws) - len(kept)
    assert left_out <= at_most, f"{left_out} inputs left out because llama.cpp aborts on them, at most {at_most}"
    return kept


def golden_cases(fixtures, gguf: str) -> list[tuple[str, list[int]]]:
    """(input, llama.cpp's ids) of a GGUF's golden files (`<gguf>.inp`, `<gguf>.out`)."""
    inputs = fixture_file(fixtures, f"{gguf}.inp").read_bytes().decode("utf-8")
    inputs = inputs.split("\n__ggml_vocab_test__\n")
    assert inputs[-1] == ""
    inputs = inputs[:-1]
    outputs = fixture_file(fixtures, f"{gguf}.out").read_text(encoding="utf-8").split("\n")
    outputs = outputs[:len(inputs)]
    return [(text, [int(x) for x in ids.split()]) for text, ids in zip(inputs, outputs, strict=True)]


def compare_golden(check: Comparison, tok, cases, **flags) -> None:
    """encode_batch and encode of each golden input against llama.cpp's .out ids."""
    texts, want = [text for text, _ in cases], [ids for _, ids in cases]
    check.all(texts, ours=tok.encode_batch(texts, **flags), theirs=want, what="encode_batch")
    check.all(texts, ours=[tok.encode(t, **flags) for t in texts], theirs=want, what="encode")
