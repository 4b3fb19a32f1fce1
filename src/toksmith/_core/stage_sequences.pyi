# Type stub of the internal compiled module stage_sequences.pyx (not public API).
from typing import Iterable

from toksmith._core.normalizer import Normalizer
from toksmith._core.pretokenizer import PreTokenizer

class NormalizerSequence(Normalizer):
    members: tuple[Normalizer, ...]
    def __init__(self, members: Iterable[Normalizer]) -> None: ...

class PreTokenizerSequence(PreTokenizer):
    members: tuple[PreTokenizer, ...]
    def __init__(self, members: Iterable[PreTokenizer]) -> None: ...
