"""SentencePiece BPE parity with the sentencepiece package, on every line of every fixture corpus.

Compared per line (tests/parity/compare.py): ids of encode (one call per line), ids of
encode_batch, decoded text of sentencepiece's ids, pieces of tokenize on a sample, and the
invalid UTF-8 lines. Models: the real BPE ``.model`` fixtures and BPE models this suite trains
with the sentencepiece trainer (tests/parity/trained_models.py), among them copies with
some merged pieces typed UNUSED, which sentencepiece merges into and then re-splits.

parse_special=True follows sentencepiece's rules as toksmith defines them: the texts of
control and unknown pieces are split out of the input before normalization and become
their ids; every other fragment is encoded exactly as sentencepiece encodes that
fragment alone (user-defined pieces are matched by the model itself, in any mode).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import sentencepiece as spm   # a test dependency: parity fails, never skips, without it
from sentencepiece import sentencepiece_model_pb2 as pb

import toksmith
from toksmith.spec import Algorithm
from tests.conftest import fixture_file
from tests.parity.compare import compare_corpora
from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import SENTENCEPIECE
from tests.parity.trained_models import (BPE_CONFIGS, BPE_UNUSED_CONFIGS, mark_unused, train,
                                         write_training_text)

FIXTURE_MODELS = (
    "spm/llama2_tokenizer.model",
    "spm/llama2c_tok512.model",
    "spm/hf_test_sentencepiece_bpe.model",
)
TRAINED = sorted(BPE_CONFIGS) + sorted(BPE_UNUSED_CONFIGS)


@pytest.fixture(scope="session")
def trained_bpe_models(fixtures, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("spm_bpe")
    text = write_training_text(fixtures, out / "train.txt")
    models = {name: train(name, options, "bpe", text, out) for name, options in BPE_CONFIGS.items()}
    for name, (base, every) in BPE_UNUSED_CONFIGS.items():
        models[name] = mark_unused(models[base], every, out / f"bpe_{name}.model")
    return models


def model_path(name: str, fixtures: Path, trained_bpe_models: dict[str, Path]) -> Path:
    return trained_bpe_models[name] if name in trained_bpe_models else fixture_file(fixtures, name)


@pytest.mark.parametrize("model", FIXTURE_MODELS)
def test_fixture_model_parity(fixtures, corpus_lines, invalid_utf8_lines, model):
    path = fixture_file(fixtures, model)
    tok = toksmith.load(path)
    assert tok.spec.algorithm is Algorithm.SPM_BPE
    compare_corpora(tok, spm.SentencePieceProcessor(model_file=str(path)), corpus_lines,
                    invalid_utf8_lines, model)


@pytest.mark.parametrize("name", TRAINED)
def test_trained_model_parity(trained_bpe_models, corpus_lines, invalid_utf8_lines, name):
    path = trained_bpe_models[name]
    compare_corpora(toksmith.load(path), spm.SentencePieceProcessor(model_file=str(path)),
                    corpus_lines, invalid_utf8_lines, f"trained bpe {name}")


def test_unused_models_really_resegment(trained_bpe_models, corpus_lines):
    """The UNUSED copies must change sentencepiece's output, or they test nothing."""
    for name, (base, _) in BPE_UNUSED_CONFIGS.items():
        lines = corpus_lines["man_en.txt"]
        unused = spm.SentencePieceProcessor(model_file=str(trained_bpe_models[name]))
        plain = spm.SentencePieceProcessor(model_file=str(trained_bpe_models[base]))
        unused_ids, plain_ids = unused.encode(lines), plain.encode(lines)
        assert len(unused_ids) == len(plain_ids) == len(lines)
        changed = sum(a != b for a, b in zip(unused_ids, plain_ids, strict=True))
        assert changed > len(lines) // 10, (name, changed)


# ------------------------------------------------------------------ parse_special

TEMPLATES = (
    "{s}", "{s}{s}", "{s}{t}", "{s}Hello world", "Hello{s}world", "Hello {s} world",
    "Hello world{s}", "Hello world {s}", " {s}", "{s} ", "  {s}  ", "{s}  Hello", "Hello  {s}",
    "{s}\nHello\n{t}\n", "a{s}b{t}c", "{s} {t} {s}", "▁{s}▁", "{s}▁the", "the{s}the",
    "Hello {u} world {s}", "{u}{s}{u}", "{s}{u} x", "x {u}{s}", "{s}http://example.org {u}",
    "日本語{s}の{t}テキスト", "１２３{s}ＡＢＣ", "{s}\t tab", "tab \t{s}",
    "<{s}>", "<s{s}", "{s}/s>", "</{s}", "<unk {s} unk>",
)
NEAR_MISSES = ("<s", "s>", "< s>", "<S>", "</ s>", "<unk", "unk>", "<UNK>", "<<s>>", "<</s>>")


def split_specials(text: str, specials: list[str]) -> list[tuple[bool, str]]:
    """text cut at the special texts (leftmost, longest first): (is_special, text) parts.

    The test texts never hold two special texts that overlap, so any order of
    matching gives the same cut.
    """
    pattern = re.compile("|".join(re.escape(s) for s in sorted(specials, key=len, reverse=True)))
    parts = []
    pos = 0
    for m in pattern.finditer(text):
        parts += [(False, text[pos:m.start()]), (True, m.group())]
        pos = m.end()
    parts.append((False, text[pos:]))
    return parts


