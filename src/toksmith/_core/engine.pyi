# Type stub of the compiled engine (engine.pyx): what mypy and IDEs see.
# The public methods reach users through toksmith.Tokenizer, which subclasses Engine.
from collections.abc import Iterable
from enum import IntEnum
from typing import Any

from toksmith._core.detokenizer import StreamDecoder, TokenIds

Text = str | bytes | bytearray | memoryview

class Segmenter(IntEnum):
    SEGMENT_UNIGRAM = 0
    SEGMENT_SCORE_BPE = 1

class Engine:
    """Compiled tables of one tokenizer. Use `toksmith.load` to get one."""

    def encode(self, text: Text, *, add_special: bool = True, parse_special: bool = False) -> list[int]: ...
    def encode_batch(self, texts: Iterable[Text], *, add_special: bool = True, parse_special: bool = False,
                     num_threads: int | None = None) -> list[list[int]]: ...
    def tokenize(self, text: Text, *, add_special: bool = False, parse_special: bool = False) -> list[str]: ...
    def decode(self, ids: TokenIds, *, skip_special: bool = False) -> str: ...
    def stream_decoder(self, *, skip_special: bool = False) -> StreamDecoder: ...
    # Load-time configuration, called by toksmith.models.*
    def _configure_vocab(self, n_pieces: int, types: bytes, *, unk_id: int, bos_id: int, eos_id: int,
                         add_bos: bool, add_eos: bool, byte_ids: list[int], detokenizer: Any,
                         splitter: Any) -> None: ...
    def _configure_unigram(self, pieces: list[bytes], scores: list[float], *, rules: Any, normalizer: Any,
                           byte_fallback: bool) -> None: ...
    def _configure_score_bpe(self, bpe: Any, *, rules: Any, normalizer: Any, escape_prefix_space: bool,
                             byte_fallback: bool) -> None: ...
