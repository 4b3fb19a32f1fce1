# Type stub of the internal compiled module hf_unigram.pyx (not public API).
from toksmith._core.model import Model

class HfUnigram(Model):
    unk_id: int
    byte_fallback: bool
    def __init__(self, pieces: list[bytes], scores: list[float], unk_id: int, byte_fallback: bool) -> None: ...
