# Type stub of the internal compiled module stage_sequences.pyx (not public API).
from typing import Iterable

from toksmith._core.normalizer import Normalizer
from toksmith._core.pretokenizer import PreTokenizer

class NormalizerSequence(Normalizer):
    members: tuple[Normalizer, ...]
    track_start: bool
    def __init__(self, members: Iterable[Normalizer], *, track_start: bool = False) -> None: ...

class PreTokenizerSequence(PreTokenizer):
    members: tuple[PreTokenizer, ...]
    def __init__(self, members: Iterable[PreTokenizer]) -> None: ...