def expected_with_specials(sp, parts: list[tuple[bool, str]], special_ids: dict[str, int]) -> list[int]:
    """The special ids, and sentencepiece's ids of every other fragment encoded alone."""
    ids: list[int] = []
    for is_special, part in parts:
        if is_special:
            ids.append(special_ids[part])
        elif part:
            ids.extend(sp.encode(part))
    return ids


def special_texts(path: Path) -> tuple[dict[str, int], list[str]]:
    """{text: id} of the control and unknown pieces of a .model, and its user-defined texts."""
    proto = pb.ModelProto()
    proto.ParseFromString(path.read_bytes())
    kinds = pb.ModelProto.SentencePiece
    split, user = {}, []
    for i, piece in enumerate(proto.pieces):
        if piece.type in (kinds.CONTROL, kinds.UNKNOWN) and piece.piece:
            split.setdefault(piece.piece, i)
        elif piece.type == kinds.USER_DEFINED:
            user.append(piece.piece)
    return split, user


def special_cases(split: dict[str, int], user: list[str]) -> list[str]:
    specials = list(split)
    users = [u for u in user if u] or ["the"]
    cases = []
    for k, template in enumerate(TEMPLATES):
        for j, s in enumerate(specials):
            t = specials[(j + 1) % len(specials)]
            u = users[(j + k) % len(users)]
            cases.append(template.format(s=s, t=t, u=u))
    cases.append("".join(specials))
    cases.append(" ".join(specials))
    cases.append("Hello " + " world ".join(specials) + " !")
    cases.extend(f"Hello {n} world" for n in NEAR_MISSES)
    cases.extend(f"{u} {u}{u}" for u in users)
    return cases


@pytest.mark.parametrize("name", FIXTURE_MODELS + tuple(TRAINED))
def test_parse_special_matches_sentencepiece_fragments(fixtures, trained_bpe_models, name):
    path = model_path(name, fixtures, trained_bpe_models)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = toksmith.load(path)
    split, user = special_texts(path)
    assert {"<s>", "</s>", "<unk>"} <= split.keys()
    cases = special_cases(split, user)
    parts = [split_specials(text, list(split)) for text in cases]
    assert sum(len(p) > 1 for p in parts) > len(cases) // 2, "too few texts had a special token split out"
    want = [expected_with_specials(sp, p, split) for p in parts]
    plain = sp.encode(cases)
    label = name if name in FIXTURE_MODELS else f"trained bpe {name}"
    check = Comparison(f"{label} parse_special: {len(cases)} texts with control/unknown/user-defined pieces "
                       f"(encode, encode_batch with and without parse_special, add_special, decode)",
                       against=f"{SENTENCEPIECE} on the fragments between special texts")
    check.all(cases, ours=[tok.encode(t, parse_special=True) for t in cases], theirs=want, what="parse_special")
    check.all(cases, ours=tok.encode_batch(cases, parse_special=True), theirs=want, what="batch parse_special")
    check.all(cases, ours=[tok.decode(ids) for ids in want], theirs=sp.decode(want), what="decode")
    # without parse_special the special texts are ordinary text, as sentencepiece sees them
    check.all(cases, ours=[tok.encode(t) for t in cases], theirs=plain, what="plain (default)")
    check.all(cases, ours=[tok.encode(t, parse_special=False) for t in cases], theirs=plain, what="plain")
    check.all(cases, ours=tok.encode_batch(cases, parse_special=False), theirs=plain, what="batch plain")
    # add_special adds nothing for a .model (sentencepiece adds no BOS/EOS)
    check.all(cases, ours=[tok.encode(t, add_special=True, parse_special=True) for t in cases], theirs=want,
              what="add_special")
    check.finish()


# One-character pieces retyped: sentencepiece's resegment (bpe_model.cc Model::Encode)
# emits unk for a final symbol that is a reserved piece or an UNUSED piece no merge
# formed, so with byte_fallback the character becomes its byte piece.
@pytest.mark.parametrize("retype", [{"e": pb.ModelProto.SentencePiece.UNUSED},
                                    {"o": pb.ModelProto.SentencePiece.CONTROL},
                                    {"F": pb.ModelProto.SentencePiece.UNUSED,
                                     "a": pb.ModelProto.SentencePiece.CONTROL}],
                         ids=["unused_e", "control_o", "unused_F_control_a"])
def test_retyped_single_character_pieces(fixtures, corpus_lines, tmp_path, retype):
    m = pb.ModelProto()
    m.ParseFromString(fixture_file(fixtures, "spm/llama2c_tok512.model").read_bytes())
    for piece in m.pieces:
        if piece.piece in retype:
            piece.type = retype[piece.piece]
    path = tmp_path / "retyped.model"
    path.write_bytes(m.SerializeToString())
    tok, sp = toksmith.load(path), spm.SentencePieceProcessor(model_file=str(path))
    lines = corpus_lines["man_en.txt"][:300] + ["FILES", "reproduce results", "aaa eee ooo", "Ea oF"]
    check = Comparison(f"llama2c_tok512.model with {sorted(retype)} retyped: ids of {len(lines)} lines",
                       against=SENTENCEPIECE)
    check.all(lines, ours=[tok.encode(line) for line in lines], theirs=sp.encode(lines))
    check.finish()
