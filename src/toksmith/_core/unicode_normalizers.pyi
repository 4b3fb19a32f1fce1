# Partial type stub of the internal compiled module unicode_normalizers.pyx (not public API): every name is Any.
from typing import Any

def __getattr__(name: str) -> Any: ...
