"""Every code point (0..0x10FFFF but the surrogates) through each pre-tokenizer family, next to
its reference, so that each family's Unicode tables are the reference's own version (a newer
Unicode splits the code points it added differently):

* tiktoken 0.14.0 (Rust regex-syntax 0.8.11, Unicode 16): r50k, cl100k and o200k patterns, and
  Meta's Llama 3 pattern of its rank file (tokenizer.model);
* tokenizers 0.23.3 (Oniguruma, Unicode 16): Split with the GPT-2, Llama 3, Qwen 2 and o200k
  patterns of tokenizer.json files; and its added tokens' single_word rule (Rust regex \\w,
  regex-syntax 0.8.11, Unicode 16).

Each code point c goes into every context of CONTEXTS: alone, between letters of both cases,
digits, spaces and apostrophes. A chunk of code points is one text (contexts joined by "\\n")
and one call on each side; a chunk that differs is rerun code point by code point to name
the first that differs.

tiktoken does not show its split, only ids, and the ids of a real rank file often hide it (no
token joins a rare code point to its neighbour). So tiktoken runs with the real patterns over a
MARKER vocabulary, the same rank file for tiktoken and toksmith: the 256 bytes, then a token for
every byte followed by a neighbour character of the contexts, then one for a neighbour followed
by any byte. A neighbour and c in one piece merge into a marker token, in two pieces they cannot,
so each way of cutting "x c y" gives other ids.

* llama.cpp (llama-cpp-python 0.3.36, its unicode-data.cpp): the pre-tokenizer presets of
  PRESETS, through a GGUF with the same marker vocabulary (merges instead of ranks).

(sentencepiece's only per-code-point table, the trainers' script table, is parsed from its
0.2.3 source: tools/gen_spm_script_table.py; its normalization is the model's charsmap.)
"""
from __future__ import annotations

import base64
import os
from pathlib import Path

import gguf
import pytest
import tiktoken
import tiktoken_ext.openai_public as openai_public
from tokenizers import Regex, pre_tokenizers

import toksmith
from tests import llama_cpp_reference
from tests.conftest import fixture_file
from tests.parity.comparison import MISMATCHES_SHOWN, Comparison
from tests.tiktoken_reference import encoding as tiktoken_encoding
from toksmith._core.pretok_llama import HF_GPT2_REGEX, HF_LLAMA3_REGEX, HF_QWEN2_REGEX
from toksmith.hf.split_patterns import O200K_REGEX, oniguruma_splitter
from toksmith.spec import SplitPattern

# meta-llama/llama3 llama/tokenizer.py pat_str (Meta's Llama 3 tokenizer.model runs on tiktoken)
LLAMA3_PAT_STR = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                  r"\s*[\r\n]+|\s+(?!\S)|\s+")
CODE_POINTS = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
CHUNK = 1 << 15
# tokenizers' pre_tokenize_str slows down on long texts (its offset bookkeeping): short chunks
HF_CHUNK = 1 << 9
SEPARATOR = "\n"
# c alone, between letters (lower/upper both ways), digits, spaces, apostrophes
CONTEXTS = ["{}", "a{}A", "A{}a", "1{}1", " {} ", "'{}'"]
NEIGHBOURS = "aA1 '\n"


def _texts(context: str, chunk: list[int]) -> str:
    return SEPARATOR.join(context.format(chr(cp)) for cp in chunk)


def _scan(family: str, ours, reference, against: str, chunk_size: int = CHUNK,
          contexts: list[str] = CONTEXTS) -> None:
    """Compare ours(text) with reference(text) on every chunk of code points in every context
    (one comparison per chunk); a chunk that differs is rerun code point by code point, to
    name the first ones that differ alone (until MISMATCHES_SHOWN are named)."""
    check = Comparison(f"code point scan {family}: chunks of {chunk_size} code points x {len(contexts)} contexts "
                       f"({len(CODE_POINTS)} code points; a differing chunk rerun per code point)", against=against)
    for context in contexts:
        for i in range(0, len(CODE_POINTS), chunk_size):
            chunk = CODE_POINTS[i:i + chunk_size]
            text = _texts(context, chunk)
            if check.one(f"chunk at U+{chunk[0]:04X} in {context!r}", ours(text), reference(text)):
                continue
            for cp in chunk:        # name the code points that differ alone
                if check.mismatch_count > MISMATCHES_SHOWN:
                    break
                alone = _texts(context, [cp])
                check.one(f"U+{cp:04X} in {context.format('c')!r}", ours(alone), reference(alone))
    check.finish()


