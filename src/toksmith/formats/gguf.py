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
from toksmith._core.wire import GGUFType, WireFormatError, parse_gguf_metadata
from toksmith.decoders.sentencepiece import SentencePieceDecoderSpec
from toksmith.errors import ModelFormatError, UnsupportedModelError
from toksmith.formats.bounded_read import read_limits, size_text
from toksmith.formats.llama_cpp_attributes import token_attributes
from toksmith.pretokenizers.llama_cpp import PRE_NAMES, PreType
from toksmith.normalizers.charsmap import CharsMapNormalizerSpec
from toksmith.spec import (Algorithm, ByteLevelSpec, FileFields, FileFormat, GgufBpeModel, LoadOptions, ReferenceRules,
                           TokenizerSpec)
from toksmith.vocab import ByteLevelVocab, MergeOrder, SpecialIds, TokenType, Vocab, first_repeated

# tokenizer.ggml.model values llama.cpp knows; every one with a vocabulary is read here:
# "llama" (SPM) and "t5" (UGM) below, "bert" (WPM, formats/gguf_wordpiece.py), "rwkv"
# (formats/rwkv.py), "plamo2" (formats/gguf_plamo2.py) and the BPE ones (models/byte_level.py).
KNOWN_TOKENIZER_MODELS = ("llama", "gpt2", "gemma4", "whitespace", "hybriddna", "bert", "t5", "rwkv",
                          "plamo2", "none", "no_vocab")
# Parity: llama_vocab::impl::load: LLAMA_VOCAB_TYPE_NONE, a model file without a tokenizer.
NO_VOCAB_TOKENIZER_MODELS = ("none", "no_vocab")
# llama.cpp's BPE vocab type (models/byte_level.py builds each one's session).
BYTE_LEVEL_TOKENIZER_MODELS = ("gpt2", "gemma4", "whitespace", "hybriddna")

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
    return _read_metadata(path)[0]


def _read_metadata(path: str | os.PathLike) -> tuple[dict[str, object], dict[str, int], bytes]:
    """(values, GGUF value types, `_without_tensors` bytes) of the file at `path`, checked as
    gguf.cpp checks them. Only the file's first `read_limits.max_gguf_metadata_bytes` are
    memory-mapped (header, metadata and tensor infos come first): the tensor data of a
    100 GB model is never mapped or read."""
    limit = read_limits.max_gguf_metadata_bytes
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise ModelFormatError(path, "file is empty")
        mapped = mmap.mmap(f.fileno(), min(size, limit), access=mmap.ACCESS_READ)
    try:
        with memoryview(mapped) as view:
            return _checked_metadata(view, os.fspath(path), file_size=size)
    finally:
        mapped.close()


def _checked_metadata(data, source: str, file_size: int | None = None) -> tuple[dict[str, object], dict[str, int], bytes]:
    """(values, GGUF value types, `_without_tensors` bytes) of GGUF bytes, checked as
    gguf.cpp checks them; `file_size`: the size of the file `data` is the first part of."""
    try:
        _version, _tensors, values, types, metadata_end = parse_gguf_metadata(data)
    except WireFormatError as e:
        if file_size is not None and file_size > len(data):
            # the header, metadata or tensor infos may go on past the part read
            raise ModelFormatError(source, f"{e}, within the first {size_text(len(data))} of this "
                                           f"{size_text(file_size)} file: all toksmith reads of a GGUF (its "
                                           "header, metadata and tensor infos; no real tokenizer needs more). "
                                           "If they go on past that, raise "
                                           "toksmith.read_limits.max_gguf_metadata_bytes") from None
        raise ModelFormatError(source, str(e)) from None
    # Parity: gguf.cpp gguf_init_from_file_impl: "key ... is empty".
    if "" in values:
        raise ModelFormatError(source, "a metadata key is empty")
    # Parity: gguf.cpp: general.alignment must be a UINT32 power of 2.
    if "general.alignment" in values:
        alignment = values["general.alignment"]
        if types["general.alignment"] != GGUFType.UINT32:
            raise ModelFormatError(source, f"general.alignment has GGUF type {types['general.alignment']}, "
                                           f"expected UINT32 ({GGUFType.UINT32})")
        if alignment == 0 or alignment & (alignment - 1):
            raise ModelFormatError(source, f"general.alignment is {alignment}, expected a power of 2")
    return values, types, _without_tensors(data, metadata_end)


