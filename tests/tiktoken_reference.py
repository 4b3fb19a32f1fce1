"""tiktoken as the reference for ``.tiktoken`` rank files, built from the fixture files.

``encoding(name, fixtures)`` runs tiktoken's own constructor for OpenAI's encoding `name`
(``tiktoken_ext.openai_public``: its pattern, special tokens and the sha256 it expects of
the rank file) with the file read from the fixtures instead of downloaded. Never call
``tiktoken.get_encoding``: it downloads.

Example::

    enc = encoding("cl100k_base", fixtures)
    enc.encode_ordinary("Hello world")              # [9906, 1917]
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public

# The rank file each OpenAI encoding reads.
RANK_FILES = {"r50k_base": "r50k_base", "p50k_base": "p50k_base", "p50k_edit": "p50k_base",
              "cl100k_base": "cl100k_base", "o200k_base": "o200k_base", "o200k_harmony": "o200k_base"}


@functools.cache
def encoding(name: str, fixtures: Path) -> tiktoken.Encoding:
    def load_from_fixtures(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        path = fixtures / "tiktoken" / url.rsplit("/", 1)[1]
        if not path.is_file():
            raise FileNotFoundError(f"fixture file {path} is missing (TOKSMITH_FIXTURES is set)")
        saved = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = ""   # read the file itself, no cache copy
        try:
            return tiktoken.load.load_tiktoken_bpe(str(path), expected_hash=expected_hash)
        finally:
            if saved is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = saved

    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = load_from_fixtures
    try:
        spec = openai_public.ENCODING_CONSTRUCTORS[name]()
    finally:
        openai_public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)
