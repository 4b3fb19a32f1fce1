"""Write a tokenizer.json: the components of a tokenizer.json source as they are, or the
pipeline of a sentencepiece .model or a GGUF vocabulary expressed in tokenizers' components.

>>> import toksmith
>>> tok = toksmith.load("tokenizer.json")                      # doctest: +SKIP
>>> write_tokenizer_json(tok.spec)[:20]                        # doctest: +SKIP
b'{"version":"1.0","tr'
"""
from __future__ import annotations

from toksmith.hf.components import HfTokenizerSpec
from toksmith.spec import FileFormat, TokenizerSpec
from toksmith.writers.common import cannot_write
from toksmith.writers.hf_from_gguf import hf_spec_from_gguf
from toksmith.writers.hf_from_sentencepiece import hf_spec_from_sentencepiece
from toksmith.writers.hf_from_tiktoken import hf_spec_from_tiktoken
from toksmith.writers.hf_serialize import hf_tokenizer_json

TARGET = "a tokenizer.json"


def hf_spec_of(spec: TokenizerSpec) -> HfTokenizerSpec:
    """The tokenizers components that tokenize as `spec`'s own reference does
    (raises UnsupportedConversionError naming what tokenizers cannot express)."""
    if isinstance(spec.hf, HfTokenizerSpec):
        return spec.hf
    if spec.file_format is FileFormat.SENTENCEPIECE:
        return hf_spec_from_sentencepiece(spec)
    if spec.file_format is FileFormat.GGUF:
        return hf_spec_from_gguf(spec)
    if spec.file_format is FileFormat.TIKTOKEN:
        return hf_spec_from_tiktoken(spec)
    raise cannot_write(spec, TARGET, [f"a {spec.file_format.value} source (tokenizers has no model for it)"])


def write_tokenizer_json(spec: TokenizerSpec) -> bytes:
    """The bytes of a tokenizer.json holding `spec`."""
    return hf_tokenizer_json(hf_spec_of(spec)).encode("utf-8")
