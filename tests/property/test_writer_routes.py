"""Every writer route, exact or refused: for each source kind (a fixture of each format and
algorithm) and each target format, either `save` refuses, or the written file read by the
target's reference gives the ids the source's reference gives: on fuzzed text (hypothesis)
and on every code point alone and in context (between letters, before an apostrophe).

References (ids with no special handling, special texts read as text): sentencepiece for a
.model, tokenizers for a tokenizer.json (encode_special_tokens, no template, no padding),
llama.cpp for a GGUF (add_special and parse_special off), tiktoken for a rank file
(encode_ordinary, with the pattern of the encoding the tokenizer was read as), the rwkv
package's TRIE_TOKENIZER for an RWKV vocabulary .txt.

Each comparison goes through tests/parity/comparison.py; a text on which the two references
are documented to disagree passes only as one of the narrowed excuses of the parity tests,
route by route and bounded (DOCUMENTED below; the parity test that measures each is named there).
"""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest
import sentencepiece as spm
import tiktoken
import tiktoken.load
import tokenizers
from sentencepiece import sentencepiece_model_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toksmith
from tests import llama_cpp_reference
from tests.conftest import fixture_file, report
from tests.gguf_reference import read_metadata
from tests.parity.comparison import Comparison
from tests.parity.excuses.conversions_gguf import (PRECOMPILED_PER_GRAPHEME, SENTENCEPIECE_STRIPS_TRAILING_U2581,
                                                   EncodeCase)
from tests.parity.excuses.conversions_spm_json_tiktoken import (PRECOMPILED_MAPS_WHOLE_GRAPHEMES,
                                                                UNIGRAM_TAKES_CONTROL_PIECE_FROM_TEXT)
from tests.parity.excuses.writer_routes import UNIGRAM_TAKES_RESERVED_PIECE_FROM_TEXT
from tests.parity.llama_cpp_compare import reference_decode
from tests.parity.spm_json_cases import SourceLine, SourceModel
from tests.tiktoken_reference import encoding
from toksmith.formats.tiktoken import PATTERN_REGEX

# source -> how toksmith loads it (the fixture path, or an embedded name), and its encoding for a rank file
SOURCES = {
    "spm-unigram-bytes": "embedded:sentencepiece-demo",
    "spm-unigram": "spm/sentencepiece_test_model.model",
    "spm-bpe-bytes": "spm/llama2c_tok512.model",
    "spm-bpe": "spm/hf_test_sentencepiece_bpe.model",
    "json-wordpiece": "hf/all-MiniLM-L6-v2/tokenizer.json",
    "json-unigram": "hf/rut5-large/tokenizer.json",
    "gguf-gpt2": "gguf/ggml-vocab-gpt-2.gguf",
    "gguf-spm": "gguf/ggml-vocab-llama-spm.gguf",
    "gguf-bert": "gguf/ggml-vocab-bert-bge.gguf",
    "gguf-ugm": "gguf/ggml-vocab-nomic-bert-moe.gguf",
    "tiktoken-r50k": "tiktoken/r50k_base.tiktoken",
    "rwkv": "rwkv/rwkv_vocab_v20230424.txt",
}
TARGETS = (".json", ".model", ".gguf", ".tiktoken")
ROUTES = [(source, target) for source in SOURCES for target in TARGETS]

# Text made of what tokenizers trip over: spaces and their runs, U+2581, controls, marks,
# several scripts, emoji, special-token look-alikes, and any code point at all.
PARTS = [" ", "  ", "   ", "\t", "\n", "\r\n", "\u2581", "\u00a0", "\u3000", "\x0c", "\x85", "a", "the", "The",
         "Hello", "é", "e\u0301", "ß", "İ", "日本", "語", "設", "한국어", "어", "\u0915\u093e", "\u20e3", "😀", "👍🏽",
         "1", "2024", "'s", "'", "-", "--", "==", "##", "<s>", "</s>", "<unk>", "[CLS]", "<|endoftext|>",
         "..."]
TEXTS = st.lists(st.one_of(st.sampled_from(PARTS), st.characters(exclude_categories=("Cs",))),
                 max_size=24).map("".join)


def _source_path(fixtures: Path, source: str) -> Path:
    where = SOURCES[source]
    if where.startswith("embedded:"):
        return Path(toksmith.embedded_model_path(where.split(":", 1)[1]))
    return fixture_file(fixtures, where)


def _rank_encoding(path: Path) -> tiktoken.Encoding:
    """tiktoken on a rank file written from a byte-level tokenizer, with that tokenizer's pattern."""
    tok = toksmith.load(path)
    pattern = tok.spec.byte_level.pattern
    return tiktoken.Encoding(name=path.stem, pat_str=PATTERN_REGEX[pattern] if pattern in PATTERN_REGEX else pattern,
                             mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)), special_tokens={})


