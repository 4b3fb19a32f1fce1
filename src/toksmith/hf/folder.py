"""Hugging Face model folders, resolved the way transformers builds their fast tokenizers.

Order: `tokenizer.json`; else a sentencepiece `tokenizer.model` / `spiece.model`; else GPT-2's
`vocab.json` + `merges.txt` (transformers GPT2Converter); else BERT's `vocab.txt`
(transformers BertConverter), with options from `tokenizer_config.json`.

>>> resolve_folder("/nonexistent")                                    # doctest: +SKIP
(<FolderKind.TOKENIZER_JSON: 'tokenizer.json'>, PosixPath('/m/tokenizer.json'))
"""
from __future__ import annotations

import os
from enum import Enum
from pathlib import Path

from . import components as c
from ..errors import ModelFormatError
from ..formats.bounded_read import read_model_file
from .read_models import read_vocab_map
from .reader import parse_json, read_hf_json


class FolderKind(Enum):
    TOKENIZER_JSON = "tokenizer.json"
    SENTENCEPIECE = "sentencepiece"
    GPT2 = "vocab.json+merges.txt"
    BERT = "vocab.txt"


def resolve_folder(path: str | os.PathLike) -> tuple[FolderKind, Path]:
    """Which file of the folder transformers would build the tokenizer from, and its path."""
    folder = Path(path)
    for name, kind in (("tokenizer.json", FolderKind.TOKENIZER_JSON), ("tokenizer.model", FolderKind.SENTENCEPIECE),
                       ("spiece.model", FolderKind.SENTENCEPIECE)):
        if (folder / name).is_file():
            return kind, folder / name
    if (folder / "vocab.json").is_file() and (folder / "merges.txt").is_file():
        return FolderKind.GPT2, folder / "vocab.json"
    if (folder / "vocab.txt").is_file():
        return FolderKind.BERT, folder / "vocab.txt"
    raise ModelFormatError(folder, "no tokenizer in this folder: expected tokenizer.json, tokenizer.model, "
                                   "spiece.model, vocab.json + merges.txt, or vocab.txt")


def read_folder(path: str | os.PathLike) -> c.HfTokenizerSpec:
    """The spec of a folder's tokenizer.json, GPT-2 or BERT files (sentencepiece: use its own loader)."""
    kind, file = resolve_folder(path)
    if kind is FolderKind.TOKENIZER_JSON:
        return read_hf_json(read_model_file(file), str(file))
    if kind is FolderKind.GPT2:
        return read_gpt2_folder(Path(path))
    if kind is FolderKind.BERT:
        return read_bert_folder(Path(path))
    raise ModelFormatError(file, "a sentencepiece model: load it with the sentencepiece reader")


def _config(folder: Path) -> dict:
    file = folder / "tokenizer_config.json"
    if not file.is_file():
        return {}
    value = parse_json(read_model_file(file), str(file))
    if not isinstance(value, dict):
        raise ModelFormatError(file, "$: expected an object")
    return value


def _config_bool(folder: Path, config: dict, key: str, default: bool | None) -> bool | None:
    value = config.get(key, default)
    if value is not None and not isinstance(value, bool):
        raise ModelFormatError(folder / "tokenizer_config.json", f"$.{key}: expected a boolean; found {value!r}")
    return value


def _read_merges(file: Path) -> tuple[tuple[str, str], ...]:
    try:
        lines = read_model_file(file).decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(file, f"not UTF-8 text (byte {exc.start})") from None
    start = 1 if lines and lines[0].startswith("#version") else 0
    while lines and not lines[-1].strip():
        lines.pop()
    merges = []
    for number in range(start, len(lines)):
        parts = lines[number].split(" ")
        if len(parts) != 2:
            raise ModelFormatError(file, f"line {number + 1}: expected 'left right' with one space; "
                                         f"found {lines[number][:60]!r}")
        merges.append((parts[0], parts[1]))
    return tuple(merges)


