"""The parts of a sentencepiece ModelProto a writer fills in, and their encoding.

A source format's module (spm_from_gguf, spm_from_hf) builds `ModelProtoParts`;
`encode_model_proto` turns it into the bytes of a .model, writing fields in
field-number order as sentencepiece's C++ serializer does.

>>> parts = ModelProtoParts(pieces=[b"<unk>", b"a"], scores=[0.0, -1.0],
...                         types=bytes([TokenType.UNKNOWN, TokenType.NORMAL]),
...                         trainer=TrainerFields(model_type=ModelType.UNIGRAM),
...                         normalizer=CharsMapNormalizerSpec(name="identity"))
>>> from sentencepiece import sentencepiece_model_pb2 as pb
>>> m = pb.ModelProto.FromString(encode_model_proto(parts))
>>> m.pieces[1].piece, m.pieces[1].score, m.trainer_spec.model_type
('a', -1.0, 1)
"""
from __future__ import annotations

from dataclasses import dataclass, field

from toksmith.formats.sentencepiece import ModelType
from toksmith.normalizers.charsmap import CharsMapNormalizerSpec
from toksmith.vocab import TokenType
from toksmith._core.wire import encode_piece_messages
from toksmith.writers.protobuf_wire import float_field, int32_field, raw_field, string_field

# Field numbers of sentencepiece_model.proto (sentencepiece 0.2.3).
PIECE_TEXT, PIECE_SCORE, PIECE_TYPE = 1, 2, 3
MODEL_PIECES, MODEL_TRAINER_SPEC, MODEL_NORMALIZER_SPEC, MODEL_DENORMALIZER_SPEC = 1, 2, 3, 5
TRAINER_MODEL_TYPE, TRAINER_VOCAB_SIZE, TRAINER_BYTE_FALLBACK = 3, 4, 35
TRAINER_UNK_ID, TRAINER_BOS_ID, TRAINER_EOS_ID, TRAINER_PAD_ID = 40, 41, 42, 43
TRAINER_UNK_SURFACE = 44
TRAINER_UNK_PIECE, TRAINER_BOS_PIECE, TRAINER_EOS_PIECE, TRAINER_PAD_PIECE = 45, 46, 47, 48
NORMALIZER_NAME, NORMALIZER_CHARSMAP = 1, 2
NORMALIZER_ADD_DUMMY_PREFIX, NORMALIZER_REMOVE_EXTRA_WHITESPACES, NORMALIZER_ESCAPE_WHITESPACES = 3, 4, 5


@dataclass(frozen=True)
class TrainerFields:
    """The TrainerSpec fields that change encoding: the model type, byte fallback and the
    special pieces (sentencepiece finds bos/eos/pad by piece text; the ids are written
    for tools that read them). None: the field is not written (the .proto default holds)."""

    model_type: ModelType
    vocab_size: int | None = None
    byte_fallback: bool = False
    unk_id: int | None = None
    bos_id: int | None = None
    eos_id: int | None = None
    pad_id: int | None = None
    unk_piece: bytes | None = None
    bos_piece: bytes | None = None
    eos_piece: bytes | None = None
    pad_piece: bytes | None = None
    unk_surface: bytes | None = None

    def encode(self) -> bytes:
        out = [int32_field(TRAINER_MODEL_TYPE, self.model_type)]
        if self.vocab_size is not None:
            out.append(int32_field(TRAINER_VOCAB_SIZE, self.vocab_size))
        if self.byte_fallback:
            out.append(int32_field(TRAINER_BYTE_FALLBACK, 1))
        for number, value in ((TRAINER_UNK_ID, self.unk_id), (TRAINER_BOS_ID, self.bos_id),
                              (TRAINER_EOS_ID, self.eos_id), (TRAINER_PAD_ID, self.pad_id)):
            if value is not None:
                out.append(int32_field(number, value))
        for number, text in ((TRAINER_UNK_SURFACE, self.unk_surface), (TRAINER_UNK_PIECE, self.unk_piece),
                             (TRAINER_BOS_PIECE, self.bos_piece), (TRAINER_EOS_PIECE, self.eos_piece),
                             (TRAINER_PAD_PIECE, self.pad_piece)):
            if text is not None:
                out.append(string_field(number, text))
        return b"".join(out)


def encode_normalizer(spec: CharsMapNormalizerSpec) -> bytes:
    """A NormalizerSpec message with every field written (no reliance on .proto defaults);
    the charsmap also when empty, as sentencepiece's trainer writes an "identity" normalizer."""
    out = [string_field(NORMALIZER_NAME, spec.name.encode()),
           string_field(NORMALIZER_CHARSMAP, spec.precompiled_charsmap),
           int32_field(NORMALIZER_ADD_DUMMY_PREFIX, spec.add_dummy_prefix),
            int32_field(NORMALIZER_REMOVE_EXTRA_WHITESPACES, spec.remove_extra_whitespaces),
            int32_field(NORMALIZER_ESCAPE_WHITESPACES, spec.escape_whitespaces)]
    return b"".join(out)


@dataclass(frozen=True)
class ModelProtoParts:
    """What a .model holds. Either `trainer`/`normalizer` (built from another format), or
    `raw_fields`: a .model's own non-piece fields as (number, wire type, value), written
    back in their file order.

    scores_omitted: ids whose piece is written without a score field (sentencepiece's
    older trainers left it out on meta pieces; a reader sees 0.0 either way).
    """

    pieces: list[bytes]
    scores: list[float]
    types: bytes
    trainer: TrainerFields | None = None
    normalizer: CharsMapNormalizerSpec | None = None
    denormalizer: CharsMapNormalizerSpec | None = None
    raw_fields: tuple[tuple[int, int, object], ...] = ()
    scores_omitted: frozenset[int] = field(default_factory=frozenset)


def encode_piece(piece: bytes, score: float, token_type: int, with_score: bool = True) -> bytes:
    """One ModelProto.SentencePiece: text, score, and the type unless NORMAL (the default).
    (A file's pieces are written by the native `encode_piece_messages`, which the tests
    hold to this function's bytes.)

    >>> encode_piece(b"a", -1.0, TokenType.NORMAL).hex()
    '0a016115000080bf'
    """
    out = string_field(PIECE_TEXT, piece)
    if with_score:
        out += float_field(PIECE_SCORE, score)
    if token_type != TokenType.NORMAL:
        out += int32_field(PIECE_TYPE, token_type)
    return out


def encode_model_proto(parts: ModelProtoParts) -> bytes:
    """The serialized ModelProto of `parts`."""
    # the pieces natively, each as encode_piece writes it inside a MODEL_PIECES field
    out = [encode_piece_messages(list(parts.pieces), list(parts.scores), bytes(parts.types), parts.scores_omitted)]
    if parts.trainer is not None:
        out.append(string_field(MODEL_TRAINER_SPEC, parts.trainer.encode()))
    if parts.normalizer is not None:
        out.append(string_field(MODEL_NORMALIZER_SPEC, encode_normalizer(parts.normalizer)))
    if parts.denormalizer is not None:
        out.append(string_field(MODEL_DENORMALIZER_SPEC, encode_normalizer(parts.denormalizer)))
    out += [raw_field(number, wire, value) for number, wire, value in parts.raw_fields]
    return b"".join(out)
