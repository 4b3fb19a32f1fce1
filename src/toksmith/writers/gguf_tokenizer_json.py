"""tokenizer.json -> GGUF, as llama.cpp's converter writes each kind of tokenizer.

- byte-level BPE (ByteLevel pre-tokenizer, alone or after Split regexes): "gpt2", with
  tokenizer.ggml.pre found as `get_vocab_base_pre` finds it: the sha256 of str(ids) of its
  check text, encoded by this tokenizer with add_special (gguf_byte_level_json.py);
- WordPiece: "bert" (gguf_wordpiece_json.py);
- SentencePiece-style Unigram: "t5" (gguf_unigram_json.py);
- toksmith's own writing of a GGUF WPM / UGM vocabulary (hf_from_gguf_wordpiece.py,
  hf_from_gguf_unigram.py): that GGUF's keys again (gguf_from_own_wordpiece_json.py,
  gguf_from_own_unigram_json.py), tried first.

What llama.cpp cannot represent is listed in an UnsupportedConversionError.

>>> entries = tokenizer_json_entries(toksmith.load("tokenizer.json").spec)   # doctest: +SKIP
"""
from __future__ import annotations

from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec
from toksmith.writers.common import cannot_write

TARGET = "a vocab-only GGUF"


def tokenizer_json_entries(spec: TokenizerSpec):
    """The GGUF key/values of a tokenizer.json `spec` (raises UnsupportedConversionError)."""
    hf = spec.hf
    if isinstance(hf.model, c.BpeModel):
        from toksmith.writers.gguf_byte_level_json import byte_level_entries
        return byte_level_entries(spec)
    if isinstance(hf.model, c.WordPieceModel):
        from toksmith.writers.gguf_from_own_wordpiece_json import own_wordpiece_entries
        from toksmith.writers.gguf_wordpiece_json import wordpiece_entries
        return own_wordpiece_entries(spec) or wordpiece_entries(spec)
    if isinstance(hf.model, c.UnigramModel):
        from toksmith.writers.gguf_from_own_unigram_json import own_unigram_entries
        from toksmith.writers.gguf_unigram_json import unigram_entries
        return own_unigram_entries(spec) or unigram_entries(spec)
    raise cannot_write(spec, TARGET, [f"a {type(hf.model).__name__} model (llama.cpp's vocabularies are "
                                      f"BPE, WordPiece, Unigram, RWKV and PLaMo-2)"])
