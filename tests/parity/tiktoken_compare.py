"""tiktoken compared with tokenizers or llama.cpp on the corpus lines, for the parity tests
of files toksmith writes from or to a tiktoken rank file (test_byte_level_merges.py,
test_convert_to_tiktoken.py, test_convert_from_tiktoken.py): one side reads toksmith's file,
the other the source, and the comparisons are returned unfinished (the tests finish them
together with tests.parity.comparison.finish_all)."""
from __future__ import annotations

import json
import re

import tiktoken
import tokenizers

from tests.conftest import report
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import spliced

TIKTOKEN = f"tiktoken {tiktoken.__version__}"
TOKENIZERS = f"tokenizers {tokenizers.__version__}"


def derived_tokenizer(merge_vocab, pat_str: str, special_tokens: dict[str, int]) -> tokenizers.Tokenizer:
    """A tokenizers Tokenizer of a derived merge-list vocabulary, built as HF's
    tiktoken-derived tokenizer.json files are (a JSON document, so ids are exact)."""
    vocab = {text.decode("utf-8"): i for i, text in enumerate(merge_vocab.texts) if text is not None}
    # The special tokens are in the model's vocabulary too, as in GPT-2's vocab.json:
    # tokenizers gives an added token that is not in the vocabulary the next free id,
    # whatever id the file says, so p50k_base's <|endoftext|> (its ranks skip 50256)
    # would move to 50280.
    vocab.update(special_tokens)
    merges = [line.decode("utf-8").split(" ") for line in merge_vocab.merges]
    document = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for text, i in sorted(special_tokens.items())],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pat_str}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": merge_vocab.ignore_merges, "vocab": vocab, "merges": merges},
    }
    return tokenizers.Tokenizer.from_str(json.dumps(document))


def lines_with_special_text(texts: list[str], specials: list[str]) -> list[int]:
    """Indices of the texts holding a special token's text: the only lines where
    parse_special can change the ids."""
    finder = re.compile("|".join(map(re.escape, sorted(specials, key=len, reverse=True))))
    return [i for i, text in enumerate(texts) if finder.search(text)]


def tiktoken_and_tokenizers(enc, ref: tokenizers.Tokenizer, corpus_lines, label: str, *, written: str,
                            add_special_tokens: bool = False) -> list[Comparison]:
    """tokenizers `ref` and tiktoken `enc` on every corpus line (special texts spliced into a
    seeded quarter) with parse_special (encode_special_tokens False vs allowed_special="all"),
    on the lines holding a special text also without (True vs encode_ordinary; elsewhere the
    flag cannot change an id), and tokenizers' decode (skip_special_tokens=False) vs
    tiktoken's of tiktoken's ids. `written` is the side reading toksmith's file ("tiktoken"
    or "tokenizers"), the other the source's reference; `add_special_tokens` is tokenizers'
    (tiktoken adds nothing). The comparisons are returned unfinished."""
    if written not in ("tiktoken", "tokenizers"):
        raise ValueError(f"written must be 'tiktoken' or 'tokenizers', not {written!r}")
    against = f"{TOKENIZERS} on the source" if written == "tiktoken" else f"{TIKTOKEN} on the source"

    def compare(check, cases, from_tiktoken, from_tokenizers):
        if written == "tiktoken":
            check.all(cases, ours=from_tiktoken, theirs=from_tokenizers)
        else:
            check.all(cases, ours=from_tokenizers, theirs=from_tiktoken)

    parsed = Comparison(f"{label}: ids, parse_special", against=against)
    plain = Comparison(f"{label}: ids without parse_special, lines holding a special text", against=against)
    decode = Comparison(f"{label}: decode of tiktoken's ids", against=against)
    specials = sorted(enc.special_tokens_set)
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, specials, seed=len(corpus) + 3)
        with_special = [texts[i] for i in lines_with_special_text(texts, specials)]
        ref.encode_special_tokens = False
        want = enc.encode_batch(texts, allowed_special="all", num_threads=1)
        compare(parsed, texts, want, [e.ids for e in ref.encode_batch(texts, add_special_tokens=add_special_tokens)])
        compare(decode, texts, enc.decode_batch(want, num_threads=1), ref.decode_batch(want, skip_special_tokens=False))
        ref.encode_special_tokens = True
        compare(plain, with_special, enc.encode_ordinary_batch(with_special, num_threads=1),
                [e.ids for e in ref.encode_batch(with_special, add_special_tokens=add_special_tokens)])
    ref.encode_special_tokens = False
    return [parsed, plain, decode]


def tiktoken_and_llama_cpp(enc, ref, unclean, corpus_lines, label: str, *, seed: int,
                           written: str) -> list[Comparison]:
    """tiktoken `enc` and llama.cpp vocabulary `ref` on every corpus line with special texts
    spliced in; `unclean` is the same GGUF with its clean_spaces decode rule off. `written`
    is the side reading toksmith's file ("tiktoken" or "llama.cpp"), the other the reference.

    add_special: llama.cpp adds nothing for these files, tiktoken never does; (True, True) on
    every line and (False, False) on the lines holding a special text give each flag both
    values where it can matter. Decode of tiktoken's ids is compared with `unclean`'s; the
    lines llama.cpp's own clean_spaces changes are counted and reported (measured: a
    disagreement of the references). The comparisons are returned unfinished."""
    if written not in ("tiktoken", "llama.cpp"):
        raise ValueError(f"written must be 'tiktoken' or 'llama.cpp', not {written!r}")
    against = "llama.cpp on the GGUF" if written == "tiktoken" else f"{TIKTOKEN} on the source"

    def compare(check, cases, from_tiktoken, from_llama_cpp):
        if written == "tiktoken":
            check.all(cases, ours=from_tiktoken, theirs=from_llama_cpp)
        else:
            check.all(cases, ours=from_llama_cpp, theirs=from_tiktoken)

    def detokenized(vocab, ids_list):
        return [vocab.detokenize(ids, False, True).decode("utf-8", "replace") for ids in ids_list]

    parsed = Comparison(f"{label}: ids, add_special and parse_special", against=against)
    plain = Comparison(f"{label}: ids without add_special and parse_special, lines holding a special text",
                       against=against)
    decode = Comparison(f"{label}: decode of tiktoken's ids, llama.cpp without clean_spaces", against=against)
    specials = sorted(enc.special_tokens_set)
    clean_spaces_lines = 0
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, specials, seed=len(corpus) + seed)
        want = enc.encode_batch(texts, allowed_special="all", num_threads=1)
        compare(parsed, texts, want, [ref.tokenize(text.encode("utf-8"), True, True) for text in texts])
        decoded = enc.decode_batch(want, num_threads=1)
        compare(decode, texts, decoded, detokenized(unclean, want))
        clean_spaces_lines += sum(a != b for a, b in decode.pairs(detokenized(ref, want), decoded))
        with_special = [texts[i] for i in lines_with_special_text(texts, specials)]
        compare(plain, with_special, enc.encode_ordinary_batch(with_special, num_threads=1),
                [ref.tokenize(text.encode("utf-8"), False, False) for text in with_special])
    report(f"{label}: llama.cpp's clean_spaces changes the decode of {clean_spaces_lines} lines (measured: "
           f"a disagreement of the references, not compared)")
    return [parsed, plain, decode]