def reference(path: Path, fixtures: Path, source_name: str | None = None):
    """texts -> ids, by the reference of `path`'s format."""
    suffix = path.suffix
    if suffix == ".model":
        sp = spm.SentencePieceProcessor(model_file=str(path))
        return lambda texts: sp.encode(list(texts))
    if suffix == ".json":
        hf = tokenizers.Tokenizer.from_file(str(path))
        hf.no_padding()
        hf.no_truncation()
        hf.encode_special_tokens = True
        return lambda texts: [e.ids for e in hf.encode_batch(list(texts), add_special_tokens=False)]
    if suffix == ".gguf":
        llama = llama_cpp_reference.load_vocab(path)
        return lambda texts: [llama.tokenize(t.encode("utf-8"), False, False) for t in texts]
    if suffix == ".txt":
        from rwkv.rwkv_tokenizer import TRIE_TOKENIZER   # the rwkv package's reference tokenizer
        trie = TRIE_TOKENIZER(str(path))
        return lambda texts: [trie.encode(t) for t in texts]
    if suffix == ".tiktoken":
        enc = encoding(path.stem, fixtures) if source_name else _rank_encoding(path)
        return lambda texts: enc.encode_ordinary_batch(list(texts))
    raise AssertionError(suffix)


@functools.cache
def _written(fixtures: Path, out: Path, source: str, target: str):
    """(source reference, target reference) or None when the save refuses."""
    path = _source_path(fixtures, source)
    tok = toksmith.load(path)
    try:
        written = tok.save(out / f"{source}{target}")
    except toksmith.UnsupportedConversionError:
        return None
    return reference(path, fixtures, source), reference(written, fixtures)


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("routes")


# (source, target) -> the references' documented disagreements on that route: the narrowed
# excuses of the parity test that measures each, decided from the source model and the
# references (never from the written file's own normalizer, which would excuse a writer bug):
# - UNIGRAM_TAKES_CONTROL_PIECE_FROM_TEXT, PRECOMPILED_MAPS_WHOLE_GRAPHEMES
#   (test_convert_to_tokenizer_json.py): tokenizers' Unigram matches a CONTROL piece's text,
#   sentencepiece keeps it out of its lattice; tokenizers' Precompiled (built from the source
#   .model's charsmap) maps whole graphemes where sentencepiece maps the longest prefix.
# - UNIGRAM_TAKES_RESERVED_PIECE_FROM_TEXT (tests/parity/excuses/writer_routes.py): the same
#   disagreement where the parity test's excuse does not reach: an UNKNOWN piece's text
#   ('<unk>'), or a reserved text that tokenizers reads after a lone '▁' (the fuzzed texts
#   hold both, the corpora neither); exact by both references agreeing without those texts.
# - SENTENCEPIECE_STRIPS_TRAILING_U2581 (test_convert_to_gguf.py): sentencepiece strips a
#   trailing U+2581 with the trailing spaces, llama.cpp's UGM only the spaces.
# - PRECOMPILED_PER_GRAPHEME (test_convert_gguf_to_tokenizer_json.py): tokenizers' Precompiled
#   looks the charsmap up per grapheme, llama.cpp's UGM by the longest prefix ("\xa0\u20e3").
# Bounds: the fuzz draws are fixed (derandomize=True) but change with hypothesis' version, so
# each fuzz excuse may cover at most FUZZ_EXCUSED_FRACTION of the texts compared; the code
# point texts are fixed, their bounds are today's counts.
DOCUMENTED = {("spm-unigram-bytes", ".json"): (UNIGRAM_TAKES_CONTROL_PIECE_FROM_TEXT, UNIGRAM_TAKES_RESERVED_PIECE_FROM_TEXT,
                                                   PRECOMPILED_MAPS_WHOLE_GRAPHEMES),
              ("spm-unigram", ".json"): (UNIGRAM_TAKES_CONTROL_PIECE_FROM_TEXT, UNIGRAM_TAKES_RESERVED_PIECE_FROM_TEXT,
                                                   PRECOMPILED_MAPS_WHOLE_GRAPHEMES),
              ("spm-bpe", ".json"): (PRECOMPILED_MAPS_WHOLE_GRAPHEMES,),
              ("spm-unigram", ".gguf"): (SENTENCEPIECE_STRIPS_TRAILING_U2581,),
              ("gguf-ugm", ".json"): (PRECOMPILED_PER_GRAPHEME,)}
FUZZ_EXCUSED_FRACTION = 0.25    # today at most 34 of 209 texts (16%, CONTROL pieces on spm-unigram -> .json)
# The code point texts: no excuse is needed on the .json routes (today 0); one text holding U+2581
# on spm-unigram -> .gguf is a SENTENCEPIECE_STRIPS_TRAILING_U2581 (today 1).
CODE_POINT_BOUNDS = {("spm-unigram", ".gguf"): {SENTENCEPIECE_STRIPS_TRAILING_U2581: 1}}


