"""`toksmith train bpe`: train a vocabulary from the shell (toksmith.train_bpe).

    toksmith train bpe --like tokenizer.json --vocab-size 32000 -o new.json corpus/
    cat *.txt | toksmith train bpe --like tokenizer.json --vocab-size 8000 -o new.json
    toksmith train bpe --vocab-size 32000 -o bytes.json --corpus-dir corpus/       # byte-stream

Inputs are files, directories (every file under them, sorted; --corpus-dir names one too)
or, with none or "-", standard input. With --like each line is one sequence, as
tokenizers' trainer reads files; without it (the byte-stream configuration) each file,
or standard input, is one sequence of bytes. The output format follows the output's
suffix (.json, .model, .gguf, .tiktoken), or --format; the file is written whole or not at
all. Progress bars show on a terminal unless --quiet.
"""
from __future__ import annotations

import argparse
import os
import sys

import toksmith
from toksmith.training.corpus import expand_directories, stream_texts

OUTPUT_FORMATS = ["tokenizer.json", "sentencepiece", "gguf", "tiktoken"]


def add_train_parser(commands) -> None:
    """The `train` command and its `bpe` subcommand, on the main parser's subcommands."""
    train = commands.add_parser("train", help="train a new vocabulary",
                                description="Train a new vocabulary on a corpus.")
    kinds = train.add_subparsers(dest="kind", required=True, metavar="KIND")
    bpe = kinds.add_parser(
        "bpe", help="BPE: for the pipeline of a tokenizer.json (--like), or over raw bytes",
        description="With --like: learn a BPE vocabulary for the normalizer, pre-tokenizer, post-processor "
                    "and decoder of LIKE; vocabulary, merges and ids equal what tokenizers' BpeTrainer "
                    "learns with the same options. Without: the byte-stream configuration (ids 0-3 "
                    "<|unk|> <|bos|> <|eos|> <|pad|>, 4-259 the bytes, no pre-tokenization, each file one "
                    "sequence of bytes).")
    bpe.add_argument("inputs", nargs="*", help="corpus files or directories ('-' or none: stdin)")
    bpe.add_argument("--like", help="tokenizer.json (or .json.gz) whose pipeline is kept (none: byte-stream)")
    bpe.add_argument("--corpus-dir", action="append", default=[], metavar="DIR",
                     help="a directory of corpus files (every non-hidden file under it, in path order)")
    bpe.add_argument("--ascii-only", action="store_true",
                     help="byte-stream: only tab, LF, CR and 0x20-0x7E are base tokens (102 with the specials)")
    bpe.add_argument("--vocab-size", type=int, required=True, help="tokens in the new vocabulary")
    bpe.add_argument("-o", "--output", required=True, help="file to write (replaced whole if it exists)")
    bpe.add_argument("--format", choices=OUTPUT_FORMATS, help="output format (default: from OUTPUT's suffix)")
    bpe.add_argument("--min-frequency", type=int, default=0, help="a pair seen fewer times is not merged")
    bpe.add_argument("--special-token", action="append", default=[], metavar="TEXT",
                     help="--like: a special token, first in the vocabulary (repeat for more)")
    bpe.add_argument("--initial-alphabet", default="", metavar="CHARS",
                     help="--like: characters always in the vocabulary")
    bpe.add_argument("--limit-alphabet", type=int, help="--like: keep at most this many characters")
    bpe.add_argument("--max-token-length", type=int, help="--like: no token longer than this many characters")
    bpe.add_argument("--continuing-subword-prefix", help="--like: prefix of a token that continues a word (e.g. ##)")
    bpe.add_argument("--end-of-word-suffix", help="--like: suffix of a token that ends a word (e.g. </w>)")
    bpe.add_argument("--threads", type=int, help="counting threads (default: all cores; the result is the same)")
    bpe.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def run_train(args: argparse.Namespace) -> None:
    """Train as `args` says and write the output file."""
    files = [p for p in args.inputs if p != "-"] + args.corpus_dir
    if files and len(files) != len(args.inputs) + len(args.corpus_dir):
        raise ValueError("'-' (stdin) cannot be mixed with files")
    for folder in args.corpus_dir:
        if not os.path.isdir(folder):
            raise ValueError(f"--corpus-dir {folder}: not a directory")
    show_progress = not args.quiet and sys.stderr.isatty()
    if args.like is None:
        # byte-stream: each file (or stdin) is one sequence of bytes
        corpus = expand_directories(files) if files else [sys.stdin.buffer]
        tok = toksmith.train_bpe(
            corpus if files else iter(corpus), args.vocab_size, min_frequency=args.min_frequency,
            ascii_only=args.ascii_only, show_progress=show_progress, num_threads=args.threads,
            **_like_only_options(args))
    else:
        corpus = expand_directories(files) if files else stream_texts(sys.stdin.buffer)
        tok = toksmith.train_bpe(
            corpus, args.vocab_size, like=args.like, min_frequency=args.min_frequency,
            special_tokens=args.special_token, initial_alphabet=list(args.initial_alphabet),
            limit_alphabet=args.limit_alphabet, max_token_length=args.max_token_length,
            continuing_subword_prefix=args.continuing_subword_prefix, end_of_word_suffix=args.end_of_word_suffix,
            ascii_only=args.ascii_only, show_progress=show_progress, num_threads=args.threads)
    written = tok.save(args.output, format=args.format)
    if not args.quiet:
        print(f"toksmith: wrote {written} ({tok.vocab_size} tokens)", file=sys.stderr)


def _like_only_options(args: argparse.Namespace) -> dict:
    """The --like options given without --like (train_bpe refuses them, naming each)."""
    given = {"special_tokens": args.special_token, "initial_alphabet": list(args.initial_alphabet),
             "limit_alphabet": args.limit_alphabet, "max_token_length": args.max_token_length,
             "continuing_subword_prefix": args.continuing_subword_prefix,
             "end_of_word_suffix": args.end_of_word_suffix}
    return {k: v for k, v in given.items() if v not in (None, [])}
