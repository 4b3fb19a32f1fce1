"""A SentencePiece-style Unigram tokenizer.json -> GGUF "t5" (llama.cpp's UGM): refused, with
every reason this pipeline shows.

What llama.cpp's UGM cannot do that tokenizers' Unigram pipelines do (measured on the
fixture corpora, tokenizers on the json against llama.cpp on the GGUF the converter's T5
route would write from the same pieces, scores and charsmap):
- Metaspace prepend_scheme "always"/"first" prepends U+2581 only to a text that does not
  start with one; llama.cpp (add_space_prefix) prepends to every text and to every text
  between special tokens;
- transformers' Replace(" {2,}", " ") after Precompiled merges runs of spaces but keeps a
  leading and a trailing one; llama.cpp's remove_extra_whitespaces also drops those;
- around unknown characters (combining marks after a letter) tokenizers keeps the known
  piece and gives <unk> for the rest, llama.cpp's UGM makes one <unk> of the run
  (5 of 159440 corpus lines with prepend_scheme "never").

>>> unigram_entries(toksmith.load("rut5-large/tokenizer.json").spec)   # doctest: +SKIP
Traceback (most recent call last):
UnsupportedConversionError: ...
"""
from __future__ import annotations

from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec
from toksmith.writers.common import cannot_write
from toksmith.writers.gguf_hf_common import added_token_problems

TARGET = "a vocab-only GGUF"


def unigram_entries(spec: TokenizerSpec):
    """Raises UnsupportedConversionError naming what llama.cpp's UGM cannot reproduce."""
    hf = spec.hf
    missing = []
    normalizer = hf.normalizer
    if isinstance(normalizer, c.NormalizerSequence) and _is_space_merging(normalizer):
        missing.append("the normalizer Replace(' {2,}', ' ') after Precompiled: it merges runs of spaces "
                       "but keeps a leading and a trailing one, where llama.cpp's UGM either keeps every "
                       "space or (remove_extra_whitespaces) also drops those")
    elif normalizer is not None and not isinstance(normalizer, c.Precompiled):
        missing.append(f"the normalizer {type(normalizer).__name__} (llama.cpp's UGM applies a "
                       f"precompiled charsmap only)")
    pre = hf.pre_tokenizer
    if not isinstance(pre, c.Metaspace):
        missing.append(f"the pre-tokenizer {type(pre).__name__} (llama.cpp's UGM splits as a "
                       f"Metaspace(\"\u2581\") pre-tokenizer does)")
    elif pre.prepend_scheme is not c.PrependScheme.NEVER:
        # Parity: llm_tokenizer_ugm_session::normalize: shall_prepend_space whatever the text starts with.
        missing.append(f"Metaspace prepend_scheme {pre.prepend_scheme.value!r}: tokenizers prepends U+2581 "
                       f"only to a text that does not start with one, llama.cpp's UGM (add_space_prefix) "
                       f"prepends to every text and every text between special tokens")
    if hf.model.byte_fallback:
        missing.append("the Unigram model's byte_fallback (llama.cpp's UGM has none)")
    missing += added_token_problems(spec)
    missing.append("tokenizers' segmentation around unknown characters: it keeps a known piece before "
                   "combining marks and gives <unk> for the rest, where llama.cpp's UGM makes one <unk> "
                   "of the run")
    raise cannot_write(spec, TARGET, missing)


def _is_space_merging(normalizer: c.NormalizerSequence) -> bool:
    """[Precompiled, Replace(" {2,}", " ")]: what transformers' SpmConverter writes for
    remove_extra_whitespaces."""
    parts = normalizer.normalizers
    return (len(parts) == 2 and isinstance(parts[0], c.Precompiled) and isinstance(parts[1], c.Replace)
            and parts[1].content == " " and getattr(parts[1].pattern, "regex", None) == " {2,}")