def read_gguf(path: str | os.PathLike, *, pre: str | None = None) -> TokenizerSpec:
    """Read the tokenizer of a GGUF file; `pre` overrides a BPE vocabulary's tokenizer.ggml.pre."""
    return _spec_of_metadata(*_read_metadata(path), os.fspath(path), pre=pre)


def parse_gguf(data: bytes, source: str = "<bytes>", *, pre: str | None = None) -> TokenizerSpec:
    """Read the tokenizer of a GGUF file's bytes (all of them, or `_without_tensors`' part)."""
    return _spec_of_metadata(*_checked_metadata(data, source), source, pre=pre)


def _without_tensors(data, metadata_end: int) -> bytes:
    """GGUF bytes cut after the key/value metadata (at `metadata_end`), tensor count set to 0.

    A valid GGUF of its own (llama.cpp's reader needs no padding when there are
    no tensors) with the whole tokenizer and no weights: what a pickled
    tokenizer carries instead of a multi-gigabyte model.
    """
    cut = bytearray(data[:metadata_end])
    cut[8:16] = bytes(8)   # u64 tensor count, after the magic and the u32 version
    return bytes(cut)


def _spec_of_metadata(meta: dict[str, object], types: dict[str, int], payload: bytes,
                      source: str, *, pre: str | None = None) -> TokenizerSpec:
    """The tokenizer described by GGUF metadata (values and their GGUF types by key);
    `payload` is what a pickle of it carries (`_without_tensors`)."""
    # Parity: llama_model_loader reads general.architecture (a STRING) and
    # llama_model_create refuses a file without one ("unknown model architecture: ''");
    # the GGUF spec requires the key. Its value is not checked against llama.cpp's list
    # of architectures: a tokenizer does not depend on it.
    if "general.architecture" not in meta:
        raise ModelFormatError(source, "no general.architecture key: the GGUF spec requires one "
                                       "(llama.cpp refuses such a file)")
    if types["general.architecture"] != GGUFType.STRING:
        raise ModelFormatError(source, f"general.architecture has GGUF type {types['general.architecture']}, "
                                       f"expected STRING ({GGUFType.STRING})")
    model = meta.get("tokenizer.ggml.model")
    if model is None:
        raise ModelFormatError(source, "no tokenizer.ggml.model key: this GGUF has no tokenizer")
    if not isinstance(model, str):
        raise ModelFormatError(source, f"tokenizer.ggml.model is {type(model).__name__}, expected a string")
    if model not in KNOWN_TOKENIZER_MODELS:
        raise ModelFormatError(source, f"tokenizer.ggml.model is {model!r}, expected one of "
                                       f"{list(KNOWN_TOKENIZER_MODELS)}")
    if model in BYTE_LEVEL_TOKENIZER_MODELS:
        from toksmith.models.byte_level import tokenizer_spec_of_byte_level
        byte_level = byte_level_spec_of_metadata(meta, types, payload, source, pre=pre)
        return tokenizer_spec_of_byte_level(byte_level, LoadOptions(pre=pre))
    if pre is not None:
        raise UnsupportedModelError(source, f"pre={pre!r} applies to BPE vocabularies only; this GGUF's "
                                            f"tokenizer.ggml.model is {model!r}")
    if model == "bert":
        from toksmith.formats.gguf_wordpiece import read_wordpiece_vocabulary
        return read_wordpiece_vocabulary(meta, types, source, payload)
    if model == "rwkv":
        from toksmith.formats.rwkv import rwkv_gguf_spec
        return rwkv_gguf_spec(meta, types, payload, source)
    if model == "plamo2":
        from toksmith.formats.gguf_plamo2 import plamo2_spec_of_metadata
        return plamo2_spec_of_metadata(meta, types, payload, source)
    if model in NO_VOCAB_TOKENIZER_MODELS:
        raise UnsupportedModelError(source, f"tokenizer.ggml.model is {model!r}: this GGUF has no vocabulary "
                                            f"(llama.cpp loads such a model without a tokenizer)")
    return _read_sentencepiece_family(meta, types, source, model, payload)


