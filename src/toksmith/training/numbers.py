"""The trainers' numeric and flag options, checked against what the files and the core
can hold: a clear ValueError or TypeError naming the option, never an OverflowError from
the core, a MemoryError from a table sized by the option, or a silent conversion.

>>> checked_int("vocab_size", 8000, 1, MAX_VOCAB_SIZE)
8000
>>> checked_int("num_sub_iterations", 11, 1, 10)
Traceback (most recent call last):
...
ValueError: num_sub_iterations must be at most 10, not 11
"""
from __future__ import annotations

INT32_MAX = (1 << 31) - 1
INT64_MAX = (1 << 63) - 1

# Token ids are int32 in toksmith's core and in each format a trained tokenizer is saved
# as (sentencepiece's TrainerSpec.vocab_size and ModelProto ids, GGUF's token arrays).
MAX_VOCAB_SIZE = INT32_MAX
VOCAB_SIZE_LIMIT = "token ids are int32 in every format a trained tokenizer is saved as"
# Counts are int64 in the trainers (tokenizers' BpeTrainer takes a u64 min_frequency).
COUNT_LIMIT = "counts are int64"


def checked_int(name: str, value: object, low: int, high: int, why: str = "") -> int:
    """`value`, an int (not a bool) in [low, high]; TypeError or ValueError naming `name`
    otherwise (`why`: what the upper bound stands for)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__} {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, not {value}")
    if value > high:
        reason = f" ({why})" if why else ""
        raise ValueError(f"{name} must be at most {high}{reason}, not {value}")
    return value


def checked_vocab_size(value: object, low: int = 1) -> int:
    """`vocab_size` in [low, MAX_VOCAB_SIZE]."""
    return checked_int("vocab_size", value, low, MAX_VOCAB_SIZE, VOCAB_SIZE_LIMIT)


def checked_flag(name: str, value: object) -> bool:
    """`value`, a bool (1, "yes" and None are refused: a flag says True or False)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, not {type(value).__name__} {value!r}")
    return value
