"""Vocab-only GGUFs written by toksmith, checked with the references themselves.

- GGUF -> GGUF: every fixture GGUF and the GGUFs the tests build (RWKV, PLaMo-2,
  whitespace, gemma4, hybriddna) written back hold the same metadata, read by the `gguf`
  package's GGUFReader (every key in order, its GGUF types, the raw bytes of every value),
  and llama.cpp gives the same ids and text on the written file as on the original.
- sentencepiece .model -> GGUF: sentencepiece on the .model against llama.cpp on the
  written GGUF, every corpus line (documented disagreements below).
- tokenizer.json -> GGUF and RWKV .txt -> GGUF: see the sections further down.

Reported as ``convert <source file> -> gguf: <N> lines, <M> mismatches`` (N counts each
(line, flag combination) compared; decode checks count in M).
"""
from __future__ import annotations

import gzip
import itertools
import math
import re
from pathlib import Path

import gguf
import pytest
import sentencepiece as spm
import tokenizers
from tokenizers import AddedToken
from tokenizers import decoders as tk_decoders
from tokenizers import models as tk_models
from tokenizers import normalizers as tk_normalizers
from tokenizers import pre_tokenizers as tk_pre
from tokenizers import processors as tk_processors
from sentencepiece import sentencepiece_model_pb2 as pb

import toksmith
from tests import llama_cpp_reference
from tests.conftest import fixture_file, report
from tests.gguf_reference import read_metadata
from tests.parity.test_byte_bpe_gguf import special_texts_of, spliced
from tests.parity.test_spm_bpe_gguf import fail_on
from tests.plamo2_gguf import sentencepiece_pieces, write_plamo2_gguf
from tests.rwkv_gguf import rwkv_world_tokens, write_rwkv_world_gguf
from tests.unit import gguf_writer
from toksmith.hf.split_patterns import QWEN2_REGEX

FLAGS = list(itertools.product((False, True), repeat=2))   # (add_special, parse_special)
GGUF_FIXTURES = ("bert-bge", "deepseek-coder", "falcon", "gpt-2", "llama-bpe", "llama-spm", "mpt",
                 "nomic-bert-moe", "phi-3", "qwen2", "refact", "starcoder")


def gguf_fields(path) -> list[tuple[str, tuple[int, ...], list[bytes]]]:
    """(key, GGUF types, raw bytes of each value) of every key, in file order, by GGUFReader."""
    reader = gguf.GGUFReader(str(path))
    return [(key, tuple(int(t) for t in field.types), [bytes(field.parts[i]) for i in field.data])
            for key, field in reader.fields.items() if not key.startswith("GGUF.")]


def llama_cpp_mismatches(original, written, texts: list[str]) -> int:
    """Lines (x FLAGS) where llama.cpp tokenizes or detokenizes `written` unlike `original`."""
    ref, got = llama_cpp_reference.load_vocab(original), llama_cpp_reference.load_vocab(written)
    assert got.n_tokens == ref.n_tokens
    bad = 0
    for text, (add_special, parse_special) in itertools.product(texts, FLAGS):
        raw = text.encode("utf-8")
        want = ref.tokenize(raw, add_special, parse_special)
        if got.tokenize(raw, add_special, parse_special) != want:
            bad += 1
        elif parse_special and any(got.detokenize(want, remove, not remove) != ref.detokenize(want, remove, not remove)
                                   for remove in (False, True)):
            bad += 1
    return bad


# ------------------------------------------------------------------ GGUF -> GGUF

# Fixtures small enough for GGUFReader (it takes seconds per 50k tokens): the written file's
# fields are compared with it; every fixture's written file is compared byte for byte.
READER_CHECKED = ("bert-bge",)


def check_llama_cpp_round_trip(original, written, texts: list[str], label: str) -> None:
    tok = toksmith.load(original)
    assert toksmith.load(written).encode_batch(texts) == tok.encode_batch(texts)
    texts = spliced(texts, special_texts_of(original), seed=len(label))
    bad = llama_cpp_mismatches(original, written, texts)
    report(f"convert {label} -> gguf: {len(texts) * len(FLAGS)} lines, {bad} mismatches")
    assert bad == 0


def golden_texts(fixtures, name: str) -> list[str]:
    path = fixtures / f"gguf/ggml-vocab-{name}.gguf.inp"
    return path.read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")[:-1] if path.is_file() else []


