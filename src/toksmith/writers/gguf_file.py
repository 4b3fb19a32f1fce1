"""Write a vocab-only GGUF: the tokenizer.ggml.* keys llama.cpp reads, no tensors.

Each source format has its route, written the way llama.cpp's converter
(convert_hf_to_gguf.py, conversion/base.py) writes that kind of tokenizer:

- a GGUF: every key of the file again, in file order, with its GGUF type (gguf_own.py);
- a sentencepiece .model: "llama" (BPE) or "t5" (Unigram) (gguf_sentencepiece.py);
- a tokenizer.json: "gpt2" (byte-level BPE), "bert" (WordPiece), "llama"/"t5"
  (SentencePiece-style pipelines) (gguf_tokenizer_json.py);
- an RWKV vocabulary .txt: "rwkv" (gguf_rwkv.py);
- a tiktoken rank file: "gpt2", merges derived from the ranks (gguf_tiktoken.py).

A source llama.cpp cannot reproduce raises UnsupportedConversionError listing what is missing.

>>> import toksmith
>>> tok = toksmith.load("ggml-vocab-llama-spm.gguf")      # doctest: +SKIP
>>> data = write_gguf(tok.spec)                           # doctest: +SKIP
"""
from __future__ import annotations

from collections.abc import Callable

from toksmith.spec import FileFormat, TokenizerSpec
from toksmith.writers.common import cannot_write
from toksmith.writers.gguf_binary import Entry, encode_gguf
from toksmith.writers.gguf_own import own_entries
from toksmith.writers.gguf_rwkv import rwkv_entries
from toksmith.writers.gguf_sentencepiece import sentencepiece_entries
from toksmith.writers.gguf_tiktoken import tiktoken_entries
from toksmith.writers.gguf_tokenizer_json import tokenizer_json_entries

TARGET = "a vocab-only GGUF"
# The route of each source format (see the module docstring).
ENTRIES_BY_SOURCE: dict[FileFormat, Callable[[TokenizerSpec], list[Entry]]] = {
    FileFormat.GGUF: own_entries,
    FileFormat.SENTENCEPIECE: sentencepiece_entries,
    FileFormat.HF_JSON: tokenizer_json_entries,
    FileFormat.RWKV_VOCAB: rwkv_entries,
    FileFormat.TIKTOKEN: tiktoken_entries,
}


def write_gguf(spec: TokenizerSpec) -> bytes:
    """The bytes of a vocab-only GGUF holding `spec` (raises UnsupportedConversionError)."""
    return encode_gguf(gguf_entries(spec))


def gguf_entries(spec: TokenizerSpec) -> list[Entry]:
    """The key/values of the GGUF that holds `spec`."""
    route = ENTRIES_BY_SOURCE.get(spec.file_format)
    if route is None:
        raise cannot_write(spec, TARGET, [f"a writer for {spec.file_format.value} sources"])
    return route(spec)
