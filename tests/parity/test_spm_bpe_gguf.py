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
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import compare_decodes, compare_golden, flags_tag, golden_cases

GGUF_LLAMA = "gguf/ggml-vocab-llama-spm.gguf"
GGUF_PHI3 = "gguf/ggml-vocab-phi-3.gguf"
GGUF_UGM = "gguf/ggml-vocab-nomic-bert-moe.gguf"
MODEL_LLAMA = "spm/llama2_tokenizer.model"
FLAGS = list(itertools.product((False, True), repeat=2))   # (add_special, parse_special)


def fail_on(mismatches: list[str]) -> None:
    assert not mismatches, f"{len(mismatches)} mismatches, first ones:\n" + "\n".join(mismatches[:8])


# ------------------------------------------------------------- llama.cpp's golden files

@pytest.mark.parametrize("gguf", [GGUF_LLAMA, GGUF_PHI3])
def test_llama_cpp_golden_files(fixtures, gguf):
    cases = golden_cases(fixtures, gguf)
    assert len(cases) == 46
    tok = toksmith.load(fixture_file(fixtures, gguf))
    check = Comparison(f"{gguf} golden .inp/.out (46 texts, encode and encode_batch)", against="llama.cpp")
    compare_golden(check, tok, cases, add_special=False, parse_special=False)
    check.finish(at_least=2 * 46)


# ------------------------------------------------------------- every corpus line

@pytest.mark.parametrize("add_special,parse_special", [(False, False), (True, True)])
@pytest.mark.parametrize("gguf", [GGUF_LLAMA, GGUF_PHI3, GGUF_UGM])
def test_corpora_match_llama_cpp(fixtures, corpus_lines, invalid_utf8_lines, gguf, add_special,
                                 parse_special):
    path = fixture_file(fixtures, gguf)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    assert tok.vocab_size == ref.n_tokens
    tag = flags_tag(add_special, parse_special)
    check = Comparison(f"{gguf} every corpus line and the invalid UTF-8 lines {tag} (encode, encode_batch; "
                       f"decode x2 of llama.cpp's ids)", against="llama.cpp")
    for corpus, lines in [*corpus_lines.items(), ("invalid UTF-8", invalid_utf8_lines)]:
        raws = [line.encode("utf-8") if isinstance(line, str) else line for line in lines]
        want = [ref.tokenize(raw, add_special, parse_special) for raw in raws]
        check.all(lines, ours=tok.encode_batch(lines, add_special=add_special, parse_special=parse_special),
                  theirs=want, what=f"{corpus} encode_batch")
        check.all(lines, ours=[tok.encode(line, add_special=add_special, parse_special=parse_special)
                               for line in lines], theirs=want, what=f"{corpus} encode")
        compare_decodes(check, tok, ref, want, with_bytes=False, label=corpus)
    check.finish(at_least=5 * len(invalid_utf8_lines))


