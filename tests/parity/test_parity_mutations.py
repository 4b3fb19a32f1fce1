"""The mutation check of the parity suite: with toksmith broken on purpose, every parity module fails.

A parity module whose tests still pass while toksmith's outputs are emptied or cut compares
less than its report says (issue 31: golden tests printed "46 of 46 match" with encode_batch
returning []). Each session below runs the parity modules in a child pytest with
tests/parity_mutation_plugin.py, which patches toksmith at session start:

- target ``api``: every output of `toksmith.Tokenizer` (encode, encode_batch, tokenize, decode,
  decode_bytes, stream decoding) emptied, or cut by its last id, piece, character or byte;
- target ``writers``: every file toksmith writes emptied, or cut by its first merges or best
  pieces (for modules that compare what a reference reads from toksmith's file);
- target ``trainers``: every trainer learning one entry less (for modules that compare a
  trained model);
- target ``stages``: the outputs of the compiled stages a test builds itself emptied or cut
  (for modules that compare a model's encode_piece(s), a splitter's split_text, a normalizer's
  normalize_text, a regex's find_matches or llama.cpp's token pieces one stage at a time).

MODULE_TARGETS says which modules answer to which target (``api`` unless listed);
WITHOUT_MUTATION lists, with the reason, the modules that no target reaches. Both are checked
to be exact against the files in tests/parity, so a new module cannot silently stay unchecked.

A failure proves something only if the mutation caused it: the first failing test of each
module is run again without the mutation, on the same sample, and must pass.

Cost: the corpora shrink to TOKSMITH_PARITY_SAMPLE=SAMPLE_LINES lines, a module's remaining
tests are skipped once one has failed, and a test function's other parametrizations once one has
passed (the plugin); SELECTED_TESTS limits a few modules to cheaper test functions. Rerun it
alone (TOKSMITH_MUTATION_REPORTS=folder keeps each child run's per-module JSON report) with::

    TOKSMITH_FIXTURES=../shared/fixtures python3 -m pytest -n 0 tests/parity/test_parity_mutations.py

and one target's sessions with ``-k stages`` (the session ids are ``mutation-target``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import report

PARITY_DIR = Path(__file__).parent
REPO = PARITY_DIR.parents[1]
THIS_MODULE = Path(__file__).name
SAMPLE_LINES = 200
SESSION_TIMEOUT_S = 900

# The modules that compare something besides toksmith.Tokenizer's outputs, and what they compare.
# Every other parity module is checked with the "api" target only.
MODULE_TARGETS: dict[str, tuple[str, ...]] = {
    # converters whose tests also compare toksmith's outputs (on the written file or the source)
    "test_convert_exact_or_refuse.py": ("api", "writers"),
    "test_convert_from_tiktoken.py": ("api", "writers"),
    "test_convert_gguf_pre_names_to_tokenizer_json.py": ("api", "writers"),   # "... vs toksmith on the GGUF"
    "test_convert_to_gguf.py": ("api", "writers"),
    "test_convert_tokenizer_json_to_gguf.py": ("api", "writers"),
    "test_convert_unicode_tables.py": ("api", "writers"),
    # converters checked reference against reference: the written file read by the format's
    # reference, against the source read by its own
    "test_convert_gguf_to_tokenizer_json.py": ("writers",),
    "test_convert_gguf_wpm_ugm_to_tokenizer_json.py": ("writers",),
    "test_convert_spm_bpe_json_to_sentencepiece.py": ("writers",),
    "test_convert_to_sentencepiece.py": ("writers",),
    "test_convert_to_tiktoken.py": ("writers",),
    "test_convert_to_tokenizer_json.py": ("writers",),
    "test_byte_level_merges.py": ("writers",),     # merge lists derived from ranks, read by tokenizers
    # trainers: the trained model as its reference trains it (and, where the report says so,
    # the trained tokenizer's encode against the reference reading the saved file)
    "test_train_bpe_hf.py": ("api", "trainers"),   # "trained tokenizer encode vs tokenizers on the saved json"
    "test_train_bpe_like_forms.py": ("trainers",),
    "test_train_bpe_random.py": ("trainers",),
    "test_train_byte_stream.py": ("trainers",),
    "test_train_spm_bpe_sentencepiece.py": ("api", "trainers"),   # ".model in sentencepiece vs toksmith"
    "test_train_unigram_sentencepiece.py": ("trainers",),
    # compiled stages compared one by one with the reference's (the model's encode_piece(s),
    # llama_cpp_token_pieces, a splitter's split_text, a normalizer's normalize_text, a regex's
    # find_matches), built by the test itself
    "test_byte_bpe_llama_cpp.py": ("stages",),
    "test_byte_bpe_long_pieces.py": ("stages",),
    "test_byte_bpe_tiktoken.py": ("stages",),
    "test_char_starts_vocabs.py": ("stages",),     # the character-start path (vs itself: the path from bytes)
    "test_hf_oniguruma_splitters.py": ("stages",),
    "test_hf_precompiled.py": ("stages",),
    "test_hf_simple_components.py": ("stages",),
    "test_hf_split_replace.py": ("api", "stages"),     # and Split in whole files: Tokenizer ids vs tokenizers
}

# Modules that no mutation target reaches, and why (exact: a module listed here that a target
# reaches, or that no longer exists, fails the check).
WITHOUT_MUTATION: dict[str, str] = {}

# Modules whose mutation run is limited to some of their test functions, and why: the first
# tests of the module cost minutes whatever the sample (every code point), or need more of the
# corpora than the sample holds (they fail unmutated on it, so their failure proves nothing).
SELECTED_TESTS: dict[str, tuple[tuple[str, ...], str]] = {
    "test_unicode_code_point_scan.py": (("test_o200k_code_point_unassigned_in_unicode_16",),
                                        "each scan of every code point takes 85-100 s here"),
    "test_hf_byte_level_missing_bytes.py": (("test_word_that_is_a_token_holding_an_unknown_byte",),
                                            "the corpus test asserts its sample holds the bytes the vocabulary lacks"),
    "test_stream_decode_gguf.py": (("test_random_ids_stream_like_llama_detokenize",),
                                   "the corpus test asserts its sample gives the clean-up passes work"),
}

# (mutation, target) of each session; the trainers' target has only the truncated mutation
# (an empty vocabulary cannot be saved or loaded: every test would fail on that, comparing nothing).
SESSIONS = [("empty", "api"), ("truncated", "api"), ("empty", "writers"), ("truncated", "writers"),
            ("truncated", "trainers"), ("empty", "stages"), ("truncated", "stages")]


def parity_modules() -> list[str]:
    return sorted(p.name for p in PARITY_DIR.glob("test_*.py") if p.name != THIS_MODULE)


def modules_for(target: str) -> list[str]:
    return [m for m in parity_modules()
            if m not in WITHOUT_MUTATION and target in MODULE_TARGETS.get(m, ("api",))]


def child_arguments(modules: list[str]) -> list[str]:
    """The child pytest's arguments: each module, or its selected test functions."""
    out = []
    for module in modules:
        functions, _ = SELECTED_TESTS.get(module, ((), ""))
        out += [f"{PARITY_DIR / module}::{f}" for f in functions] or [str(PARITY_DIR / module)]
    return out


