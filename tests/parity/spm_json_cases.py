"""The cases of the .model <-> tokenizer.json parity tests and of the writer-route property
test: a source .model in sentencepiece with what the excuses of
tests/parity/excuses/conversions_spm_json_tiktoken.py look at (decided from the source model
and the references, never from the file under test's own normalizer), a line of it, and the
first pieces of its ids for decode excuses."""
from __future__ import annotations

from functools import cached_property

import numpy
import sentencepiece as spm
import tokenizers
from sentencepiece import sentencepiece_model_pb2


class SourceModel:
    """The source .model in its reference, and what the excuses look at for a mismatching line;
    `tokenizer` is the tokenizers side of the comparison (the written json, or the source json)."""

    def __init__(self, model_file, tokenizer: tokenizers.Tokenizer):
        self.sp = spm.SentencePieceProcessor(model_file=str(model_file))
        self.tokenizer = tokenizer
        proto = sentencepiece_model_pb2.ModelProto()
        proto.ParseFromString(model_file.read_bytes())
        charsmap = proto.normalizer_spec.precompiled_charsmap
        # the charsmap alone: sentencepiece with its whitespace rules off; tokenizers' own
        # Precompiled of the same bytes (not the written file's normalizer)
        for rule in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"):
            setattr(proto.normalizer_spec, rule, False)
        self.charsmap_only = spm.SentencePieceProcessor(model_proto=proto.SerializeToString())
        self.precompiled = tokenizers.normalizers.Precompiled(list(charsmap)) if charsmap else None
        self.control_ids = {i for i in range(self.sp.get_piece_size()) if self.sp.is_control(i)}
        normal = [self.sp.get_score(i) for i in range(self.sp.get_piece_size())
                  if not (self.sp.is_control(i) or self.sp.is_unknown(i) or self.sp.is_byte(i) or self.sp.is_unused(i))]
        # Parity: sentencepiece 0.2.3 unigram_model.cc, kUnkPenalty: <unk> scores min_score - 10
        self.unk_score = numpy.float32(min(normal) - 10.0)

    @cached_property
    def reserved_ids(self) -> set[int]:
        """CONTROL and UNKNOWN pieces: sentencepiece keeps them out of its lattice."""
        return {i for i in range(self.sp.get_piece_size()) if self.sp.is_control(i) or self.sp.is_unknown(i)}

    def ids_by_both(self, text: str) -> tuple[list[int], list[int]]:
        """sentencepiece's ids of `text` on the source and tokenizers' on `tokenizer`."""
        return self.sp.encode(text), self.tokenizer.encode(text, add_special_tokens=False).ids

    def piece(self, token: int) -> str:
        return self.sp.id_to_piece(token)

    def text_of(self, ids: list[int]) -> str:
        return "".join(map(self.piece, ids))

    def float32_score(self, ids: list[int]) -> numpy.float32:
        total = numpy.float32(0)
        for token in ids:
            total += self.unk_score if self.sp.is_unknown(token) else numpy.float32(self.sp.get_score(token))
        return total


class SourceLine:
    """A corpus line of a SourceModel, for messages and excuses (attributes computed on demand)."""

    def __init__(self, model: SourceModel, text: str):
        self.model, self.text = model, text
        self.control_ids, self.piece = model.control_ids, model.piece
        self.reserved_ids, self.ids_by_both = model.reserved_ids, model.ids_by_both
        self.text_of, self.float32_score = model.text_of, model.float32_score

    @cached_property
    def sentencepiece_charsmap_text(self) -> str:
        return self.model.charsmap_only.normalize(self.text)

    @cached_property
    def tokenizers_charsmap_text(self) -> str:
        return self.model.precompiled.normalize_str(self.text) if self.model.precompiled else self.text

    @cached_property
    def tokenizers_ids_of_sentencepiece_normalized(self) -> list[int]:
        return self.model.tokenizer.encode(self.sentencepiece_charsmap_text, add_special_tokens=True).ids

    def __repr__(self) -> str:
        return repr(self.text)


class SentencepieceIds:
    """Ids of a line, for decode messages and the excuse that looks at the first two pieces."""

    def __init__(self, text: str, ids: list[int], piece):
        self.text, self.first_pieces = text, [piece(i) for i in ids[:2]]

    def __repr__(self) -> str:
        return repr(self.text)
