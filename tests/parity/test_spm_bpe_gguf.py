"""GGUF tokenizers against llama.cpp itself (through llama-cpp-python, tests/llama_cpp_reference.py).

- llama.cpp's own golden files for the SentencePiece-BPE GGUFs (``.inp``/``.out``);
- every corpus line of the fixtures, for the two SPM GGUFs and the UGM one, with
  (add_special, parse_special) = (False, False) and (True, True), through encode and
  encode_batch, plus decode of llama.cpp's ids with both skip_special values against
  llama_detokenize, and the invalid UTF-8 lines passed as bytes;
- the LLaMA 2 GGUF and the LLaMA 2 ``.model`` give the same ids on every line;
- texts with special tokens (<s>, </s>, <unk>, Phi-3's chat tokens) in every position,
  with all four flag combinations, and their decode;
- seeded random mixes of special texts and odd characters, and seeded random id lists
  (specials, byte tokens, partial UTF-8) decoded against llama_detokenize.

decode(skip_special=False) is llama_detokenize(remove_special=False, unparse_special=True)
and decode(skip_special=True) is llama_detokenize(remove_special=True, unparse_special=False),
read as UTF-8 with errors="replace".
"""
from __future__ import annotations

import itertools
import random

import pytest
import sentencepiece as spm   # test dependencies: parity fails, never skips, without them

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import fixture_file, report

GGUF_LLAMA = "gguf/ggml-vocab-llama-spm.gguf"
GGUF_PHI3 = "gguf/ggml-vocab-phi-3.gguf"
GGUF_UGM = "gguf/ggml-vocab-nomic-bert-moe.gguf"
MODEL_LLAMA = "spm/llama2_tokenizer.model"
FLAGS = list(itertools.product((False, True), repeat=2))   # (add_special, parse_special)


def reference_decode(vocab, ids: list[int], skip_special: bool) -> str:
    raw = vocab.detokenize(ids, remove_special=skip_special, unparse_special=not skip_special)
    return raw.decode("utf-8", errors="replace")


def fail_on(mismatches: list[str]) -> None:
    assert not mismatches, f"{len(mismatches)} mismatches, first ones:\n" + "\n".join(mismatches[:8])


# ------------------------------------------------------------- llama.cpp's golden files

def golden_cases(fixtures, gguf: str) -> list[tuple[str, list[int]]]:
    inputs = fixture_file(fixtures, f"{gguf}.inp").read_bytes().decode("utf-8")
    inputs = inputs.split("\n__ggml_vocab_test__\n")
    assert inputs[-1] == ""
    inputs = inputs[:-1]
    outputs = fixture_file(fixtures, f"{gguf}.out").read_text(encoding="utf-8").split("\n")
    outputs = outputs[:len(inputs)]
    return [(text, [int(x) for x in ids.split()]) for text, ids in zip(inputs, outputs, strict=True)]


@pytest.mark.parametrize("gguf", [GGUF_LLAMA, GGUF_PHI3])
def test_llama_cpp_golden_files(fixtures, gguf):
    cases = golden_cases(fixtures, gguf)
    assert len(cases) == 46
    tok = toksmith.load(fixture_file(fixtures, gguf))
    got_batch = tok.encode_batch([text for text, _ in cases], add_special=False, parse_special=False)
    mismatches = []
    for (text, want), batch in zip(cases, got_batch):
        got = tok.encode(text, add_special=False, parse_special=False)
        if got != want or batch != want:
            mismatches.append(f"{text!r}: ours {got} / batch {batch}, llama.cpp {want}")
    report(f"{gguf} golden .inp/.out: {len(cases) - len(mismatches)} of {len(cases)} match")
    fail_on(mismatches)


# ------------------------------------------------------------- every corpus line

