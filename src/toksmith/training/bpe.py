"""`train_bpe`: a new BPE vocabulary for the pipeline of an existing tokenizer.json
(`like=`), or in the byte-stream configuration (`like=None`, training/byte_stream.py).

>>> tok = train_bpe(["corpus.txt"], 8000, like="gpt2/tokenizer.json")   # doctest: +SKIP
>>> tok.save("my-tokenizer.json")                                       # doctest: +SKIP

The vocabulary and merges (ids included) are those of
``tokenizers.Tokenizer.from_file(like).train(files, BpeTrainer(<same options>))``:
`like`'s normalizer, pre-tokenizer, post-processor, decoder and added tokens are kept,
its BPE model's vocabulary and merges replaced (its unk_token, fuse_unk, byte_fallback,
dropout and ignore_merges kept). Word counting runs on toksmith's compiled pipeline
(training/word_counting.py), the merge loop in `_core/bpe_trainer.pyx`.
"""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from toksmith.errors import ToksmithError
from toksmith.gc_pause import paused_gc
from toksmith.training.corpus import CorpusError, corpus_batches, corpus_paths, corpus_source, is_file_list
from toksmith.training.numbers import COUNT_LIMIT, INT64_MAX, checked_flag, checked_int, checked_vocab_size
from toksmith.training.threads import thread_count

MERGES_PER_PROGRESS_STEP = 256


@dataclass(frozen=True)
class BpeTrainerOptions:
    """BpeTrainer's options (tokenizers 0.23.3 models/bpe/trainer.rs `BpeTrainer`)."""
    vocab_size: int
    min_frequency: int = 0
    special_tokens: tuple[str, ...] = ()
    initial_alphabet: tuple[str, ...] = ()
    limit_alphabet: int | None = None
    max_token_length: int | None = None
    continuing_subword_prefix: str | None = None
    end_of_word_suffix: str | None = None


def train_bpe(files: object = None, vocab_size: int | None = None, *, texts: Iterable[str] | None = None,
              like: object = None, min_frequency: int = 0,
              special_tokens: Iterable[str] = (), initial_alphabet: Iterable[str] = (),
              limit_alphabet: int | None = None, max_token_length: int | None = None,
              continuing_subword_prefix: str | None = None, end_of_word_suffix: str | None = None,
              ascii_only: bool = False, show_progress: bool | None = None, num_threads: int | None = None):
    """Train a BPE vocabulary of `vocab_size` tokens on a corpus, for `like`'s pipeline
    or (`like=None`) in the byte-stream configuration.

    The corpus: `files` (a path or a list/tuple of paths) or `texts=` (an iterable of str,
    each one sequence, read as it goes), as tokenizers' `train(files)` and
    `train_from_iterator(texts)` take them; a str naming no file is refused (pass text
    as texts=). `vocab_size` is required.

    With `like` (tokenizers' BpeTrainer, exactly):
    - files are read as UTF-8, line by line.
    - `like`: what `toksmith.load` takes whose model is BPE (tokenizers' BpeTrainer trains
      only BPE): a tokenizer.json (``.json`` or ``.json.gz``), a Hugging Face folder, a
      .model, .gguf or .tiktoken file, an embedded name ("cl100k_base"), or a toksmith
      Tokenizer; what is not a tokenizer.json is converted to one first (the pipeline of
      `tok.save("tokenizer.json")`, refused where that conversion is; training/like.py).
      Its merges are replaced, so they are only checked to be a JSON list.
    - the other options mean what BpeTrainer's do; `initial_alphabet` keeps the first
      character of each string.

    With `like=None`, the byte-stream configuration (training/byte_stream.py): ids 0-3
    <|unk|> <|bos|> <|eos|> <|pad|>, 4-259 the bytes, no pre-tokenization, the most
    frequent pair merged (ties: the smallest (left id, right id)) until `vocab_size` or
    until the best count is below `min_frequency`; `ascii_only` keeps tab, LF, CR and
    0x20-0x7E as the only base tokens. `files`: a path, a directory (every non-hidden
    file under it, in path order) or a list of them, each file read whole as bytes (one
    sequence); `texts=`: str, bytes or binary files (one sequence each).
    The options of a `like` pipeline are refused here, and `ascii_only` with `like`.

    Both: `num_threads` (default: all cores) never changes the result; `show_progress`:
    tqdm bars for reading/counting and merging (default: on a terminal).

    Returns the new `toksmith.Tokenizer` (``tok.save("tokenizer.json")`` writes it).
    """
    source = corpus_source(files, texts)
    if vocab_size is None:
        raise TypeError("train_bpe() needs vocab_size (the number of tokens to learn up to)")
    threads = thread_count(num_threads)
    checked_flag("ascii_only", ascii_only)
    if show_progress is not None:
        checked_flag("show_progress", show_progress)
    if like is None:
        _refuse_pipeline_options(special_tokens=special_tokens, initial_alphabet=initial_alphabet,
                                 limit_alphabet=limit_alphabet, max_token_length=max_token_length,
                                 continuing_subword_prefix=continuing_subword_prefix,
                                 end_of_word_suffix=end_of_word_suffix)
        from toksmith.training.byte_stream import train_byte_stream
        with paused_gc():
            return train_byte_stream(source, vocab_size, min_frequency=min_frequency,
                                     ascii_only=ascii_only, show_progress=show_progress, num_threads=threads)
    if ascii_only is not False:
        raise ValueError("ascii_only is an option of the byte-stream configuration (like=None); a like= "
                         "pipeline's alphabet is the corpus's characters (see initial_alphabet, limit_alphabet)")
    options = _options(vocab_size, min_frequency, special_tokens, initial_alphabet, limit_alphabet,
                       max_token_length, continuing_subword_prefix, end_of_word_suffix)
    if show_progress is None:
        show_progress = sys.stderr.isatty()
    like_json, hf = _like(like)
    from toksmith.hf import components as c
    if not isinstance(hf.model, c.BpeModel):
        other = " (train_unigram trains a Unigram model)" if isinstance(hf.model, c.UnigramModel) else ""
        raise ToksmithError(f"{hf.source}: $.model is {type(hf.model).__name__}; train_bpe trains a BPE "
                            f"model (tokenizers' BpeTrainer refuses other models too){other}")
    if is_file_list(source):
        corpus_paths(source)                  # every file exists, before any work
    with paused_gc():       # the vocabulary and merges are tens of thousands of acyclic containers
        return _train_like(hf, like_json, source, options, threads, show_progress)


