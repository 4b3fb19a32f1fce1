"""GGUF vocabularies written as tokenizer.json, loaded by tokenizers 0.23.3, against llama.cpp
(tests/llama_cpp_reference.py) on the GGUF, every corpus line.

The special-token texts (CONTROL and USER_DEFINED, special_texts_of) are spliced into a
seeded quarter of the lines. (add_special, parse_special) = (True, True) is compared on every
line; (False, False) on the spliced lines, where parse_special acts (add_special only puts
BOS first / EOS last on both sides: llama_tokenize pushes them around the fragments, the
written template around the sequence; the (True, True) lines hold them). parse_special=False
is tokenizers' encode_special_tokens=True. Decode: llama_detokenize(remove_special=False,
unparse_special=True) of llama.cpp's ids against tokenizers' decode(skip_special_tokens=False)
on every compared line; remove_special=True against skip_special_tokens=True on the spliced
lines. The 22 invalid-UTF-8 lines are not compared: tokenizers' Python API takes str only.

What tokenizers cannot express, each checked line by line (anything else fails):
- DECODE_USER_DEFINED_RAW (deepseek-coder): llama.cpp copies a USER_DEFINED token's text
  raw ("ü"); tokenizers' ByteLevel decoder reads every token through GPT-2's byte map, so
  "ü" is byte 0xFC, invalid UTF-8. Encode is exact.
- DECODE_SKIP_BOS_SPACE (SPM): with remove_special, llama.cpp drops a leading BOS and then
  keeps the next token's leading space (remove_space = false); tokenizers drops it.
- STRIP_UNICODE_WHITESPACE (phi-3): a token with llama.cpp's LSTRIP/RSTRIP attribute next to
  a non-ASCII whitespace character ("\u3000"): llama.cpp strips what C's isspace() accepts
  (ASCII), tokenizers' lstrip/rstrip every Unicode whitespace.
- PRECOMPILED_GRAPHEMES (UGM nomic-bert-moe): a line with a grapheme of several code points
  ("e" + combining marks, halfwidth "ﾊﾟ", conjoining jamo) whose normalized text differs:
  tokenizers' Precompiled looks the charsmap up per grapheme (a whole one under 6 bytes, else
  code point by code point), llama.cpp by the longest byte prefix. Checked with llama.cpp
  itself: its detokenized text of the two id lists differs (the normalized texts differ,
  not only where they are cut).
Identical texts (about a third of the corpus lines repeat, e.g. empty lines) are encoded once:
ids are a function of the text; every line counts in the reported total.
WPM "bert" (bert-bge) and UGM "t5" (nomic-bert-moe): writers/hf_from_gguf_wordpiece.py and
hf_from_gguf_unigram.py; their refusals, the round trip and a code point sweep are in
test_convert_gguf_wpm_ugm_to_tokenizer_json.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import regex
import tokenizers

import toksmith
from tests import llama_cpp_reference
from tests.conftest import report
from tests.parity.test_byte_bpe_gguf import gguf_path, special_texts_of, spliced
from tests.parity.test_spm_bpe_gguf import reference_decode
from toksmith.spec import Algorithm
from toksmith.special_tokens import TokenAttr
from toksmith.writers.tokenizer_json import write_tokenizer_json

GGUFS = ("bert-bge", "nomic-bert-moe", "gpt-2", "llama-bpe", "qwen2", "deepseek-coder", "falcon", "mpt", "refact",
         "starcoder", "llama-spm", "phi-3")


def _user_defined_raw(tok, ids: list[int]) -> bool:
    attrs = tok.spec.token_attributes or ()
    texts = tok.spec.byte_level.vocab.texts if tok.spec.byte_level is not None else tok.spec.vocab.pieces
    return any(attrs[i] & TokenAttr.USER_DEFINED and not texts[i].isascii() for i in ids if i < len(attrs))


def _explain_encode(written: tokenizers.Tokenizer, text: str, tok, ref, got: list[int], want: list[int]) -> str | None:
    if (tok.spec.algorithm is Algorithm.UNIGRAM and any(len(g) > 1 for g in regex.findall(r"\X", text))
            and ref.detokenize(got, remove_special=False, unparse_special=True)
            != ref.detokenize(want, remove_special=False, unparse_special=True)):
        return "PRECOMPILED_GRAPHEMES"
    for token in written.get_added_tokens_decoder().values():
        if not (token.lstrip or token.rstrip):
            continue
        at = text.find(token.content)
        while at >= 0:
            before, after = text[at - 1:at], text[at + len(token.content):at + len(token.content) + 1]
            for side, char in ((token.lstrip, before), (token.rstrip, after)):
                if side and char.isspace() and not char.isascii():
                    return "STRIP_UNICODE_WHITESPACE"
            at = text.find(token.content, at + 1)
    return None


def _explain_decode(tok, ids: list[int], skip: bool) -> str | None:
    if tok.spec.byte_level is not None and _user_defined_raw(tok, ids):
        return "DECODE_USER_DEFINED_RAW"
    bos = tok.spec.vocab.special.bos
    if skip and tok.spec.byte_level is None and tok.spec.add_bos and ids[:1] == [bos]:
        return "DECODE_SKIP_BOS_SPACE"
    return None


def compare_with_llama_cpp(path, corpus_lines: dict[str, list[str]], written_path) -> tuple[int, dict, list[str]]:
    """Write `path` as a tokenizer.json at `written_path` and compare it with llama.cpp on every
    line (module docstring): (lines compared, {category: distinct texts}, unexplained mismatches)."""
    path = Path(path)
    tok = toksmith.load(path)
    written_path.write_bytes(write_tokenizer_json(tok.spec))
    written = tokenizers.Tokenizer.from_file(str(written_path))
    ref = llama_cpp_reference.load_vocab(path)
    specials = special_texts_of(path)
    name = path.name
    mismatches, explained = [], {}
    texts, spliced_texts = [], []
    for corpus, lines in corpus_lines.items():
        corpus_texts = spliced(lines, specials, seed=len(corpus))
        texts += corpus_texts
        spliced_texts += [t for t, line in zip(corpus_texts, lines) if t != line]
    spliced_set = set(spliced_texts)
    for (add_special, parse_special), subset in (((True, True), texts), ((False, False), spliced_texts)):
        subset = list(dict.fromkeys(subset))        # each distinct text once
        written.encode_special_tokens = not parse_special
        got = [e.ids for e in written.encode_batch(subset, add_special_tokens=add_special)]
        for text, g in zip(subset, got):
            want = ref.tokenize(text.encode("utf-8"), add_special, parse_special)
            if g != want:
                why = _explain_encode(written, text, tok, ref, g, want)
                if why is None:
                    mismatches.append(f"{name} add_special={add_special} parse_special={parse_special} "
                                      f"{text[:60]!r}: {g[:12]} != {want[:12]}")
                explained[why] = explained.get(why, 0) + 1
                continue
            skips = (False, True) if parse_special and text in spliced_set else (False,)
            for skip in skips:
                if written.decode(want, skip_special_tokens=skip) != reference_decode(ref, want, skip):
                    why = _explain_decode(tok, want, skip)
                    if why is None:
                        mismatches.append(f"{name} decode skip_special={skip} {text[:60]!r}: "
                                          f"{written.decode(want, skip_special_tokens=skip)[:60]!r} != "
                                          f"{reference_decode(ref, want, skip)[:60]!r}")
                    explained[why] = explained.get(why, 0) + 1
    return len(texts) + len(spliced_texts), explained, mismatches


def report_line(what: str, compared: int, explained: dict) -> str:
    total = sum(explained.values())
    return (f"convert {what} -> tokenizer.json: {compared} lines, {total} mismatches"
            + (f" (distinct texts; known llama.cpp behaviour tokenizers cannot express: "
               f"{dict(sorted((str(k), v) for k, v in explained.items()))})" if total else ""))


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
@pytest.mark.parametrize("name", GGUFS)
def test_gguf_to_tokenizer_json_matches_llama_cpp(fixtures, corpus_lines, tmp_path, name):
    compared, explained, mismatches = compare_with_llama_cpp(gguf_path(fixtures, name), corpus_lines,
                                                             tmp_path / "tokenizer.json")
    report(report_line(f"ggml-vocab-{name}.gguf", compared, explained))
    assert not mismatches, "\n".join(mismatches[:10])
