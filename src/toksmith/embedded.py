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


# Parity: tiktoken 0.14.0 tiktoken/model.py MODEL_TO_ENCODING and MODEL_PREFIX_TO_ENCODING:
# the encoding each OpenAI model uses (exact names first, then prefixes in this order).
MODEL_ENCODINGS = {
    "o1": "o200k_base", "o3": "o200k_base", "o4-mini": "o200k_base", "gpt-5": "o200k_base",
    "gpt-4.1": "o200k_base", "gpt-4o": "o200k_base", "gpt-4": "cl100k_base", "gpt-3.5-turbo": "cl100k_base",
    "gpt-3.5": "cl100k_base", "gpt-35-turbo": "cl100k_base", "davinci-002": "cl100k_base",
    "babbage-002": "cl100k_base", "text-embedding-ada-002": "cl100k_base",
    "text-embedding-3-small": "cl100k_base", "text-embedding-3-large": "cl100k_base",
    "text-davinci-003": "p50k_base", "text-davinci-002": "p50k_base", "text-davinci-001": "r50k_base",
    "text-curie-001": "r50k_base", "text-babbage-001": "r50k_base", "text-ada-001": "r50k_base",
    "davinci": "r50k_base", "curie": "r50k_base", "babbage": "r50k_base", "ada": "r50k_base",
    "code-davinci-002": "p50k_base", "code-davinci-001": "p50k_base", "code-cushman-002": "p50k_base",
    "code-cushman-001": "p50k_base", "davinci-codex": "p50k_base", "cushman-codex": "p50k_base",
    "text-davinci-edit-001": "p50k_edit", "code-davinci-edit-001": "p50k_edit",
    "text-similarity-davinci-001": "r50k_base", "text-similarity-curie-001": "r50k_base",
    "text-similarity-babbage-001": "r50k_base", "text-similarity-ada-001": "r50k_base",
    "text-search-davinci-doc-001": "r50k_base", "text-search-curie-doc-001": "r50k_base",
    "text-search-babbage-doc-001": "r50k_base", "text-search-ada-doc-001": "r50k_base",
    "code-search-babbage-code-001": "r50k_base", "code-search-ada-code-001": "r50k_base",
    "gpt2": "gpt2", "gpt-2": "gpt2",
}
MODEL_PREFIX_ENCODINGS = {
    "o1-": "o200k_base", "o3-": "o200k_base", "o4-mini-": "o200k_base", "gpt-5": "o200k_base",
    "gpt-4.5-": "o200k_base", "gpt-4.1-": "o200k_base", "chatgpt-4o-": "o200k_base", "gpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base", "gpt-3.5-turbo-": "cl100k_base", "gpt-35-turbo-": "cl100k_base",
    "gpt-oss-": "o200k_harmony", "ft:gpt-4o": "o200k_base", "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base", "ft:davinci-002": "cl100k_base", "ft:babbage-002": "cl100k_base",
}


def encoding_name_for_model(model: str) -> str | None:
    """The encoding OpenAI's `model` uses, as tiktoken.encoding_name_for_model gives it;
    None for a name it does not know."""
    if model in MODEL_ENCODINGS:
        return MODEL_ENCODINGS[model]
    return next((encoding for prefix, encoding in MODEL_PREFIX_ENCODINGS.items() if model.startswith(prefix)),
                None)


def suggestion_for(name: str) -> str | None:
    """What `load(name)` may have meant when no file `name` exists: the embedded tokenizers
    whose names are like it ("o200k" -> o200k_base), or the encoding of an OpenAI model
    ("gpt-4o" -> o200k_base); None when nothing is like it.

    >>> suggestion_for("gpt-4o")
    "gpt-4o is an OpenAI model, which uses the o200k_base encoding: load('o200k_base')"
    """
    import difflib
    encoding = encoding_name_for_model(name) or encoding_name_for_model(name.lower())
    if encoding in FILES:
        return f"{name} is an OpenAI model, which uses the {encoding} encoding: load({encoding!r})"
    if encoding is not None:
        return (f"{name} is an OpenAI model, which uses the {encoding} encoding; it is not embedded: load its "
                f"rank file, toksmith.load(PATH, encoding={encoding!r})")
    key = name.lower()
    similar = [n for n in FILES if key and (n.startswith(key) or key in n)]
    similar += [n for n in difflib.get_close_matches(key, FILES, n=3, cutoff=0.6) if n not in similar]
    if not similar:
        return None
    return f"did you mean the embedded {' or '.join(repr(n) for n in similar)}? (embedded: {', '.join(FILES)})"


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
