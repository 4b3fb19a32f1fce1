"""SentencePiece-style normalization: precompiled charsmap, then whitespace rules.

>>> spec = CharsMapNormalizerSpec(name="identity")
>>> spec.add_dummy_prefix, spec.escape_whitespaces
(True, True)
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, repr=False)
class CharsMapNormalizerSpec:
    """sentencepiece's NormalizerSpec (defaults are the .proto defaults)."""

    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    # the dummy space goes after the text (TrainerSpec.treat_whitespace_as_suffix, which
    # sentencepiece's normalizer reads with the NormalizerSpec)
    treat_whitespace_as_suffix: bool = False

    def __repr__(self) -> str:
        return f"<CharsMapNormalizerSpec {self.describe()}>"

    def describe(self) -> str:
        flags = [f for f in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces",
                             "treat_whitespace_as_suffix")
                 if getattr(self, f)]
        charsmap = f"charsmap {len(self.precompiled_charsmap)} B" if self.precompiled_charsmap else "no charsmap"
        return f"{self.name or 'unnamed'} ({charsmap}; {', '.join(flags) or 'no whitespace rules'})"