@pytest.mark.parametrize("name", GGUF_FIXTURES)
def test_gguf_fixture_written_back_is_the_same_file(fixtures, corpus_lines, tmp_path, name):
    """llama.cpp's converter writes a vocab-only file as header + key/values, no padding:
    written back, every fixture is the same bytes (so the same keys, types and values)."""
    original = fixture_file(fixtures, f"gguf/ggml-vocab-{name}.gguf")
    written = toksmith.load(original).save(tmp_path / "written.gguf")
    assert written.read_bytes() == original.read_bytes()
    if name in READER_CHECKED:
        assert gguf_fields(written) == gguf_fields(original)
    texts = golden_texts(fixtures, name) + corpus_lines["tricky_strings.txt"]
    check_llama_cpp_round_trip(original, written, texts, original.name)


def built_gguf(fixtures, tmp_path, kind: str):
    """A GGUF of a tokenizer type no fixture has, as the other parity tests build it (RWKV,
    PLaMo-2) or from GPT-2's tokens and merges (read and written with struct, tests/unit/gguf_writer)."""
    target = tmp_path / f"{kind}.gguf"
    if kind == "rwkv":
        return write_rwkv_world_gguf(fixture_file(fixtures, "rwkv/rwkv_vocab_v20230424.txt"), target)
    if kind == "plamo2":
        pieces = sentencepiece_pieces(fixture_file(fixtures, "spm/t5_base_japanese_spiece.model"))
        return write_plamo2_gguf(target, pieces, pads=12)
    meta = read_metadata(fixture_file(fixtures, "gguf/ggml-vocab-gpt-2.gguf"))
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    pre = {"hybriddna": "gpt-2"}.get(kind, kind)
    if kind == "hybriddna":
        kmers = ["".join(p) + "\ue000" for p in itertools.product("ACGT", repeat=3)]
        tokens = tokens + [t.encode() for t in ["<dna>", "</dna>", "<oov>"] + kmers]
        types = types + [3, 3, 3] + [1] * len(kmers)
    return gguf_writer.write_gguf(target, [
        gguf_writer.str_kv("general.architecture", "gpt2"), gguf_writer.str_kv("tokenizer.ggml.model", kind),
        gguf_writer.str_kv("tokenizer.ggml.pre", pre), gguf_writer.strings_kv("tokenizer.ggml.tokens", tokens),
        gguf_writer.i32s_kv("tokenizer.ggml.token_type", types),
        gguf_writer.strings_kv("tokenizer.ggml.merges", meta["tokenizer.ggml.merges"]),
        gguf_writer.u32_kv("tokenizer.ggml.bos_token_id", 50256), gguf_writer.bool_kv("tokenizer.ggml.add_bos_token", True)])


@pytest.mark.parametrize("kind", ["rwkv", "plamo2", "whitespace", "gemma4", "hybriddna"])
def test_built_gguf_written_back_keeps_its_metadata(fixtures, corpus_lines, tmp_path, kind):
    """The written file is the original's bytes up to where gguf-py's write_tensors_to_file
    pads the built file to its alignment (zeros): the same keys, types and values."""
    original = built_gguf(fixtures, tmp_path, kind)
    written = toksmith.load(original).save(tmp_path / "written.gguf")
    data, before = written.read_bytes(), open(original, "rb").read()
    assert before[:len(data)] == data and before[len(data):] == bytes(len(before) - len(data))
    assert len(before) - len(data) < gguf.GGUF_DEFAULT_ALIGNMENT
    if kind == "plamo2":
        assert gguf_fields(written) == gguf_fields(original)
    texts = corpus_lines["tricky_strings.txt"] + ["<dna>ACGTAC</dna> x", "Hello\u2581world"]
    check_llama_cpp_round_trip(original, written, texts, f"{kind} GGUF")


def test_pre_override_is_written(fixtures, tmp_path):
    """A tokenizer loaded with pre= saves that pre-tokenizer: it loads back tokenizing the same way."""
    tok = toksmith.load(fixture_file(fixtures, "gguf/ggml-vocab-qwen2.gguf"), pre="qwen35")
    written = tok.save(tmp_path / "qwen35.gguf")
    assert read_metadata(written)["tokenizer.ggml.pre"] == b"qwen35"
    text = "r\u00e9sum\u00e9 Vie\u0302\u0301t Nam"
    assert toksmith.load(written).encode(text) == tok.encode(text)
    assert llama_cpp_reference.load_vocab(written).tokenize(text.encode(), False, False) == \
        tok.encode(text, add_special=False)


