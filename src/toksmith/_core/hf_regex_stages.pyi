# Type stub of the internal compiled module hf_regex_stages.pyx (not public API).
from toksmith._core.linear_regex import LinearRegex
from toksmith._core.normalizer import Normalizer
from toksmith._core.pretokenizer import PreTokenizer

SPLIT_REMOVED: int
SPLIT_ISOLATED: int
SPLIT_MERGED_WITH_PREVIOUS: int
SPLIT_MERGED_WITH_NEXT: int
SPLIT_CONTIGUOUS: int

class HfSplit(PreTokenizer):
    regex: LinearRegex
    behavior: int
    invert: bool
    def __init__(self, regex: LinearRegex, behavior: int, invert: bool) -> None: ...

class HfReplace(Normalizer):
    regex: LinearRegex
    content: bytes
    def __init__(self, regex: LinearRegex, content: bytes) -> None: ...
    def starts_late(self, text: bytes) -> bool: ...
