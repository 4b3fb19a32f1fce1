"""What the conversion parity tests share: toksmith loading a file it wrote, compared with the
target's reference on that file, and the ModelProto of a .model's bytes."""
from __future__ import annotations

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2

import toksmith
from tests.parity.comparison import Comparison

SENTENCEPIECE = f"sentencepiece {spm.__version__}"
# toksmith loading a file it wrote is compared with the target's reference on the first lines of each corpus
SAMPLE_LINES = 300


def toksmith_on_written_file(label: str, path, texts: list[str], theirs: list[list[int]], *, against: str,
                             **flags) -> Comparison:
    """toksmith loading the file it wrote, against the target's reference on that same file
    (`theirs`, already computed by the test): unfinished, for the test's finish_all."""
    check = Comparison(f"{label}: toksmith on the written file, ids", against=against)
    check.all(texts, ours=toksmith.load(path).encode_batch(texts, **flags), theirs=theirs)
    return check


def model_proto(data: bytes) -> sentencepiece_model_pb2.ModelProto:
    """The ModelProto of a .model's bytes."""
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(data)
    return proto