@pytest.mark.parametrize("add_special,parse_special", [(False, False), (True, True)])
@pytest.mark.parametrize("gguf", [GGUF_LLAMA, GGUF_PHI3, GGUF_UGM])
def test_corpora_match_llama_cpp(fixtures, corpus_lines, invalid_utf8_lines, gguf, add_special,
                                 parse_special):
    path = fixture_file(fixtures, gguf)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    assert tok.vocab_size == ref.n_tokens
    mismatches = []
    compared = 0
    for corpus, lines in corpus_lines.items():
        got_batch = tok.encode_batch(lines, add_special=add_special, parse_special=parse_special)
        for i, (line, batch) in enumerate(zip(lines, got_batch)):
            want = ref.tokenize(line.encode("utf-8"), add_special, parse_special)
            got = tok.encode(line, add_special=add_special, parse_special=parse_special)
            if got != want or batch != want:
                mismatches.append(f"{corpus}:{i + 1} ids {line[:60]!r}\n  ours {got}\n  llama.cpp {want}")
                continue
            for skip in (False, True):
                expected = reference_decode(ref, want, skip)
                if tok.decode(want, skip_special=skip) != expected:
                    mismatches.append(f"{corpus}:{i + 1} decode(skip_special={skip}) {line[:60]!r}: "
                                      f"{tok.decode(want, skip_special=skip)!r} != {expected!r}")
        compared += len(lines)
    for raw in invalid_utf8_lines:
        compared += 1
        want = ref.tokenize(raw, add_special, parse_special)
        got = tok.encode(raw, add_special=add_special, parse_special=parse_special)
        if got != want:
            mismatches.append(f"invalid UTF-8 {raw!r}: ours {got}, llama.cpp {want}")
            continue
        for skip in (False, True):
            if tok.decode(want, skip_special=skip) != reference_decode(ref, want, skip):
                mismatches.append(f"invalid UTF-8 {raw!r} decode(skip_special={skip})")
    report(f"{gguf} vs llama.cpp (add_special={add_special}, parse_special={parse_special}): "
           f"{compared} lines (ids, batch ids, 2 decodes each), {len(mismatches)} mismatches")
    fail_on(mismatches)


def test_llama2_gguf_and_model_agree(fixtures, corpus_lines, invalid_utf8_lines):
    """The same LLaMA 2 tokenizer from GGUF (llama.cpp rules) and .model (sentencepiece rules).

    Invalid UTF-8 is where the two references disagree: llama.cpp keeps each invalid
    byte as its byte token (<0x80>), sentencepiece first turns it into U+FFFD. There
    each file must follow its own reference.
    """
    gguf_path, model_path = fixture_file(fixtures, GGUF_LLAMA), fixture_file(fixtures, MODEL_LLAMA)
    gguf, model = toksmith.load(gguf_path), toksmith.load(model_path)
    mismatches = []
    compared = 0
    for corpus, lines in corpus_lines.items():
        from_gguf = gguf.encode_batch(lines, add_special=False)
        from_model = model.encode_batch(lines, add_special=False)
        for i, (line, a, b) in enumerate(zip(lines, from_gguf, from_model)):
            if a != b:
                mismatches.append(f"{corpus}:{i + 1} {line[:60]!r}\n  gguf  {a}\n  model {b}")
        compared += len(lines)
    report(f"{GGUF_LLAMA} vs {MODEL_LLAMA}: {compared} corpus lines, {len(mismatches)} mismatches")
    llama_cpp = llama_cpp_reference.load_vocab(gguf_path)
    sentencepiece = spm.SentencePieceProcessor(model_file=str(model_path))
    differ = 0
    for raw in invalid_utf8_lines:
        a, b = gguf.encode(raw, add_special=False), model.encode(raw, add_special=False)
        differ += a != b
        if a != llama_cpp.tokenize(raw, False, False) or b != sentencepiece.encode(raw):
            mismatches.append(f"invalid UTF-8 {raw!r}: gguf {a}, model {b}")
    report(f"  invalid UTF-8: {len(invalid_utf8_lines)} lines, {differ} differ as llama.cpp and "
           f"sentencepiece differ, each file follows its reference")
    fail_on(mismatches)


# ------------------------------------------------------------- special-token texts

LLAMA_SPECIALS = ("<s>", "</s>", "<unk>")
PHI3_SPECIALS = LLAMA_SPECIALS + ("<|user|>", "<|end|>", "<|assistant|>", "<|endoftext|>",
                                  "<|system|>", "<|placeholder1|>", "[PAD32011]")
