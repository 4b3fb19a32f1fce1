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

from toksmith.spec import FileFormat, TokenizerSpec
from toksmith.writers.common import cannot_write
from toksmith.writers.gguf_binary import encode_gguf

TARGET = "a vocab-only GGUF"


def write_gguf(spec: TokenizerSpec) -> bytes:
    """The bytes of a vocab-only GGUF holding `spec` (raises UnsupportedConversionError)."""
    return encode_gguf(gguf_entries(spec))


def gguf_entries(spec: TokenizerSpec):
    """The key/values (writers.gguf_binary.Entry) of the GGUF that holds `spec`."""
    if spec.file_format is FileFormat.GGUF:
        from toksmith.writers.gguf_own import own_entries
        return own_entries(spec)
    if spec.file_format is FileFormat.SENTENCEPIECE:
        from toksmith.writers.gguf_sentencepiece import sentencepiece_entries
        return sentencepiece_entries(spec)
    if spec.file_format is FileFormat.HF_JSON:
        from toksmith.writers.gguf_tokenizer_json import tokenizer_json_entries
        return tokenizer_json_entries(spec)
    if spec.file_format is FileFormat.RWKV_VOCAB:
        from toksmith.writers.gguf_rwkv import rwkv_entries
        return rwkv_entries(spec)
    if spec.file_format is FileFormat.TIKTOKEN:
        from toksmith.writers.gguf_tiktoken import tiktoken_entries
        return tiktoken_entries(spec)
    raise cannot_write(spec, TARGET, [f"a writer for {spec.file_format.value} sources"])