def _read_sentencepiece_family(meta: dict[str, object], value_types: dict[str, int], source: str,
                               model: str, payload: bytes) -> TokenizerSpec:
    """A "llama" (SPM) or "t5" (UGM) vocabulary."""
    tokens = meta.get("tokenizer.ggml.tokens")
    # String arrays come back from the parser as lists of bytes, all of a kind.
    if not isinstance(tokens, list) or not tokens or not isinstance(tokens[0], bytes):
        raise ModelFormatError(source, "tokenizer.ggml.tokens must be a non-empty array of strings")
    n = len(tokens)
    # Parity: llama_vocab::impl::load reads each token with gguf_get_arr_str as a C
    # string, so a text ends at its first NUL; an empty text becomes "[EMPTY_<id>]".
    if not all(tokens) or b"\0" in b"".join(tokens):   # one C-speed pass over 250k tokens
        tokens = [t.split(b"\0", 1)[0] for t in tokens]
        tokens = [t if t else f"[EMPTY_{i}]".encode() for i, t in enumerate(tokens)]
    scores = _number_array(meta, "tokenizer.ggml.scores", n, source, default=0.0, typecodes="fi")
    types = token_types(meta, n, source)
    problem = first_invalid_piece(tokens, types, allow_empty_reserved=True, require_utf8=False)
    if problem is not None:
        raise ModelFormatError(source, f"token {problem[0]} {problem[1]}")
    by_text = ids_by_text(tokens, source)
    special = _special_ids(meta, value_types, n, DEFAULT_SPECIAL[model], source)
    _check_key_types(meta, value_types, source)
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
    end_ids = end_of_generation_ids(meta, special["eos"], n)
    return TokenizerSpec(
        source=source, file_format=FileFormat.GGUF, algorithm=ALGORITHMS[model],
        rules=ReferenceRules.LLAMA_CPP, vocab=vocab, normalizer=normalizer,
        decoder=SentencePieceDecoderSpec(add_dummy_prefix=normalizer.add_dummy_prefix,
                                         remove_extra_whitespaces=normalizer.remove_extra_whitespaces),
        # sentencepiece's rules (when chosen) fall back to bytes when byte pieces exist
        byte_fallback=TokenType.BYTE in types,
        add_bos=_flag(meta, "tokenizer.ggml.add_bos_token", add_bos, source),
        add_eos=_flag(meta, "tokenizer.ggml.add_eos_token", add_eos, source),
        token_attributes=tuple(token_attributes(tokens, types, meta, end_ids, by_text)),
        source_data=payload,
        file_fields=gguf_file_fields(meta, value_types),
    )


# Keys llama.cpp reads with llama_model_loader::get_key, which refuses another GGUF type.
TYPED_KEYS = {
    **{f"tokenizer.ggml.{name}_token_id": GGUFType.UINT32
       for name in ("eot", "eom", "fim_pre", "fim_suf", "fim_mid", "fim_pad", "fim_rep", "fim_sep",
                    "prefix", "suffix", "middle")},
    "general.name": GGUFType.STRING,   # Parity: llama_model_base::load_hparams
    "tokenizer.ggml.pre": GGUFType.STRING, "tokenizer.ggml.token_type_count": GGUFType.UINT32,
    **{f"tokenizer.ggml.{name}": GGUFType.BOOL
       for name in ("add_bos_token", "add_eos_token", "add_sep_token", "add_space_prefix",
                    "remove_extra_whitespaces")},
}


def ids_by_text(texts: list[bytes], source: str) -> dict[bytes, int]:
    """{text: id} of a GGUF vocabulary's token texts.

    Parity: llama_vocab::impl::load asserts id_to_token.size() == token_to_id.size(): a text
    given twice is refused."""
    by_text = dict(zip(texts, range(len(texts))))
    if len(by_text) != len(texts):
        twice = first_repeated(texts)
        raise ModelFormatError(source, f"tokenizer.ggml.tokens[{twice}] {texts[twice]!r} is a text "
                                       f"already defined (llama.cpp refuses such a vocabulary)")
    return by_text


def gguf_file_fields(meta: dict[str, object], value_types: dict[str, int]) -> FileFields:
    """Every metadata key of the file, in file order, with its GGUF type (for writers)."""
    return FileFields(gguf_metadata={key: (value_types[key], value) for key, value in meta.items()})


