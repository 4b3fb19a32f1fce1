"""The llama.cpp pre-tokenizer names the conversion tests check beyond the fixture GGUFs
(test_convert_gguf_pre_names_to_tokenizer_json.py, test_convert_unicode_tables.py)."""
from __future__ import annotations

from toksmith.pretokenizers.llama_cpp import PRE_NAMES
from toksmith.writers.split_equivalence import ONIGURUMA_VERIFIED_PRE_TYPES

# Pre names of the fixture GGUFs (their regex lists are compared in test_convert_gguf_to_tokenizer_json.py).
FIXTURE_PRES = ("gpt-2", "llama-bpe", "falcon", "qwen2", "mpt", "refact", "starcoder", "deepseek-coder")


def one_name_per_regex_list() -> list[str]:
    """One byte-level pre name per regex list that no fixture GGUF has, among the pre types
    whose regexes are verified to read alike in Oniguruma."""
    covered = {PRE_NAMES[name].regexes for name in FIXTURE_PRES}
    chosen: dict[tuple[str, ...], str] = {}
    for name, pre in sorted(PRE_NAMES.items()):
        if pre.byte_encode and pre.pre_type in ONIGURUMA_VERIFIED_PRE_TYPES and pre.regexes not in covered:
            chosen.setdefault(pre.regexes, name)
    return sorted(chosen.values())
