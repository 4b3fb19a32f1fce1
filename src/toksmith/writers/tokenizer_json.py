"""Write a tokenizer.json: the components of a tokenizer.json source as they are, or the
pipeline of a sentencepiece .model or a GGUF vocabulary expressed in tokenizers' components.

>>> import toksmith
>>> tok = toksmith.load("tokenizer.json")                      # doctest: +SKIP
>>> write_tokenizer_json(tok.spec)[:20]                        # doctest: +SKIP
b'{"version":"1.0","tr'
"""
from __future__ import annotations

from collections.abc import Callable

from toksmith.hf.components import HfTokenizerSpec
from toksmith.hf.sparse_ids import file_components
from toksmith.spec import FileFormat, TokenizerSpec
from toksmith.writers.common import cannot_write
from toksmith.writers.hf_from_gguf import hf_spec_from_gguf
from toksmith.writers.hf_from_sentencepiece import hf_spec_from_sentencepiece
from toksmith.writers.hf_from_tiktoken import hf_spec_from_tiktoken
from toksmith.writers.hf_serialize import hf_tokenizer_json

TARGET = "a tokenizer.json"
# How a source that is not a tokenizer.json becomes tokenizers components, per format.
HF_SPEC_BY_SOURCE: dict[FileFormat, Callable[[TokenizerSpec], HfTokenizerSpec]] = {
    FileFormat.SENTENCEPIECE: hf_spec_from_sentencepiece,
    FileFormat.GGUF: hf_spec_from_gguf,
    FileFormat.TIKTOKEN: hf_spec_from_tiktoken,
}


def hf_spec_of(spec: TokenizerSpec) -> HfTokenizerSpec:
    """The tokenizers components that tokenize as `spec`'s own reference does
    (raises UnsupportedConversionError naming what tokenizers cannot express)."""
    if isinstance(spec.hf, HfTokenizerSpec):
        return spec.hf
    route = HF_SPEC_BY_SOURCE.get(spec.file_format)
    if route is None:
        raise cannot_write(spec, TARGET, [f"a {spec.file_format.value} source (tokenizers has no model for it)"])
    return route(spec)


def write_tokenizer_json(spec: TokenizerSpec) -> bytes:
    """The bytes of a tokenizer.json holding `spec` (with the file's own ids, where they
    were not 0..n-1: toksmith.hf.sparse_ids)."""
    hf = hf_spec_of(spec)
    if spec.sparse_ids is not None:
        hf = file_components(hf, spec.sparse_ids)
    return hf_tokenizer_json(hf).encode("utf-8")
