# Type stub of the internal compiled module unigram_seeds.pyx (not public API).
from array import array
from typing import Any

MAX_CHUNK_BYTES: int

def best_candidates(chunk: bytes, offsets: Any, lengths: Any, scores: Any, keep: int) -> list[int]: ...
def valid_pieces(pieces: list[bytes], max_piece_length: int, split_by_unicode_script: bool,
                 split_by_number: bool, split_by_whitespace: bool, split_digits: bool,
                 treat_whitespace_as_suffix: bool, allow_whitespace_only_pieces: bool) -> bytearray: ...
def seed_substrings(sentences: Any, seed_size: int, vocab_size: int, max_piece_length: int,
                    split_by_unicode_script: bool, split_by_number: bool, split_by_whitespace: bool,
                    split_digits: bool, treat_whitespace_as_suffix: bool, allow_whitespace_only_pieces: bool,
                    min_freq_alpha: float = 0.0, power: float = 1.0, threads: int = 1) -> tuple[list[bytes], array]: ...
