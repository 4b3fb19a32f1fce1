"""Differential mutation test of the loaders: mutate real model files, load each with
toksmith and with its reference, and require the same verdict.

- `.model` files against sentencepiece 0.2.3, GGUF files against llama.cpp (vocab-only load).
- Mutations (model_mutations.py): byte flips, truncations, length fields (protobuf varint
  lengths; GGUF string lengths, array counts, header counts) and single-field semantic
  edits (a piece defined twice, a type/score changed, byte_fallback without the 256 byte
  pieces, NaN/Inf scores, NUL in a token text, out-of-range or wrongly typed special ids...).
- Verdicts: the reference rejects -> toksmith raises `ModelFormatError` with a reason; both
  load -> identical ids on real corpus lines and special texts (with the flags that apply).
  toksmith rejecting a file the reference loads ("stricter") passes only for the named kinds
  of tests/parity/excuses/gguf.py (STRICTER_*), each bounded per base file (BOUNDS); each
  base file must also have a minimum of mutants both load and whose ids were compared.
- The references run in a child process (reference_worker.py): llama.cpp aborts
  (GGML_ASSERT) on some malformed vocabularies, e.g. a token text defined twice, which
  counts as a rejection when it happens while loading. When llama.cpp has loaded a file
  and then aborts while tokenizing (e.g. a character with no token and no byte token in
  an SPM vocabulary), that is a llama.cpp bug, not a verdict on the file: the case is
  excused (REFERENCE_DIED_TOKENIZING, bounded). Where a reference would read a corrupted
  structure without bounds checks (sentencepiece's precompiled charsmap double array), the
  byte flips stay outside that region, and mutants that change it are not run (counted, bounded).

Fixed seeds; a few thousand cases per format.
"""
from __future__ import annotations

import itertools
import os
import random
import warnings
from dataclasses import dataclass

import pytest

import toksmith
from tests.conftest import fixture_file, parity_sample, report
from tests.parity import model_mutations as mm
from tests.parity.comparison import Comparison
from tests.parity.excuses.gguf import (REFERENCE_DIED_TOKENIZING, STRICTER_BYTE_PIECE_TEXT, STRICTER_NAN_SCORE,
                                       STRICTER_NO_UNKNOWN_PIECE, STRICTER_NUL_IN_PIECE, STRICTER_PIECE_NOT_UTF8,
                                       STRICTER_PIECE_TYPE, STRICTER_SHORT_CHARSMAP, STRICTER_TRUNCATED_MODEL,
                                       STRICTER_WORD_OR_CHAR_MODEL, DiedTokenizing, Rejected)
from tests.parity.reference_worker import ReferenceWorker

SEED = 20260707
# Cases per base model (MUTATION_CASES overrides them all). Costs per case on a loaded
# 2-core machine: .model ~3 ms; built GGUF ~9 ms (llama), ~20 ms (t5 with its 240 KB
# charsmap, which llama.cpp copies on every load), ~8 ms (t5 without one); fixture
# GGUFs ~15 ms (32k tokens) to ~250 ms (nomic-bert-moe, 250k tokens).
_OVERRIDE = os.environ.get("MUTATION_CASES")
SPM_CASES = int(_OVERRIDE or 2500)
BUILT_GGUF_CASES = {"llama:llama2c_tok512": 1400, "t5:sentencepiece_test_model": 600,
                    "t5-plain:sentencepiece_test_model": 1000}
SPECIAL_TEXTS = ["", " ", "<s>", "</s>", "<unk>", "<s>hello</s> world", "a<0x41>b", "\u2581x", "\0"]


