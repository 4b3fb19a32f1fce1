"""Write a tiktoken rank file: one ``base64(token) rank`` line per token, by rank.

A rank file holds the ranks and nothing else: no pre-tokenizer pattern, no special
tokens, no BOS rule. A reader (tiktoken's ``Encoding``, toksmith's reader) takes those
from the encoding it knows the file as, so a file written here is complete only when
reading it back gives the source's pre-tokenizer and special tokens: toksmith's reader
recognises OpenAI's encodings and Llama 3's by content (formats/tiktoken.py). What the
source does that reading back would not give is refused with UnsupportedConversionError
naming it, and nothing is written.

Sources:

- a rank file (own format): its ranks as read, in tiktoken's own layout, so a file
  tiktoken wrote comes back byte for byte;
- a byte-level BPE with a merge list (GGUF "gpt2" vocabularies, tokenizer.json files
  with a ByteLevel pre-tokenizer): written with "rank = id" only when the merge list
  provably encodes as those ranks (`byte_level_merges.merge_list_rank_problems` has the
  argument), and the pipeline around the model is one a rank file's reader rebuilds;
  see `tiktoken_sources`;
- anything else (Unigram, SentencePiece BPE, WordPiece, RWKV ...) is refused.

>>> data = write_tiktoken(toksmith.load("cl100k_base").spec)       # doctest: +SKIP
>>> data[:12]                                                       # doctest: +SKIP
b'IQ== 0\\nIg== '
"""
from __future__ import annotations

import base64
from collections.abc import Sequence

from toksmith.errors import ModelFormatError
from toksmith.formats.tiktoken import KNOWN_ENCODINGS, parse_tiktoken
from toksmith.spec import Algorithm, FileFormat, TokenizerSpec
from toksmith.vocab import MergeOrder
from toksmith.writers.common import cannot_write, refuse_inexact
from toksmith.writers.tiktoken_sources import RankSource, rank_source

TARGET = "a tiktoken rank file"
# The name a written file is read back under: no encoding's name, so only its content
# can make the reader recognise it.
_READ_BACK_NAME = "written.tiktoken"


def write_tiktoken(spec: TokenizerSpec) -> bytes:
    """The bytes of a tiktoken rank file holding `spec`, or UnsupportedConversionError
    naming what such a file cannot carry.

    >>> write_tiktoken(toksmith.load("spiece.model").spec)             # doctest: +SKIP
    UnsupportedConversionError: the unigram tokenizer of sentencepiece file 'spiece.model'
    cannot be written as a tiktoken rank file: a unigram model (...)
    """
    if spec.algorithm is not Algorithm.BYTE_BPE or spec.byte_level is None and spec.hf is None:
        raise cannot_write(spec, TARGET, [f"a {spec.algorithm.value} model: a rank file holds the "
                                          f"ranks of a byte-level BPE only"])
    if spec.file_format is FileFormat.TIKTOKEN:
        return _own_rank_file(spec)
    source = rank_source(spec)
    missing = list(source.missing)
    data = None
    if source.ranks is not None:
        data = rank_file_bytes(source.ranks)
        missing += _read_back_differences(source, data)
    if missing:
        raise cannot_write(spec, TARGET, missing)
    refuse_inexact(spec, TARGET, source.inexact)
    return data


def rank_file_bytes(texts: Sequence[bytes | None]) -> bytes:
    """The rank-file lines of `texts` (raw bytes by rank; None: no line for that rank).

    Parity: tiktoken/load.py dump_tiktoken_bpe (sorted by rank, b64encode, " ", rank, "\\n").

    >>> rank_file_bytes([b"!", None, b"ab"])
    b'IQ== 0\\nYWI= 2\\n'
    """
    b64 = base64.b64encode
    return b"".join([b64(text) + b" %d\n" % rank for rank, text in enumerate(texts) if text is not None])


def rank_file_of_merge_list(spec: TokenizerSpec) -> bytes:
    """The ranks of a merge-list byte-level BPE (GGUF, tokenizer.json) as a rank file,
    checked only for the model: the merge list encodes as these ranks (raises otherwise).
    The pipeline around it (pre-tokenizer, special tokens, BOS, decode rules) is not
    checked: `write_tiktoken` is the writer; this shows what the ranks alone do."""
    source = rank_source(spec)
    if source.ranks is None:
        raise cannot_write(spec, TARGET, list(source.missing))
    return rank_file_bytes(source.ranks)


def _own_rank_file(spec: TokenizerSpec) -> bytes:
    """A rank file written back: its ranks as read; reading it back as it was loaded
    (same name, same options) must give the same pattern and special tokens."""
    bl = spec.byte_level
    if bl.vocab.merge_order is not MergeOrder.TOKEN_RANK or bl.vocab.byte_unicode:
        raise cannot_write(spec, TARGET, ["a rank file read as merges (internal error: not a rank vocabulary)"])
    data = rank_file_bytes(bl.vocab.texts)
    options = spec.load_options
    again = parse_tiktoken(data, spec.source, encoding=options.encoding, pattern=options.pattern,
                           special_tokens=options.special_token_dict())
    if again.pattern != bl.pattern or again.vocab.special_tokens != bl.vocab.special_tokens:
        raise cannot_write(spec, TARGET, [f"the pattern {bl.pattern!r} and special tokens it was read with: "
                                          f"read back it gets {again.pattern!r} and "
                                          f"{len(again.vocab.special_tokens)} special tokens"])
    return data


def _read_back_differences(source: RankSource, data: bytes) -> list[str]:
    """What reading the written ranks back (by content) gives otherwise than the source."""
    try:
        again = parse_tiktoken(data, _READ_BACK_NAME)
    except ModelFormatError:
        return [f"the pre-tokenizer ({source.pre_tokenizer}) and the {len(source.special_tokens)} special "
                f"tokens: a rank file holds neither, and its ranks are of no encoding a reader recognises "
                f"(known: {', '.join(KNOWN_ENCODINGS)})"]
    known = KNOWN_ENCODINGS[again.encoding]
    out = []
    if source.pattern is not known.pattern:
        out.append(f"the pre-tokenizer ({source.pre_tokenizer}): the ranks are {known.name}'s, read back "
                   f"with {known.name}'s pattern ({known.pattern.value}), which cuts text otherwise")
    if source.special_tokens != known.special_tokens:
        extra = sorted(set(source.special_tokens.items()) - set(known.special_tokens.items()), key=lambda kv: kv[1])
        lacking = sorted(set(known.special_tokens.items()) - set(source.special_tokens.items()),
                         key=lambda kv: kv[1])
        out.append(f"the special tokens: read back as {known.name}, the file gets "
                   f"{_show_specials(lacking)} that the source lacks and loses {_show_specials(extra)}")
    return out


def _show_specials(pairs: list[tuple[str, int]]) -> str:
    if not pairs:
        return "none"
    shown = ", ".join(f"{text!r} ({token_id})" for text, token_id in pairs[:4])
    return shown + (f" and {len(pairs) - 4} more" if len(pairs) > 4 else "")