def end_of_generation_ids(meta: dict[str, object], eos: int | None, n: int) -> dict[str, int | None]:
    """The EOS id and the file's EOT and EOM ids (None: absent or outside the `n` tokens), which
    `token_attributes` marks as ends of generation."""
    ids: dict[str, int | None] = {"eos": eos}
    for role in ("eot", "eom"):
        value = meta.get(f"tokenizer.ggml.{role}_token_id")
        ids[role] = value if isinstance(value, int) and 0 <= value < n else None
    return ids


def _check_key_types(meta: dict[str, object], value_types: dict[str, int], source: str) -> None:
    """Parity: llama_model_loader::get_key: "key ... has wrong type"."""
    for key, expected in TYPED_KEYS.items():
        if key in meta and value_types[key] != expected:
            raise ModelFormatError(source, f"{key} has GGUF type {value_types[key]}, expected "
                                           f"{GGUFType(expected).name} ({expected})")


def _flag(meta: dict[str, object], key: str, default: bool, source: str) -> bool:
    value = meta.get(key, default)
    if not isinstance(value, bool):
        raise ModelFormatError(source, f"{key} is {value!r}, expected a bool")
    return value


def _number_array(meta, key, n, source, default, typecodes):
    """The first `n` values of a numeric array key (llama.cpp accepts longer arrays)."""
    value = meta.get(key)
    if value is None:
        return array("f" if isinstance(default, float) else "i", [default]) * n
    if not isinstance(value, array) or value.typecode not in typecodes:
        found = f"typecode {value.typecode!r}" if isinstance(value, array) else type(value).__name__
        expected = " or ".join({"f": "FLOAT32", "i": "INT32"}[c] for c in typecodes)
        raise ModelFormatError(source, f"{key} must be an array of {expected}, found {found}")
    if len(value) < n:
        raise ModelFormatError(source, f"{key} has {len(value)} values, fewer than the {n} tokens")
    return value[:n]


def token_types(meta: dict[str, object], n: int, source: str) -> bytes:
    """tokenizer.ggml.token_type of the first `n` tokens (NORMAL when absent), one byte each.

    Parity: llama_vocab::impl::load maps a token type outside 0..6 to UNDEFINED."""
    values = _number_array(meta, "tokenizer.ggml.token_type", n, source, default=TokenType.NORMAL, typecodes="i")
    if min(values, default=0) < 0 or max(values, default=0) > TokenType.BYTE:
        return bytes(t if 0 <= t <= TokenType.BYTE else TokenType.UNDEFINED for t in values)
    return bytes(values.tolist())


# ---------------------------------------------------------------------- byte-level BPE vocabularies

# llama.cpp's default special ids per BPE tokenizer model (overridden by the file's keys).
BPE_DEFAULT_SPECIAL = {
    GgufBpeModel.GPT2: {"bos": 11, "eos": 11},
    GgufBpeModel.HYBRIDDNA: {"bos": 11, "eos": 11},
    GgufBpeModel.WHITESPACE: {"bos": 11, "eos": 11},
    GgufBpeModel.GEMMA4: {},
}


def read_byte_level_gguf(path: str | os.PathLike, *, pre: str | None = None) -> ByteLevelSpec:
    """Read the byte-level BPE vocabulary of a GGUF file (tokenizer.ggml.model gpt2, gemma4,
    whitespace or hybriddna); `pre` overrides tokenizer.ggml.pre.

    >>> spec = read_byte_level_gguf("ggml-vocab-qwen2.gguf", pre="qwen35")   # doctest: +SKIP
    """
    return byte_level_spec_of_metadata(*_read_metadata(path), os.fspath(path), pre=pre)