# Per file: the most rejections by toksmith alone of each kind, and the fewest cases where both
# loaded the file and their ids were compared (today's counts in the comments; the cases are
# seeded, so the counts only move when the loaders or the mutations change).
BOUNDS = {   # today's counts + about 10%
    "spm/llama2c_tok512.model": ({STRICTER_WORD_OR_CHAR_MODEL: 41, STRICTER_NO_UNKNOWN_PIECE: 87,   # today 37, 79
                                  STRICTER_PIECE_NOT_UTF8: 64, STRICTER_SHORT_CHARSMAP: 3,        # today 58, 1
                                  STRICTER_NAN_SCORE: 9, STRICTER_NUL_IN_PIECE: 40}, 400),        # today 7, 36; 446
    "spm/sentencepiece_test_model.model": ({STRICTER_WORD_OR_CHAR_MODEL: 43, STRICTER_NO_UNKNOWN_PIECE: 22,  # 39, 20
                                            STRICTER_PIECE_NOT_UTF8: 160, STRICTER_SHORT_CHARSMAP: 4,       # 145, 2
                                            STRICTER_NUL_IN_PIECE: 46, STRICTER_TRUNCATED_MODEL: 5,         # 42, 3
                                            STRICTER_PIECE_TYPE: 3}, 530),                                  # 1; 588
    "llama:llama2c_tok512 GGUF": ({STRICTER_BYTE_PIECE_TEXT: 67, REFERENCE_DIED_TOKENIZING: 14}, 410),  # 61, 12; 460
    "t5-plain:sentencepiece_test_model GGUF": ({STRICTER_BYTE_PIECE_TEXT: 15, REFERENCE_DIED_TOKENIZING: 7},
                                               315),                                                    # 13, 5; 353
    "t5:sentencepiece_test_model GGUF": ({STRICTER_BYTE_PIECE_TEXT: 7, REFERENCE_DIED_TOKENIZING: 5}, 180),  # 5, 3; 204
    "gguf/ggml-vocab-llama-spm.gguf": ({STRICTER_BYTE_PIECE_TEXT: 14}, 11),                             # 12; 13
    "gguf/ggml-vocab-phi-3.gguf": ({STRICTER_BYTE_PIECE_TEXT: 21}, 14),                                 # 19; 16
    "gguf/ggml-vocab-nomic-bert-moe.gguf": ({}, 2),                                                     # 2
}


@dataclass
class Tally:
    """The verdicts on one base file's mutants, compared through `check`; `ids_compared` counts
    the cases where both loaded the file and their ids were compared."""

    check: Comparison
    ids_compared: int = 0


def tally_for(name: str, reference: str) -> Tally:
    excuses, _ = BOUNDS[name]
    return Tally(Comparison(f"mutated {name}: verdicts (the same ids on the sample texts, or both rejecting "
                            f"the file with a reason)", against=reference, excuses=excuses))


@pytest.fixture(scope="module")
def worker():
    with ReferenceWorker() as w:
        yield w


@pytest.fixture(scope="module")
def sample_texts(corpus_lines) -> list[str]:
    rng = random.Random(SEED)
    texts = []
    for name in ("man_en.txt", "man_ja.txt", "man_ru.txt", "code_python_stdlib.py.txt", "tricky_strings.txt",
                 "botchan.txt"):
        lines = [line for line in corpus_lines[name] if line.strip()]
        texts += [line[:160] for line in rng.sample(lines, 2)]
    return texts + SPECIAL_TEXTS