TEMPLATES = (
    "{s}", "{s}{s}", "{s}{t}", "{s}Hello world", "Hello{s}world", "Hello {s} world",
    "Hello world{s}", "Hello world {s}", " {s}", "{s} ", "  {s}  ", "{s}  Hello", "Hello  {s}",
    "{s}\nHello", "Hello\n{s}", "\n{s}\n", "{s}\n\n", " \n{s} \n", "{s}\t tab", "a{s}b{t}c",
    "{s} {t} {s}", "▁{s}▁", "日本語{s}の{t}テキスト", "<{s}>", "<s{s}", "{s}/s>", "<|{s}|>",
)
NEAR_MISSES = ("<s", "s>", "< s>", "<S>", "</ s>", "<unk", "<|user|", "|user|>", "<|USER|>",
               "<|end |>", "<<|end|>>", "[PAD32011", "<|placeholder1 |>")
CHATS = (
    "<|user|>\nHello, who are you?<|end|>\n<|assistant|>\nI am Phi.<|end|>\n<|endoftext|>",
    "<s><|system|>\nYou are helpful.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\n",
    "<|user|> spaced <|end|> <|assistant|>  two spaces<|end|>",
    "<|user|>\n\n\nnewlines\n\n<|end|>\n\n<|assistant|>",
    "</s> after eos </s>\n</s>",
    " <|user|>lead", "trail<|end|> ", "<|end|>\t\n x",
)


def special_texts(specials: tuple[str, ...]) -> list[str]:
    texts = []
    for k, template in enumerate(TEMPLATES):
        for j, s in enumerate(specials):
            texts.append(template.format(s=s, t=specials[(j + k + 1) % len(specials)]))
    texts += ["".join(specials), " ".join(specials), "\n".join(specials),
              "Hello " + " world ".join(specials) + " !", ""]
    texts += [f"Hello {n} world" for n in NEAR_MISSES]
    texts += list(CHATS)
    return texts


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")   # llama.cpp warns too
@pytest.mark.parametrize("gguf,specials", [(GGUF_LLAMA, LLAMA_SPECIALS), (GGUF_PHI3, PHI3_SPECIALS)])
def test_special_token_texts_match_llama_cpp(fixtures, gguf, specials):
    path = fixture_file(fixtures, gguf)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    texts = special_texts(specials)
    mismatches = []
    split_seen = 0
    for add_special, parse_special in FLAGS:
        got_batch = tok.encode_batch(texts, add_special=add_special, parse_special=parse_special)
        for text, batch in zip(texts, got_batch):
            want = ref.tokenize(text.encode("utf-8"), add_special, parse_special)
            got = tok.encode(text, add_special=add_special, parse_special=parse_special)
            flags = f"(add_special={add_special}, parse_special={parse_special})"
            if got != want or batch != want:
                mismatches.append(f"{flags} {text!r}:\n  ours {got} / batch {batch}\n  llama.cpp {want}")
                continue
            split_seen += parse_special and any(tok.id_to_piece(i) in specials for i in want)
            for skip in (False, True):
                expected = reference_decode(ref, want, skip)
                if tok.decode(want, skip_special=skip) != expected:
                    mismatches.append(f"{flags} decode(skip_special={skip}) {text!r}: "
                                      f"{tok.decode(want, skip_special=skip)!r} != {expected!r}")
    report(f"{gguf} special-token texts vs llama.cpp: {len(texts)} texts x 4 flag combinations "
           f"(ids, batch ids, 2 decodes each), {len(mismatches)} mismatches")
    fail_on(mismatches)
    assert split_seen > len(texts) // 2, "parse_special split out too few special tokens to test much"


