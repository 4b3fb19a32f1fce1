"""A GGUF "t5" vocabulary (llama.cpp's UGM tokenizer) as tokenizers components."""
from __future__ import annotations

from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec
from toksmith.writers.common import cannot_write

TARGET = "a tokenizer.json"


def hf_spec_from_unigram_gguf(spec: TokenizerSpec) -> c.HfTokenizerSpec:
    raise cannot_write(spec, TARGET, ["llama.cpp's UGM tokenizer (not written yet)"])
