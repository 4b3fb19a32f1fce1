"""`train_bpe(..., like=None)`: the byte-stream configuration of the BPE trainer.

>>> tok = train_byte_stream(["corpus/"], 32000)                 # doctest: +SKIP
>>> tok.save("tokenizer.json")                                  # doctest: +SKIP

No pre-tokenization: each sequence (a file read whole as bytes, or one item of an
iterator) is one byte string, and merges are learnt over all of it
(`_core/byte_stream_trainer.pyx` has the exact rules). Ids 0-3 are the special tokens
<|unk|>, <|bos|>, <|eos|>, <|pad|>; ids 4-259 the bytes (the token of byte b is 4 + b),
or with `ascii_only` tab, LF, CR and printable ASCII (4-101), every other byte a gap
no merge crosses.

The tokenizer.json written splits text as training did, so `tokenizers` and toksmith
give the same ids on it:
- bytes: a BPE model (merges by rank) behind a ByteLevel pre-tokenizer with
  use_regex=false and add_prefix_space=false (the whole text one pre-token, its bytes
  shown through GPT-2's byte<->unicode map), a ByteLevel decoder;
- ascii_only: the characters as themselves, no pre-tokenizer, a BPE model whose
  unk_token <|unk|> stands for each character outside the alphabet (one each,
  fuse_unk=false: no merge joins it to anything), a Fuse decoder (concatenation);
- the four special tokens are added tokens (special, not normalized): split out of the
  text only when asked (toksmith's parse_special=True; tokenizers splits them unless
  encode_special_tokens is set), never learnt by a merge.
"""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable

from toksmith.errors import ToksmithError
from toksmith.training.corpus import CorpusError, corpus_paths, expand_directories, is_file_list
from toksmith.training.numbers import COUNT_LIMIT, INT64_MAX, checked_flag, checked_int, checked_vocab_size

SPECIAL_TOKENS = ("<|unk|>", "<|bos|>", "<|eos|>", "<|pad|>")
ASCII_BYTES = bytes([9, 10, 13]) + bytes(range(0x20, 0x7F))
READ_BYTES = 1 << 20
MERGES_PER_PROGRESS_STEP = 256
MERGES_PER_CALL = 1024


def base_size(ascii_only: bool) -> int:
    """The special tokens and base tokens: 260, or 102 with ascii_only."""
    return len(SPECIAL_TOKENS) + (len(ASCII_BYTES) if ascii_only else 256)


def train_byte_stream(source: object, vocab_size: int, *, min_frequency: int = 0,
                      ascii_only: bool = False, show_progress: bool | None = None, num_threads: int = 1):
    """The byte-stream configuration (see the module docstring); the toksmith Tokenizer
    of the trained tokenizer.json. `num_threads` >= 1 (checked by train_bpe)."""
    from toksmith._core.byte_stream_trainer import ByteStreamTrainer
    checked_vocab_size(vocab_size, 0)
    checked_int("min_frequency", min_frequency, 0, INT64_MAX, COUNT_LIMIT)
    checked_flag("ascii_only", ascii_only)
    base = base_size(ascii_only)
    if vocab_size < base:
        what = "4 special tokens and the 98 ascii_only bytes" if ascii_only else "4 special tokens and the 256 bytes"
        raise ValueError(f"vocab_size {vocab_size} is smaller than the base vocabulary ({what}: {base} tokens)")
    if show_progress is None:
        show_progress = sys.stderr.isatty()
    trainer = ByteStreamTrainer(ascii_only)
    _read(trainer, source, show_progress)
    if trainer.bytes_read == 0:
        raise CorpusError("the corpus is empty: no byte to learn from")
    if ascii_only and trainer.base_bytes() == 0:
        raise CorpusError(f"none of the corpus's {trainer.bytes_read} bytes is in the ascii_only alphabet "
                          f"(tab, LF, CR, 0x20-0x7E)")
    trainer.prepare(vocab_size, min_frequency, num_threads)
    _learn(trainer, vocab_size, show_progress)
    vocab, merges = trainer.vocab(), trainer.merges()
    del trainer                 # its token table: the vocabulary is copied out
    data = trained_json_bytes(vocab, merges, ascii_only)
    del vocab
    from toksmith.formats import spec_from_bytes
    from toksmith.spec import FileFormat
    from toksmith.tokenizer import Tokenizer
    name = "<BPE trained on a byte stream" + (", ascii_only>" if ascii_only else ">")
    return Tokenizer(spec_from_bytes(data, FileFormat.HF_JSON, name))


# ---------------------------------------------------------------- reading

def _sources(source: object) -> tuple[list[str] | None, Iterable[object] | None]:
    """(the files, in order) or (the iterable of sequences)."""
    if is_file_list(source):
        paths = [source] if isinstance(source, (str, bytes, os.PathLike)) else source
        files = corpus_paths(expand_directories(os.fsdecode(p) for p in paths))
        for path in files:
            if not os.access(path, os.R_OK):
                raise CorpusError(f"{path}: not readable (permission denied)")
        return files, None
    if not isinstance(source, Iterable):
        raise TypeError("files must be a path or a list of paths (texts=: an iterable of str, bytes or "
                        f"binary files), not {type(source).__name__}")
    return None, source