def test_module_lists_are_exact():
    modules = set(parity_modules())
    assert not (SELECTED_TESTS.keys() - modules), f"listed but no such module: {SELECTED_TESTS.keys() - modules}"
    for module, (functions, _) in SELECTED_TESTS.items():
        source = (PARITY_DIR / module).read_text(encoding="utf-8")
        missing = [f for f in functions if f"def {f}(" not in source]
        assert not missing, f"{module} has no {missing}"
    assert not (MODULE_TARGETS.keys() - modules), f"listed but no such module: {MODULE_TARGETS.keys() - modules}"
    assert not (WITHOUT_MUTATION.keys() - modules), f"listed but no such module: {WITHOUT_MUTATION.keys() - modules}"
    both = MODULE_TARGETS.keys() & WITHOUT_MUTATION.keys()
    assert not both, f"given a target and said to have none: {both}"
    targets = {t for ts in MODULE_TARGETS.values() for t in ts}
    assert targets <= {"api", "writers", "trainers", "stages"}, targets
    assert all(reason.strip() for reason in WITHOUT_MUTATION.values())


def run_session(fixtures: Path, tmp_path: Path, name: str, plugin_args: list[str], tests: list[str]) -> dict:
    """Run `tests` in a child pytest with the mutation plugin; its per-module outcome."""
    out = tmp_path / f"{name}.json"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "HYPOTHESIS_"))}
    env.update(TOKSMITH_FIXTURES=str(fixtures), TOKSMITH_PARITY_SAMPLE=str(SAMPLE_LINES),
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    command = [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "-q", "--no-header",
               "-o", "addopts=", "-p", "tests.parity_mutation_plugin", *plugin_args,
               f"--mutation-report={out}", *tests]
    run = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=SESSION_TIMEOUT_S)
    kept = os.environ.get("TOKSMITH_MUTATION_REPORTS")     # a folder to keep the child reports in
    if kept and out.is_file():
        Path(kept).mkdir(parents=True, exist_ok=True)
        (Path(kept) / out.name).write_bytes(out.read_bytes())
    if not out.is_file():
        raise AssertionError(f"{name}: the child pytest wrote no report (exit {run.returncode}):\n"
                             f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    return json.loads(out.read_text())["modules"]


@pytest.mark.parametrize("mutation,target", SESSIONS, ids=[f"{m}-{t}" for m, t in SESSIONS])
def test_every_parity_module_fails_under_mutation(fixtures, tmp_path, mutation, target):
    modules = modules_for(target)
    if not modules:
        pytest.skip(f"no parity module answers to the {target} target")
    name = f"{mutation}-{target}"
    outcome = run_session(fixtures, tmp_path, name, [f"--mutation={mutation}", f"--mutation-target={target}"],
                          child_arguments(modules))
    by_module = {Path(path).name: result for path, result in outcome.items()}
    problems = []
    first_failures = {}
    for module in modules:
        result = by_module.get(module)
        if result is None or result["collection_error"]:
            problems.append(f"{module}: not collected ({(result or {}).get('collection_error', 'no outcome')})")
        elif result["failed"] is None:
            problems.append(f"{module}: no test failed; passed under the mutation: {result['passed'][:6]}")
        else:
            first_failures[module] = result["failed_test"]
    # The control: each module's first failing test passes without the mutation on the same sample.
    if first_failures:
        control = {Path(path).name: result for path, result in run_session(
            fixtures, tmp_path, f"{name}-control", ["--mutation=none"], sorted(first_failures.values())).items()}
        for module, test in first_failures.items():
            result = control.get(module, {"passed": [], "failed": "no outcome"})
            if result["passed"] != [test]:
                problems.append(f"{module}: its failure under the mutation proves nothing, {test} does not pass "
                                f"without it either (sample {SAMPLE_LINES} lines): {result['failed'] or 'skipped'}")
    slowest = sorted(by_module.items(), key=lambda item: -item[1]["seconds"])[:3]
    # Tests that passed under the mutation compare less than toksmith's outputs (or something
    # else: a refusal, a table): not a failure of the check, which asks it of modules, but listed.
    passed = sum(len(result["passed"]) for result in by_module.values())
    report(f"mutation check {name}: {len(first_failures)} of {len(modules)} parity modules fail, "
           f"{len(problems)} problems (a module that does not fail, or whose failure recurs unmutated); "
           f"{passed} tests passed under the mutation (named in the child report); "
           f"slowest: " + ", ".join(f"{module} {result['seconds']:.0f} s" for module, result in slowest))
    assert not problems, f"{name} (TOKSMITH_PARITY_SAMPLE={SAMPLE_LINES}):\n  " + "\n  ".join(problems)
