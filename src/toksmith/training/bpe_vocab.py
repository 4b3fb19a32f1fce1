"""The BPE vocabulary before and during training: special tokens, the alphabet, merges.

>>> initial_tokens(words, BpeTrainerOptions(1000, special_tokens=("<s>",)))  # doctest: +SKIP
[b'<s>', b'!', b'"', ...]
"""
from __future__ import annotations

from toksmith._core.bpe_trainer import BpeMergeTrainer
from toksmith._core.word_count import char_counts

ALPHABET_FORCED = 1 << 64   # tokenizers counts a character of initial_alphabet as usize::MAX


def initial_tokens(words, options) -> list[bytes]:
    """The special tokens, then the kept alphabet by code point, each once (UTF-8).

    Parity: trainer.rs `add_special_tokens` and `compute_alphabet`: every character of
    the words with its count, initial_alphabet's characters counted as usize::MAX,
    `limit_alphabet` dropping the least frequent first; the kept ones sorted by code
    point. tokenizers drops among equally frequent characters in hash order (so its
    choice varies from run to run); toksmith drops the smaller code point first."""
    tokens: list[bytes] = []
    seen: set[bytes] = set()
    for special in options.special_tokens:
        text = special.encode("utf-8", "surrogatepass")
        if text not in seen:
            seen.add(text)
            tokens.append(text)
    alphabet = char_counts(words.blob, words.offsets, words.counts)
    for text in options.initial_alphabet:
        if text:
            # Parity: bindings/python trainers.rs: the first character of each string
            alphabet[ord(text[0])] = ALPHABET_FORCED
    kept = list(alphabet)
    limit = options.limit_alphabet
    if limit is not None and len(kept) > limit:
        kept.sort(key=lambda cp: (alphabet[cp], cp))
        kept = kept[len(kept) - limit:]
    for cp in sorted(kept):
        text = chr(cp).encode("utf-8", "surrogatepass")
        if text not in seen:
            seen.add(text)
            tokens.append(text)
    return tokens


def learn_merges(words, initial: list[bytes], options, show_progress: bool,
                 threads: int = 1) -> tuple[list[bytes], list[tuple[int, int]]]:
    """(every token's UTF-8 by id, the merges as id pairs in rank order); `threads` merge
    the words of large merges in parallel (the result is the same)."""
    def encoded(text):
        return text.encode("utf-8") if text is not None else None
    trainer = BpeMergeTrainer(words.blob, words.offsets, words.counts, initial, options.vocab_size,
                              options.min_frequency,
                              -1 if options.max_token_length is None else options.max_token_length,
                              encoded(options.continuing_subword_prefix), encoded(options.end_of_word_suffix), threads)
    if show_progress:
        from tqdm import tqdm
        with tqdm(total=max(0, options.vocab_size - trainer.n_tokens), desc="Learning merges") as bar:
            before = trainer.n_tokens
            while not trainer.run(256):
                bar.update(trainer.n_tokens - before)
                before = trainer.n_tokens
            bar.update(trainer.n_tokens - before)
    else:
        trainer.run(1 << 62)
    return trainer.vocab(), trainer.merges()