def _toksmith_ids(path, texts_and_flags):
    """(ids per text) or a ModelFormatError; any other exception propagates as a defect."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = toksmith.load(path)
        return [tok.encode(text, **flags) for text, flags in texts_and_flags]


def _reference_verdict(worker, reference: str, path, inputs):
    """The reference's ids per text, `Rejected` (it refused the file or died loading it), or
    `DiedTokenizing` (it loaded the file and died on a text)."""
    verdict, answer = worker.tokenize(reference, str(path), inputs)
    if verdict == "ok":
        return answer
    if verdict in ("rejected", "died"):
        return Rejected(f"{verdict}: {answer}")
    assert verdict == "died tokenizing", verdict
    return DiedTokenizing(answer)


def _toksmith_verdict(path, inputs):
    """toksmith's ids per text, or `Rejected` with its ModelFormatError's reason; any other
    exception is a defect, reported as a verdict no reference gives."""
    try:
        return _toksmith_ids(path, inputs)
    except toksmith.ModelFormatError as e:
        return Rejected(e.detail or "")
    except Exception as e:   # noqa: BLE001 - any other exception is a defect to report
        return f"toksmith raised {type(e).__name__}: {e}"


def _check_case(tally: Tally, label: str, path, reference: str, worker, ts_inputs, ref_inputs) -> None:
    theirs = _reference_verdict(worker, reference, path, ref_inputs)
    ours = _toksmith_verdict(path, ts_inputs)
    tally.check.one(label, ours, theirs, what="verdict")
    tally.ids_compared += isinstance(ours, list) and isinstance(theirs, list)


def _finish(tally: Tally, name: str) -> None:
    # MUTATION_CASES and TOKSMITH_PARITY_SAMPLE (quick runs) change the cases and texts: no minimum then
    min_ids_compared = 0 if _OVERRIDE or parity_sample() else BOUNDS[name][1]
    report(f"  mutated {name}: {tally.ids_compared} cases where both loaded the file and the ids were compared "
           f"(at least {min_ids_compared})")
    tally.check.finish()
    assert tally.ids_compared >= min_ids_compared, \
        f"{name}: ids compared on {tally.ids_compared} mutants, at least {min_ids_compared} expected"


# ---------------------------------------------------------------- .model vs sentencepiece

SPM_MODELS = ("spm/llama2c_tok512.model", "spm/sentencepiece_test_model.model")


@pytest.mark.parametrize("name", SPM_MODELS)
def test_mutated_sentencepiece_models(fixtures, tmp_path, worker, sample_texts, name):
    data = fixture_file(fixtures, name).read_bytes()
    charsmap = _charsmap_region(data)
    charsmap_bytes = data[charsmap.start:charsmap.stop]
    rng = random.Random(f"{SEED}:{name}")
    path = tmp_path / "mutant.model"
    texts = [(text, {}) for text in sample_texts]
    tally = tally_for(name, "sentencepiece 0.2.3")
    fields = mm.protobuf_length_fields(data)
    raw = mm.raw_mutations(data, fields, rng, SPM_CASES // 2, avoid=charsmap)
    semantic = mm.model_semantic_mutations(data, rng, SPM_CASES - SPM_CASES // 2)
    not_run = 0
    for number, (label, mutant) in enumerate(itertools.chain(raw, semantic)):
        region = _charsmap_region(mutant, default=None)
        if charsmap and region is not None and mutant[region.start:region.stop] != charsmap_bytes:
            # A changed charsmap: sentencepiece would read its double array without
            # bounds checks (undefined behaviour), so the case is not run (counted, bounded).
            not_run += 1
            continue
        path.write_bytes(mutant)
        _check_case(tally, f"{name} #{number} {label}", path, "sentencepiece", worker, texts, texts)
    report(f"  mutated {name}: {not_run} mutants with a changed charsmap not run (sentencepiece reads it unchecked)")
    assert not_run <= SPM_CASES // 15 + 2, f"{not_run} of {SPM_CASES} mutants not run"   # today 130 and 0 of 2500
    _finish(tally, name)


def _charsmap_region(data: bytes, default=range(0)):
    """Byte range of normalizer_spec.precompiled_charsmap in a serialized ModelProto."""
    try:
        pos = 0
        while pos < len(data):
            key, pos = mm._varint(data, pos)
            if key & 7 == 2:
                length, body = mm._varint(data, pos)
                if key >> 3 == 3:
                    inner = body
                    while inner < body + length:
                        k, inner = mm._varint(data, inner)
                        if k & 7 == 2:
                            n, start = mm._varint(data, inner)
                            if k >> 3 == 2:
                                return range(start, start + n)
                            inner = start + n
                        elif k & 7 == 0:
                            _, inner = mm._varint(data, inner)
                        else:
                            return default
                pos = body + length
            elif key & 7 == 0:
                _, pos = mm._varint(data, pos)
            elif key & 7 == 5:
                pos += 4
            elif key & 7 == 1:
                pos += 8
            else:
                return default
    except (IndexError, ValueError):
        return default
    return default


# ---------------------------------------------------------------- GGUF vs llama.cpp

# Real fixture GGUFs cost a full vocabulary load per case (250k tokens for nomic-bert-moe).
# (raw byte edits, semantic edits): raw edits in the first 4 KB mostly leave no loadable file
# (before the semantic edits, ids were compared on 1 of 150 llama-spm mutants); a semantic edit
# mostly loads, and costs a full load on both sides (about 10x a raw case; nomic-bert-moe's
# 250k tokens make that too dear, and 4 semantic edits there added no compared case).
FIXTURE_CASES = {"gguf/ggml-vocab-llama-spm.gguf": (130, 20), "gguf/ggml-vocab-phi-3.gguf": (130, 20),
                 "gguf/ggml-vocab-nomic-bert-moe.gguf": (16, 0)}
GGUF_FLAGS = ({"add_special": True, "parse_special": True}, {"add_special": False, "parse_special": False})


def _gguf_inputs(texts):
    ours = [(text, flags) for text in texts for flags in GGUF_FLAGS]
    return ours, [(text.encode("utf-8", "surrogatepass"), flags) for text, flags in ours]


@pytest.mark.parametrize("base", sorted(BUILT_GGUF_CASES))
def test_mutated_built_ggufs(fixtures, tmp_path, worker, sample_texts, base):
    """GGUF vocabularies made from a .model: "llama" (SPM), "t5" (UGM) with the model's
    charsmap, "t5-plain" (UGM without a charsmap: cheap to load, so more cases)."""
    kind, model_name = base.split(":")
    tokenizer_model = kind.split("-")[0]
    model = fixture_file(fixtures, f"spm/{model_name}.model").read_bytes()
    kvs = mm.gguf_from_model(model, tokenizer_model, with_charsmap=kind == "t5")
    data = mm.write_gguf_bytes(kvs, tmp_path / "base.gguf")
    assert data == mm.write_gguf_bytes_with_gguf(kvs, tmp_path / "cross.gguf"), "GGUF writers disagree"
    rng = random.Random(f"{SEED}:{base}")
    ours, theirs = _gguf_inputs(sample_texts)
    tally = tally_for(f"{base} GGUF", "llama.cpp")
    path = tmp_path / "mutant.gguf"
    count = int(_OVERRIDE or BUILT_GGUF_CASES[base])
    # The charsmap is read by llama.cpp's UGM tokenizer without bounds checks on the
    # double array's contents: byte flips stay outside it (length edits are checked).
    avoid = mm.Regions(_find(data, bytes(kvs[-1].value)) if kind == "t5" else None,
                       mm.gguf_architecture_value(data))
    raw = mm.raw_mutations(data, mm.gguf_length_fields(data), rng, count // 2, avoid=avoid)
    semantic = ((label, mm.write_gguf_bytes(new_kvs, tmp_path / "semantic.gguf"))
                for label, new_kvs in mm.gguf_semantic_mutations(kvs, rng, count - count // 2))
    for number, (label, mutant) in enumerate(itertools.chain(raw, semantic)):
        path.write_bytes(mutant)
        _check_case(tally, f"{base} #{number} {label}", path, "llama.cpp", worker, ours, theirs)
    _finish(tally, f"{base} GGUF")


@pytest.mark.parametrize("name", ["gguf/ggml-vocab-llama-spm.gguf", "gguf/ggml-vocab-phi-3.gguf",
                                  "gguf/ggml-vocab-nomic-bert-moe.gguf"])
def test_mutated_fixture_ggufs(fixtures, tmp_path, worker, sample_texts, name):
    data = fixture_file(fixtures, name).read_bytes()
    rng = random.Random(f"{SEED}:{name}")
    ours, theirs = _gguf_inputs(sample_texts[:6] + SPECIAL_TEXTS)
    tally = tally_for(name, "llama.cpp")
    path = tmp_path / "mutant.gguf"
    fields = [f for f in mm.gguf_length_fields(data)]
    # Byte flips only in the header and the key/value framing (the first 4 KB): flips
    # inside a large charsmap would be read without bounds checks by llama.cpp. Nor in
    # the architecture name (see model_mutations.gguf_architecture_value).
    avoid = mm.Regions(range(4096, len(data)), mm.gguf_architecture_value(data))
    raw_count, semantic_count = (int(_OVERRIDE), int(_OVERRIDE)) if _OVERRIDE else FIXTURE_CASES[name]
    raw = mm.raw_mutations(data, fields, rng, raw_count, avoid=avoid)
    # single-field edits of the file's own keys: most load, so ids get compared on the real vocabulary
    semantic = ((label, mm.write_gguf_bytes(new_kvs, tmp_path / "semantic.gguf"))
                for label, new_kvs in mm.gguf_semantic_mutations(mm.gguf_kvs(data), rng, semantic_count))
    for number, (label, mutant) in enumerate(itertools.chain(raw, semantic)):
        path.write_bytes(mutant)
        _check_case(tally, f"{name} #{number} {label}", path, "llama.cpp", worker, ours, theirs)
    _finish(tally, name)


def _find(data: bytes, needle: bytes) -> range | None:
    at = data.find(needle)
    return range(at, at + len(needle)) if at >= 0 else None
