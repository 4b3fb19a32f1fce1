# Type stub of the internal compiled module graphemes.pyx (not public API).
CATEGORY_NAMES: tuple[str, ...]
INCB_LINKER: int
INCB_EXTEND: int

def char_props(ch: str) -> int: ...
def grapheme_clusters(text: str | bytes) -> list: ...