def test_llama2_gguf_and_model_agree(fixtures, corpus_lines, invalid_utf8_lines):
    """The same LLaMA 2 tokenizer from GGUF (llama.cpp rules) and .model (sentencepiece rules):
    toksmith against itself, then each file against its own reference on invalid UTF-8.

    Invalid UTF-8 is where the two references disagree: llama.cpp keeps each invalid
    byte as its byte token (<0x80>), sentencepiece first turns it into U+FFFD. There
    each file must follow its own reference.
    """
    gguf_path, model_path = fixture_file(fixtures, GGUF_LLAMA), fixture_file(fixtures, MODEL_LLAMA)
    gguf, model = toksmith.load(gguf_path), toksmith.load(model_path)
    itself = Comparison(f"{GGUF_LLAMA} ids on every corpus line", against=f"itself (GGUF vs {MODEL_LLAMA})")
    for corpus, lines in corpus_lines.items():
        itself.all(lines, ours=gguf.encode_batch(lines, add_special=False),
                   theirs=model.encode_batch(lines, add_special=False), what=corpus)
    itself.finish()
    llama_cpp = llama_cpp_reference.load_vocab(gguf_path)
    sentencepiece = spm.SentencePieceProcessor(model_file=str(model_path))
    from_gguf = [gguf.encode(raw, add_special=False) for raw in invalid_utf8_lines]
    from_model = [model.encode(raw, add_special=False) for raw in invalid_utf8_lines]
    with Comparison(f"{GGUF_LLAMA} invalid UTF-8 lines", against="llama.cpp") as check:
        check.all(invalid_utf8_lines, ours=from_gguf,
                  theirs=[llama_cpp.tokenize(raw, False, False) for raw in invalid_utf8_lines])
    with Comparison(f"{MODEL_LLAMA} invalid UTF-8 lines", against="sentencepiece 0.2.3") as check:
        check.all(invalid_utf8_lines, ours=from_model, theirs=[sentencepiece.encode(raw) for raw in invalid_utf8_lines])
    differ = sum(a != b for a, b in zip(from_gguf, from_model, strict=True))
    report(f"  invalid UTF-8: {len(invalid_utf8_lines)} lines, {differ} differ as llama.cpp and "
           f"sentencepiece differ, each file follows its reference")
    assert differ, "no invalid UTF-8 line tells the two references apart"


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
    check = Comparison(f"{gguf} special-token texts x 4 flag combinations (encode, encode_batch, "
                       f"decode x2 of llama.cpp's ids)", against="llama.cpp")
    split_seen = 0
    for add_special, parse_special in FLAGS:
        tag = flags_tag(add_special, parse_special)
        want = [ref.tokenize(text.encode("utf-8"), add_special, parse_special) for text in texts]
        check.all(texts, ours=tok.encode_batch(texts, add_special=add_special, parse_special=parse_special),
                  theirs=want, what=f"encode_batch {tag}")
        check.all(texts, ours=[tok.encode(t, add_special=add_special, parse_special=parse_special) for t in texts],
                  theirs=want, what=f"encode {tag}")
        compare_decodes(check, tok, ref, want, with_bytes=False, label=tag)
        split_seen += sum(parse_special and any(tok.id_to_piece(i) in specials for i in ids) for ids in want)
    check.finish(at_least=16 * len(texts))
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
    with Comparison(f"{gguf} decode x2 of special/byte id lists", against="llama.cpp (llama_detokenize)") as check:
        compare_decodes(check, tok, ref, sequences, with_bytes=False)


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
    check = Comparison(f"{gguf} random mixes x 4 flag combinations (encode_batch, decode x2 of llama.cpp's ids)",
                       against="llama.cpp")
    for add_special, parse_special in FLAGS:
        tag = flags_tag(add_special, parse_special)
        want = [ref.tokenize(text.encode("utf-8"), add_special, parse_special) for text in texts]
        check.all(texts, ours=tok.encode_batch(texts, add_special=add_special, parse_special=parse_special),
                  theirs=want, what=f"encode_batch {tag}")
        compare_decodes(check, tok, ref, want, with_bytes=False, label=tag)
    check.finish(at_least=12 * len(texts))


@pytest.mark.parametrize("gguf", [GGUF_LLAMA, GGUF_PHI3, GGUF_UGM])
def test_random_id_lists_decode_like_detokenize(fixtures, gguf):
    """Seeded random id lists, weighted to specials and byte tokens (partial UTF-8)."""
    path = fixture_file(fixtures, gguf)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.load_vocab(path)
    n = tok.vocab_size
    pool = list(range(300)) + list(range(n - 70, n))
    rnd = random.Random(7)
    id_lists = [[rnd.choice(pool) if rnd.random() < 0.7 else rnd.randrange(n) for _ in range(rnd.randint(0, 10))]
                for _ in range(5000)]
    with Comparison(f"{gguf} random id lists, decode x2", against="llama.cpp (llama_detokenize)") as check:
        compare_decodes(check, tok, ref, id_lists, with_bytes=False)
