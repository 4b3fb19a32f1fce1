"""GGUF files: the tokenizer stored in a GGUF model's metadata.

The file is memory-mapped and only its header and key/value section are
read, so loading the tokenizer of a multi-gigabyte model touches a few
megabytes. Example::

    >>> spec = read_gguf("model.gguf")   # doctest: +SKIP
"""
from __future__ import annotations

import mmap
import os
from array import array

from toksmith._core.pieces import first_invalid_piece
from toksmith._core.wire import WireFormatError, gguf_metadata_size, parse_gguf_metadata
from toksmith.decoders.sentencepiece import SentencePieceDecoderSpec
from toksmith.errors import ModelFormatError, UnsupportedModelError
from toksmith.formats.llama_cpp_attributes import token_attributes
from toksmith.normalizers.charsmap import CharsMapNormalizerSpec
from toksmith.spec import Algorithm, FileFormat, ReferenceRules, TokenizerSpec
from toksmith.vocab import SpecialIds, TokenType, Vocab

# tokenizer.ggml.model values llama.cpp knows; "llama" (SPM) and "t5" (UGM) are read so far.
KNOWN_TOKENIZER_MODELS = ("llama", "gpt2", "bert", "t5", "rwkv", "plamo2", "none", "no_vocab")
SUPPORTED_TOKENIZER_MODELS = ("llama", "t5")

SPECIAL_ID_KEYS = {
    "bos": "tokenizer.ggml.bos_token_id", "eos": "tokenizer.ggml.eos_token_id",
    "unk": "tokenizer.ggml.unknown_token_id", "pad": "tokenizer.ggml.padding_token_id",
    "sep": "tokenizer.ggml.seperator_token_id",   # sic: llama.cpp's spelling
    "mask": "tokenizer.ggml.mask_token_id",
}
# llama.cpp's defaults per tokenizer model (llama_vocab::impl::load).
DEFAULT_SPECIAL = {
    "llama": {"bos": 1, "eos": 2, "unk": 0, "pad": None, "sep": None, "mask": None},
    "t5": {"bos": None, "eos": 1, "unk": 2, "pad": 0, "sep": None, "mask": None},
}
DEFAULT_FLAGS = {   # add_space_prefix, add_bos, add_eos
    "llama": (True, True, False),
    "t5": (False, False, True),
}
ALGORITHMS = {"llama": Algorithm.SPM_BPE, "t5": Algorithm.UNIGRAM}


def read_gguf_metadata(path: str | os.PathLike) -> dict[str, object]:
    """Key/value metadata of a GGUF file (tensors are never read)."""
    with open(path, "rb") as f:
        try:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:
            raise ModelFormatError(path, "file is empty") from None
    try:
        with memoryview(mapped) as view:
            _version, _tensors, values, _types = parse_gguf_metadata(view)
        return values
    except WireFormatError as e:
        raise ModelFormatError(path, str(e)) from None
    finally:
        mapped.close()


def read_gguf(path: str | os.PathLike) -> TokenizerSpec:
    """Read the tokenizer of a GGUF file."""
    return _spec_of_metadata(read_gguf_metadata(path), os.fspath(path))


def parse_gguf(data: bytes, source: str = "<bytes>") -> TokenizerSpec:
    """Read the tokenizer of a GGUF file's bytes (all of them, or `gguf_without_tensors`' part)."""
    try:
        _version, _tensors, meta, _types = parse_gguf_metadata(data)
    except WireFormatError as e:
        raise ModelFormatError(source, str(e)) from None
    return _spec_of_metadata(meta, source)


def gguf_without_tensors(path: str | os.PathLike) -> bytes:
    """The GGUF file at `path` cut after its key/value metadata, with the tensor count set to 0.

    A valid GGUF of its own (llama.cpp's reader needs no padding when there are
    no tensors) with the whole tokenizer and no weights: what a pickled
    tokenizer carries instead of a multi-gigabyte model.
    """
    with open(path, "rb") as f:
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            with memoryview(mapped) as view:
                data = bytearray(view[:gguf_metadata_size(view)])
    data[8:16] = bytes(8)   # u64 tensor count, after the magic and the u32 version
    return bytes(data)


def _spec_of_metadata(meta: dict[str, object], source: str) -> TokenizerSpec:
    """The tokenizer described by GGUF metadata."""
    model = meta.get("tokenizer.ggml.model")
    if model is None:
        raise ModelFormatError(source, "no tokenizer.ggml.model key: this GGUF has no tokenizer")
    if not isinstance(model, str):
        raise ModelFormatError(source, f"tokenizer.ggml.model is {type(model).__name__}, expected a string")
    if model not in KNOWN_TOKENIZER_MODELS:
        raise ModelFormatError(source, f"tokenizer.ggml.model is {model!r}, expected one of "
                                       f"{list(KNOWN_TOKENIZER_MODELS)}")
    if model not in SUPPORTED_TOKENIZER_MODELS:
        raise UnsupportedModelError(source, f"GGUF tokenizer model {model!r} is not supported yet "
                                            f"(supported: {list(SUPPORTED_TOKENIZER_MODELS)})")
    return _read_sentencepiece_family(meta, source, model)


