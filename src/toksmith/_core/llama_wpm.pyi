# Partial type stub of the internal compiled module llama_wpm.pyx (not public API): every name is Any.
from typing import Any

def __getattr__(name: str) -> Any: ...
