# Type stub of the internal compiled module spm_bpe_trainer.pyx (not public API).
from typing import Any

def bpe_merges(words: Any, n_merges: int, max_piece_length: int, split_by_unicode_script: bool,
               split_by_number: bool, split_by_whitespace: bool, split_digits: bool,
               treat_whitespace_as_suffix: bool, allow_whitespace_only_pieces: bool, threads: int = 1) -> list[bytes]: ...
