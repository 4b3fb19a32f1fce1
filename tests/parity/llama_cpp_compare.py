"""Comparisons with llama.cpp that the GGUF parity tests share (the reference: tests/llama_cpp_reference.py).

decode(skip_special=False) is llama_detokenize(remove_special=False, unparse_special=True) and
decode(skip_special=True) is llama_detokenize(remove_special=True, unparse_special=False), read
as UTF-8 with errors="replace" (`reference_decode`); decode_bytes is the first one's raw bytes.

    mismatches = encode_mismatches(tok, ref, lines, "man_en.txt", flags=[(False, False), (True, True)])
    mismatches += decode_mismatches(tok, ref, [[1, 2, 3], [4]])
"""
from __future__ import annotations

from tests.parity.test_byte_bpe_gguf import spliced
from tests.parity.test_spm_bpe_gguf import reference_decode


def encode_mismatches(tok, ref, texts, label: str, *, flags, decode: bool = True) -> list[str]:
    """encode and encode_batch of each text (str, or bytes passed as they are) under each
    (add_special, parse_special) of `flags` against llama_tokenize; with `decode`, for the
    flag pairs with parse_special, decode x2 and decode_bytes of llama.cpp's ids too."""
    mismatches = []
    raw_texts = [t.encode("utf-8") if isinstance(t, str) else t for t in texts]
    for add_special, parse_special in flags:
        got_batch = tok.encode_batch(texts, add_special=add_special, parse_special=parse_special)
        for i, (text, raw, batch) in enumerate(zip(texts, raw_texts, got_batch)):
            want = ref.tokenize(raw, add_special, parse_special)
            got = tok.encode(text, add_special=add_special, parse_special=parse_special)
            if got != want or batch != want:
                mismatches.append(f"{label}:{i + 1} (add_special={add_special}, parse_special={parse_special}) "
                                  f"{text[:60]!r}\n  ours {got}\n  batch {batch}\n  llama.cpp {want}")
                continue
            if decode and parse_special:
                mismatches += [f"{label}:{i + 1} {text[:60]!r}: {m}" for m in decode_mismatches(tok, ref, [want])]
    return mismatches


def corpora_mismatches(tok, ref, corpus_lines: dict[str, list[str]], specials: list[str], *,
                       flags) -> tuple[int, int, list[str]]:
    """`encode_mismatches` over every corpus, a seeded quarter of each corpus's lines with one
    of `specials` spliced in: (lines compared, lines spliced, mismatches)."""
    compared = spliced_count = 0
    mismatches = []
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, specials, seed=len(corpus))
        spliced_count += sum(a != b for a, b in zip(texts, lines))
        mismatches += encode_mismatches(tok, ref, texts, corpus, flags=flags)
        compared += len(texts)
    return compared, spliced_count, mismatches


def decode_mismatches(tok, ref, id_lists) -> list[str]:
    """decode with both skip_special values and decode_bytes of each id list against llama_detokenize."""
    mismatches = []
    for ids in id_lists:
        for skip in (False, True):
            want = reference_decode(ref, ids, skip)
            if tok.decode(ids, skip_special=skip) != want:
                mismatches.append(f"decode({ids}, skip_special={skip}): {tok.decode(ids, skip_special=skip)!r} "
                                  f"!= {want!r}")
        if tok.decode_bytes(ids) != ref.detokenize(ids, remove_special=False, unparse_special=True):
            mismatches.append(f"decode_bytes({ids})")
    return mismatches