@functools.cache
def _case_maker(fixtures: Path, out: Path, source: str, target: str):
    """text -> the case the route's excuses judge (the text itself where none is documented)."""
    if not DOCUMENTED.get((source, target)):
        return lambda text: text
    model_file, written_path = _source_path(fixtures, source), out / f"{source}{target}"
    if model_file.suffix == ".gguf":
        return _gguf_to_json_case_maker(model_file, written_path)
    if target == ".json":
        written = tokenizers.Tokenizer.from_file(str(written_path))
        written.encode_special_tokens = True            # as reference() reads it
        model = SourceModel(model_file, written)
        return lambda text: SourceLine(model, text)
    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    llama = llama_cpp_reference.load_vocab(written_path)
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model_file.read_bytes())
    facts = {"unigram": proto.trainer_spec.model_type == sentencepiece_model_pb2.TrainerSpec.UNIGRAM,
             "scores": [sp.get_score(i) for i in range(sp.get_piece_size())]}
    reference_on = lambda text: llama.tokenize(text.encode("utf-8"), False, False)  # noqa: E731
    return lambda text: EncodeCase(text, reference_on=reference_on, **facts)


def _gguf_to_json_case_maker(model_file: Path, written_path: Path):
    """Cases of a GGUF -> tokenizer.json route, as test_convert_gguf_to_tokenizer_json.py builds
    them: llama.cpp on the source GGUF, tokenizers on the written file, both as reference() reads."""
    llama = llama_cpp_reference.load_vocab(model_file)
    written = tokenizers.Tokenizer.from_file(str(written_path))
    written.encode_special_tokens = True
    facts = {"unigram": read_metadata(model_file)["tokenizer.ggml.model"] == b"t5",     # llama.cpp's UGM
             "reference_on": lambda text: llama.tokenize(text.encode("utf-8"), False, False),
             "extras": {"spell": functools.partial(reference_decode, llama, skip_special=False),
                        "ours_on": lambda text: written.encode(text, add_special_tokens=False).ids}}
    return lambda text: EncodeCase(text, **facts)


def _compare(check: Comparison, pair, texts: list[str], case_of) -> None:
    """The target's reference on the written file (ours) against the source's reference."""
    source_ref, target_ref = pair
    check.all([case_of(t) for t in texts], ours=target_ref(texts), theirs=source_ref(texts))


@pytest.mark.parametrize("source,target", ROUTES)
def test_written_file_reads_as_source_on_fuzzed_text(fixtures, out_dir, source, target):
    pair = _written(fixtures, out_dir, source, target)
    if pair is None:
        return                              # refused: nothing written, nothing to read otherwise
    case_of = _case_maker(fixtures, out_dir, source, target)
    documented = DOCUMENTED.get((source, target), ())
    # the bounds are set below, once the number of texts compared is known
    check = Comparison(f"writer route {source} -> {target}: fuzzed texts, ids by the target's reference on "
                       f"the written file", against="the source's reference on the source",
                       excuses={excuse: 0 for excuse in documented})

    @settings(max_examples=40, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(texts=st.lists(TEXTS, min_size=1, max_size=16))
    def each_draw(texts):
        before = check.mismatch_count
        _compare(check, pair, texts, case_of)
        assert check.mismatch_count == before, f"{source} -> {target}: " + "\n".join(check.mismatches[-1:])

    each_draw()
    check.excuses = {excuse: int(FUZZ_EXCUSED_FRACTION * check.compared) for excuse in documented}
    check.finish()


# Every code point but the surrogates: alone in planes 0, 1 and 14 (every script, symbol,
# emoji and tag character), in runs of 64 elsewhere (planes 2-3: CJK ideographs of one
# category; the rest private use or unassigned), to keep the test to minutes.
ALONE = [chr(c) for c in (*range(0x20000), *range(0xE0000, 0xE1000)) if not 0xD800 <= c <= 0xDFFF]
RUNS = ["".join(map(chr, range(start, min(start + 64, end))))
        for first, end in ((0x20000, 0xE0000), (0xE1000, sys.maxunicode + 1)) for start in range(first, end, 64)]
# And every code point of planes 0, 1 and 14 in context, 16 to a text: between letters and
# before an apostrophe ("a\u1c89b \u1c89's"), where splitters reading different Unicode tables
# cut otherwise (U+1C89 is a letter for tokenizers and tiktoken, not for llama.cpp) though
# the code point alone is one piece for both.
IN_CONTEXT = [" ".join(f"a{c}b {c}'s" for c in ALONE[start:start + 16]) for start in range(0, len(ALONE), 16)]
CODE_POINTS = ALONE + RUNS + IN_CONTEXT


@pytest.mark.parametrize("source,target", ROUTES)
def test_written_file_reads_as_source_on_every_code_point(fixtures, out_dir, source, target):
    pair = _written(fixtures, out_dir, source, target)
    if pair is None:
        report(f"writer route {source} -> {target}: refused")
        return
    with Comparison(f"writer route {source} -> {target}: {len(ALONE)} code points alone, {len(RUNS)} runs and "
                    f"{len(IN_CONTEXT)} texts of them in context, ids by the target's reference on the written file",
                    against="the source's reference on the source",
                    excuses=CODE_POINT_BOUNDS.get((source, target), {})) as check:
        _compare(check, pair, CODE_POINTS, _case_maker(fixtures, out_dir, source, target))