# ------------------------------------------------------------------ sentencepiece .model -> GGUF

# The .model files llama.cpp can express, and the add_bos/add_eos their GGUF holds.
SPM_MODELS = {
    "llama2_tokenizer.model": (True, False),          # BPE -> "llama": llama.cpp's SPM adds BOS
    "sentencepiece_test_model.model": (False, True),  # Unigram -> "t5": llama.cpp's UGM adds EOS
    "sentencepiece_test_ja_model.model": (False, True),
    "t5_base_japanese_spiece.model": (False, True),
}


def decode_reference(model_path) -> spm.SentencePieceProcessor:
    """sentencepiece on the model with unk_surface "": sentencepiece renders <unk> as " \u2047 ",
    llama.cpp's detokenize (remove_special) as nothing, a disagreement of the references."""
    proto = pb.ModelProto()
    proto.ParseFromString(model_path.read_bytes())
    proto.trainer_spec.unk_surface = ""
    return spm.SentencePieceProcessor(model_proto=proto.SerializeToString())


@pytest.mark.parametrize("name", SPM_MODELS)
def test_sentencepiece_model_to_gguf_matches_sentencepiece(fixtures, corpus_lines, invalid_utf8_lines,
                                                          tmp_path, name):
    """sentencepiece on the .model against llama.cpp on the written GGUF, every corpus line.

    Flags: add_special=True on every line (sentencepiece adds the BOS/EOS the GGUF's
    add_bos/add_eos say), add_special=False on tricky_strings.txt and the invalid UTF-8
    lines: llama.cpp's SPM and UGM sessions tokenize the text whatever add_special says and
    only put BOS/EOS around it. parse_special=False only: sentencepiece never parses
    control-token texts (a <s> in the text is text), which is llama.cpp's parse_special=False;
    a quarter of the lines carry a spliced <s>/</s>/<unk> text to check it.

    Documented disagreements of the two references on the source itself (the GGUF follows
    llama.cpp, which is all a GGUF can hold), counted apart and reported:
    - Unigram: llama.cpp sums piece scores in double, sentencepiece in float; where the
      two segmentations differ, both have the same total score (a tie broken differently,
      checked line by line): lines with long runs of "-", "=", CJK.
    - a text with a literal U+2581: sentencepiece's remove_extra_whitespaces strips trailing
      U+2581 after escaping spaces (a literal one too); llama.cpp's UGM strips only spaces
      (tricky_strings.txt line 110).
    - invalid UTF-8 (BPE): sentencepiece first replaces invalid bytes with U+FFFD,
      llama.cpp's SPM falls back to the raw bytes' <0xXX> pieces.
    - decode (llama_detokenize with remove_special): <unk> prints nothing (sentencepiece:
      " \u2047 ", so the decode reference uses unk_surface ""), and llama.cpp removes one leading
      space of the first token where sentencepiece removes every leading space before the
      first visible text (lines that start with U+2581 or with an <unk>): decodes that differ
      only in leading spaces.
    """
    model_path = fixture_file(fixtures, f"spm/{name}")
    add_bos, add_eos = SPM_MODELS[name]
    written = toksmith.load(model_path).save(tmp_path / f"{name}.gguf")
    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    sp_decode = decode_reference(model_path)
    ref = llama_cpp_reference.load_vocab(written)
    specials = [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if sp.is_control(i) or sp.is_unknown(i)]
    scores = [sp.get_score(i) for i in range(sp.get_piece_size())]
    compared = mismatches = ties = literal_spaces = leading_spaces = raw_bytes = 0
    examples = []
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, specials, seed=len(corpus))
        flags = (True, False) if corpus == "tricky_strings.txt" else (True,)
        for add_special in flags:
            expected = sp.encode(texts, add_bos=add_special and add_bos, add_eos=add_special and add_eos)
            for i, (text, want) in enumerate(zip(texts, expected)):
                compared += 1
                got = ref.tokenize(text.encode("utf-8"), add_special, False)
                if got != want:
                    if "\u2581" in text:
                        literal_spaces += 1
                    elif len(got) == len(want) and math.isclose(math.fsum(scores[t] for t in got),
                                                              math.fsum(scores[t] for t in want), rel_tol=1e-6):
                        ties += 1
                    else:
                        mismatches += 1
                        examples.append(f"{corpus}:{i + 1} {text[:60]!r}\n  sentencepiece {want}\n  llama.cpp {got}")
                    continue
                if add_special:
                    continue
                ours = ref.detokenize(want, remove_special=True, unparse_special=False).decode("utf-8", "replace")
                theirs = sp_decode.decode(want)
                if ours != theirs:
                    if ours.lstrip(" ") == theirs.lstrip(" "):
                        leading_spaces += 1
                    else:
                        mismatches += 1
                        examples.append(f"{corpus}:{i + 1} decode {ours[:60]!r} != {theirs[:60]!r}")
    for raw in invalid_utf8_lines:
        compared += 1
        got = ref.tokenize(raw, False, False)
        if got != sp.encode(raw):
            if any(sp.is_byte(t) for t in got):
                raw_bytes += 1
            else:
                mismatches += 1
                examples.append(f"invalid UTF-8 {raw!r}")
    report(f"convert {name} -> gguf: {compared} lines, {mismatches} mismatches")
    report(f"convert {name} -> gguf: documented reference disagreements: {ties} Unigram score ties, "
           f"{literal_spaces} lines with a literal U+2581, {raw_bytes} invalid UTF-8 byte fallbacks, "
           f"{leading_spaces} decodes differing in leading spaces only")
    fail_on(examples)


