"""tokenizers on a tokenizer.json toksmith wrote from a GGUF, against llama.cpp on the GGUF
(test_convert_gguf_to_tokenizer_json.py, test_convert_gguf_wpm_ugm_to_tokenizer_json.py):
ids on every distinct corpus line, and decode, through Comparison with the excuses of
tests/parity/excuses/conversions_gguf.py."""
from __future__ import annotations

import functools
from pathlib import Path

import tokenizers

import toksmith
from tests import llama_cpp_reference
from tests.gpt2_bytes import gpt2_bytes_to_unicode
from tests.parity.comparison import Comparison
from tests.parity.excuses.conversions_gguf import DecodeCase, EncodeCase
from tests.parity.hf_reference import tokenizers_ids
from tests.parity.llama_cpp_compare import llama_cpp_ids, reference_decode, special_texts_of, spliced
from toksmith.spec import Algorithm
from toksmith.special_tokens import TokenAttr
from toksmith.writers.tokenizer_json import write_tokenizer_json

GPT2_CHARS = frozenset(gpt2_bytes_to_unicode().values())


def _user_defined_read_as_bytes(tok) -> dict[int, str]:
    """id -> text of each USER_DEFINED token (byte-level vocabularies) that tokenizers' ByteLevel
    decoder reads as other bytes: non-ASCII, every character in GPT-2's byte map (a token with
    any other character is copied raw by that decoder, as by llama.cpp)."""
    if tok.spec.byte_level is None:
        return {}
    attrs, texts = tok.spec.token_attributes or (), tok.spec.byte_level.vocab.texts
    out = {}
    for i in range(len(attrs)):
        if attrs[i] & TokenAttr.USER_DEFINED:
            text = texts[i].decode("utf-8")
            if not text.isascii() and all(c in GPT2_CHARS for c in text):
                out[i] = text
    return out


def _distinct_texts(path, corpus_lines) -> tuple[list[str], list[str]]:
    """Every line (special texts spliced into a seeded quarter) and the spliced ones."""
    specials = special_texts_of(path)
    texts, spliced_texts = [], []
    for corpus, lines in corpus_lines.items():
        corpus_texts = spliced(lines, specials, seed=len(corpus))
        texts += corpus_texts
        spliced_texts += [t for t, line in zip(corpus_texts, lines) if t != line]
    return texts, spliced_texts


def compare_with_llama_cpp(path, corpus_lines: dict[str, list[str]], written_path, label: str, *,
                           encode_excuses: dict | None = None, decode_excuses: dict | None = None) -> None:
    """Write `path` as a tokenizer.json at `written_path` and compare tokenizers on it with
    llama.cpp on `path`, on every distinct line (module docstring); report and assert."""
    path = Path(path)
    tok = toksmith.load(path)
    written_path.write_bytes(write_tokenizer_json(tok.spec))
    written = tokenizers.Tokenizer.from_file(str(written_path))
    ref = llama_cpp_reference.load_vocab(path)
    against = "llama.cpp on the GGUF"
    ids_check = Comparison(f"convert {label} -> tokenizer.json, ids by tokenizers {tokenizers.__version__} "
                           f"on the written file (distinct texts)", against=against, excuses=encode_excuses or {})
    decode_check = Comparison(f"convert {label} -> tokenizer.json, decode by tokenizers on the written file "
                              f"(distinct texts)", against=against, excuses=decode_excuses or {})
    strip_tokens = tuple((t.content, t.lstrip, t.rstrip) for t in written.get_added_tokens_decoder().values()
                         if t.lstrip or t.rstrip)
    unigram = tok.spec.algorithm is Algorithm.UNIGRAM
    spell = functools.partial(reference_decode, ref, skip_special=False)
    user_defined = _user_defined_read_as_bytes(tok)
    cleans_spaces = tok.spec.algorithm is Algorithm.WORDPIECE
    bos = tok.spec.vocab.special.bos if tok.spec.byte_level is None and tok.spec.add_bos else None
    texts, spliced_texts = _distinct_texts(path, corpus_lines)
    spliced_set = set(spliced_texts)
    for (add_special, parse_special), subset in (((True, True), texts), ((False, False), spliced_texts)):
        subset = list(dict.fromkeys(subset))        # each distinct text once
        written.encode_special_tokens = not parse_special
        got = [e.ids for e in written.encode_batch(subset, add_special_tokens=add_special)]
        want = [ref.tokenize(text.encode("utf-8"), add_special, parse_special) for text in subset]
        reference_on = functools.partial(llama_cpp_ids, ref, add_special=add_special, parse_special=parse_special)
        ours_on = functools.partial(tokenizers_ids, written, add_special=add_special)
        for text, ours, theirs in ids_check.pairs(subset, got, want):
            ids_check.one(EncodeCase(text, reference_on=reference_on, unigram=unigram, strip_tokens=strip_tokens,
                                     extras={"spell": spell, "ours_on": ours_on}),
                          ours, theirs, what=f"add_special={add_special} parse_special={parse_special}")
            # decode: llama.cpp's ids, by both
            for skip in (False, True) if parse_special and text in spliced_set else (False,):
                case = DecodeCase(text, theirs, skip, bos=bos, cleans_spaces=cleans_spaces,
                                  user_defined=tuple(user_defined[i] for i in theirs if i in user_defined))
                decode_check.one(case, written.decode(theirs, skip_special_tokens=skip),
                                 reference_decode(ref, theirs, skip), what=f"decode skip_special={skip}")
    written.encode_special_tokens = False
    for check in (ids_check, decode_check):
        check.finish()
