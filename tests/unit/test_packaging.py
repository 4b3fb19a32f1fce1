"""What the wheel ships: modules, stubs, py.typed and the embedded model, no C/Cython sources.

The file list comes from setuptools itself (`setup.py build_py`, which copies
exactly the modules and package data a wheel gets, without compiling), so the
check follows pyproject.toml/setup.py rather than a copy of their settings.
Before the fix the list held the ten generated .c files (7.6 MB) and the .pxd files.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def package_files(tmp_path_factory) -> set[str]:
    if not (ROOT / "setup.py").is_file():
        pytest.fail(f"{ROOT}: not a source checkout (no setup.py)")
    out = tmp_path_factory.mktemp("build_py")
    result = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "-d", str(out)], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}


def test_no_generated_c_or_cython_sources(package_files):
    sources = sorted(f for f in package_files if f.endswith((".c", ".h", ".pyx", ".pxd", ".so")))
    assert not sources, sources


def test_typing_files_and_data_are_shipped(package_files):
    assert "toksmith/py.typed" in package_files
    assert {"toksmith/_core/engine.pyi", "toksmith/_core/detokenizer.pyi"} <= package_files
    assert "toksmith/data/embedded.model" in package_files
    # sentencepiece's precompiled charsmaps, for train_unigram (tools/gen_spm_charsmaps.py)
    assert {f"toksmith/data/spm_{rule}.charsmap.gz" for rule in ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf")} \
        <= package_files
    assert "toksmith/cli.py" in package_files and "toksmith/__init__.py" in package_files
    # the multilingual sample save(..., exact=False) reports on (writers/approximation.py)
    assert "toksmith/data/conversion_sample.txt" in package_files


def test_every_compiled_module_has_a_stub(package_files):
    pyx = {p.stem for p in (ROOT / "src" / "toksmith" / "_core").glob("*.pyx")}
    stubs = {Path(f).stem for f in package_files if f.startswith("toksmith/_core/") and f.endswith(".pyi")}
    assert pyx == stubs


def test_summary_claims_only_supported_formats():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    summary = next(line for line in text.splitlines() if line.startswith("description"))
    # tokenizer.json: only byte-level BPE pipelines run yet, so the summary does not claim the format.
    assert "tokenizer.json" not in summary, summary
    assert "SentencePiece" in summary and "GGUF" in summary and "tiktoken" in summary, summary
