"""toksmith's GGUF metadata reader against the `gguf` package (llama.cpp's own Python reader)."""
from __future__ import annotations

import math
from array import array

import pytest

from tests.conftest import fixture_file
from toksmith.formats.gguf import read_gguf_metadata

import gguf

# The smaller vocab-only files: the gguf package takes seconds per 100k tokens.
FILES = ("gguf/ggml-vocab-llama-spm.gguf", "gguf/ggml-vocab-phi-3.gguf", "gguf/ggml-vocab-bert-bge.gguf")


def reference_value(field):
    """A ReaderField's value in the shapes toksmith returns."""
    types = field.types
    if types[0] == gguf.GGUFValueType.STRING:
        return bytes(field.parts[-1]).decode("utf-8", "replace")
    if types[0] == gguf.GGUFValueType.ARRAY:
        items = [field.parts[i] for i in field.data]
        if types[1] == gguf.GGUFValueType.STRING:
            return [bytes(p) for p in items]
        return [p[0].item() for p in items]
    value = field.parts[-1][0].item()
    return bool(value) if types[0] == gguf.GGUFValueType.BOOL else value


@pytest.mark.parametrize("name", FILES)
def test_metadata_equals_gguf_package(fixtures, name):
    path = fixture_file(fixtures, name)
    ours = read_gguf_metadata(path)
    reader = gguf.GGUFReader(str(path))
    expected = {key: reference_value(field) for key, field in reader.fields.items()
                if not key.startswith("GGUF.")}
    assert set(ours) == set(expected)
    for key, want in expected.items():
        got = ours[key]
        if isinstance(got, array):
            got = got.tolist()
        if isinstance(want, float):
            assert math.isclose(got, want, rel_tol=0, abs_tol=0) or got == want, key
        elif isinstance(want, list) and want and isinstance(want[0], float):
            assert got == pytest.approx(want, rel=0, abs=0), key
        else:
            assert got == want, key
