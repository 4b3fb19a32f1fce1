"""How a .model's own pieces were laid out, beyond what the reader keeps.

The reader (`toksmith._core.wire.parse_model_proto`) gives each piece a score, 0.0
when the piece has none; sentencepiece's older trainers wrote the meta pieces
(<unk>, <s>, </s>) without a score field. Writing those pieces back without it is
what makes a .model -> .model save byte-identical.

>>> from toksmith.writers.protobuf_wire import string_field
>>> data = string_field(1, b"\\n\\x05<unk>\\x18\\x02") + string_field(1, b"\\n\\x01a\\x15\\x00\\x00\\x80\\xbf")
>>> sorted(pieces_without_score(data))
[0]
"""
from __future__ import annotations

from toksmith._core.wire import parse_message

MODEL_PIECES, PIECE_SCORE = 1, 2
WIRE_LEN = 2


def pieces_without_score(model_proto: bytes) -> frozenset[int]:
    """Ids of the pieces of a serialized ModelProto that hold no score field."""
    missing, index = [], 0
    for number, wire, value in parse_message(model_proto):
        if number != MODEL_PIECES or wire != WIRE_LEN:
            continue
        if not any(sub_number == PIECE_SCORE for sub_number, _wire, _value in parse_message(value)):
            missing.append(index)
        index += 1
    return frozenset(missing)
