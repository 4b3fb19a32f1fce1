"""Allowed differences of the conversion parity tests: files toksmith writes (.model,
tokenizer.json, .tiktoken) read by one reference, against the source's own reference.

Used by tests/parity/test_convert_to_sentencepiece.py, test_convert_to_tokenizer_json.py,
test_convert_spm_bpe_json_to_sentencepiece.py. Each is a difference of the two references
on the same vocabulary, which no field of the target format can remove; the tests bound each
per file. Cases are plain attribute holders, so the examples below need no model file.
"""
from __future__ import annotations

from types import SimpleNamespace

from tests.parity.comparison import Excuse

SPACE_SYMBOL = "\u2581"

SAME_PIECES_IN_ANOTHER_ORDER = Excuse(
    "SAME_PIECES_IN_ANOTHER_ORDER",
    allows="the two Unigram segmentations are the same multiset of pieces in another order (so the same total "
           "score): sentencepiece 0.2.3's Viterbi (unigram_model.cc) breaks such ties otherwise than llama.cpp's "
           "UGM (llm_tokenizer_ugm_session) and tokenizers 0.23.3's Unigram",
    applies=lambda case, ours, theirs: ours != theirs and sorted(ours) == sorted(theirs),
    allowed=("333333", [10, 11], [11, 10]), refused=("333333", [10, 11], [11, 12]))

LLAMA_CPP_KEEPS_THE_SPACE_AFTER_AN_EMPTY_FIRST_TOKEN = Excuse(
    "LLAMA_CPP_KEEPS_THE_SPACE_AFTER_AN_EMPTY_FIRST_TOKEN",
    allows="llama.cpp's decode is sentencepiece's with one leading space more, and llama.cpp decodes the "
           "first id alone to nothing (<unk>, a lone '▁'): llama_detokenize (remove_special) strips the "
           "dummy prefix's space from the first token only, sentencepiece 0.2.3 from the first text written",
    applies=lambda case, ours, theirs: case.first_token_text == "" and theirs == " " + ours,
    allowed=(SimpleNamespace(first_token_text=""), "x y", " x y"),
    refused=(SimpleNamespace(first_token_text="a"), "x y", " x y"))


# ------------------------------------------------ sentencepiece .model -> tokenizer.json
# Cases of test_convert_to_tokenizer_json.py: a line with what the references make of it
# (attributes computed on demand, only for a mismatching line).

def _differs_only_by_normalization(case, ours, theirs) -> bool:
    return (case.sentencepiece_charsmap_text != case.tokenizers_charsmap_text
            and case.tokenizers_ids_of_sentencepiece_normalized == theirs)


PRECOMPILED_MAPS_WHOLE_GRAPHEMES = Excuse(
    "PRECOMPILED_MAPS_WHOLE_GRAPHEMES",
    allows="tokenizers 0.23.3's Precompiled normalizer, built from the source .model's own charsmap, maps "
           "whole graphemes (a base character with its combining marks) where sentencepiece 0.2.3 maps the "
           "longest charsmap prefix, so the two references normalize the line differently; and the written "
           "tokenizer.json, given sentencepiece's normalization of the line, gives sentencepiece's ids",
    applies=_differs_only_by_normalization,
    allowed=(SimpleNamespace(sentencepiece_charsmap_text="a\u0301", tokenizers_charsmap_text="\u00e1",
                             tokenizers_ids_of_sentencepiece_normalized=[5, 6]), [7], [5, 6]),
    refused=(SimpleNamespace(sentencepiece_charsmap_text="a\u0301", tokenizers_charsmap_text="\u00e1",
                             tokenizers_ids_of_sentencepiece_normalized=[5, 7]), [7], [5, 6]))


def _control_piece_taken_from_text(case, ours, theirs) -> bool:
    first = next(i for i, token in enumerate(ours) if token in case.control_ids)
    return (ours[:first] == theirs[:first] and case.piece(ours[first]) in case.text
            and not any(token in case.control_ids for token in theirs))


UNIGRAM_TAKES_CONTROL_PIECE_FROM_TEXT = Excuse(
    "UNIGRAM_TAKES_CONTROL_PIECE_FROM_TEXT",
    allows="tokenizers 0.23.3's Unigram matches a CONTROL piece ('<s>') whose text the line holds (it "
           "matches every piece of its vocab; encode_special_tokens only stops the added-token split), "
           "sentencepiece 0.2.3 keeps CONTROL pieces out of its lattice: the ids agree up to that piece, "
           "and sentencepiece's hold no CONTROL id",
    applies=_control_piece_taken_from_text,
    allowed=(SimpleNamespace(text="a <s> b", control_ids={1}, piece={1: "<s>"}.get), [9, 1, 4], [9, 3, 5, 4]),
    refused=(SimpleNamespace(text="a <s> b", control_ids={1}, piece={1: "<s>"}.get), [8, 1, 4], [9, 3, 5, 4]))

