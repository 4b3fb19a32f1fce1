"""Sparse token ids in a tokenizer.json (issue 30 item 7): memory by the token count, not
by the largest id.

tokenizers 0.23.3 loads any u32 id. toksmith's id tables are dense and its core's ids are
int32, so it loads ids exactly as tokenizers does while the gaps below the largest id stay
within max(token count, read_limits.max_id_gaps), and refuses the rest with a
ModelFormatError naming the token, the id and the limit -- never a MemoryError, never the
out-of-memory killer (before: 24 GB resident for one id of 2**31).
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from tokenizers import Tokenizer

import toksmith
import toksmith.hf.reader
from tests.conftest import report
from toksmith.formats.bounded_read import read_limits

TEXTS = ["b a ab", "a", "b b", "x", "ab b a"]


def model_with_id(kind: str, big: int) -> dict:
    """A model of `kind` whose token "b" has id `big`."""
    if kind == "WordLevel":
        return {"type": "WordLevel", "vocab": {"a": 0, "b": big, "[UNK]": 1}, "unk_token": "[UNK]"}
    if kind == "WordPiece":
        return {"type": "WordPiece", "vocab": {"a": 0, "b": big, "[UNK]": 1}, "unk_token": "[UNK]",
                "continuing_subword_prefix": "##", "max_input_chars_per_word": 100}
    return {"type": "BPE", "vocab": {"a": 0, "b": big, "ab": 2, "[UNK]": 1}, "merges": [["a", "b"]],
            "unk_token": "[UNK]", "dropout": None, "continuing_subword_prefix": None, "end_of_word_suffix": None,
            "fuse_unk": False, "byte_fallback": False, "ignore_merges": False}


def tokenizer_json(model: dict, added: list[dict] = ()) -> str:
    return json.dumps({"version": "1.0", "truncation": None, "padding": None, "added_tokens": list(added),
                       "normalizer": None, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None,
                       "decoder": None, "model": model})


def added_token(token_id: int, content: str) -> dict:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


KINDS = ["WordLevel", "WordPiece", "BPE"]


@pytest.mark.parametrize("kind", KINDS)
def test_sparse_ids_within_the_bound_are_exact(kind, tmp_path):
    compared = 0
    for big in (5, 1000, 70_000, read_limits.max_id_gaps):
        model = model_with_id(kind, big)
        # tokenizers numbers a new added token after the model's token count
        text = tokenizer_json(model, [added_token(len(model["vocab"]), "<x>")])
        reference = Tokenizer.from_str(text)
        path = tmp_path / f"{kind}-{big}.json"
        path.write_text(text)
        tok = toksmith.load(path)
        for line in TEXTS + ["<x> b", "b<x>a"]:
            want = reference.encode(line, add_special_tokens=False).ids
            assert tok.encode(line, parse_special=True) == want, (kind, big, line)
            assert tok.decode(want) == reference.decode(want, skip_special_tokens=False), (kind, big, line)
            compared += 2
    report(f"sparse ids {kind}: {compared} encodes/decodes compared with tokenizers, 0 differ")


def test_ids_toksmith_cannot_hold_are_refused_clearly(tmp_path):
    # In a child process under a 4 GiB address-space limit: before the fix these files
    # allocated a dense table of 2**31 entries (killed, or a bare MemoryError).
    cases = []
    for kind in KINDS:
        for big in (2**31 - 1, 2**31, 2**32 - 1):
            text = tokenizer_json(model_with_id(kind, big))
            assert Tokenizer.from_str(text).encode("b", add_special_tokens=False).ids == [big]   # tokenizers loads it
            path = tmp_path / f"{kind}-{big}.json"
            path.write_text(text)
            cases.append(str(path))
    script = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        import toksmith
        for path in {cases!r}:
            try:
                toksmith.load(path)
                print("loaded", path)
            except toksmith.ModelFormatError as e:
                print("ModelFormatError", e)
            except BaseException as e:
                print(type(e).__name__, path, e)
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    lines = run.stdout.splitlines()
    assert len(lines) == len(cases), run.stdout + run.stderr
    for line in lines:
        assert line.startswith("ModelFormatError") and "$.model.vocab['b']" in line, line
        big = int(line.split(": id ")[1].split()[0])
        if big > 2**31 - 1:
            assert "is past 2147483647" in line, line
        else:
            assert "read_limits.max_id_gaps" in line, line
    report(f"sparse ids: {len(cases)} files tokenizers loads, refused by name and limit")


def test_raising_max_id_gaps_loads_a_sparser_file(tmp_path, monkeypatch):
    text = tokenizer_json(model_with_id("WordLevel", 5000))
    path = tmp_path / "t.json"
    path.write_text(text)
    monkeypatch.setattr(read_limits, "max_id_gaps", 1000)
    with pytest.raises(toksmith.ModelFormatError, match=r"\$\.model\.vocab\['b'\]: id 5000 leaves 4998 ids without "
                                                        r"a token .*max_id_gaps = 1000"):
        toksmith.load(path)
    read_limits.max_id_gaps = 5000
    assert toksmith.load(path).encode("b a") == Tokenizer.from_str(text).encode("b a").ids == [5000, 0]


@pytest.mark.parametrize("file_id", [2**31, 2**32 - 1])
def test_a_huge_added_token_id_is_refused_by_name(file_id):
    # tokenizers ignores an added token's file id (a warning) and numbers it after the
    # model's tokens; toksmith refuses the mismatch, and never sizes a table by the file id
    text = tokenizer_json(model_with_id("WordLevel", 2), [added_token(file_id, "<x>")])
    assert Tokenizer.from_str(text).token_to_id("<x>") == 3
    with pytest.raises(toksmith.ModelFormatError,
                       match=rf"\$\.added_tokens\[0\]\.id: id {file_id} but tokenizers gives '<x>' id 3"):
        toksmith.hf.reader.read_hf_json(text.encode(), "t.json")
