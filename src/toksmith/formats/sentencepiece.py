"""SentencePiece `.model` files (a serialized sentencepiece.ModelProto).

Only the fields that change encoding or decoding are read; trainer-only
settings are ignored. Example::

    >>> spec = read_sentencepiece("spiece.model")   # doctest: +SKIP
    >>> spec.algorithm, len(spec.vocab)              # doctest: +SKIP
    (<Algorithm.UNIGRAM: 'unigram'>, 32000)
"""
from __future__ import annotations

import dataclasses
import math
import os
from enum import IntEnum

from toksmith._core.pieces import first_invalid_piece
from toksmith._core.wire import WireFormatError, parse_message, parse_model_proto
from toksmith.decoders.sentencepiece import DEFAULT_UNK_SURFACE, SentencePieceDecoderSpec
from toksmith.errors import ModelFormatError, UnsupportedModelError
from toksmith.formats.bounded_read import read_model_file
from toksmith.normalizers.charsmap import CharsMapNormalizerSpec
from toksmith.spec import Algorithm, FileFields, FileFormat, ReferenceRules, TokenizerSpec
from toksmith.models.sentencepiece_family import byte_piece_value
from toksmith.vocab import SpecialIds, TokenType, Vocab, first_repeated, indices_of_type


class ModelType(IntEnum):
    """TrainerSpec.model_type."""

    UNIGRAM = 1
    BPE = 2
    WORD = 3
    CHAR = 4


ALGORITHMS = {ModelType.UNIGRAM: Algorithm.UNIGRAM, ModelType.BPE: Algorithm.SPM_BPE}

# Field numbers of sentencepiece_model.proto.
MODEL_TRAINER_SPEC, MODEL_NORMALIZER_SPEC, MODEL_DENORMALIZER_SPEC = 2, 3, 5
TRAINER_MODEL_TYPE = 3
TRAINER_TREAT_WHITESPACE_AS_SUFFIX = 24
TRAINER_BYTE_FALLBACK = 35
TRAINER_UNK_SURFACE = 44
TRAINER_PIECES = {45: "unk", 46: "bos", 47: "eos", 48: "pad"}   # *_piece fields
NORMALIZER_FIELDS = {1: "name", 2: "precompiled_charsmap", 3: "add_dummy_prefix",
                     4: "remove_extra_whitespaces", 5: "escape_whitespaces"}
DEFAULT_SPECIAL_PIECES = {"unk": b"<unk>", "bos": b"<s>", "eos": b"</s>", "pad": b"<pad>"}
RESERVED_TYPES = (TokenType.UNKNOWN, TokenType.CONTROL, TokenType.BYTE)
NORMAL_TYPES = frozenset((TokenType.NORMAL, TokenType.USER_DEFINED, TokenType.UNUSED))
MAX_PIECE_BYTES = 8000   # Parity: sentencepiece model_interface.cc kMaxPieceSize


def read_sentencepiece(path: str | os.PathLike) -> TokenizerSpec:
    """Read a SentencePiece model file; raises `ModelFormatError` on malformed input."""
    return parse_sentencepiece(read_model_file(path), os.fspath(path))


