"""Differential mutation test of the loaders: mutate real model files, load each with
toksmith and with its reference, and require the same verdict.

- `.model` files against sentencepiece 0.2.3, GGUF files against llama.cpp (vocab-only load).
- Mutations (model_mutations.py): byte flips, truncations, length fields (protobuf varint
  lengths; GGUF string lengths, array counts, header counts) and single-field semantic
  edits (a piece defined twice, a type/score changed, byte_fallback without the 256 byte
  pieces, NaN/Inf scores, NUL in a token text, out-of-range or wrongly typed special ids...).
- Verdicts: the reference rejects -> toksmith raises `ModelFormatError` with a reason; both
  load -> identical ids on real corpus lines and special texts (with the flags that apply).
  toksmith rejecting a file the reference loads is counted and reported ("stricter"), not
  failed: such files are refused with a reason, never tokenized differently.
- The references run in a child process (reference_worker.py): llama.cpp aborts
  (GGML_ASSERT) on some malformed vocabularies, e.g. a token text defined twice, which
  counts as a rejection when it happens while loading. When llama.cpp has loaded a file
  and then aborts while tokenizing (e.g. a character with no token and no byte token in
  an SPM vocabulary), that is a llama.cpp bug, not a verdict on the file: the case is
  reported ("reference crashes while tokenizing") and neither counted nor failed. Where a reference would read a corrupted
  structure without bounds checks (sentencepiece's precompiled charsmap double array), the
  byte flips stay outside that region.

Fixed seeds; a few thousand cases per format.
"""
from __future__ import annotations

import itertools
import os
import random
import warnings
from collections import Counter
from dataclasses import dataclass, field

import pytest

import toksmith
from tests.conftest import fixture_file, report
from tests.parity import model_mutations as mm
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


@dataclass
class Tally:
    cases: int = 0
    both_rejected: int = 0
    both_equal: int = 0
    stricter: int = 0
    reference_died_tokenizing: list = field(default_factory=list)
    mismatches: list = field(default_factory=list)
    stricter_reasons: Counter = field(default_factory=Counter)


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


def _check_case(tally: Tally, label: str, path, reference: str, worker, ts_inputs, ref_inputs) -> None:
    tally.cases += 1
    verdict, ref = worker.tokenize(reference, str(path), ref_inputs)
    try:
        ours = _toksmith_ids(path, ts_inputs)
        ours_error = None
    except toksmith.ModelFormatError as e:
        ours, ours_error = None, e
    except Exception as e:   # noqa: BLE001 - any other exception is a defect to report
        tally.mismatches.append(f"{label}: toksmith raised {type(e).__name__}: {e} "
                                f"(reference: {verdict})")
        return
    if verdict == "died tokenizing":
        # The reference loaded the file and then crashed on one of the texts: a bug of
        # the reference, not a verdict on the file, so neither a rejection nor a failure.
        tally.reference_died_tokenizing.append(label)
        return
    if verdict in ("rejected", "died"):
        if ours_error is None:
            tally.mismatches.append(f"{label}: reference {verdict} ({ref}), toksmith loaded it")
        elif not ours_error.detail:
            tally.mismatches.append(f"{label}: ModelFormatError without a reason")
        else:
            tally.both_rejected += 1
        return
    if ours_error is not None:
        tally.stricter += 1
        tally.stricter_reasons[ours_error.detail.split(":")[0][:60]] += 1
        return
    if ours != ref:
        first = next(k for k, (a, b) in enumerate(zip(ours, ref)) if a != b)
        tally.mismatches.append(f"{label}: ids differ on {ts_inputs[first][0][:40]!r} "
                                f"{ts_inputs[first][1]}: toksmith {ours[first][:12]} reference {ref[first][:12]}")
        return
    tally.both_equal += 1


def _finish(tally: Tally, name: str) -> None:
    stricter = ", ".join(f"{reason!r} x{n}" for reason, n in tally.stricter_reasons.most_common(5))
    died = tally.reference_died_tokenizing
    report(f"mutated {name}: {tally.cases} cases, {tally.both_rejected} both rejected, "
           f"{tally.both_equal} both loaded and equal, {tally.stricter} rejected by toksmith only"
           f"{' (' + stricter + ')' if stricter else ''}, {len(died)} reference crashes while tokenizing"
           f"{' (' + ', '.join(died[:5]) + ')' if died else ''}, {len(tally.mismatches)} mismatches")
    assert not tally.mismatches, f"{len(tally.mismatches)} mismatches:\n" + "\n".join(tally.mismatches[:30])


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
    tally = Tally()
    fields = mm.protobuf_length_fields(data)
    raw = mm.raw_mutations(data, fields, rng, SPM_CASES // 2, avoid=charsmap)
    semantic = mm.model_semantic_mutations(data, rng, SPM_CASES - SPM_CASES // 2)
    for number, (label, mutant) in enumerate(itertools.chain(raw, semantic)):
        region = _charsmap_region(mutant, default=None)
        if charsmap and region is not None and mutant[region.start:region.stop] != charsmap_bytes:
            # A changed charsmap: sentencepiece would read its double array without
            # bounds checks (undefined behaviour), so the case is not run.
            continue
        path.write_bytes(mutant)
        _check_case(tally, f"{name} #{number} {label}", path, "sentencepiece", worker, texts, texts)
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
FIXTURE_CASES = {"gguf/ggml-vocab-llama-spm.gguf": 150, "gguf/ggml-vocab-phi-3.gguf": 150,
                 "gguf/ggml-vocab-nomic-bert-moe.gguf": 16}
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
    tally = Tally()
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
    tally = Tally()
    path = tmp_path / "mutant.gguf"
    fields = [f for f in mm.gguf_length_fields(data)]
    # Byte flips only in the header and the key/value framing (the first 4 KB): flips
    # inside a large charsmap would be read without bounds checks by llama.cpp. Nor in
    # the architecture name (see model_mutations.gguf_architecture_value).
    avoid = mm.Regions(range(4096, len(data)), mm.gguf_architecture_value(data))
    count = int(_OVERRIDE or FIXTURE_CASES[name])
    for number, (label, mutant) in enumerate(mm.raw_mutations(data, fields, rng, count, avoid=avoid)):
        path.write_bytes(mutant)
        _check_case(tally, f"{name} #{number} {label}", path, "llama.cpp", worker, ours, theirs)
    _finish(tally, name)


def _find(data: bytes, needle: bytes) -> range | None:
    at = data.find(needle)
    return range(at, at + len(needle)) if at >= 0 else None