@pytest.mark.parametrize("name,missing", [
    ("hf_test_sentencepiece_bpe.model", "precompiled charsmap.*remove_extra_whitespaces.*no byte pieces"),
    ("llama2c_tok512.model", "remove_extra_whitespaces"),
])
def test_sentencepiece_bpe_llama_cpp_cannot_express_is_refused(fixtures, tmp_path, name, missing):
    """llama.cpp's SPM vocabulary applies no normalizer, and falls back to <0xXX> pieces where
    sentencepiece (without byte_fallback) gives <unk> (without them llama.cpp aborts)."""
    tok = toksmith.load(fixture_file(fixtures, f"spm/{name}"))
    target = tmp_path / "refused.gguf"
    target.write_bytes(b"old")
    with pytest.raises(toksmith.UnsupportedConversionError, match=missing) as caught:
        tok.save(target)
    assert name in str(caught.value) and "vocab-only GGUF" in str(caught.value)
    assert target.read_bytes() == b"old"


def test_refused_normalizer_would_tokenize_differently(fixtures, tmp_path):
    """Why llama2c_tok512.model is refused: the file llama.cpp's converter writes for it (the
    same keys without the refusal) tokenizes runs of spaces unlike sentencepiece, which
    removes extra whitespace."""
    from toksmith.writers.gguf_binary import encode_gguf
    from toksmith.writers.gguf_keys import header_entries, special_id_entries, special_ids_of
    from toksmith.writers.gguf_sentencepiece import vocabulary_entries
    model_path = fixture_file(fixtures, "spm/llama2c_tok512.model")
    spec = toksmith.load(model_path).spec
    lossy = tmp_path / "lossy.gguf"
    lossy.write_bytes(encode_gguf(header_entries("llama", "lossy") + vocabulary_entries(spec, "llama")
                                  + special_id_entries(special_ids_of(spec.vocab.special))))
    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    text = "  Hello   world  "
    assert llama_cpp_reference.load_vocab(lossy).tokenize(text.encode(), False, False) != sp.encode(text)


# ------------------------------------------------------------------ tokenizer.json -> GGUF

def llama_cpp_clean_spaces(text: bytes) -> bytes:
    """llama.cpp's clean_spaces passes over detokenized text (llama_vocab::impl::detokenize),
    which its byte-level and WordPiece vocabularies run and tokenizers' decoders do not."""
    src, out = bytearray(text), bytearray(text[:1])
    for i in range(1, len(src)):    # " ?", " !", " .", " ," lose the space
        if src[i - 1] == 32 and src[i] in b"?!.,":
            out.pop()
        out.append(src[i])
    src, out, i = out, bytearray(out[:1]), 1
    while i < len(src):             # " ' " loses both spaces (the second one becomes a NUL, skipped)
        x = src[i]
        if x == 39 and i + 1 < len(src) and src[i - 1] == 32 and src[i + 1] == 32:
            out.pop()
            i += 1
            src[i] = 0
        out.append(x)
        i += 1
    src, out = out, bytearray(out[:1])
    for i in range(1, len(src)):    # " 's", " 'm", " 're", " 've" lose the space
        if src[i - 1] == 32 and src[i] == 39 and i + 1 < len(src):
            if src[i + 1] in b"sm" or (i + 2 < len(src) and src[i + 1:i + 3] in (b"re", b"ve")):
                out.pop()
        out.append(src[i])
    return bytes(out)


