"""Tokenizers that ship inside the package and load with no file and no network.

- ``o200k_base``: OpenAI's GPT-4o encoding (the default), ``cl100k_base``: GPT-4's,
  both tiktoken rank files stored gzip-compressed under ``toksmith/data``;
- ``sentencepiece-demo``: an 8,000-piece SentencePiece Unigram model trained on public
  domain text (scripts/make_embedded_model.py), for trying the SentencePiece pipeline.

>>> import toksmith
>>> toksmith.load("o200k_base").encode("Hello, world")
[13225, 11, 2375]
"""
from __future__ import annotations

import gzip
from importlib import resources

from toksmith.spec import FileFormat, LoadOptions, TokenizerSpec

DEFAULT = "o200k_base"
# name -> file under toksmith/data
FILES = {"o200k_base": "o200k_base.tiktoken.gz", "cl100k_base": "cl100k_base.tiktoken.gz",
         "sentencepiece-demo": "embedded.model"}
_SOURCE_PREFIX = "<embedded "


def path_of(name: str) -> str:
    """Path of the file an embedded tokenizer is read from."""
    return str(resources.files("toksmith").joinpath("data", FILES[_checked(name)]))


def load_embedded(name: str = DEFAULT):
    """The embedded tokenizer `name` (see the module docstring for the names)."""
    from toksmith.formats import spec_from_bytes
    from toksmith.tokenizer import Tokenizer
    if not FILES[_checked(name)].endswith(".tiktoken.gz"):
        return Tokenizer(path_of(name))   # a plain file: loaded (and pickled) as any other
    data = resources.files("toksmith").joinpath("data", FILES[name]).read_bytes()
    spec = spec_from_bytes(gzip.decompress(data), FileFormat.TIKTOKEN, f"{_SOURCE_PREFIX}{name}>",
                           LoadOptions(encoding=name))
    return Tokenizer(spec)


def embedded_name_of(spec: TokenizerSpec) -> str | None:
    """The name of the compressed embedded tokenizer `spec` was read from (it pickles by
    that name, not by megabytes of ranks), else None."""
    source = spec.source
    if source.startswith(_SOURCE_PREFIX) and source.endswith(">"):
        name = source[len(_SOURCE_PREFIX):-1]
        return name if name in FILES else None
    return None


def _checked(name: object) -> str:
    if not isinstance(name, str) or name not in FILES:
        raise ValueError(f"no embedded tokenizer named {name!r}; embedded: {', '.join(FILES)}")
    return name
