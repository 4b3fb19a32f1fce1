# Type stub of the internal compiled module pretok_metaspace.pyx (not public API).
from toksmith._core.pretokenizer import PreTokenizer

PREPEND_ALWAYS: int
PREPEND_FIRST: int
PREPEND_NEVER: int

class MetaspacePreTokenizer(PreTokenizer):
    prepend_scheme: int
    split_pieces: bool
    @property
    def replacement(self) -> str: ...
    def __init__(self, replacement: str, prepend_scheme: int, split: bool) -> None: ...