def hf_special_texts(hf) -> list[str]:
    return [t.content for t in hf.get_added_tokens_decoder().values()]


def compare_hf_with_llama_cpp(hf, gguf_path, corpus_lines, label: str, *, adds_tokens: bool,
                              clean_spaces: bool, spacing: str | None = None,
                              long_words: tuple[int, int] | None = None,
                              known: dict[str, set[int]] | None = None,
                              unparsed_specials: bool = True) -> None:
    """tokenizers on the source against llama.cpp on the written GGUF, every corpus line (a
    quarter with an added token's text spliced in). parse_special=False is tokenizers'
    encode_special_tokens=True. Flags: (True, False) on every line; on the lines holding an
    added token's text also (True, True), and with `adds_tokens` (the post-processor puts a
    BOS/EOS around the ids) the two add_special=False combinations too. On the other lines
    parse_special provably changes nothing (there is no special text to parse), and
    add_special only puts the BOS/EOS around the same ids (checked on the spliced lines).
    Decode of every line's ids; with skip_special=True too on the spliced lines (elsewhere
    the ids hold no special token but the template's BOS/EOS, which both references drop
    alike, as the spliced lines check); where llama.cpp's clean_spaces
    alone explains a difference it is counted apart (a documented disagreement); with
    `spacing` (why the two decoders space text differently), decodes equal but for spaces too.
    `long_words` (unk id, max_input_chars_per_word): tokenizers' WordPiece gives the unknown
    token for a longer word, llama.cpp's WPM has no such limit: lines with such a word whose
    ids differ are counted apart. `known`: corpus -> line numbers whose ids the references
    are documented to disagree on (the caller says why), counted apart. Without
    `unparsed_specials`, parse_special=False is compared on lines without special texts only
    (the caller says why)."""
    ref = llama_cpp_reference.load_vocab(gguf_path)
    specials = hf_special_texts(hf)
    special_pattern = re.compile("|".join(re.escape(t) for t in specials))
    control_ids = {i for i, t in hf.get_added_tokens_decoder().items() if t.special}
    compared = mismatches = cleaned = spaced = long_unknown = known_lines = 0
    examples = []
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, specials, seed=len(corpus))
        has_special = [special_pattern.search(t) is not None for t in texts]
        for add_special, parse_special in FLAGS:
            if (add_special, parse_special) == (True, False):
                chosen = range(len(texts)) if unparsed_specials else [i for i in range(len(texts))
                                                                       if not has_special[i]]
            elif not parse_special and not unparsed_specials:
                continue
            elif add_special or adds_tokens:
                chosen = [i for i, t in enumerate(texts) if has_special[i]]
            else:
                continue
            hf.encode_special_tokens = not parse_special
            want = [e.ids for e in hf.encode_batch_fast([texts[i] for i in chosen], add_special_tokens=add_special)]
            decode_here = add_special and not parse_special
            for i, ids in zip(chosen, want):
                compared += 1
                got = ref.tokenize(texts[i].encode("utf-8"), add_special, parse_special)
                if got != ids and long_words and long_words[0] in ids and re.search(
                        r"[^\W_]{%d,}" % (long_words[1] + 1), texts[i]):
                    long_unknown += 1
                    continue
                if got != ids and i + 1 in (known or {}).get(corpus, ()):
                    known_lines += 1
                    continue
                if got != ids:
                    mismatches += 1
                    examples.append(f"{corpus}:{i + 1} ({add_special}, {parse_special}) {texts[i][:60]!r}\n"
                                    f"  tokenizers {ids}\n  llama.cpp {got}")
                    continue
                if not decode_here:
                    continue
                for skip in (False, True) if has_special[i] and control_ids.intersection(ids) else (False,):
                    theirs = hf.decode(ids, skip_special_tokens=skip).encode("utf-8")
                    ours = ref.detokenize(ids, remove_special=skip, unparse_special=not skip)
                    if ours != theirs:
                        if clean_spaces and llama_cpp_clean_spaces(theirs) == ours:
                            cleaned += 1
                        elif spacing and ours.replace(b" ", b"") == theirs.replace(b" ", b""):
                            spaced += 1
                        else:
                            mismatches += 1
                            examples.append(f"{corpus}:{i + 1} decode(skip={skip}) {ours[:60]!r} != {theirs[:60]!r}")
    hf.encode_special_tokens = False
    report(f"convert {label} -> gguf: {compared} lines, {mismatches} mismatches")
    if cleaned or spaced or long_unknown or known_lines:
        report(f"convert {label} -> gguf: documented reference disagreements: {cleaned} decodes differing "
               f"only by llama.cpp's clean_spaces" + (f", {spaced} only in spaces ({spacing})" if spacing else "")
               + (f", {long_unknown} lines with a word over {long_words[1]} characters" if long_words else "")
               + (f", {known_lines} known lines" if known else ""))
    fail_on(examples)


