"""The `toksmith` command: encode, decode and inspect from the shell.

    toksmith encode "Hello, world"                 # GPT-4o's ids (embedded o200k_base; notice on stderr)
    toksmith encode -m spiece.model -f in.txt      # one line of ids per input line
    echo "Hello" | toksmith encode --pieces
    toksmith decode 259 2372 261
    toksmith inspect -m model.gguf
    toksmith convert tokenizer.model tokenizer.json  # format from the output's suffix
    toksmith train bpe --like tokenizer.json --vocab-size 32000 -o new.json corpus/   (cli_train.py)
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import warnings
from typing import Iterable, Iterator

import toksmith
from toksmith.cli_train import add_train_parser, run_train


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toksmith", description="Tokenize text for language models.")
    parser.add_argument("--version", action="version", version=f"toksmith {toksmith.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def with_model(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("-m", "--model", help="tokenizer file or folder, or an embedded name (o200k_base, "
                                              "cl100k_base; default: o200k_base, OpenAI's GPT-4o encoding)")
        p.add_argument("-q", "--quiet", action="store_true",
                       help="no notice on stderr when the default tokenizer is used")
        return p

    encode = with_model(commands.add_parser("encode", help="text -> token ids"))
    encode.add_argument("text", nargs="?", help="text to encode (default: stdin, one line at a time)")
    encode.add_argument("-f", "--file", help="encode each line of FILE ('-' for stdin)")
    encode.add_argument("--pieces", action="store_true", help="print pieces instead of ids")
    encode.add_argument("--json", action="store_true", help="print one JSON array per input")
    encode.add_argument("--no-special", action="store_true", help="do not add BOS/EOS")
    encode.add_argument("--parse-special", action="store_true",
                        help="turn special-token texts such as <s> into their ids")

    decode = with_model(commands.add_parser("decode", help="token ids -> text"))
    decode.add_argument("ids", nargs="*", help="ids to decode (default: stdin, one sequence per line)")
    decode.add_argument("--skip-special", action="store_true", help="leave special tokens out")

    inspect = with_model(commands.add_parser("inspect", help="describe a tokenizer"))
    inspect.add_argument("path", nargs="?", help="tokenizer file (same as --model)")
    inspect.add_argument("--json", action="store_true", help="print JSON")

    convert = commands.add_parser("convert", help="write a tokenizer in another format",
                                  description="Load INPUT and write it as OUTPUT: tokenizer.json (.json), "
                                              "sentencepiece (.model), vocab-only GGUF (.gguf) or tiktoken "
                                              "ranks (.tiktoken). Refuses, writing nothing, when the "
                                              "output format cannot express the tokenizer.")
    convert.add_argument("input", help="tokenizer file or folder, or an embedded name")
    convert.add_argument("output", help="file to write (replaced whole if it exists)")
    convert.add_argument("--format", choices=["tokenizer.json", "sentencepiece", "gguf", "tiktoken"],
                         help="output format (default: from OUTPUT's suffix)")
    convert.add_argument("--pre", help="a GGUF BPE input's pre-tokenizer, instead of tokenizer.ggml.pre")
    convert.add_argument("--encoding", help="the OpenAI encoding a .tiktoken input holds")
    convert.add_argument("--approximate", action="store_true",
                         help="where OUTPUT's reader would tokenize some text otherwise, write the closest "
                              "file anyway and print what differs on a built-in multilingual sample")
    add_train_parser(commands)
    return parser


EMBEDDED_NOTICE = ("toksmith: no -m given: using the embedded o200k_base (OpenAI's GPT-4o encoding); "
                   "-q hides this notice")


def _load(model: str | None, quiet: bool) -> toksmith.Tokenizer:
    if model:
        return toksmith.load(model)
    if not quiet:
        print(EMBEDDED_NOTICE, file=sys.stderr, flush=True)
    return toksmith.load_embedded()


def _binary_lines(stream) -> Iterator[str]:
    """Lines of a binary stream, read one at a time, as UTF-8 whatever the locale says:
    split at b"\n" only (a \r stays in its line), invalid bytes kept as surrogates."""
    for raw in stream:
        yield (raw[:-1] if raw.endswith(b"\n") else raw).decode("utf-8", "surrogateescape")


def _stdin_lines() -> Iterator[str]:
    return _binary_lines(sys.stdin.buffer)


def _encode(args) -> None:
    if args.text is not None and args.file:
        raise SystemExit("toksmith: error: give TEXT or --file, not both")
    if args.text is not None:
        _encode_texts(args, [args.text])
        return
    with _input_file(args.file) as stream:
        _encode_texts(args, _binary_lines(stream))


@contextlib.contextmanager
def _input_file(name: str | None):
    """The binary stream `encode` reads: the file `name` (opened now, so that a missing
    file fails before the tokenizer loads), or stdin for None and "-"."""
    if not name or name == "-":
        yield sys.stdin.buffer
        return
    with open(name, "rb") as stream:
        yield stream


def _encode_texts(args, texts: Iterable[str]) -> None:
    tok = _load(args.model, args.quiet)
    out = sys.stdout
    for text in texts:
        if not text.isascii() and any("\udc80" <= c <= "\udcff" for c in text):
            text = text.encode("utf-8", "surrogateescape")   # pass invalid UTF-8 through as bytes
        if args.pieces:
            result: list = tok.tokenize(text, add_special=not args.no_special,
                                        parse_special=args.parse_special)
            out.write(json.dumps(result, ensure_ascii=False) if args.json else " ".join(result))
        else:
            result = tok.encode(text, add_special=not args.no_special,
                                parse_special=args.parse_special)
            out.write(json.dumps(result) if args.json else " ".join(map(str, result)))
        out.write("\n")


# A token id on the command line: ASCII digits, optionally signed (a sign makes
# an error that names the value later, as any out-of-range id does).
# int() alone would also take "1_5043" and non-ASCII digits such as "١٢٣".
_ID_WORD = re.compile(r"[+-]?[0-9]+\Z", re.ASCII)


def _parse_ids(words: list[str]) -> list[int]:
    ids = []
    for word in words:
        for part in word.replace(",", " ").replace("[", " ").replace("]", " ").split():
            if not _ID_WORD.match(part):
                raise SystemExit(f"toksmith: error: {part!r} is not a token id "
                                 f"(expected ASCII decimal digits)")
            ids.append(int(part))
    return ids


def _decode(args) -> None:
    sequences: Iterable[list[int]]
    if args.ids:
        sequences = [_parse_ids(args.ids)]   # bad words fail before anything is loaded
    else:
        sequences = (_parse_ids(line.split()) for line in _stdin_lines())
    tok = _load(args.model, args.quiet)
    for ids in sequences:
        sys.stdout.write(tok.decode(ids, skip_special=args.skip_special) + "\n")


def _inspect(args) -> None:
    if args.path and args.model:
        raise SystemExit("toksmith: error: give the tokenizer as PATH or --model, not both")
    info = _load(args.path or args.model, args.quiet).describe()
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
        return
    for key, value in info.items():
        if key == "special_tokens":
            print(f"{key + ':':<14} {len(value)}")
            for token in value:
                strip = "".join(f" {side}" for side in ("lstrip", "rstrip") if token[side])
                print(f"  {token['id']:>8} {json.dumps(token['text'], ensure_ascii=False)} "
                      f"{token['kind']} split={token['split']}{strip}")
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items()) or "none"
        print(f"{key + ':':<14} {value}")


def _convert(args) -> None:
    from toksmith.writers.approximation import InexactConversionWarning
    try:
        tok = toksmith.load(args.input, pre=args.pre, encoding=args.encoding)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", InexactConversionWarning)
            written = tok.save(args.output, format=args.format, exact=not args.approximate)
    except (toksmith.ToksmithError, ValueError, TypeError) as e:
        raise CliError(_with_cli_flags(str(e))) from None
    for warning in caught:
        if issubclass(warning.category, InexactConversionWarning):
            print(f"toksmith: {warning.message}", file=sys.stderr)
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    print(f"toksmith: wrote {written} ({tok.vocab_size} tokens)", file=sys.stderr)


# The keyword arguments of load() and save() that `convert` takes as flags: an error
# from the library names the keyword ("format='x' is not one of ..."), the user typed the flag.
_CONVERT_KEYWORDS = re.compile(r"(?<![\w.-])(format|pre|encoding)= ?")


class CliError(Exception):
    """An error worded for the command line (its flags, not the library's keywords)."""


def _with_cli_flags(message: str) -> str:
    """`message` naming `convert`'s flags (--format X) where it names keywords (format=X)."""
    return _CONVERT_KEYWORDS.sub(lambda m: f"--{m.group(1)} ", message)


def _stdout_gone() -> None:
    """Point fd 1 at /dev/null so that the flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    handlers = {"encode": _encode, "decode": _decode, "inspect": _inspect, "convert": _convert,
                "train": run_train}
    if sys.stdout is None:
        # Python sets sys.stdout to None when fd 1 is closed (`toksmith encode hi >&-`).
        if sys.stderr is not None:
            print("toksmith: error: standard output is closed", file=sys.stderr)
        return 1
    try:
        handlers[args.command](args)
        sys.stdout.flush()   # a failing write surfaces here, not at interpreter exit
    except BrokenPipeError:
        # The reader went away (e.g. `| head -1`): stop quietly, as cat and grep do.
        _stdout_gone()
        return 0
    except KeyboardInterrupt:
        return 130
    except (toksmith.ToksmithError, OSError, ValueError, TypeError, CliError) as e:
        print(f"toksmith: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
