# Partial type stub of the internal compiled module plamo2.pyx (not public API): every name is Any.
from typing import Any

def __getattr__(name: str) -> Any: ...