def _read_sentencepiece_family(meta: dict[str, object], source: str, model: str) -> TokenizerSpec:
    """A "llama" (SPM) or "t5" (UGM) vocabulary."""
    tokens = meta.get("tokenizer.ggml.tokens")
    # String arrays come back from the parser as lists of bytes, all of a kind.
    if not isinstance(tokens, list) or not tokens or not isinstance(tokens[0], bytes):
        raise ModelFormatError(source, "tokenizer.ggml.tokens must be a non-empty array of strings")
    n = len(tokens)
    if model == "llama" and not all(tokens):
        # Parity: llama.cpp renames an empty token to "[EMPTY_<id>]".
        tokens = [t if t else f"[EMPTY_{i}]".encode() for i, t in enumerate(tokens)]
    scores = _number_array(meta, "tokenizer.ggml.scores", n, source, default=0.0)
    token_types = _number_array(meta, "tokenizer.ggml.token_type", n, source, default=TokenType.NORMAL)
    if token_types.typecode not in "bBhHiIlLqQ":
        raise ModelFormatError(source, "tokenizer.ggml.token_type must be an integer array, "
                                       f"found typecode {token_types.typecode!r}")
    try:
        types = bytes(token_types.tolist())   # one byte per token; ValueError if outside 0..255
    except ValueError:
        types = None
    if types is None or max(types) > TokenType.BYTE:
        bad = next(i for i, t in enumerate(token_types) if not 0 <= t <= TokenType.BYTE)
        raise ModelFormatError(source, f"tokenizer.ggml.token_type[{bad}] is {token_types[bad]}, "
                                       f"expected 0..6")
    problem = first_invalid_piece(tokens, types, allow_empty_reserved=True, require_utf8=False)
    if problem is not None:
        raise ModelFormatError(source, f"token {problem[0]} {problem[1]}")
    if model == "llama" and len(set(tokens)) != n:
        raise ModelFormatError(source, "tokenizer.ggml.tokens holds the same text twice "
                                       "(llama.cpp refuses such a vocabulary)")
    special = {}
    for role, key in SPECIAL_ID_KEYS.items():
        value = meta.get(key, DEFAULT_SPECIAL[model][role])
        if value is not None and not (isinstance(value, int) and 0 <= value < n):
            if role == "unk":
                raise ModelFormatError(source, f"{key} is {value!r}, outside the {n}-token vocabulary")
            value = None
        special[role] = value
    if special["unk"] is None:
        raise ModelFormatError(source, "the vocabulary has no unknown token")

    charsmap = meta.get("tokenizer.ggml.precompiled_charsmap", array("B"))
    if not isinstance(charsmap, array) or charsmap.typecode not in "bB":
        raise ModelFormatError(source, "tokenizer.ggml.precompiled_charsmap must be an int8/uint8 array")
    space_prefix, add_bos, add_eos = DEFAULT_FLAGS[model]
    normalizer = CharsMapNormalizerSpec(
        name="precompiled" if len(charsmap) else "identity",
        precompiled_charsmap=charsmap.tobytes(),
        add_dummy_prefix=_flag(meta, "tokenizer.ggml.add_space_prefix", space_prefix, source),
        remove_extra_whitespaces=_flag(meta, "tokenizer.ggml.remove_extra_whitespaces", False, source),
        escape_whitespaces=True,
    )
    vocab = Vocab(pieces=tokens, scores=list(scores), types=types, special=SpecialIds(**special))
    end_ids = dict(eos=special["eos"])
    for role in ("eot", "eom"):
        value = meta.get(f"tokenizer.ggml.{role}_token_id")
        end_ids[role] = value if isinstance(value, int) and 0 <= value < n else None
    return TokenizerSpec(
        source=source, file_format=FileFormat.GGUF, algorithm=ALGORITHMS[model],
        rules=ReferenceRules.LLAMA_CPP, vocab=vocab, normalizer=normalizer,
        decoder=SentencePieceDecoderSpec(add_dummy_prefix=normalizer.add_dummy_prefix,
                                         remove_extra_whitespaces=normalizer.remove_extra_whitespaces),
        # sentencepiece's rules (when chosen) fall back to bytes when byte pieces exist
        byte_fallback=TokenType.BYTE in types,
        add_bos=_flag(meta, "tokenizer.ggml.add_bos_token", add_bos, source),
        add_eos=_flag(meta, "tokenizer.ggml.add_eos_token", add_eos, source),
        token_attributes=tuple(token_attributes(tokens, types, meta, end_ids)),
    )


def _flag(meta: dict[str, object], key: str, default: bool, source: str) -> bool:
    value = meta.get(key, default)
    if not isinstance(value, bool):
        raise ModelFormatError(source, f"{key} is {value!r}, expected a bool")
    return value


def _number_array(meta, key, n, source, default):
    value = meta.get(key)
    if value is None:
        return array("f" if isinstance(default, float) else "i", [default]) * n
    if not isinstance(value, array) or len(value) != n:
        found = f"{len(value)} values" if isinstance(value, (array, list)) else type(value).__name__
        raise ModelFormatError(source, f"{key} must be a numeric array of {n} values, found {found}")
    return value