def gpt2_tokenizer(fixtures, *, added: bool = False, pre_tokenizer=None) -> tokenizers.Tokenizer:
    """GPT-2 as transformers' GPT2TokenizerFast builds it from the hf/gpt2 folder; `added`:
    with a special and a non-special added token."""
    folder = fixture_file(fixtures, "hf/gpt2/vocab.json").parent
    tok = tokenizers.Tokenizer(tk_models.BPE.from_file(str(folder / "vocab.json"), str(folder / "merges.txt")))
    tok.pre_tokenizer = pre_tokenizer or tk_pre.ByteLevel(add_prefix_space=False)
    tok.decoder = tk_decoders.ByteLevel()
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    if added:
        tok.add_special_tokens([AddedToken("<sep/>", special=True, normalized=False)])
        tok.add_tokens([AddedToken("the cat", normalized=False)])
    return tok


def llama3_with_bos(fixtures, tmp_path) -> Path:
    """The fixture Llama 3 tokenizer.json with the BOS template Meta's file has (the fixture's
    post-processor adds nothing), set with tokenizers' API."""
    path = tmp_path / "llama3-bos.json"
    path.write_bytes(gzip.decompress(fixture_file(fixtures, "hf/llama3/tokenizer.json.gz").read_bytes()))
    tok = tokenizers.Tokenizer.from_file(str(path))
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = tk_processors.Sequence([
        tk_processors.ByteLevel(trim_offsets=False),
        tk_processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A $B:1",
                                         special_tokens=[("<|begin_of_text|>", bos)])])
    tok.save(str(path))
    return path


def saved(tok: tokenizers.Tokenizer, path: Path) -> Path:
    tok.save(str(path))
    return path


@pytest.mark.parametrize("name", ["llama3-with-bos", "gpt2-folder", "gpt2-added-tokens"])
def test_byte_level_tokenizer_json_to_gguf_matches_tokenizers(fixtures, corpus_lines, tmp_path, name):
    if name == "llama3-with-bos":
        source, pre, adds = llama3_with_bos(fixtures, tmp_path), b"llama-bpe", True
    elif name == "gpt2-folder":
        source, pre, adds = fixture_file(fixtures, "hf/gpt2/vocab.json").parent, b"gpt-2", False
    else:
        source, pre, adds = saved(gpt2_tokenizer(fixtures, added=True), tmp_path / "gpt2-added.json"), b"gpt-2", False
    hf = (gpt2_tokenizer(fixtures) if name == "gpt2-folder" else tokenizers.Tokenizer.from_file(str(source)))
    written = toksmith.load(source).save(tmp_path / f"{name}.gguf")
    meta = read_metadata(written)
    assert meta["tokenizer.ggml.model"] == b"gpt2" and meta["tokenizer.ggml.pre"] == pre
    assert meta.get("tokenizer.ggml.add_bos_token", False) is adds
    compare_hf_with_llama_cpp(hf, written, corpus_lines, name, adds_tokens=adds, clean_spaces=True)