EQUAL_FLOAT32_SCORE = Excuse(
    "EQUAL_FLOAT32_SCORE",
    allows="tokenizers' and sentencepiece's Unigram segmentations of the same normalized text have the same "
           "total score summed in float32 (sentencepiece 0.2.3's Lattice sums float scores): a tie, broken "
           "differently by the two Viterbi implementations",
    applies=lambda case, ours, theirs: (ours != theirs and case.text_of(ours) == case.text_of(theirs)
                                        and case.float32_score(ours) == case.float32_score(theirs)),
    allowed=(SimpleNamespace(text_of=lambda ids: "ab", float32_score=lambda ids: -3.0), [1, 2], [3]),
    refused=(SimpleNamespace(text_of=lambda ids: "ab", float32_score=len), [1, 2], [3]))


def _one_more_leading_space(case, longer: str, shorter: str) -> bool:
    first, second = (list(case.first_pieces) + ["", ""])[:2]
    return first == SPACE_SYMBOL and second.startswith(SPACE_SYMBOL) and longer == " " + shorter


TOKENIZERS_KEEPS_SECOND_LEADING_SPACE = Excuse(
    "TOKENIZERS_KEEPS_SECOND_LEADING_SPACE",
    allows="decode of ids starting with a lone '▁' piece and then a piece starting with '▁' (a text starting "
           "with a literal '▁'): sentencepiece 0.2.3 drops the first piece's '▁' and the next one's, the "
           "written tokenizer.json's Strip decoder one '▁': tokenizers' decode (ours) has one leading space more",
    applies=lambda case, ours, theirs: _one_more_leading_space(case, ours, theirs),
    allowed=(SimpleNamespace(first_pieces=["\u2581", "\u2581he"]), " he", "he"),
    refused=(SimpleNamespace(first_pieces=["\u2581he", "llo"]), " hello", "hello"))


# ------------------------------------------------ SentencePiece-style BPE tokenizer.json -> .model
# Cases of test_convert_spm_bpe_json_to_sentencepiece.py: ours is sentencepiece on the written
# .model, theirs tokenizers on the json.

JSON_PRECOMPILED_MAPS_WHOLE_GRAPHEMES = Excuse(
    "JSON_PRECOMPILED_MAPS_WHOLE_GRAPHEMES",
    allows="tokenizers 0.23.3's Precompiled normalizer maps whole graphemes where sentencepiece 0.2.3 maps the "
           "longest charsmap prefix (both reading the charsmap of the .model the json was made from), so the "
           "two normalize the line differently; and tokenizers on the json, given sentencepiece's normalization "
           "of the line, gives the written .model's ids",
    applies=lambda case, ours, theirs: (case.sentencepiece_charsmap_text != case.tokenizers_charsmap_text
                                        and case.tokenizers_ids_of_sentencepiece_normalized == ours),
    allowed=(SimpleNamespace(sentencepiece_charsmap_text="a\u0301", tokenizers_charsmap_text="\u00e1",
                             tokenizers_ids_of_sentencepiece_normalized=[5, 6]), [5, 6], [7]),
    refused=(SimpleNamespace(sentencepiece_charsmap_text="a\u0301", tokenizers_charsmap_text="a\u0301",
                             tokenizers_ids_of_sentencepiece_normalized=[5, 6]), [5, 6], [7]))

SENTENCEPIECE_DROPS_SECOND_LEADING_SPACE = Excuse(
    "SENTENCEPIECE_DROPS_SECOND_LEADING_SPACE",
    allows="decode of ids starting with a lone '▁' piece and then a piece starting with '▁' (a text starting "
           "with a literal '▁', remove_extra_whitespaces): sentencepiece 0.2.3 on the written .model drops the "
           "first piece's '▁' and the next one's, as on the original .model; the json's Strip decoder drops one "
           "'▁': tokenizers' decode (theirs) has one leading space more",
    applies=lambda case, ours, theirs: _one_more_leading_space(case, theirs, ours),
    allowed=(SimpleNamespace(first_pieces=["\u2581", "\u2581he"]), "he", " he"),
    refused=(SimpleNamespace(first_pieces=["\u2581", "\u2581he"]), "he", "  he"))
