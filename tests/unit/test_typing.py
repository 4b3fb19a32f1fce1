"""Type information: py.typed and stubs of the compiled modules, as mypy sees them.

mypy runs on small user programs (in a subprocess, imports of toksmith followed
silently, so only the snippet's own lines are judged): correct use type-checks
with the real types, misuse (a positional flag, a wrong result type) is an error.
"""
from __future__ import annotations

import inspect
import os
import re
import site
import subprocess
import sys
from pathlib import Path

import pytest

import toksmith

PACKAGE = Path(toksmith.__file__).parent

GOOD = '''\
import toksmith

tok = toksmith.load("m.model", rules="sentencepiece")
ids: list[int] = tok.encode("Hello", add_special=False, parse_special=True)
batch: list[list[int]] = tok.encode_batch(["a", b"b"], num_threads=2)
text: str = tok.decode(ids, skip_special=True)
stream = tok.stream_decoder(skip_special=False)
chunk: str = stream.feed(ids[0]) + stream.feed(ids) + stream.finish()
pieces: list[str] = tok.tokenize("Hello")
piece: str = tok.id_to_piece(5)
size: int = tok.vocab_size
reveal_type(tok.encode)
reveal_type(stream)
'''

BAD = '''\
import toksmith

tok = toksmith.load("m.model")
tok.encode("Hello", "world")
tok.decode([1], True)
wrong: str = tok.encode("a")
tok.encode_batch(["a"], num_threads="2")
toksmith.load(5)
'''


def _installed(package: Path) -> bool:
    """Whether `package` lies in a site-packages folder of this interpreter."""
    roots = [*site.getsitepackages(), site.getusersitepackages()]
    return any(package.is_relative_to(root) for root in roots if root)


def run_mypy(tmp_path: Path, source: str) -> list[str]:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(source)
    env = dict(os.environ)
    if not _installed(PACKAGE):
        # A source checkout on PYTHONPATH: mypy reads MYPYPATH, not PYTHONPATH. (An
        # installed package is found by mypy itself, which refuses site-packages there.)
        env["MYPYPATH"] = str(PACKAGE.parent)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary", "--show-error-codes",
         "--cache-dir", str(tmp_path / "cache"), "--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}",
         "snippet.py"],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert "is in the MYPYPATH" not in result.stdout + result.stderr, result.stdout + result.stderr
    return [line.split(":", 1)[1] for line in result.stdout.splitlines()
            if line.startswith(("snippet.py:", str(snippet) + ":"))]


def test_package_is_marked_typed_and_has_stubs():
    assert (PACKAGE / "py.typed").is_file()
    for module in ("engine", "detokenizer"):
        assert (PACKAGE / "_core" / f"{module}.pyi").is_file(), module


def test_mypy_sees_real_types(tmp_path):
    lines = run_mypy(tmp_path, GOOD)
    errors = [line for line in lines if " error:" in line]
    assert not errors, errors
    revealed = [line for line in lines if "Revealed type" in line]
    assert len(revealed) == 2, lines
    assert "add_special: bool" in revealed[0] and "-> list[int]" in revealed[0], revealed[0]
    assert "StreamDecoder" in revealed[1], revealed[1]


def test_mypy_reports_misuse(tmp_path):
    lines = run_mypy(tmp_path, BAD)
    error_lines = {int(line.split(":", 1)[0]) for line in lines if " error:" in line}
    assert error_lines == {4, 5, 6, 7, 8}, lines


def _stub_signature(module: str, cls: str, name: str) -> list[tuple[str, str]]:
    """(name, kind) of each parameter of `cls.name` in the stub of `module`."""
    import ast
    tree = ast.parse((PACKAGE / "_core" / f"{module}.pyi").read_text())
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    func = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == name)
    params = [(a.arg, "POSITIONAL_OR_KEYWORD") for a in func.args.posonlyargs + func.args.args]
    params += [(a.arg, "KEYWORD_ONLY") for a in func.args.kwonlyargs]
    return params


@pytest.mark.parametrize("module, cls, name", [
    ("engine", "Engine", "encode"), ("engine", "Engine", "encode_batch"), ("engine", "Engine", "tokenize"),
    ("engine", "Engine", "decode"), ("engine", "Engine", "stream_decoder"),
    ("engine", "TokenizerCore", "encode"), ("engine", "TokenizerCore", "encode_batch"),
    ("engine", "TokenizerCore", "tokenize"), ("engine", "TokenizerCore", "decode"),
    ("engine", "TokenizerCore", "stream_decoder"),
    ("detokenizer", "StreamDecoder", "feed"), ("detokenizer", "StreamDecoder", "finish"),
])
def test_stubs_match_the_compiled_signatures(module, cls, name):
    runtime_cls = getattr(__import__(f"toksmith._core.{module}", fromlist=[cls]), cls)
    runtime = [(p.name, p.kind.name) for p in inspect.signature(getattr(runtime_cls, name)).parameters.values()]
    assert _stub_signature(module, cls, name) == runtime


def test_help_shows_the_keyword_only_signature():
    import pydoc
    text = pydoc.render_doc(toksmith.Tokenizer.encode, renderer=pydoc.plaintext)
    assert re.search(r"encode\(self, text, \*, add_special=True, parse_special=False, pair=None\)", text), text
