"""Seed pieces read from a file (spm_train --seed_sentencepieces_file), for the Unigram trainer.

Each line is ``piece<TAB>frequency`` (more tab-separated fields are ignored). The seeds
are every character of the corpus (scored by its count) and then the file's pieces in
file order, each scored frequency x its length in characters, leaving out a piece the
trainer could not keep (sentencepiece's piece rules) or one seen before, and stopping
once `seed_sentencepiece_size` seeds are held; the whole list is then ranked by score
(ties: the smaller UTF-8). Training only prunes, so the model's pieces all come from
these seeds:

>>> read_seed_file("seeds.tsv", [(b"a", 10.0)], spec)       # doctest: +SKIP
([b'a', b'\\xe2\\x96\\x81the'], [10.0, 8.0])

Parity: sentencepiece 0.2.3 unigram_model_trainer.cc
Trainer::LoadSeedSentencePiecesFromFile. Where sentencepiece logs an error and trains on
no seed at all (a line without a tab, a frequency that is no positive integer), this is
a ValueError naming the file and line; so is a line that is not UTF-8.
"""
from __future__ import annotations

import os
import re

from toksmith._core.unigram_seeds import valid_pieces
from toksmith.formats.bounded_read import read_model_file
from toksmith.training.spm_options import SpmTrainerSpec

# absl::SimpleAtoi: ASCII whitespace around an optional sign and decimal digits.
_INTEGER = re.compile(rb"[ \t\n\v\f\r]*([+-]?[0-9]+)[ \t\n\v\f\r]*\Z")
INT64_MAX = (1 << 63) - 1


def read_seed_file(path: str | os.PathLike[str], chars: list[tuple[bytes, float]],
                   spec: SpmTrainerSpec) -> tuple[list[bytes], list[float]]:
    """(pieces, scores as C floats) best first: `chars` (the corpus's characters, best
    first, with their counts) and the file's pieces (see the module docstring)."""
    path = os.fspath(path)
    lines = read_model_file(path).split(b"\n")       # refused past toksmith.read_limits
    if lines and not lines[-1]:
        lines.pop()         # Parity: std::getline gives no line after the last newline
    # Each line read as sentencepiece reads it; an error is raised when the loop reaches
    # its line (sentencepiece stops reading once the seeds are full).
    entries: list[tuple[bytes, int, str | None]] = []
    for number, line in enumerate(lines, 1):
        entries.append(_entry(path, number, line))
    valid = valid_pieces([piece for piece, _, _ in entries], spec.max_sentencepiece_length,
                         spec.split_by_unicode_script, spec.split_by_number, spec.split_by_whitespace,
                         spec.split_digits, spec.treat_whitespace_as_suffix, spec.allow_whitespace_only_pieces)
    seeds = list(chars)
    seen = {piece for piece, _ in chars}
    for (piece, score, error), ok in zip(entries, valid):
        if error is not None:
            raise ValueError(error)
        if not ok or piece in seen:
            continue
        seen.add(piece)
        if len(seeds) >= spec.seed_sentencepiece_size:
            break
        # Parity: int64 freq x size_t length, as a size_t (mod 2^64), made a float
        seeds.append((piece, float_of_integer(score % (1 << 64))))
    seeds.sort(key=lambda kv: (-kv[1], kv[0]))
    return [piece for piece, _ in seeds], [score for _, score in seeds]


def _entry(path: str, number: int, line: bytes) -> tuple[bytes, int, str | None]:
    """(piece, frequency x length in characters, None) of one line, or (b"", 0, the error)."""
    fields = line.split(b"\t")
    if len(fields) < 2:
        return b"", 0, f"{path}:{number}: expected <piece> <tab> <frequency>, found {line[:80]!r}"
    match = _INTEGER.match(fields[1])
    freq = int(match.group(1)) if match else 0
    if not 0 < freq <= INT64_MAX:
        return b"", 0, (f"{path}:{number}: the frequency must be an integer from 1 to {INT64_MAX}, "
                        f"not {fields[1][:40]!r}")
    try:
        text = fields[0].decode("utf-8")
    except UnicodeDecodeError as exc:
        return b"", 0, f"{path}:{number}: the piece is not UTF-8 (byte {exc.start})"
    return fields[0], freq * len(text), None


def float_of_integer(n: int) -> float:
    """The C float nearest to the integer n >= 0 (ties to even), as C++ converts an
    integer: one rounding (float(n) first would round twice above 2^53)."""
    if n < (1 << 24):
        return float(n)
    shift = n.bit_length() - 24
    kept, rest = n >> shift, n & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if rest > half or (rest == half and kept & 1):
        kept += 1
    return float(kept << shift)
