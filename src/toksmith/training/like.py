"""`train_bpe(like=...)`: what `like` may name, resolved to the tokenizer.json whose
pipeline training keeps.

>>> resolve_like("gpt2/tokenizer.json")     # doctest: +SKIP
'gpt2/tokenizer.json'
>>> resolve_like("cl100k_base")             # doctest: +SKIP
<toksmith.Tokenizer ...cl100k_base (as tokenizer.json)...>

`like` may be what `toksmith.load` takes: a tokenizer.json file (read by train_bpe as it
is), a folder (its tokenizer.json, or GPT-2's vocab.json + merges.txt), a .model, .gguf or
.tiktoken file, an embedded name, or a loaded Tokenizer. One that is not a tokenizer.json
is written as one first (`tok.save("tokenizer.json")`'s pipeline: the writer refuses
what tokenizers would read differently, and train_bpe then says so); its model must be
BPE, as for tokenizers' BpeTrainer.
"""
from __future__ import annotations

import os

from toksmith.errors import UnsupportedConversionError

# Files train_bpe reads itself as a tokenizer.json (the rest goes through toksmith.load).
JSON_SUFFIXES = (".json", ".json.gz")
WHAT_LIKE_TAKES = ("a tokenizer.json (.json or .json.gz), a Hugging Face folder, a .model, .gguf or "
                   ".tiktoken file, an embedded name ({names}) or a toksmith Tokenizer")


def resolve_like(like: object):
    """`like` as train_bpe reads it: the path of a tokenizer.json file, or a toksmith
    Tokenizer whose spec holds tokenizer.json bytes (see the module docstring)."""
    from toksmith.tokenizer import Tokenizer
    if isinstance(like, Tokenizer):
        return like if _holds_tokenizer_json(like) else _as_tokenizer_json(like, like.spec.source)
    if not isinstance(like, (str, os.PathLike)):
        raise TypeError(f"like must be {_what_like_takes()}, not {type(like).__name__}")
    path = os.fspath(like)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if os.path.isfile(path) and path.lower().endswith(JSON_SUFFIXES):
        return path
    folder_json = os.path.join(path, "tokenizer.json")
    if os.path.isdir(path) and os.path.isfile(folder_json):
        return folder_json
    import toksmith
    from toksmith import embedded
    if not os.path.exists(path) and path not in embedded.FILES:
        raise FileNotFoundError(f"like={path!r}: no such file, folder or embedded tokenizer; like takes "
                                f"{_what_like_takes()}")
    tok = toksmith.load(path)       # its errors name the file and what it lacks
    return tok if _holds_tokenizer_json(tok) else _as_tokenizer_json(tok, path)


def _holds_tokenizer_json(tok) -> bool:
    spec = tok.spec
    return getattr(spec, "hf", None) is not None and spec.source_data is not None


def _as_tokenizer_json(tok, name: str):
    """`tok` written as a tokenizer.json and loaded back (its pipeline, as tokenizers reads it)."""
    from toksmith.formats import spec_from_bytes
    from toksmith.spec import FileFormat
    from toksmith.tokenizer import Tokenizer
    from toksmith.writers import to_bytes
    try:
        data = to_bytes(tok.spec, FileFormat.HF_JSON)
    except UnsupportedConversionError as e:
        raise UnsupportedConversionError(
            f"like={name}", "the tokenizer.json whose pipeline train_bpe keeps",
            list(e.missing) + ["(give like= a tokenizer.json of the pipeline to train for)"]) from None
    return Tokenizer(spec_from_bytes(data, FileFormat.HF_JSON, f"{name} (as tokenizer.json)"))


def _what_like_takes() -> str:
    from toksmith import embedded
    return WHAT_LIKE_TAKES.format(names=", ".join(repr(n) for n in embedded.FILES))