def parse_sentencepiece(data: bytes, source: str = "<bytes>") -> TokenizerSpec:
    """Parse serialized ModelProto bytes (see `read_sentencepiece`)."""
    try:
        pieces, scores, types, others, unscored = parse_model_proto(data)
    except WireFormatError as e:
        if e.needed is not None and e.needed > len(data):
            # A field that runs past the end of the file: a download cut short.
            raise ModelFormatError(source, f"truncated at byte {e.offset} of {len(data)}: {e.reason} "
                                           f"(the file looks truncated)") from None
        raise ModelFormatError(source, f"not a valid SentencePiece model: {e}") from None
    try:
        # Repeated occurrences of a message field merge, as protobuf parsing does.
        fields: dict[int, bytes] = {}
        for field, wire, value in others:
            if wire == 2:
                fields[field] = fields.get(field, b"") + value
        trainer = _fields(parse_message(fields.get(MODEL_TRAINER_SPEC, b"")))
        normalizer = _fields(parse_message(fields.get(MODEL_NORMALIZER_SPEC, b"")))
        denormalizer = (_fields(parse_message(fields[MODEL_DENORMALIZER_SPEC]))
                        if MODEL_DENORMALIZER_SPEC in fields else None)
    except WireFormatError as e:
        raise ModelFormatError(source, f"not a valid SentencePiece model: {e}") from None
    if pieces and MODEL_TRAINER_SPEC not in fields and MODEL_NORMALIZER_SPEC not in fields:
        # sentencepiece writes trainer_spec and normalizer_spec after the pieces, so such a
        # file is one cut on a piece boundary (sentencepiece itself would load it).
        raise ModelFormatError(source, f"the file ends at byte {len(data)} of {len(data)} right after "
                                       f"piece {len(pieces) - 1}, with no trainer_spec or "
                                       f"normalizer_spec: the file looks truncated")
    if not pieces:
        raise ModelFormatError(source, "no pieces found: expected a SentencePiece ModelProto "
                                       "(field 1 repeated SentencePiece)")

    model_type = trainer.get(TRAINER_MODEL_TYPE, ModelType.UNIGRAM)
    if model_type not in ModelType._value2member_map_:
        raise ModelFormatError(source, f"trainer_spec.model_type is {model_type}, "
                                       f"expected one of {[m.value for m in ModelType]}")
    if model_type not in ALGORITHMS:
        raise UnsupportedModelError(
            source, f"SentencePiece {ModelType(model_type).name} models are not supported yet "
                    f"(supported: UNIGRAM, BPE)")

    byte_fallback = bool(trainer.get(TRAINER_BYTE_FALLBACK, 0))
    _validate_pieces(pieces, types, scores, byte_fallback, ModelType(model_type), source)
    special = _special_ids(pieces, types, trainer)
    vocab = Vocab(pieces=pieces, scores=scores, types=types, special=special)

    norm_spec = _normalizer_spec(normalizer, source)
    if trainer.get(TRAINER_TREAT_WHITESPACE_AS_SUFFIX, 0):
        # Parity: sentencepiece_processor.cc: Normalizer(normalizer_spec, trainer_spec)
        norm_spec = dataclasses.replace(norm_spec, treat_whitespace_as_suffix=True)
    denorm_spec = _normalizer_spec(denormalizer, source) if denormalizer else None
    if denorm_spec is not None and not denorm_spec.precompiled_charsmap:
        denorm_spec = None   # sentencepiece only denormalizes with a charsmap
    unk_surface = trainer.get(TRAINER_UNK_SURFACE, DEFAULT_UNK_SURFACE.encode())
    decoder = SentencePieceDecoderSpec(
        unk_surface=unk_surface.decode("utf-8", "replace"),
        add_dummy_prefix=norm_spec.add_dummy_prefix,
        remove_extra_whitespaces=norm_spec.remove_extra_whitespaces,
        denormalizer=denorm_spec,
    )
    return TokenizerSpec(
        source=source, file_format=FileFormat.SENTENCEPIECE, algorithm=ALGORITHMS[model_type],
        rules=ReferenceRules.SENTENCEPIECE, vocab=vocab, normalizer=norm_spec, decoder=decoder,
        byte_fallback=byte_fallback, source_data=bytes(data),
        file_fields=FileFields(sentencepiece_fields=tuple(others), sentencepiece_unscored=frozenset(unscored)),
        # sentencepiece's encode adds neither BOS nor EOS unless asked per call.
        add_bos=False, add_eos=False,
    )


def _fields(fields: list[tuple[int, int, object]]) -> dict[int, object]:
    """Last value of each field number (protobuf's rule for repeated scalars)."""
    return {number: value for number, _wire, value in fields}


def _normalizer_spec(fields: dict[int, object], source: str) -> CharsMapNormalizerSpec:
    values: dict[str, object] = {}
    for number, name in NORMALIZER_FIELDS.items():
        if number in fields:
            values[name] = fields[number]
    name = values.get("name", b"")
    charsmap = values.get("precompiled_charsmap", b"")
    if not isinstance(name, bytes) or not isinstance(charsmap, bytes):
        raise ModelFormatError(source, "normalizer_spec name/precompiled_charsmap must be "
                                       "length-delimited fields")
    return CharsMapNormalizerSpec(
        name=name.decode("utf-8", "replace"),
        precompiled_charsmap=charsmap,
        add_dummy_prefix=bool(values.get("add_dummy_prefix", True)),
        remove_extra_whitespaces=bool(values.get("remove_extra_whitespaces", True)),
        escape_whitespaces=bool(values.get("escape_whitespaces", True)),
    )