def _train_like(hf, like_json: dict, source: object, options: BpeTrainerOptions, threads: int,
                show_progress: bool):
    """Count, learn the merges, make the tokenizer (train_bpe with `like`, its inputs checked)."""
    words = _count(hf, source, threads, show_progress)
    if len(words) == 0:
        raise CorpusError("the corpus is empty: no pre-token to learn from")
    from toksmith.training.bpe_vocab import initial_tokens, learn_merges
    initial = initial_tokens(words, options)
    if options.vocab_size < len(initial):
        raise ValueError(f"vocab_size {options.vocab_size} is smaller than the special tokens and the "
                         f"alphabet of the corpus ({len(initial)} tokens)")
    vocab, merges = learn_merges(words, initial, options, show_progress, threads)
    from toksmith.training.tokenizer_json import trained_tokenizer
    return trained_tokenizer(like_json, hf.source, vocab, merges, options)


def _refuse_pipeline_options(**given) -> None:
    """The options that only mean something for a like= pipeline, refused with like=None."""
    for name, value in given.items():
        empty = value is None if name in ("limit_alphabet", "max_token_length", "continuing_subword_prefix",
                                          "end_of_word_suffix") else (not isinstance(value, str) and not list(value))
        if not empty:
            raise ValueError(f"{name} is an option of a like= pipeline; the byte-stream configuration "
                             f"(like=None) has fixed special tokens (<|unk|> <|bos|> <|eos|> <|pad|>), the 256 bytes "
                             f"(or ascii_only's 98) as its alphabet and no pre-tokenizer")


def _options(vocab_size, min_frequency, special_tokens, initial_alphabet, limit_alphabet, max_token_length,
             continuing_subword_prefix, end_of_word_suffix) -> BpeTrainerOptions:
    """The options, checked (strings and numbers of the right kinds)."""
    checked_vocab_size(vocab_size, 0)
    checked_int("min_frequency", min_frequency, 0, INT64_MAX, COUNT_LIMIT)
    for name, value in (("limit_alphabet", limit_alphabet), ("max_token_length", max_token_length)):
        if value is not None:
            checked_int(name, value, 0, INT64_MAX, "None: no limit")
    specials = _strings("special_tokens", special_tokens)
    alphabet = _strings("initial_alphabet", initial_alphabet)
    for name, value in (("continuing_subword_prefix", continuing_subword_prefix),
                        ("end_of_word_suffix", end_of_word_suffix)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a str or None, not {type(value).__name__}")
    return BpeTrainerOptions(vocab_size, min_frequency, specials, alphabet, limit_alphabet, max_token_length,
                             continuing_subword_prefix, end_of_word_suffix)


def _strings(name: str, values: Iterable[str]) -> tuple[str, ...]:
    if isinstance(values, str):
        raise TypeError(f"{name} must be a list of str, not a str")
    out = tuple(values)
    for v in out:
        if not isinstance(v, str):
            raise TypeError(f"{name} must hold str, not {type(v).__name__}")
    return out


def _like(like: object):
    """(the tokenizer.json as a dict, its parsed `HfTokenizerSpec`). Its components are
    read as loading does; its model may be empty (a pipeline made to be trained)."""
    from toksmith.formats.bounded_read import read_model_file_gunzipped
    from toksmith.hf.reader import read_hf_json_sections
    from toksmith.training.like import resolve_like
    like = resolve_like(like)       # a tokenizer.json path, or a Tokenizer holding one's bytes
    if isinstance(like, (str, os.PathLike)):
        source = os.fspath(like)
        data = read_model_file_gunzipped(source)     # a .json.gz decompressed, within read_limits
    else:                           # resolve_like gives a Tokenizer only with tokenizer.json bytes
        source, data = like.spec.source, like.spec.source_data
    # The sections the output keeps as they are: the model's vocab and merges (the bulk
    # of the file, replaced by training) are left out where the native scanner read the
    # file; the merges are only checked to be a JSON list there (the added tokens' ids
    # are checked against the vocab, as loading does).
    hf, rest = read_hf_json_sections(data, source, read_merges=False)
    return json.loads(rest if rest is not None else data), hf


def _count(hf, source: object, threads: int, show_progress: bool):
    from toksmith.training.word_counting import count_words
    if not show_progress:
        return count_words(hf, corpus_batches(source), threads)
    from tqdm import tqdm
    total = None
    if is_file_list(source):
        total = sum(os.path.getsize(p) for p in corpus_paths(source))
    with tqdm(total=total, unit="B", unit_scale=True, desc="Counting words") as bar:
        return count_words(hf, corpus_batches(source), threads, on_batch=bar.update)