def test_byte_level_written_as_the_converter_writes(fixtures, tmp_path):
    """Tokens, token types and merges as llama.cpp's own llama-bpe file holds them (its
    converter wrote it from Meta's tokenizer.json), the template's BOS; added tokens typed
    CONTROL (special) and USER_DEFINED (not)."""
    written = toksmith.load(llama3_with_bos(fixtures, tmp_path)).save(tmp_path / "l3.gguf")
    fixture = read_metadata(fixture_file(fixtures, "gguf/ggml-vocab-llama-bpe.gguf"))
    meta = read_metadata(written)
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges",
                "tokenizer.ggml.bos_token_id"):
        assert meta[key] == fixture[key], key
    assert meta["tokenizer.ggml.add_bos_token"] is True and meta["tokenizer.ggml.pre"] == b"llama-bpe"
    small = toksmith.load(saved(gpt2_tokenizer(fixtures, added=True), tmp_path / "g.json")).save(tmp_path / "g.gguf")
    fields = read_metadata(small)
    tokens, types = fields["tokenizer.ggml.tokens"], fields["tokenizer.ggml.token_type"]
    assert (tokens[50256], types[50256]) == (b"<|endoftext|>", 3)   # CONTROL
    assert (tokens[50257], types[50257]) == (b"<sep/>", 3)
    assert (tokens[50258], types[50258]) == (b"the cat", 4)         # USER_DEFINED


@pytest.mark.parametrize("name,missing", [
    ("llama3", "ignore_merges=True.*'smaug-bpe'"),
    ("gpt2-qwen2-split", "hash to [0-9a-f]{64}.* no tokenizer.ggml.pre name"),
    ("gpt2-lstrip-template", "TemplateProcessing|lstrip added tokens"),
    ("gpt2-nfc", "normalizer NFC"),
])
def test_byte_level_tokenizer_json_llama_cpp_cannot_express_is_refused(fixtures, tmp_path, name, missing):
    """The Llama 3 fixture (its post-processor adds no BOS) hashes to "smaug-bpe", whose
    llama.cpp pre-tokenizer merges whole words that tokenizers (ignore_merges) keeps as one
    token: 255 corpus lines differ. A regex llama.cpp has no name for, added tokens that
    strip spaces, a template llama.cpp cannot add, a normalizer: each is named."""
    if name == "llama3":
        source = tmp_path / "llama3.json"
        source.write_bytes(gzip.decompress(fixture_file(fixtures, "hf/llama3/tokenizer.json.gz").read_bytes()))
    else:
        tok = gpt2_tokenizer(fixtures, pre_tokenizer=tk_pre.Sequence([
            tk_pre.Split(tokenizers.Regex(QWEN2_REGEX), behavior="isolated"),
            tk_pre.ByteLevel(add_prefix_space=False, use_regex=False)]) if name == "gpt2-qwen2-split" else None)
        if name == "gpt2-lstrip-template":
            tok.add_tokens([AddedToken(" New York", lstrip=True)])
            eot = tok.token_to_id("<|endoftext|>")
            tok.post_processor = tk_processors.TemplateProcessing(
                single="$A <|endoftext|> $A", pair=None, special_tokens=[("<|endoftext|>", eot)])
        if name == "gpt2-nfc":
            tok.normalizer = tk_normalizers.NFC()
        source = saved(tok, tmp_path / f"{name}.json")
    target = tmp_path / "refused.gguf"
    with pytest.raises(toksmith.UnsupportedConversionError, match=missing) as caught:
        toksmith.load(source).save(target)
    assert "vocab-only GGUF" in str(caught.value) and not target.exists()


# tricky_strings.txt lines where llama.cpp's WPM preprocessing and tokenizers' BertNormalizer
# + BertPreTokenizer disagree on the text itself (test_wordpiece_gguf compares the BGE GGUF
# with llama.cpp alone): U+2028/U+2029/U+0085 and \x0b/\x0c (whitespace or control),
# keycap sequences (U+FE0F U+20E3), and Hangul syllables and Devanagari signs (NFD jamo
# and marks, which llama.cpp drops where tokenizers keeps them).
WPM_KNOWN = {"tricky_strings.txt": {39, 40, 65, 72, 76, 87}}


