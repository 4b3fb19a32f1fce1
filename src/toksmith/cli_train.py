"""`toksmith train bpe|unigram|spm-bpe`: train a vocabulary from the shell (toksmith.train_bpe,
toksmith.train_unigram, toksmith.train_sentencepiece_bpe).

    toksmith train bpe --like tokenizer.json --vocab-size 32000 -o new.json corpus/
    cat *.txt | toksmith train bpe --like tokenizer.json --vocab-size 8000 -o new.json
    toksmith train bpe --vocab-size 32000 -o bytes.json --corpus-dir corpus/       # byte-stream
    toksmith train unigram --vocab-size 32000 -o m.model corpus/        # spm_train's options
    toksmith train spm-bpe --vocab-size 32000 -o m.model corpus/        # spm_train --model_type=bpe

Inputs are files, directories (every file under them, sorted; --corpus-dir names one too)
or, with none or "-", standard input. Each line is one sequence, as the trainers read
files, except in the byte-stream configuration (`train bpe` without --like), where each
file, or standard input, is one sequence of bytes. The output format follows the output's
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
    bpe.add_argument("--like", help="tokenizer.json (or .json.gz), model folder, .model/.gguf/.tiktoken file or embedded "
                                    "name whose BPE pipeline is kept (none: byte-stream)")
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

    add_unigram_parser(kinds)
    add_spm_bpe_parser(kinds)


# spm_train's flags taken by `train unigram` (name, type, help); booleans get --x / --no-x.
UNIGRAM_NUMBERS = (
    ("character_coverage", float, "share of the characters kept in the alphabet (default 0.9995)"),
    ("seed_sentencepiece_size", int, "substrings the training starts from (default 1000000)"),
    ("shrinking_factor", float, "share of the pieces kept by each pruning (default 0.75)"),
    ("max_sentence_length", int, "longer lines (bytes) are skipped (default 4192)"),
    ("num_sub_iterations", int, "EM iterations between two prunings (default 2)"),
    ("max_sentencepiece_length", int, "longest piece, in characters (default 16)"),
    ("unk_id", int, "id of <unk> (default 0)"), ("bos_id", int, "id of <s> (default 1, -1: none)"),
    ("eos_id", int, "id of </s> (default 2, -1: none)"), ("pad_id", int, "id of <pad> (default -1: none)"),
)
UNIGRAM_STRINGS = (
    ("unk_piece", "text of the unknown piece (default <unk>)"), ("bos_piece", "default <s>"),
    ("eos_piece", "default </s>"), ("pad_piece", "default <pad>"),
    ("unk_surface", "text an unknown piece decodes to (default ' \u2047 ')"),
    ("required_chars", "characters always in the vocabulary"),
    ("pretokenization_delimiter", "pieces never cross this string (it is dropped)"),
    ("seed_sentencepieces_file", "lines piece<TAB>frequency: the pieces training starts from (with the "
                                 "corpus's characters) instead of its frequent substrings"),
)
UNIGRAM_FLAGS = (
    ("split_by_unicode_script", True), ("split_by_number", True), ("split_by_whitespace", True),
    ("split_digits", False), ("treat_whitespace_as_suffix", False), ("allow_whitespace_only_pieces", False),
    ("byte_fallback", False), ("hard_vocab_limit", True), ("add_dummy_prefix", True),
    ("remove_extra_whitespaces", True),
)


# The Unigram-only flags, which `train spm-bpe` does not take (its BPE trainer ignores them).
UNIGRAM_ONLY = ("seed_sentencepiece_size", "shrinking_factor", "num_sub_iterations", "seed_sentencepieces_file")


def add_unigram_parser(kinds) -> None:
    _add_spm_parser(kinds, "unigram", "Unigram", ())


def add_spm_bpe_parser(kinds) -> None:
    _add_spm_parser(kinds, "spm-bpe", "BPE", UNIGRAM_ONLY)


def _add_spm_parser(kinds, command: str, model: str, leave_out: tuple[str, ...]) -> None:
    from toksmith.training.spm_normalization import NormalizationRule
    model_type = "unigram" if model == "Unigram" else "bpe"
    unigram = kinds.add_parser(
        command, help=f"a sentencepiece {model} model (sentencepiece's trainer, spm_train's options)",
        description=f"Train a sentencepiece {model} model as spm_train --model_type={model_type} does, with its "
                    "options and defaults; the .model loads in sentencepiece, .json / .gguf are converted.")
    unigram.add_argument("inputs", nargs="*", help="corpus files or directories ('-' or none: stdin)")
    unigram.add_argument("--vocab-size", type=int, required=True, help="pieces in the model")
    unigram.add_argument("-o", "--output", required=True, help="file to write (replaced whole if it exists)")
    unigram.add_argument("--format", choices=OUTPUT_FORMATS, help="output format (default: from OUTPUT's suffix)")
    unigram.add_argument("--normalization-rule-name", choices=[r.value for r in NormalizationRule],
                         default=NormalizationRule.NMT_NFKC.value, help="normalization (default nmt_nfkc)")
    for name, kind, text in UNIGRAM_NUMBERS:
        if name in leave_out:
            continue
        unigram.add_argument("--" + name.replace("_", "-"), type=kind, help=text)
    for name, text in UNIGRAM_STRINGS:
        if name in leave_out:
            continue
        unigram.add_argument("--" + name.replace("_", "-"), help=text)
    for name in ("control_symbols", "user_defined_symbols"):
        unigram.add_argument("--" + name.replace("_", "-"), default="", metavar="A,B,...",
                             help="comma-separated, as spm_train takes them")
    for name, default in UNIGRAM_FLAGS:
        unigram.add_argument("--" + name.replace("_", "-"), action=argparse.BooleanOptionalAction, default=default,
                             help=f"spm_train's --{name} (default {str(default).lower()})")
    unigram.add_argument("--threads", type=int, help="threads (default: all cores; the result is the same)")
    unigram.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def _files(args: argparse.Namespace) -> list[str]:
    """The corpus files the arguments name (directories expanded); [] for standard input."""
    corpus_dirs = getattr(args, "corpus_dir", [])
    files = [p for p in args.inputs if p != "-"] + corpus_dirs
    if files and len(files) != len(args.inputs) + len(corpus_dirs):
        raise ValueError("'-' (stdin) cannot be mixed with files")
    for folder in corpus_dirs:
        if not os.path.isdir(folder):
            raise ValueError(f"--corpus-dir {folder}: not a directory")
    return expand_directories(files) if files else []


def _corpus(args: argparse.Namespace, strip_newline: bool) -> dict:
    """The trainer's corpus argument: {"files": [...]} or, for standard input, {"texts": lines}."""
    files = _files(args)
    if files:
        return {"files": files}
    lines = stream_texts(sys.stdin.buffer)
    # Parity: sentencepiece reads a line without its "\n", as from a file
    return {"texts": (line[:-1] if line.endswith("\n") else line for line in lines) if strip_newline else lines}


