"""The keys a converted vocab-only GGUF shares, in the order llama.cpp's converter writes them.

convert_hf_to_gguf.py --vocab-only: GGUFWriter writes general.architecture first;
prepare_metadata adds general.type and general.name, then general.quantization_version,
then set_vocab the tokenizer.ggml.* keys, ending with SpecialVocab.add_to_gguf's merges,
special ids and add_*_token flags.

>>> [e.key for e in header_entries("llama", "tiny")]
['general.architecture', 'general.type', 'general.name', 'general.quantization_version']
"""
from __future__ import annotations

import os

from toksmith.spec import TokenizerSpec
from toksmith.vocab import SpecialIds
from toksmith.writers.gguf_binary import Entry, GgufValue, ValueType

# Parity: gguf-py constants.py GGML_QUANT_VERSION (prepare_metadata writes it).
GGML_QUANT_VERSION = 2
# Parity: gguf-py SpecialVocab.special_token_types, the order add_to_gguf writes ids in.
SPECIAL_ROLES = ("bos", "eos", "unk", "sep", "pad", "cls", "mask")
# Parity: gguf-py constants.py Keys.Tokenizer (sic: "seperator").
SPECIAL_ID_KEYS = {
    "bos": "tokenizer.ggml.bos_token_id", "eos": "tokenizer.ggml.eos_token_id",
    "unk": "tokenizer.ggml.unknown_token_id", "sep": "tokenizer.ggml.seperator_token_id",
    "pad": "tokenizer.ggml.padding_token_id", "cls": "tokenizer.ggml.cls_token_id",
    "mask": "tokenizer.ggml.mask_token_id",
}


def model_name(spec: TokenizerSpec) -> str:
    """general.name: the source file's name without its suffix (its folder's for a tokenizer.json),
    as the converter falls back to the model folder's name."""
    path = spec.source.rstrip("/\\")
    base = os.path.basename(path)
    if base.startswith("tokenizer.json") and os.path.basename(os.path.dirname(path)):
        return os.path.basename(os.path.dirname(path))
    return base.split(".")[0] or base or "tokenizer"


def header_entries(architecture: str, name: str) -> list[Entry]:
    """general.* keys of a converted vocab-only file (Parity: ModelBase.prepare_metadata)."""
    return [Entry("general.architecture", GgufValue.string(architecture)),
            Entry("general.type", GgufValue.string("model")),
            Entry("general.name", GgufValue.string(name)),
            Entry("general.quantization_version", GgufValue.scalar(ValueType.UINT32, GGML_QUANT_VERSION))]


def string_entry(key: str, text: str | bytes) -> Entry:
    return Entry(key, GgufValue.string(text))


def bool_entry(key: str, value: bool) -> Entry:
    return Entry(key, GgufValue.scalar(ValueType.BOOL, bool(value)))


def u32_entry(key: str, value: int) -> Entry:
    return Entry(key, GgufValue.scalar(ValueType.UINT32, value))


def special_id_entries(ids: dict[str, int | None]) -> list[Entry]:
    """tokenizer.ggml.<role>_token_id of each role given (None: not written), in SpecialVocab's order."""
    return [u32_entry(SPECIAL_ID_KEYS[role], ids[role]) for role in SPECIAL_ROLES if ids.get(role) is not None]


def special_ids_of(special: SpecialIds) -> dict[str, int | None]:
    return dict(special.__dict__)


def add_token_entries(add_bos: bool | None, add_eos: bool | None, add_sep: bool | None = None) -> list[Entry]:
    """tokenizer.ggml.add_{bos,eos,sep}_token (None: not written), as SpecialVocab.add_to_gguf."""
    return [bool_entry(f"tokenizer.ggml.add_{role}_token", value)
            for role, value in (("bos", add_bos), ("eos", add_eos), ("sep", add_sep)) if value is not None]
