# Partial type stub of the internal compiled module rank_file.pyx (not public API).
from typing import Any

class RankFileError(Exception):
    line: int
    detail: str
    def __init__(self, line: int, detail: str) -> None: ...

def parse_rank_file(data: bytes) -> list[bytes | None]: ...
def __getattr__(name: str) -> Any: ...
