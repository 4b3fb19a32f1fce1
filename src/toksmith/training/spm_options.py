"""The options of sentencepiece's trainers (spm_train's names and defaults), checked.

>>> spec = SpmTrainerSpec(vocab_size=8000)
>>> spec.character_coverage, spec.normalization_rule_name
(0.9995, <NormalizationRule.NMT_NFKC: 'nmt_nfkc'>)
>>> SpmTrainerSpec(vocab_size=8000, shrinking_factor=0.2)
Traceback (most recent call last):
...
ValueError: shrinking_factor must be in [0.5, 0.95], not 0.2

Parity: sentencepiece 0.2.3 sentencepiece_model.proto (TrainerSpec, NormalizerSpec
defaults) and trainer_interface.cc VerifySpec (the ranges).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from toksmith.normalizers.charsmap import CharsMapNormalizerSpec
from toksmith.training.numbers import INT32_MAX, INT64_MAX, checked_flag, checked_int, checked_vocab_size
from toksmith.training.spm_normalization import NormalizationRule, charsmap

DEFAULT_UNK_SURFACE = " \u2047 "

# Parity: trainer_interface.cc VerifySpec CHECK_RANGE
RANGES = {"character_coverage": (0.98, 1.0), "max_sentencepiece_length": (1, 512),
          "num_sub_iterations": (1, 10), "shrinking_factor": (0.5, 0.95),
          "max_sentence_length": (10, 1073741824)}

# The options that are flags (each must be a bool).
FLAGS = ("shuffle_input_sentence", "split_by_unicode_script", "split_by_number", "split_by_whitespace",
         "split_digits", "treat_whitespace_as_suffix", "allow_whitespace_only_pieces", "byte_fallback",
         "vocabulary_output_piece_score", "hard_vocab_limit", "add_dummy_prefix", "remove_extra_whitespaces",
         "escape_whitespaces")


@dataclass(frozen=True)
class SpmTrainerSpec:
    """TrainerSpec and NormalizerSpec fields the trainers read (see spm_train --help)."""

    vocab_size: int = 8000
    character_coverage: float = 0.9995
    input_sentence_size: int = 0
    shuffle_input_sentence: bool = True
    seed_sentencepiece_size: int = 1000000
    seed_sentencepieces_file: str = ""          # Unigram only (VerifySpec)
    shrinking_factor: float = 0.75
    max_sentence_length: int = 4192
    num_sub_iterations: int = 2
    max_sentencepiece_length: int = 16
    split_by_unicode_script: bool = True
    split_by_number: bool = True
    split_by_whitespace: bool = True
    split_digits: bool = False
    pretokenization_delimiter: str = ""
    treat_whitespace_as_suffix: bool = False
    allow_whitespace_only_pieces: bool = False
    control_symbols: tuple[str, ...] = ()
    user_defined_symbols: tuple[str, ...] = ()
    required_chars: str = ""
    byte_fallback: bool = False
    vocabulary_output_piece_score: bool = True
    hard_vocab_limit: bool = True
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"
    unk_surface: str = DEFAULT_UNK_SURFACE
    normalization_rule_name: NormalizationRule = NormalizationRule.NMT_NFKC
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = field(default=True, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "normalization_rule_name", NormalizationRule.parse(self.normalization_rule_name))
        for name in ("control_symbols", "user_defined_symbols"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise TypeError(f"{name} must be a list of str, not a str")
            value = tuple(value)
            for v in value:
                if not isinstance(v, str):
                    raise TypeError(f"{name} must hold str, not {type(v).__name__}")
            object.__setattr__(self, name, value)
        self._check()

    def _check(self) -> None:
        """Parity: trainer_interface.cc VerifySpec."""
        for name in ("vocab_size", "input_sentence_size", "seed_sentencepiece_size", "max_sentence_length",
                     "num_sub_iterations", "max_sentencepiece_length", "unk_id", "bos_id", "eos_id", "pad_id"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        for name in ("character_coverage", "shrinking_factor"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} must be a number, not {type(value).__name__}")
        for name in ("unk_piece", "bos_piece", "eos_piece", "pad_piece", "unk_surface", "required_chars",
                     "pretokenization_delimiter", "seed_sentencepieces_file"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a str, not {type(getattr(self, name)).__name__}")
        if self.vocab_size <= 0:
            raise ValueError(f"vocab_size must be > 0, not {self.vocab_size}")
        checked_vocab_size(self.vocab_size)
        # TrainerSpec: input_sentence_size is a uint64, seed_sentencepiece_size an int32
        checked_int("input_sentence_size", self.input_sentence_size, 0, INT64_MAX, "0: every sentence")
        checked_int("seed_sentencepiece_size", self.seed_sentencepiece_size, 0, INT32_MAX,
                    "an int32 in the .model's TrainerSpec")
        for name in ("unk_id", "bos_id", "eos_id", "pad_id"):
            checked_int(name, getattr(self, name), -1, INT32_MAX, "-1: no such piece")
        for name in FLAGS:
            checked_flag(name, getattr(self, name))
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if not low <= value <= high:
                raise ValueError(f"{name} must be in [{low}, {high}], not {value}")
        if not (self.input_sentence_size <= 0 or self.input_sentence_size > 100):
            raise ValueError(f"input_sentence_size must be 0 (all) or over 100, not {self.input_sentence_size}")
        for name in ("unk_piece", "bos_piece", "eos_piece", "pad_piece"):
            if not getattr(self, name):
                raise ValueError(f"{name} must not be empty")
        for text in self.control_symbols + self.user_defined_symbols:
            if not text:
                raise ValueError("control_symbols and user_defined_symbols must not hold an empty string")

    def normalizer_spec(self) -> CharsMapNormalizerSpec:
        """The NormalizerSpec the model is written with (name, charsmap, whitespace rules).
        Parity: sentencepiece_trainer.cc PopulateNormalizerSpec."""
        rule = self.normalization_rule_name
        return CharsMapNormalizerSpec(name=rule.value, precompiled_charsmap=charsmap(rule),
                                      add_dummy_prefix=self.add_dummy_prefix,
                                      remove_extra_whitespaces=self.remove_extra_whitespaces,
                                      escape_whitespaces=self.escape_whitespaces)
