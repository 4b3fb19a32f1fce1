"""Allowed differences with tokenizers 0.23.3 in the tokenizer.json parity files of hf1
(test_hf_batch_stream, test_hf_bpe, test_hf_byte_level, test_hf_byte_level_missing_bytes,
test_hf_converted_spm, test_hf_coverage_gaps, test_hf_decoder_files,
test_hf_metaspace_first_fuzz, test_hf_oniguruma_splitters).
"""
from __future__ import annotations

from tests.parity.comparison import Excuse


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _lossy_text_of_raw_bytes(case, ours: bytes, theirs: bytes) -> bool:
    return (isinstance(ours, bytes) and isinstance(theirs, bytes) and not _is_utf8(ours)
            and ours.decode("utf-8", "replace").encode("utf-8") == theirs)


DECODE_BYTES_KEEPS_INVALID_UTF8 = Excuse(
    "DECODE_BYTES_KEEPS_INVALID_UTF8",
    allows="toksmith's decode_bytes (ours) is not valid UTF-8, and the reference's decoded text (theirs, as "
           "UTF-8) is exactly ours with each maximal invalid subsequence replaced by one U+FFFD: tokenizers "
           "0.23.3 has no bytes decode, its decoders make text with String::from_utf8_lossy (ByteLevel), which "
           "replaces as Python's bytes.decode('utf-8', 'replace') does; decode_bytes keeps the raw bytes "
           "(README: 'decode_bytes keeps the raw bytes that ByteLevel's ... UTF-8 repair would replace')",
    applies=_lossy_text_of_raw_bytes,
    allowed=(None, b"\xc3\xa2\x9f\xa8x", "\u00e2\ufffd\ufffdx".encode()),
    refused=(None, b"\xc3\xa2\x9f\xa8x", "\u00e2\ufffdx".encode()))