def read_gpt2_folder(folder: Path) -> c.HfTokenizerSpec:
    """vocab.json + merges.txt as transformers' GPT2Converter builds them.

    Parity: transformers convert_slow_tokenizer.GPT2Converter: BPE with empty prefix/suffix,
    ByteLevel pre-tokenizer (add_prefix_space from the config, default false), ByteLevel decoder,
    ByteLevel(trim_offsets=False) post-processor (a bos template when add_bos_token).
    """
    vocab_file, merges_file = folder / "vocab.json", folder / "merges.txt"
    vocab = read_vocab_map(parse_json(read_model_file(vocab_file), str(vocab_file)), "$", str(vocab_file))
    merges = _read_merges(merges_file)
    for number, (a, b) in enumerate(merges):
        for token in (a, b, a + b):
            if token not in vocab:
                raise ModelFormatError(merges_file, f"merge {number + 1} ({a!r} {b!r}): {token!r} is not in vocab.json")
    config = _config(folder)
    add_prefix_space = _config_bool(folder, config, "add_prefix_space", False)
    model = c.BpeModel(vocab=vocab, merges=merges, continuing_subword_prefix="", end_of_word_suffix="")
    added = ()
    if "<|endoftext|>" in vocab:
        added = (c.AddedToken(id=vocab["<|endoftext|>"], content="<|endoftext|>", special=True, normalized=False),)
    post: c.PostProcessor = c.ByteLevel(trim_offsets=False)
    if _config_bool(folder, config, "add_bos_token", False):
        bos = config.get("bos_token", "<|endoftext|>")
        bos = bos.get("content") if isinstance(bos, dict) else bos
        if not isinstance(bos, str) or bos not in vocab:
            raise ModelFormatError(folder / "tokenizer_config.json", f"$.bos_token: {bos!r} is not in vocab.json")
        post = c.TemplateProcessing(single=(c.TemplateSpecialToken(bos), c.TemplateSequence(c.Sequence.A)),
                                    pair=(c.TemplateSpecialToken(bos), c.TemplateSequence(c.Sequence.A),
                                          c.TemplateSequence(c.Sequence.B, 1)),
                                    special_tokens={bos: (vocab[bos],)})
    return c.HfTokenizerSpec(source=str(folder), model=model, pre_tokenizer=c.ByteLevel(add_prefix_space=add_prefix_space),
                             post_processor=post, decoder=c.ByteLevel(), added_tokens=added)


BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def _read_vocab_txt(file: Path) -> dict[str, int]:
    try:
        text = read_model_file(file).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(file, f"not UTF-8 text (byte {exc.start})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    vocab: dict[str, int] = {}
    for number, token in enumerate(lines):
        if token in vocab:
            raise ModelFormatError(file, f"line {number + 1}: duplicate token {token!r} (also line {vocab[token] + 1})")
        vocab[token] = number
    return vocab


def read_bert_folder(folder: Path) -> c.HfTokenizerSpec:
    """vocab.txt as transformers' BertConverter builds it.

    Parity: transformers convert_slow_tokenizer.BertConverter: BertNormalizer (lowercase =
    do_lower_case, default true), BertPreTokenizer, WordPiece, `[CLS] $A [SEP]` templates,
    WordPiece decoder; the five BERT special tokens are added tokens.
    """
    vocab_file = folder / "vocab.txt"
    vocab = _read_vocab_txt(vocab_file)
    config = _config(folder)
    for token in ("[UNK]", "[CLS]", "[SEP]"):
        if token not in vocab:
            raise ModelFormatError(vocab_file, f"{token} is not in the vocab (BERT needs it)")
    normalizer = c.BertNormalizer(clean_text=True,
                                  handle_chinese_chars=_config_bool(folder, config, "tokenize_chinese_chars", True),
                                  strip_accents=_config_bool(folder, config, "strip_accents", None),
                                  lowercase=_config_bool(folder, config, "do_lower_case", True))
    S, T = c.TemplateSpecialToken, c.TemplateSequence
    post = c.TemplateProcessing(
        single=(S("[CLS]"), T(c.Sequence.A), S("[SEP]")),
        pair=(S("[CLS]"), T(c.Sequence.A), S("[SEP]"), T(c.Sequence.B, 1), S("[SEP]", 1)),
        special_tokens={"[CLS]": (vocab["[CLS]"],), "[SEP]": (vocab["[SEP]"],)})
    added = tuple(sorted((c.AddedToken(id=vocab[t], content=t, special=True, normalized=False)
                          for t in BERT_SPECIALS if t in vocab), key=lambda t: t.id))
    return c.HfTokenizerSpec(source=str(folder), model=c.WordPieceModel(vocab=vocab), normalizer=normalizer,
                             pre_tokenizer=c.BertPreTokenizer(), post_processor=post,
                             decoder=c.WordPieceDecoder(), added_tokens=added)