def test_wordpiece_tokenizer_json_to_gguf_matches_tokenizers(fixtures, corpus_lines, tmp_path):
    """all-MiniLM-L6-v2 -> "bert", tokenizers against llama.cpp. Decode: llama.cpp's WPM
    detokenizer writes each word-start token's phantom space (and keeps the one after a
    removed [CLS]) and cleans spaces its own way, tokenizers' WordPiece decoder joins with
    spaces and cleans up others: decodes are compared with spaces removed."""
    source = fixture_file(fixtures, "hf/all-MiniLM-L6-v2/tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(source))
    hf.no_padding()
    hf.no_truncation()
    written = toksmith.load(source).save(tmp_path / "minilm.gguf")
    meta = read_metadata(written)
    assert meta["tokenizer.ggml.model"] == b"bert"
    bge = read_metadata(fixture_file(fixtures, "gguf/ggml-vocab-bert-bge.gguf"))
    # the same bert-base-uncased vocabulary as llama.cpp's BGE file, spelled the same way but
    # for the [unusedN] tokens, which that (older) file leaves without the phantom space
    differ = [(a, b) for a, b in zip(meta["tokenizer.ggml.tokens"], bge["tokenizer.ggml.tokens"]) if a != b]
    assert len(meta["tokenizer.ggml.tokens"]) == len(bge["tokenizer.ggml.tokens"])
    assert differ and all(a == "\u2581".encode() + b and b.startswith(b"[unused") for a, b in differ)
    assert meta["tokenizer.ggml.bos_token_id"] == bge["tokenizer.ggml.cls_token_id"]
    for key in ("seperator_token_id", "unknown_token_id"):
        assert meta[f"tokenizer.ggml.{key}"] == bge[f"tokenizer.ggml.{key}"]
    compare_hf_with_llama_cpp(hf, written, corpus_lines, source.parent.name + "/tokenizer.json", adds_tokens=True,
                              clean_spaces=True, spacing="WordPiece decoders", long_words=(100, 100),
                              known=WPM_KNOWN)


def test_unigram_tokenizer_json_is_refused(fixtures, tmp_path):
    """rut5-large (transformers' T5 conversion): llama.cpp's UGM cannot reproduce its
    Metaspace prepend rule nor its Replace(" {2,}", " ") normalizer; measured: the GGUF the
    converter's T5 route would write from its pieces tokenizes most spliced lines and every
    line starting with a space differently. The error names each."""
    source = fixture_file(fixtures, "hf/rut5-large/tokenizer.json")
    target = tmp_path / "rut5.gguf"
    with pytest.raises(toksmith.UnsupportedConversionError) as caught:
        toksmith.load(source).save(target)
    message = str(caught.value)
    assert "Replace(' {2,}', ' ')" in message and "prepend_scheme 'always'" in message
    assert "tokenizer.json" in message and not target.exists()
    # The measured disagreement behind the prepend rule, on the references themselves:
    hf = tokenizers.Tokenizer.from_file(str(source))
    assert hf.encode(" Hello", add_special_tokens=False).ids == hf.encode("Hello", add_special_tokens=False).ids


# ------------------------------------------------------------------ RWKV .txt -> GGUF

def test_rwkv_txt_to_gguf_matches_the_rwkv_package(fixtures, corpus_lines, invalid_utf8_lines, tmp_path):
    """The rwkv package's TRIE_TOKENIZER on the .txt against llama.cpp on the written GGUF,
    every corpus line. The GGUF holds the tokens the converter writes (tests/rwkv_gguf.py).
    Flags: llama.cpp's RWKV vocabulary adds no BOS/EOS (add_special provably changes
    nothing), and the rwkv package has no special tokens: parse_special=False."""
    from rwkv.rwkv_tokenizer import TRIE_TOKENIZER
    txt = fixture_file(fixtures, "rwkv/rwkv_vocab_v20230424.txt")
    written = toksmith.load(txt).save(tmp_path / "rwkv.gguf")
    converter_tokens, converter_types = rwkv_world_tokens(txt)
    meta = read_metadata(written)
    assert meta["tokenizer.ggml.tokens"] == converter_tokens and meta["tokenizer.ggml.token_type"] == converter_types
    assert (meta["tokenizer.ggml.bos_token_id"], meta["tokenizer.ggml.eot_token_id"]) == (0, 261)
    trie, ref = TRIE_TOKENIZER(str(txt)), llama_cpp_reference.load_vocab(written)
    compared = 0
    examples = []
    for corpus, lines in corpus_lines.items():
        for i, line in enumerate(lines):
            compared += 1
            want = trie.encode(line)
            got = ref.tokenize(line.encode("utf-8"), True, False)
            if got != want:
                examples.append(f"{corpus}:{i + 1} {line[:60]!r}\n  rwkv {want}\n  llama.cpp {got}")
            elif ref.detokenize(want, True, False) != trie.decodeBytes(want):
                examples.append(f"{corpus}:{i + 1} decode")
    for raw in invalid_utf8_lines:
        compared += 1
        if ref.tokenize(raw, True, False) != trie.encodeBytes(raw):
            examples.append(f"invalid UTF-8 {raw!r}")
    report(f"convert {txt.name} -> gguf: {compared} lines, {len(examples)} mismatches")
    fail_on(examples)
