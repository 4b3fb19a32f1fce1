"""What the GGUF writer tests share: the fields of a GGUF as the gguf package reads them, and
llama.cpp on a written GGUF against llama.cpp on the original (test_convert_to_gguf.py,
test_convert_tokenizer_json_to_gguf.py, test_convert_gguf_wpm_ugm_to_tokenizer_json.py)."""
from __future__ import annotations

import itertools

import gguf

from tests import llama_cpp_reference
from tests.parity.comparison import Comparison

FLAGS = list(itertools.product((False, True), repeat=2))   # (add_special, parse_special)


def gguf_fields(path) -> list[tuple[str, tuple[int, ...], list[bytes]]]:
    """(key, GGUF types, raw bytes of each value) of every key, in file order, by GGUFReader."""
    reader = gguf.GGUFReader(str(path))
    return [(key, tuple(int(t) for t in field.types), [bytes(field.parts[i]) for i in field.data])
            for key, field in reader.fields.items() if not key.startswith("GGUF.")]


def compare_llama_cpp_on_both(original, written, texts: list[str], label: str) -> None:
    """llama.cpp on `written` against llama.cpp on `original`: ids of every text x FLAGS, and
    with parse_special both detokenize modes of the original's ids; reported and asserted."""
    ref, got = llama_cpp_reference.load_vocab(original), llama_cpp_reference.load_vocab(written)
    assert got.n_tokens == ref.n_tokens
    check = Comparison(f"convert {label} -> gguf, llama.cpp on the written file", against="llama.cpp on the original")
    for text, (add_special, parse_special) in itertools.product(texts, FLAGS):
        raw = text.encode("utf-8")
        want = ref.tokenize(raw, add_special, parse_special)
        check.one(text, got.tokenize(raw, add_special, parse_special), want, what=f"ids ({add_special}, {parse_special})")
        if parse_special:
            for remove in (False, True):
                check.one(text, got.detokenize(want, remove, not remove), ref.detokenize(want, remove, not remove),
                          what=f"decode (remove_special={remove})")
    check.finish()
