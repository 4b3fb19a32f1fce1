"""Counting a corpus's pre-tokens with a tokenizer.json's own compiled stages.

`count_words(hf, batches, threads)` runs the normalizer and pre-tokenizer toksmith.hf
builds for encoding (the added tokens split out first, as tokenizers' trainer does)
over every sequence, and returns the distinct words with their counts:

>>> words = count_words(spec.hf, corpus_batches(["corpus.txt"]), threads=2)   # doctest: +SKIP
>>> words.texts()[:3], list(words.counts[:3])                                 # doctest: +SKIP
(['Hello', 'Ġworld', ...], [12, 7, ...])
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from toksmith._core.word_count import WordCounter
from toksmith.errors import UnsupportedModelError
from toksmith.hf import components as c
from toksmith.training.corpus import CorpusBatch


@dataclass
class WordCounts:
    """Distinct words (UTF-8 back to back, word i at `blob[offsets[i]:offsets[i+1]]`) in
    order of first appearance, and how often each occurs."""
    blob: bytes
    offsets: array
    counts: array

    def __len__(self) -> int:
        return len(self.counts)

    def texts(self) -> list[str]:
        """The words as str (for tests and inspection; the trainer takes the blob)."""
        return [self.blob[self.offsets[i]:self.offsets[i + 1]].decode("utf-8") for i in range(len(self))]


def word_counter(hf: c.HfTokenizerSpec) -> WordCounter:
    """The compiled word counter of a tokenizer.json's pipeline.

    A byte-level file whose pre-tokenizer has a native splitter over raw bytes (GPT-2,
    Llama 3) is split that way and each distinct word mapped to GPT-2's characters once;
    any other pipeline runs its normalizer and pre-tokenizer stages as encoding does."""
    from toksmith.hf.native_normalizers import build_normalizer
    from toksmith.hf.native_pretokenizers import build_pretokenizer
    from toksmith.hf.pipeline import added_token_splitters, is_byte_level
    from toksmith.hf.split_patterns import byte_level_splitter
    if hf.normalizer is None and is_byte_level(hf):
        try:
            splitter = byte_level_splitter(hf)
        except UnsupportedModelError:
            pass
        else:
            raw, _ = added_token_splitters(hf, has_normalizer=False)
            return WordCounter(None, splitter, raw, None, _gpt2_byte_chars())
    normalizer = build_normalizer(hf, hf.normalizer, "$.normalizer")
    pretokenizer = build_pretokenizer(hf, hf.pre_tokenizer, "$.pre_tokenizer")
    raw, normalized = added_token_splitters(
        hf, has_normalizer=normalizer is not None,
        normalize=normalizer.normalize_text if normalizer is not None else None)
    return WordCounter(normalizer, pretokenizer, raw, normalized, None)


def _gpt2_byte_chars() -> list[bytes]:
    """The UTF-8 of GPT-2's character for each byte."""
    from toksmith._core.byte_unicode import byte_unicode_encode
    return [byte_unicode_encode(bytes([b])) for b in range(256)]


def count_words(hf: c.HfTokenizerSpec, batches: Iterable[CorpusBatch], threads: int,
                on_batch: Callable[[int], None] | None = None) -> WordCounts:
    """The words of every batch (see the module docstring); `on_batch(n_bytes)` after each."""
    counter = word_counter(hf)
    for batch in batches:
        counter.add(batch.blocks, batch.ends, threads)
        if on_batch is not None:
            on_batch(batch.size)
    blob, offsets, counts = counter.words()
    return WordCounts(blob, offsets, counts)