def _validate_pieces(pieces: list[bytes], types: bytes, scores: list[float], byte_fallback: bool,
                     model_type: ModelType, source: str) -> None:
    """Refuse what sentencepiece's loader refuses, with its reason.

    Parity: sentencepiece ModelInterface::InitializePieces (and the unigram
    Model constructor for scores), in their order of checks.
    """
    # Parity: InitializePieces kMaxPieceSize: no piece of 8000 bytes or more.
    longest = max(map(len, pieces))
    if longest >= MAX_PIECE_BYTES:
        index = next(i for i, p in enumerate(pieces) if len(p) == longest)
        raise ModelFormatError(source, f"piece {index} is {longest} bytes long, sentencepiece refuses "
                                       f"pieces of {MAX_PIECE_BYTES} bytes or more (piece is too long)")
    problem = first_invalid_piece(pieces, types)
    if problem is not None:
        index, reason = problem
        raise ModelFormatError(source, f"piece {index} {pieces[index]!r} {reason}")
    if TokenType.UNDEFINED in types:
        index = types.index(TokenType.UNDEFINED)
        raise ModelFormatError(source, f"piece {index} has type 0, expected 1..6")
    _check_duplicates(pieces, types, model_type, source)
    # Parity: InitializePieces: one UNKNOWN piece at most, and one unless byte_fallback.
    unk_count = types.count(TokenType.UNKNOWN)
    if unk_count > 1:
        second = indices_of_type(types, TokenType.UNKNOWN)[1]
        raise ModelFormatError(source, f"piece {second} {pieces[second]!r} is a second UNKNOWN piece "
                                       f"(sentencepiece: unk is already defined)")
    if not byte_fallback and TokenType.BYTE in types:
        index = types.index(TokenType.BYTE)
        raise ModelFormatError(source, f"byte piece {index} {pieces[index].decode()!r} is found "
                                       f"although byte_fallback is false")
    if byte_fallback:
        found = set()
        for index in indices_of_type(types, TokenType.BYTE):
            value = byte_piece_value(pieces[index])
            if value is None:
                raise ModelFormatError(source, f"byte piece {index} {pieces[index]!r} is invalid: "
                                               f"expected <0xXX>")
            found.add(value)
        if len(found) != 256:
            missing = min(set(range(256)) - found)
            raise ModelFormatError(source, f"byte_fallback is true but only {len(found)} of the 256 "
                                           f"byte pieces are defined (no <0x{missing:02X}>)")
    if unk_count == 0:
        raise ModelFormatError(source, "no UNKNOWN piece: expected exactly one (sentencepiece: unk is "
                                       "not defined; toksmith needs one also with byte_fallback)")
    if not any(types.count(t) for t in NORMAL_TYPES):
        raise ModelFormatError(source, "no pieces are loaded: every piece is UNKNOWN, CONTROL or BYTE")
    # sentencepiece's BPE loads a NaN score, but then orders merges with a comparator
    # NaN makes inconsistent, so its result hangs on std::priority_queue internals:
    # toksmith refuses such a model rather than tokenize it some other way.
    if model_type is ModelType.BPE and any(map(math.isnan, scores)):
        index = next(i for i, score in enumerate(scores) if math.isnan(score))
        raise ModelFormatError(source, f"piece {index} {pieces[index]!r} has score NaN: merge order is "
                                       f"undefined (toksmith refuses it; sentencepiece loads it)")
    # Parity: unigram::Model::Model: "score is NaN or Inf." (BPE does not check).
    if model_type is ModelType.UNIGRAM and not all(map(math.isfinite, scores)):
        index = next(i for i, score in enumerate(scores) if not math.isfinite(score))
        raise ModelFormatError(source, f"piece {index} {pieces[index]!r} has score {scores[index]}: "
                                       f"a unigram score must be finite (sentencepiece: score is NaN or Inf)")


def _check_duplicates(pieces: list[bytes], types: bytes, model_type: ModelType, source: str) -> None:
    """Parity: InitializePieces: "<piece> is already defined."

    A unigram model keeps NORMAL/USER_DEFINED/UNUSED pieces and the other
    (reserved) pieces in two maps, so a text may appear once in each; a BPE
    model keeps one map, so every text appears once.
    """
    if len(set(pieces)) == len(pieces):
        return
    if model_type is ModelType.UNIGRAM:
        groups = [[i for i, t in enumerate(types) if t in NORMAL_TYPES],
                  [i for i, t in enumerate(types) if t not in NORMAL_TYPES]]
    else:
        groups = [None]   # every piece
    for group in groups:
        index = first_repeated(pieces, group)
        if index is not None:
            raise ModelFormatError(source, f"piece {index} {pieces[index]!r} is already defined "
                                           f"(sentencepiece refuses a piece defined twice)")


def _special_ids(pieces: list[bytes], types: bytes, trainer: dict[int, object]) -> SpecialIds:
    """Ids as sentencepiece's unk_id()/bos_id()/... find them: by piece text and type.

    Reserved (CONTROL/UNKNOWN/BYTE) pieces are looked up before the others,
    as in sentencepiece's PieceToId.
    """
    found: dict[str, int | None] = {}
    for number, role in TRAINER_PIECES.items():
        text = trainer.get(number, DEFAULT_SPECIAL_PIECES[role])
        matches = [i for i in _indices(pieces, text)]
        reserved = [i for i in matches if types[i] in RESERVED_TYPES]
        token_id = (reserved or matches or [None])[0]
        wanted = TokenType.UNKNOWN if role == "unk" else TokenType.CONTROL
        found[role] = token_id if token_id is not None and types[token_id] == wanted else None
    return SpecialIds(**found)


def _indices(items: list[bytes], value: bytes):
    start = 0
    while True:
        try:
            start = items.index(value, start)
        except ValueError:
            return
        yield start
        start += 1