def byte_level_spec_of_metadata(meta: dict[str, object], value_types: dict[str, int], payload: bytes,
                                source: str, pre: str | None = None) -> ByteLevelSpec:
    """The byte-level BPE vocabulary described by GGUF metadata (see read_byte_level_gguf)."""
    name = meta.get("tokenizer.ggml.model")
    try:
        model = GgufBpeModel(name)
    except ValueError:
        raise ModelFormatError(source, f"tokenizer.ggml.model is {name!r}, not a BPE vocabulary "
                                       f"({', '.join(m.value for m in GgufBpeModel)})") from None
    _check_key_types(meta, value_types, source)
    stored_pre = meta.get("tokenizer.ggml.pre", "")
    # Parity: llama_vocab::impl::load: a "gemma4" model always takes the gemma4 pre-tokenizer.
    if model is GgufBpeModel.GEMMA4:
        stored_pre = "gemma4"
    if pre is None:
        pre = stored_pre
    texts = _token_texts(meta, source)
    n = len(texts)
    merges = meta.get("tokenizer.ggml.merges")
    if merges is None:
        # Parity: llama_vocab::impl::load: "cannot find tokenizer merges in model file" (kimi-k2 excepted)
        if pre != "kimi-k2" or model is GgufBpeModel.GEMMA4:
            raise ModelFormatError(source, "no tokenizer.ggml.merges key: a BPE vocabulary needs its merges")
        merges = []
    elif value_types["tokenizer.ggml.merges"] != GGUFType.ARRAY or not isinstance(merges, list) \
            or (merges and not isinstance(merges[0], bytes)):
        raise ModelFormatError(source, "tokenizer.ggml.merges must be an array of strings")
    types = token_types(meta, n, source)
    _number_array(meta, "tokenizer.ggml.scores", n, source, default=0.0, typecodes="fi")   # checked only
    by_text = ids_by_text(texts, source)
    special = _special_ids(meta, value_types, n, BPE_DEFAULT_SPECIAL[model], source)
    # Parity: llama_vocab::impl::load: what the pre type decides about the model stage (the
    # pre-tokenizer table holds it; an unknown name is refused when the pipeline is built).
    pre_spec = PRE_NAMES.get(pre)
    raw_utf8 = pre_spec is not None and not pre_spec.byte_encode
    vocab = ByteLevelVocab(
        texts=texts, merges=merges, merge_order=MergeOrder.MERGE_LIST, byte_unicode=not raw_utf8,
        utf8_symbols=raw_utf8, ignore_merges=pre_spec is not None and pre_spec.ignore_merges,
        whole_newline_runs=pre_spec is not None and pre_spec.pre_type is PreType.GEMMA4,
        llama_byte_fallback=not raw_utf8, hex_byte_fallback=raw_utf8, types=types,
        special=SpecialIds(**special))
    end_ids = end_of_generation_ids(meta, special["eos"], n)
    return ByteLevelSpec(
        source=source, file_format=FileFormat.GGUF, vocab=vocab, pre=pre, gguf_model=model,
        add_bos=_optional_flag(meta, "tokenizer.ggml.add_bos_token", source),
        add_eos=_optional_flag(meta, "tokenizer.ggml.add_eos_token", source),
        add_sep=_optional_flag(meta, "tokenizer.ggml.add_sep_token", source),
        lowercase=_optional_flag(meta, "tokenizer.ggml.normalizer.lowercase", source),
        token_attributes=tuple(token_attributes(texts, types, meta, end_ids, by_text)),
        source_data=payload)


def _token_texts(meta: dict[str, object], source: str) -> list[bytes]:
    """tokenizer.ggml.tokens as llama.cpp reads them."""
    tokens = meta.get("tokenizer.ggml.tokens")
    if tokens is None:
        raise ModelFormatError(source, "no tokenizer.ggml.tokens key: this GGUF has no vocabulary")
    # String arrays come back from the parser as lists of bytes, all of a kind.
    if not isinstance(tokens, list) or not tokens or not isinstance(tokens[0], bytes):
        raise ModelFormatError(source, "tokenizer.ggml.tokens must be a non-empty array of strings")
    # Parity: llama_vocab::impl::load reads each token with gguf_get_arr_str as a C
    # string, so a text ends at its first NUL; an empty text becomes "[EMPTY_<id>]".
    if not all(tokens) or b"\0" in b"".join(tokens):   # one C-speed pass over 250k tokens
        tokens = [t.split(b"\0", 1)[0] for t in tokens]
        tokens = [t if t else f"[EMPTY_{i}]".encode() for i, t in enumerate(tokens)]
    return tokens


