"""llama.cpp as the reference tokenizer for GGUF files, through llama-cpp-python's
low-level ctypes API (module ``llama_cpp``), with a vocab-only model load.

Each method is exactly one llama.cpp call (``llama_tokenize``, ``llama_detokenize``,
``llama_token_to_piece``), retried once with the size llama.cpp asks for when the
buffer is too small. llama.cpp's logging is switched off on first load.

Example::

    from tests import llama_cpp_reference
    vocab = llama_cpp_reference.load_vocab(fixtures / "gguf/ggml-vocab-llama-spm.gguf")
    vocab.tokenize(b"Hello world", add_special=True, parse_special=False)    # [1, 15043, 3186]
    vocab.detokenize([15043, 3186], remove_special=True, unparse_special=False)     # b"Hello world"
    vocab.detokenize([1, 15043, 3186], remove_special=True, unparse_special=False)  # b" Hello world" (sic)
    vocab.token_to_piece(15043, lstrip=0, special=False)                     # b" Hello"

``load_vocab`` caches one loaded vocab per path for the whole session; models are
freed at interpreter exit (or by ``close()``).
"""
from __future__ import annotations

import atexit
import ctypes
import functools
import os

import llama_cpp as _lc


@_lc.llama_log_callback
def _no_log(level, text, user_data):  # module-level: the C side keeps only the pointer
    pass


_initialized = False


def _init() -> None:
    global _initialized
    if not _initialized:
        _lc.llama_log_set(_no_log, ctypes.c_void_p(0))
        _lc.llama_backend_init()
        _initialized = True


class LlamaCppVocab:
    """A vocab-only llama.cpp model loaded from a GGUF file."""

    def __init__(self, path: str | os.PathLike):
        _init()
        self.path = os.fspath(path)
        params = _lc.llama_model_default_params()
        params.vocab_only = True
        self._model = _lc.llama_model_load_from_file(self.path.encode(), params)
        if not self._model:
            raise ValueError(f"llama.cpp could not load {self.path}")
        self._vocab = _lc.llama_model_get_vocab(self._model)
        self.n_tokens = _lc.llama_vocab_n_tokens(self._vocab)
        atexit.register(self.close)

    def close(self) -> None:
        if self._model:
            _lc.llama_model_free(self._model)
            self._model = self._vocab = None

    def tokenize(self, text: bytes, add_special: bool, parse_special: bool) -> list[int]:
        size = len(text) + 8
        for _ in range(2):
            buf = (_lc.llama_token * size)()
            n = _lc.llama_tokenize(self._vocab, text, len(text), buf, size, add_special, parse_special)
            if n >= 0:
                return buf[:n]
            size = -n
        raise RuntimeError(f"llama_tokenize failed ({n}) on {text[:40]!r}")

    def detokenize(self, ids: list[int], remove_special: bool, unparse_special: bool) -> bytes:
        tokens = (_lc.llama_token * len(ids))(*ids)
        size = 8 * len(ids) + 16
        for _ in range(2):
            buf = ctypes.create_string_buffer(size)
            n = _lc.llama_detokenize(self._vocab, tokens, len(ids), buf, size, remove_special, unparse_special)
            if n >= 0:
                return buf.raw[:n]
            size = -n
        raise RuntimeError(f"llama_detokenize failed ({n})")

    def token_to_piece(self, token: int, lstrip: int, special: bool) -> bytes:
        size = 64
        for _ in range(2):
            buf = ctypes.create_string_buffer(size)
            n = _lc.llama_token_to_piece(self._vocab, token, buf, size, lstrip, special)
            if n >= 0:
                return buf.raw[:n]
            size = -n
        raise RuntimeError(f"llama_token_to_piece failed ({n}) for id {token}")


@functools.lru_cache(maxsize=None)
def _load(path: str) -> LlamaCppVocab:
    return LlamaCppVocab(path)


def load_vocab(path: str | os.PathLike) -> LlamaCppVocab:
    """The session-wide LlamaCppVocab for a GGUF path (loaded once)."""
    return _load(os.path.abspath(os.fspath(path)))