@pytest.mark.parametrize("gguf", [GGUF_LLAMA, GGUF_PHI3])
def test_decode_of_special_ids_matches_detokenize(fixtures, gguf):
    """Special, byte and unused ids on their own and between text, both skip_special values."""
    path = fixture_file(fixtures, gguf)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    special = [i for i in range(tok.vocab_size) if tok.vocab.types[i] 
               not in (toksmith.TokenType.NORMAL, toksmith.TokenType.BYTE)]
    hello = ref.tokenize(b"Hello world", False, False)
    sequences = [[i] for i in special]
    sequences += [[i, *hello] for i in special] + [[*hello, i] for i in special]
    sequences += [[*hello, i, *hello] for i in special]
    sequences += [[i, i] for i in special] + [special]
    sequences += [[0x0A + 3], [0xE3 + 3, 0x81 + 3], [0xE3 + 3, 0x81 + 3, 0x82 + 3], [29871], [29871, 29871]]
    mismatches = []
    for ids in sequences:
        for skip in (False, True):
            if tok.decode(ids, skip_special=skip) != reference_decode(ref, ids, skip):
                mismatches.append(f"decode({ids[:8]}, skip_special={skip}): "
                                  f"{tok.decode(ids, skip_special=skip)!r} != {reference_decode(ref, ids, skip)!r}")
    report(f"{gguf} decode of special/byte ids vs llama_detokenize: {len(sequences)} id lists x 2, "
           f"{len(mismatches)} mismatches")
    fail_on(mismatches)


# ------------------------------------------------------------- seeded random mixes

MIX_ALPHABET = PHI3_SPECIALS + (" ", "  ", "\n", "\t", "\r", " \n ", "a", "Hello", "▁", "日本", "é",
                                "e\u0301", "\u200b", "\ufeff", "<", "|", ">", "s", "1", "23", "\x00",
                                "🦙", "\U0010ffff", "ﬁ", "Ａ")


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
@pytest.mark.parametrize("gguf", [GGUF_LLAMA, GGUF_PHI3, GGUF_UGM])
def test_random_mixes_match_llama_cpp(fixtures, gguf):
    """Seeded random concatenations of special texts, whitespace and odd characters."""
    path = fixture_file(fixtures, gguf)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    rnd = random.Random(20240611)
    texts = ["".join(rnd.choice(MIX_ALPHABET) for _ in range(rnd.randint(0, 12))) for _ in range(4000)]
    mismatches = []
    for add_special, parse_special in FLAGS:
        got = tok.encode_batch(texts, add_special=add_special, parse_special=parse_special)
        for text, ids in zip(texts, got):
            want = ref.tokenize(text.encode("utf-8"), add_special, parse_special)
            if ids != want:
                mismatches.append(f"(add_special={add_special}, parse_special={parse_special}) "
                                  f"{text!r}: ours {ids}, llama.cpp {want}")
                continue
            for skip in (False, True):
                if tok.decode(want, skip_special=skip) != reference_decode(ref, want, skip):
                    mismatches.append(f"decode(skip_special={skip}) of {want}")
    report(f"{gguf} random mixes vs llama.cpp: {len(texts)} texts x 4 flag combinations, "
           f"{len(mismatches)} mismatches")
    fail_on(mismatches)


@pytest.mark.parametrize("gguf", [GGUF_LLAMA, GGUF_PHI3, GGUF_UGM])
def test_random_id_lists_decode_like_detokenize(fixtures, gguf):
    """Seeded random id lists, weighted to specials and byte tokens (partial UTF-8)."""
    path = fixture_file(fixtures, gguf)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    n = tok.vocab_size
    pool = list(range(300)) + list(range(n - 70, n))
    rnd = random.Random(7)
    mismatches = []
    cases = 5000
    for _ in range(cases):
        ids = [rnd.choice(pool) if rnd.random() < 0.7 else rnd.randrange(n)
               for _ in range(rnd.randint(0, 10))]
        for skip in (False, True):
            want = reference_decode(ref, ids, skip)
            if tok.decode(ids, skip_special=skip) != want:
                mismatches.append(f"decode({ids}, skip_special={skip}): "
                                  f"{tok.decode(ids, skip_special=skip)!r} != {want!r}")
    report(f"{gguf} random id lists decode vs llama_detokenize: {cases} lists x 2, "
           f"{len(mismatches)} mismatches")
    fail_on(mismatches)
