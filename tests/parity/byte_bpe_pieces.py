"""llama.cpp's byte-level BPE pre-tokenizer regexes per vocabulary, whether a piece stays whole
under them, and a GGUF copy with some metadata replaced (test_byte_bpe_llama_cpp.py,
test_byte_bpe_long_pieces.py)."""
from __future__ import annotations

from array import array

import regex

from tests.parity.model_mutations import KV, T, write_gguf_bytes
from toksmith._core.wire import parse_gguf_metadata

# Parity: llama-vocab.cpp llm_tokenizer_bpe::llm_tokenizer_bpe regex_exprs, per pre type.
LLAMA3 = [r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"]
GPT2 = [r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"]
QWEN2 = [r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"]
FALCON = [r"[\p{P}\$\+<=>\^~\|`]+", r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)",
          r"[0-9][0-9][0-9]"]
STARCODER = [r"\p{N}", r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"]
DEEPSEEK_CODER = ["[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", "[一-龥ࠀ-一가-퟿]+", r"\p{N}"]

VOCABS = {"gpt-2": GPT2, "llama-bpe": LLAMA3, "qwen2": QWEN2, "falcon": FALCON, "starcoder": STARCODER,
          "refact": STARCODER, "mpt": GPT2, "deepseek-coder": DEEPSEEK_CODER}


def whole_under(piece: str, exprs: list[str]) -> bool:
    """llama.cpp's unicode_regex_split keeps a piece whole when each regex matches all of it or nothing."""
    for expr in exprs:
        spans = [m.span() for m in regex.finditer(expr, piece)]
        if spans and spans != [(0, len(piece))]:
            return False
    return True


def gguf_copy(src, out, **replace) -> None:
    """A copy of a GGUF file's metadata with some values replaced (struct writer of model_mutations)."""
    data = open(src, "rb").read()
    _version, _tensors, values, types, _end = parse_gguf_metadata(data)
    kvs = []
    for key, value in {**values, **replace}.items():
        vtype = T(types.get(key, T.ARRAY))
        sub = None
        if isinstance(value, list):
            vtype, sub = T.ARRAY, T.STRING
        elif isinstance(value, array):
            vtype, sub = T.ARRAY, {"i": T.INT32, "f": T.FLOAT32}[value.typecode]
            value = value.tolist()
        kvs.append(KV(key, value, vtype, sub))
    write_gguf_bytes(kvs, out)
