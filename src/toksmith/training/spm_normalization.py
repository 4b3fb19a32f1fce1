"""sentencepiece's named normalization rules and their precompiled charsmaps.

`NormalizationRule` names the rules spm_train's `--normalization_rule_name` takes; the
charsmaps (the XOR-compressed double array + replacement strings sentencepiece embeds,
builder.cc GetPrecompiledCharsMap) ship in `toksmith/data/spm_<rule>.charsmap.gz`, taken
from sentencepiece 0.2.3 by tools/gen_spm_charsmaps.py; "identity" has none.

>>> NormalizationRule.parse("nmt_nfkc") is NormalizationRule.NMT_NFKC
True
>>> len(charsmap(NormalizationRule.IDENTITY)), len(charsmap(NormalizationRule.NFKC))
(0, 240008)
"""
from __future__ import annotations

import functools
import gzip
from enum import Enum
from importlib import resources


class NormalizationRule(Enum):
    """spm_train --normalization_rule_name."""

    NMT_NFKC = "nmt_nfkc"          # NFKC plus NMT's whitespace/control handling (the default)
    NFKC = "nfkc"
    NMT_NFKC_CF = "nmt_nfkc_cf"    # nmt_nfkc with Unicode case folding
    NFKC_CF = "nfkc_cf"
    IDENTITY = "identity"          # no normalization

    @classmethod
    def parse(cls, value: NormalizationRule | str) -> NormalizationRule:
        """The rule named `value` (a member or its name); unknown names raise ValueError."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            for rule in cls:
                if rule.value == value:
                    return rule
        raise ValueError(f"unknown normalization rule {value!r}; known: {[r.value for r in cls]}")


@functools.lru_cache(maxsize=None)
def charsmap(rule: NormalizationRule) -> bytes:
    """The precompiled charsmap sentencepiece writes for `rule` (b"" for identity)."""
    if rule is NormalizationRule.IDENTITY:
        return b""
    data = resources.files("toksmith").joinpath("data", f"spm_{rule.value}.charsmap.gz").read_bytes()
    return gzip.decompress(data)