# ----------------------------------------------------------------------------- tiktoken

def _tiktoken_patterns() -> dict[SplitPattern, str]:
    """The pat_str of each of tiktoken's patterns, from tiktoken_ext (the constructors would read
    the rank files: they get empty ones), and Meta's Llama 3 pattern (llama3 tokenizer.py,
    which runs it on tiktoken)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
        mp.setattr(openai_public, "data_gym_to_mergeable_bpe_ranks", lambda *a, **k: {})
        return {SplitPattern.R50K: openai_public.r50k_base()["pat_str"],
                SplitPattern.CL100K: openai_public.cl100k_base()["pat_str"],
                SplitPattern.O200K: openai_public.o200k_base()["pat_str"],
                SplitPattern.LLAMA3: LLAMA3_PAT_STR}


def _marker_ranks() -> dict[bytes, int]:
    """The 256 bytes, then byte+neighbour tokens, then neighbour+byte tokens, then
    neighbour+ASCII+neighbour (so that a one-byte c shows too). The separator is a neighbour
    like the others: contexts that run together show as well."""
    tokens = [bytes([b]) for b in range(256)]
    tokens += [bytes([b]) + n.encode() for n in NEIGHBOURS for b in range(256)]
    tokens += [n.encode() + bytes([b]) for n in NEIGHBOURS for b in range(256)]
    tokens += [x.encode() + bytes([b]) + y.encode() for x in NEIGHBOURS for y in NEIGHBOURS for b in range(128)]
    ranks: dict[bytes, int] = {}
    for token in tokens:
        ranks.setdefault(token, len(ranks))
    return ranks


@pytest.fixture(scope="module")
def marker_rank_file(tmp_path_factory) -> tuple[Path, dict[bytes, int]]:
    ranks = _marker_ranks()
    path = tmp_path_factory.mktemp("marker") / "marker.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items()))
    return path, ranks


@pytest.mark.parametrize("pattern", [SplitPattern.R50K, SplitPattern.CL100K, SplitPattern.O200K,
                                     SplitPattern.LLAMA3], ids=lambda p: p.value)
def test_tiktoken_patterns_on_every_code_point(pattern, marker_rank_file):
    path, ranks = marker_rank_file
    reference = tiktoken.Encoding(f"marker-{pattern.value}", pat_str=_tiktoken_patterns()[pattern],
                                  mergeable_ranks=ranks, special_tokens={})
    ours = toksmith.load(path, pattern=pattern, special_tokens={})
    _scan(f"tiktoken {pattern.value}", lambda t: ours.encode(t, add_special=False), reference.encode_ordinary,
          against="tiktoken 0.14.0")


def test_o200k_code_point_unassigned_in_unicode_16(fixtures):
    # U+1ACF is a mark from Unicode 17 on; tiktoken 0.14.0's regex-syntax (Unicode 16) has it
    # unassigned, so it is punctuation-like and takes the apostrophe along.
    text = "\u1acf'OFPOT"
    reference = tiktoken_encoding("o200k_base", fixtures)
    ours = toksmith.load(fixture_file(fixtures, "tiktoken/o200k_base.tiktoken"))
    check = Comparison("o200k_base, U+1ACF (unassigned in Unicode 16) before an apostrophe", against="tiktoken 0.14.0")
    check.one(text, ours.encode(text, add_special=False), reference.encode_ordinary(text))
    check.finish()


# ----------------------------------------------------------------------------- tokenizers

HF_PATTERNS = {"gpt2": HF_GPT2_REGEX, "llama3": HF_LLAMA3_REGEX, "qwen2": HF_QWEN2_REGEX, "o200k": O200K_REGEX}


@pytest.mark.parametrize("name", list(HF_PATTERNS))
def test_tokenizers_split_patterns_on_every_code_point(name):
    split = pre_tokenizers.Split(Regex(HF_PATTERNS[name]), "isolated")
    splitter = oniguruma_splitter(HF_PATTERNS[name])
    _scan(f"tokenizers Split {name}",
          lambda t: [piece.decode("utf-8") for piece in splitter.split_text(t.encode("utf-8"))],
          lambda t: [piece for piece, _ in split.pre_tokenize_str(t)], "tokenizers 0.23.3", HF_CHUNK)


def test_tokenizers_added_token_word_class_on_every_code_point(tmp_path):
    # A single_word added token matches only where no Rust regex \w touches it
    # (tokenizers' added_vocabulary.rs), with tokenizers' own regex crate's Unicode.
    from tokenizers import AddedToken, Tokenizer, models
    from tokenizers import pre_tokenizers as P

    reference = Tokenizer(models.WordLevel({"[UNK]": 0, "ab": 1}, unk_token="[UNK]"))
    reference.pre_tokenizer = P.WhitespaceSplit()
    reference.add_tokens([AddedToken("ab", single_word=True)])
    reference.save(str(tmp_path / "tokenizer.json"))
    ours = toksmith.load(tmp_path / "tokenizer.json")
    _scan("tokenizers added token single_word", lambda t: ours.encode(t, add_special=False),
          lambda t: reference.encode(t, add_special_tokens=False).ids, "tokenizers 0.23.3", HF_CHUNK,
          contexts=["{}ab", "ab{}"])


# ----------------------------------------------------------------------------- llama.cpp

# Presets of distinct class use: letters/numbers/spaces (gpt-2, llama-bpe), marks (qwen35), the
# case classes (gpt-4o). (deepseek-coder, falcon: the same classes through std::regex, 30 s each.)
PRESETS = ["gpt-2", "llama-bpe", "qwen35", "gpt-4o"]


def _byte_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character map (GGUF gpt2 vocabularies store tokens so)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("\u00a1"), ord("\u00ac") + 1),
                 *range(ord("\u00ae"), ord("\u00ff") + 1)]
    others = [b for b in range(256) if b not in printable]
    return {**{b: chr(b) for b in printable}, **{b: chr(256 + i) for i, b in enumerate(others)}}


def _write_marker_gguf(path: Path, pre: str) -> Path:
    """The marker vocabulary of _marker_ranks as a GGUF gpt2 vocabulary: the same tokens in the
    same order, each made by one merge (neighbour+ASCII+neighbour as neighbour + ASCII+neighbour)."""
    to_char = _byte_to_unicode()
    tokens = [to_char[b] for b in range(256)]
    merges: list[str] = []
    known = set(tokens)

    def merge(left: bytes, right: bytes) -> None:
        left_text, right_text = "".join(to_char[b] for b in left), "".join(to_char[b] for b in right)
        if left_text + right_text not in known:
            known.add(left_text + right_text)
            tokens.append(left_text + right_text)
            merges.append(f"{left_text} {right_text}")

    for n in NEIGHBOURS.encode():
        for b in range(256):
            merge(bytes([b]), bytes([n]))
    for n in NEIGHBOURS.encode():
        for b in range(256):
            merge(bytes([n]), bytes([b]))
    for x in NEIGHBOURS.encode():
        for y in NEIGHBOURS.encode():
            for b in range(128):
                merge(bytes([x]), bytes([b, y]))
    writer = gguf.GGUFWriter(str(path), "gpt2")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types([gguf.TokenType.NORMAL] * len(tokens))
    writer.add_token_merges(merges)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


@pytest.mark.parametrize("pre", PRESETS)
def test_llama_cpp_presets_on_every_code_point(pre, tmp_path):
    path = _write_marker_gguf(tmp_path / f"marker-{pre}.gguf", pre)
    reference = llama_cpp_reference.load_vocab(path)
    ours = toksmith.load(path)
    _scan(f"llama.cpp {pre}", lambda t: ours.encode(t, add_special=False),
          lambda t: reference.tokenize(t.encode("utf-8"), add_special=False, parse_special=False), "llama.cpp")