def _read(trainer, source: object, show_progress: bool) -> None:
    files, items = _sources(source)
    if not show_progress:
        _feed(trainer, files, items, None)
        return
    from tqdm import tqdm
    total = sum(os.path.getsize(p) for p in files) if files is not None else None
    with tqdm(total=total, unit="B", unit_scale=True, desc="Reading bytes") as bar:
        _feed(trainer, files, items, bar.update)


def _feed(trainer, files: list[str] | None, items: Iterable[object] | None, progress) -> None:
    buffer = bytearray(READ_BYTES)
    view = memoryview(buffer)
    if files is not None:
        for path in files:
            with open(path, "rb") as f:
                _feed_stream(trainer, f, view, progress)
        return
    for i, item in enumerate(items):
        if isinstance(item, str):
            try:
                data = item.encode("utf-8")
            except UnicodeEncodeError as e:
                raise CorpusError(f"text {i} of the corpus: character {e.start}: a lone surrogate "
                                  f"(not representable in UTF-8)") from None
            trainer.add(data)
            if progress is not None:
                progress(len(data))
        elif isinstance(item, (bytes, bytearray, memoryview)):
            data = memoryview(item).cast("B") if isinstance(item, memoryview) else item
            trainer.add(data)
            if progress is not None:
                progress(len(data))
        elif hasattr(item, "readinto") or hasattr(item, "read"):
            _feed_stream(trainer, item, view, progress)
        else:
            raise TypeError(f"item {i} of the corpus is a {type(item).__name__}, not a str, bytes or binary file")


def _feed_stream(trainer, stream, view: memoryview, progress) -> None:
    """One sequence: a binary stream read to its end."""
    trainer.begin()
    while True:
        if hasattr(stream, "readinto"):
            n = stream.readinto(view)
            chunk = view[:n] if n else None
        else:
            data = stream.read(len(view))
            if isinstance(data, str):
                raise TypeError("a corpus stream must be binary (it gave str)")
            n = len(data) if data else 0
            chunk = data
        if not n:
            break
        trainer.append(chunk)
        if progress is not None:
            progress(n)
    trainer.end()


# ---------------------------------------------------------------- learning

def _learn(trainer, vocab_size: int, show_progress: bool) -> None:
    """The merge loop, a few hundred merges a call (Ctrl-C is seen between calls)."""
    if not show_progress:
        while not trainer.run(MERGES_PER_CALL):
            pass
        return
    from tqdm import tqdm
    with tqdm(total=max(0, vocab_size - trainer.n_tokens), desc="Learning merges") as bar:
        before = trainer.n_tokens
        while not trainer.run(MERGES_PER_PROGRESS_STEP):
            bar.update(trainer.n_tokens - before)
            before = trainer.n_tokens
        bar.update(trainer.n_tokens - before)


# ---------------------------------------------------------------- the tokenizer.json

def token_texts(vocab: list[bytes], ascii_only: bool) -> list[bytes]:
    """Each token's text in the tokenizer.json, as UTF-8: the special tokens as they are,
    the others' bytes through GPT-2's byte->unicode map (ascii_only: as themselves)."""
    if ascii_only:
        texts = vocab[len(SPECIAL_TOKENS):]
    else:
        from toksmith._core.byte_unicode import byte_unicode_encode
        texts = [byte_unicode_encode(t) for t in vocab[len(SPECIAL_TOKENS):]]
    return [t.encode("ascii") for t in SPECIAL_TOKENS] + texts


def trained_json_bytes(vocab: list[bytes], merges: list[tuple[int, int]], ascii_only: bool) -> bytes:
    """The tokenizer.json (UTF-8) of a byte-stream training's vocabulary and merges.

    Written natively, not through json.dumps of Python strings: on a repetitive corpus
    the tokens grow to the length of the corpus (a 50 MB line of "abcabc..." learns tokens
    of 3 x 2**k bytes, 2.8 bytes of tokens per corpus byte), and every Python copy of them
    (texts, a dict, the JSON str, its encoding) cost as much again (issue 30 item 10)."""
    from toksmith._core.json_text import json_merges_text, json_vocab_text
    texts = token_texts(vocab, ascii_only)
    if len(set(texts)) != len(texts):
        raise ToksmithError("internal error: two tokens of the trained vocabulary have the same text")
    document = json.dumps(_document_without_tables(ascii_only), ensure_ascii=False, separators=(",", ":"))
    if not document.endswith("}}"):
        raise ToksmithError("internal error: the model must be the document's last section")
    # the model's vocab and merges are its last fields (as tokenizers writes them)
    return b"".join([document[:-2].encode("utf-8"), b',"vocab":', json_vocab_text(texts), b',"merges":',
                     json_merges_text(texts, merges), b"}}"])


def _document_without_tables(ascii_only: bool) -> dict:
    """The tokenizer.json of the byte-stream configuration, its model's vocab and merges left out."""
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": i, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, text in enumerate(SPECIAL_TOKENS)],
        "normalizer": None,
        "pre_tokenizer": None if ascii_only else byte_level,
        "post_processor": None,
        "decoder": {"type": "Fuse"} if ascii_only else dict(byte_level),
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": SPECIAL_TOKENS[0] if ascii_only else None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
        },
    }