def _unigram_options(args: argparse.Namespace) -> dict:
    options = {"normalization_rule_name": args.normalization_rule_name}
    for name, _, _ in UNIGRAM_NUMBERS:
        if getattr(args, name, None) is not None:
            options[name] = getattr(args, name)
    for name, _ in UNIGRAM_STRINGS:
        if getattr(args, name, None) is not None:
            options[name] = getattr(args, name)
    for name in ("control_symbols", "user_defined_symbols"):
        options[name] = [s for s in getattr(args, name).split(",") if s]
    for name, _ in UNIGRAM_FLAGS:
        options[name] = getattr(args, name)
    return options


def run_train(args: argparse.Namespace) -> None:
    """Train as `args` says and write the output file."""
    progress = not args.quiet and sys.stderr.isatty()
    if args.kind in ("unigram", "spm-bpe"):
        trainer = toksmith.train_unigram if args.kind == "unigram" else toksmith.train_sentencepiece_bpe
        tok = trainer(vocab_size=args.vocab_size, show_progress=progress, num_threads=args.threads,
                      **_corpus(args, True), **_unigram_options(args))
        written = tok.save(args.output, format=args.format)
        if not args.quiet:
            print(f"toksmith: wrote {written} ({tok.vocab_size} pieces)", file=sys.stderr)
        return
    if args.like is None:
        # byte-stream: each file (or stdin) is one sequence of bytes
        files = _files(args)
        corpus = {"files": files} if files else {"texts": [sys.stdin.buffer]}
        tok = toksmith.train_bpe(
            vocab_size=args.vocab_size, **corpus, min_frequency=args.min_frequency,
            ascii_only=args.ascii_only, show_progress=progress, num_threads=args.threads,
            **_like_only_options(args))
    else:
        tok = toksmith.train_bpe(
            vocab_size=args.vocab_size, **_corpus(args, False), like=args.like, min_frequency=args.min_frequency,
            special_tokens=args.special_token, initial_alphabet=list(args.initial_alphabet),
            limit_alphabet=args.limit_alphabet, max_token_length=args.max_token_length,
            continuing_subword_prefix=args.continuing_subword_prefix, end_of_word_suffix=args.end_of_word_suffix,
            ascii_only=args.ascii_only, show_progress=progress, num_threads=args.threads)
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