def _special_ids(meta: dict[str, object], value_types: dict[str, int], n: int,
                 defaults: dict[str, int], source: str) -> dict[str, int | None]:
    """Special token ids by role, as llama_vocab::impl::load settles them."""
    special = {}
    for role, key in SPECIAL_ID_KEYS.items():
        # Parity: llama_vocab::impl::load: a default outside the vocabulary is dropped;
        # an id from the file must be a UINT32 (llama_model_loader::get_key) and one
        # outside the vocabulary leaves the default in place.
        value = defaults.get(role)
        if value is not None and value >= n:
            value = None
        if key in meta:
            if value_types[key] != GGUFType.UINT32:
                raise ModelFormatError(source, f"{key} has GGUF type {value_types[key]}, "
                                               f"expected UINT32 ({GGUFType.UINT32})")
            if meta[key] < n:
                value = meta[key]
        special[role] = value
    return special


def _optional_flag(meta: dict[str, object], key: str, source: str) -> bool | None:
    """A BOOL key's value, or None when absent (the pre-tokenizer's default applies)."""
    value = meta.get(key)
    if value is not None and not isinstance(value, bool):
        raise ModelFormatError(source, f"{key} is {value!r}, expected a bool")
    return value


def llama_cpp_token_pieces(spec: ByteLevelSpec, *, special: bool,
                           escape_whitespaces: bool = False) -> list[bytes]:
    """What llama.cpp's token_to_piece prints for each token of a BPE vocabulary (lstrip 0).

    Parity: llama_vocab::impl::token_to_piece, case LLAMA_VOCAB_TYPE_BPE:
    CONTROL and UNKNOWN tokens print nothing unless `special`; CONTROL, UNKNOWN and
    USER_DEFINED tokens print their text as stored; NORMAL tokens print llama_decode_text of
    it (or, for the escape_whitespaces pre types gemma4 and sarvam-moe, the text with U+2581
    made a space); BYTE tokens print the byte their "<0xXX>" text names; other types nothing.
    hybriddna: k-mer texts lose their U+E000 marker (llama_vocab::impl::load).

    >>> pieces = llama_cpp_token_pieces(read_byte_level_gguf("ggml-vocab-gpt-2.gguf"), special=False)  # doctest: +SKIP
    """
    from toksmith._core.byte_unicode import llama_decode_texts
    from toksmith.special_tokens import TokenAttr
    texts = list(spec.vocab.texts)
    if spec.gguf_model is GgufBpeModel.HYBRIDDNA:
        texts = without_kmer_markers(texts)
    normal, byte = int(TokenAttr.NORMAL), int(TokenAttr.BYTE)
    attrs = spec.token_attributes or [normal] * len(texts)
    hidden = int(TokenAttr.CONTROL | TokenAttr.UNKNOWN)
    as_stored = hidden | int(TokenAttr.USER_DEFINED)
    # Every text is decoded as a NORMAL token's (one pass in C); the few tokens of other
    # attributes are fixed up after.
    if escape_whitespaces:
        pieces = [t.replace("\u2581".encode(), b" ") for t in texts]
    else:
        pieces = llama_decode_texts(texts)
    for i in [i for i, attr in enumerate(attrs) if attr != normal]:
        attr = attrs[i]
        if attr & as_stored:
            pieces[i] = texts[i] if special or not attr & hidden else b""
        elif not attr & normal:
            pieces[i] = bytes([_strtol_hex(texts[i][3:5])]) if attr & byte else b""
    return pieces


def _strtol_hex(text: bytes) -> int:
    """Parity: strtol(text, NULL, 16) of token_to_byte, cast to a byte (leading hex digits only)."""
    digits = b""
    for c in text:
        if chr(c) not in "0123456789abcdefABCDEF":
            break
        digits += bytes([c])
    return int(digits, 16) & 0xFF if digits else 0


def without_kmer_markers(texts: list[bytes]) -> list[bytes]:
    """Parity: llama_vocab::impl::load (hybriddna): from the token after "<oov>", a text ending
    in U+E000 loses it."""
    marker = "\ue000".encode()
    try:
        start = texts.index(b"<oov>") + 1
    except ValueError:
        return texts
    return texts[:start] + [t[:-len(marker)] if len(t) > len(marker) and t.endswith(marker) else t
                            for t in texts[start:]]
