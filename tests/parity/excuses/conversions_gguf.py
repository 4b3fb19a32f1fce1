"""Allowed differences of the GGUF conversion tests (tests/parity/test_convert_*gguf*.py).

In these tests "ours" is what the file toksmith wrote gives when its target's reference reads it
(llama.cpp on a written GGUF, tokenizers on a written tokenizer.json) and "theirs" is the
source's reference on the source. Each excuse states the one difference two references are
documented to have on the same tokens or text; the case object carries what the predicate needs
to recompute that difference (the ids, the flags, the reference on a changed text).
References: llama.cpp = vendor/llama.cpp/src/llama-vocab.cpp of llama-cpp-python 0.3.36;
tokenizers 0.23.3; sentencepiece 0.2.3.
"""
from __future__ import annotations

import codecs
import math
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import regex

from tests.gpt2_bytes import gpt2_bytes_to_unicode
from tests.parity.comparison import Excuse

_GPT2_BYTE_OF_CHAR = {char: byte for byte, char in gpt2_bytes_to_unicode().items()}


def llama_cpp_clean_spaces(text: bytes) -> bytes:
    """Parity: llama.cpp's clean_spaces passes over detokenized text (llama_vocab::impl::detokenize,
    llama-cpp-python 0.3.36), which its byte-level and WordPiece vocabularies run."""
    src, out = bytearray(text), bytearray(text[:1])
    for i in range(1, len(src)):    # " ?", " !", " .", " ," lose the space
        if src[i - 1] == 32 and src[i] in b"?!.,":
            out.pop()
        out.append(src[i])
    src, out, i = out, bytearray(out[:1]), 1
    while i < len(src):             # " ' " loses both spaces (the second one becomes a NUL, skipped)
        x = src[i]
        if x == 39 and i + 1 < len(src) and src[i - 1] == 32 and src[i + 1] == 32:
            out.pop()
            i += 1
            src[i] = 0
        out.append(x)
        i += 1
    src, out = out, bytearray(out[:1])
    for i in range(1, len(src)):    # " 's", " 'm", " 're", " 've" lose the space
        if src[i - 1] == 32 and src[i] == 39 and i + 1 < len(src):
            if src[i + 1] in b"sm" or (i + 2 < len(src) and src[i + 1:i + 3] in (b"re", b"ve")):
                out.pop()
        out.append(src[i])
    return bytes(out)


# ------------------------------------------------------------------ cases

@dataclass(frozen=True)
class DecodeCase:
    """One decode: the text encoded, the ids decoded, skip_special, and the facts of the
    vocabulary an excuse needs (`bos`: the BOS id llama.cpp drops; `user_defined`: the texts
    of the USER_DEFINED tokens among the ids that tokenizers' ByteLevel decoder reads as other
    bytes, in order; `token_of`: an id's token
    string as tokenizers names it; `specials`: the special token strings; `cleans_spaces`:
    llama.cpp runs its clean_spaces passes on this vocabulary's text)."""
    text: str
    ids: Sequence[int]
    skip_special: bool
    bos: int | None = None
    user_defined: tuple[str, ...] = ()
    token_of: Callable[[int], str] | None = None
    specials: frozenset[str] = frozenset()
    cleans_spaces: bool = False               # llama.cpp runs clean_spaces for this vocabulary (WPM)


@dataclass(frozen=True)
class EncodeCase:
    """One encode: the text, and `reference_on(text)`: llama.cpp's ids on another text (the
    GGUF of the comparison; its flags as the test binds them), for excuses that say "on this
    changed text the references agree"; `extras["reference_same_flags"]` likewise with the
    line's own flags. Other facts as the excuse needs them."""
    text: str
    reference_on: Callable[[str], list[int]] | None = None
    unigram: bool = False
    scores: Sequence[float] = ()
    strip_tokens: tuple[tuple[str, bool, bool], ...] = ()     # (content, lstrip, rstrip)
    unknown_id: int | None = None
    max_word_chars: int = 0
    extras: dict = field(default_factory=dict)


# ------------------------------------------------------------------ decode: llama.cpp vs tokenizers

def _llama_cpp_keeps_space_after_bos(case: DecodeCase, ours: str, theirs: str) -> bool:
    if not (case.skip_special and case.bos is not None and tuple(case.ids[:1]) == (case.bos,)):
        return False
    if case.cleans_spaces:
        return theirs == llama_cpp_clean_spaces((" " + ours).encode("utf-8")).decode("utf-8", "replace")
    return theirs == " " + ours


LLAMA_CPP_KEEPS_SPACE_AFTER_BOS = Excuse(
    "LLAMA_CPP_KEEPS_SPACE_AFTER_BOS",
    allows="skip_special decode of ids that start with BOS (SPM/UGM): llama.cpp's is tokenizers' "
           "with one leading space more (llama_vocab::impl::detokenize sets remove_space = false "
           "when remove_special drops a leading BOS, so the next piece keeps its space; tokenizers' "
           "decoder strips the first token's space after skipping BOS); where llama.cpp runs "
           "clean_spaces (WPM), llama.cpp's is clean_spaces of tokenizers' with that space "
           "(\" ' x\" becomes \"'x\")",
    applies=_llama_cpp_keeps_space_after_bos,
    allowed=(DecodeCase("Hello", (1, 15043), True, bos=1), "Hello", " Hello"),
    refused=(DecodeCase("Hello", (1, 15043), True, bos=1), "Hello", "  Hello"))


def _gpt2_bytes_read_lossily(text: str) -> str:
    return bytes(_GPT2_BYTE_OF_CHAR[c] for c in text).decode("utf-8", errors="replace")


def _byte_level_reads_user_defined_as_bytes(case: DecodeCase, ours: str, theirs: str) -> bool:
    if not case.user_defined:
        return False
    expected, at = theirs, 0
    for text in case.user_defined:            # each token's text in llama.cpp's output, in order
        at = expected.find(text, at)
        if at < 0:
            return False
        read = _gpt2_bytes_read_lossily(text)
        expected = expected[:at] + read + expected[at + len(text):]
        at += len(read)
    return expected == ours


BYTE_LEVEL_READS_USER_DEFINED_AS_BYTES = Excuse(
    "BYTE_LEVEL_READS_USER_DEFINED_AS_BYTES",
    allows="decode with a non-ASCII USER_DEFINED token (deepseek-coder's 'ü'...): llama.cpp copies "
           "the token's text raw (token_to_piece), tokenizers' ByteLevel decoder reads every "
           "character through GPT-2's byte map ('ü' -> byte 0xFC, invalid UTF-8 -> U+FFFD): "
           "tokenizers' text is llama.cpp's with each such token's text, in order, replaced by "
           "its GPT-2 bytes read with errors='replace'",
    applies=_byte_level_reads_user_defined_as_bytes,
    allowed=(DecodeCase("aüb", (1, 2, 3), False, user_defined=("ü",)), "a\ufffdb", "aüb"),
    refused=(DecodeCase("aüb", (1, 2, 3), False, user_defined=("ü",)), "a\ufffdc", "aüb"))


# Parity: tokenizers 0.23.3 decoders/wordpiece.rs `cleanup`, applied to each token's text.
_WORDPIECE_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                      (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def tokenizers_wordpiece_decode(tokens: Sequence[str]) -> bytes:
    """Parity: tokenizers 0.23.3 WordPiece decoder (prefix "##", cleanup): a space before every
    token but the first unless it starts with "##" (special tokens spaced like words), then
    `cleanup` on each token's text."""
    out = []
    for i, token in enumerate(tokens):
        if i:
            token = token[2:] if token.startswith("##") else " " + token
        for dirty, clean in _WORDPIECE_CLEANUP:
            token = token.replace(dirty, clean)
        out.append(token)
    return "".join(out).encode("utf-8")


def llama_cpp_wpm_detokenize(tokens: Sequence[str], specials: frozenset[str]) -> bytes:
    """Parity: llama.cpp's WPM detokenize of the converter's tokens ("word" -> "▁word",
    "##word" -> "word"): token_to_piece unescapes the phantom space of every word-start token,
    the first one's too (add_space_prefix is false for WPM), copies special texts raw (no
    space), then detokenize runs clean_spaces."""
    pieces = [t if t in specials else t[2:] if t.startswith("##") else " " + t for t in tokens]
    return llama_cpp_clean_spaces("".join(pieces).encode("utf-8"))


def _wordpiece_decoders_space_differently(case: DecodeCase, ours: bytes, theirs: bytes) -> bool:
    tokens = [case.token_of(i) for i in case.ids]
    shown = [t for t in tokens if not (case.skip_special and t in case.specials)]
    return (bool(shown) and theirs == tokenizers_wordpiece_decode(shown)
            and ours == llama_cpp_wpm_detokenize(shown, case.specials))


_MINI_BERT = {101: "[CLS]", 102: "[SEP]", 7632: "hi", 1012: ".", 2099: "##s"}
_MINI_BERT_CASE = DecodeCase("hi.", (101, 7632, 1012, 102), False, token_of=_MINI_BERT.__getitem__,
                             specials=frozenset({"[CLS]", "[SEP]"}))

WORDPIECE_DECODERS_SPACE_DIFFERENTLY = Excuse(
    "WORDPIECE_DECODERS_SPACE_DIFFERENTLY",
    allows="WordPiece (WPM) decode: tokenizers' WordPiece decoder (decoders/wordpiece.rs) writes a "
           "space before every shown token but the first unless it starts with '##', special "
           "tokens ([SEP], [MASK]...) too; llama.cpp (token_to_piece + detokenize, add_space_prefix "
           "false for WPM) writes each word-start token's phantom space, the first one's too, and "
           "special texts without one, then runs clean_spaces. Allowed when tokenizers' text is its "
           "rule on the ids' tokens and llama.cpp's is its rule on the same tokens, exactly",
    applies=_wordpiece_decoders_space_differently,
    allowed=(_MINI_BERT_CASE, b"[CLS] hi.[SEP]", b"[CLS] hi. [SEP]"),
    refused=(_MINI_BERT_CASE, b"[CLS]hi.[SEP]", b"[CLS] hi. [SEP]"))


def _llama_cpp_cleans_spaces(case, ours: bytes, theirs: bytes) -> bool:
    return llama_cpp_clean_spaces(theirs) == ours


LLAMA_CPP_CLEANS_SPACES = Excuse(
    "LLAMA_CPP_CLEANS_SPACES",
    allows="byte-level decode: llama.cpp's is tokenizers' after llama.cpp's clean_spaces passes "
           "(' ?' ' !' ' .' ' ,' lose the space, \" ' \" both, \" 's\" \" 'm\" \" 're\" \" 've\" "
           "the space; llama_vocab::impl::detokenize), which tokenizers' ByteLevel decoder does not run",
    applies=_llama_cpp_cleans_spaces,
    allowed=(None, b"Hi, it's", b"Hi , it 's"),
    refused=(None, b"Hi, its", b"Hi , it 's"))


# ------------------------------------------------------------------ encode: llama.cpp WPM vs tokenizers WordPiece

def _sublist_at(items: list, sub: list, start: int) -> int:
    for at in range(start, len(items) - len(sub) + 1):
        if items[at:at + len(sub)] == sub:
            return at
    return -1


def _tokenizers_unknown_for_long_words(case: EncodeCase, ours: list[int], theirs: list[int]) -> bool:
    words = re.findall(r"[^\W_]{%d,}" % (case.max_word_chars + 1), case.text)
    if not words or case.reference_on is None:
        return False
    expected, at = list(ours), 0
    for word in words:                        # llama.cpp's ids of the word -> one unknown id
        pieces = case.reference_on(word)
        at = _sublist_at(expected, pieces, at)
        if at < 0 or not pieces:
            return False
        expected[at:at + len(pieces)] = [case.unknown_id]
        at += 1
    return expected == list(theirs)


TOKENIZERS_UNKNOWN_FOR_LONG_WORD = Excuse(
    "TOKENIZERS_UNKNOWN_FOR_LONG_WORD",
    allows="a word over max_input_chars_per_word (100) characters: tokenizers' WordPiece gives "
           "the one unknown id for it, llama.cpp's WPM (no such limit) its pieces: tokenizers' ids "
           "are llama.cpp's with the ids llama.cpp gives that word alone replaced by the unknown id",
    applies=_tokenizers_unknown_for_long_words,
    allowed=(EncodeCase("x " + "a" * 101, reference_on=lambda w: [7, 7], unknown_id=100, max_word_chars=100),
             [5, 7, 7], [5, 100]),
    refused=(EncodeCase("x " + "a" * 100, reference_on=lambda w: [7, 7], unknown_id=100, max_word_chars=100),
             [5, 7, 7], [5, 100]))


# Control characters (Cc) that tokenizers' BertNormalizer (clean_text) removes and llama.cpp's
# WPM preprocessing reads as whitespace (a word break).
_CONTROL_READ_AS_SPACE = "\u000b\u000c\u001c\u001d\u001e\u001f\u0085"


def _bert_removes_control_characters(case: EncodeCase, ours: list[int], theirs: list[int]) -> bool:
    same_flags = case.extras.get("reference_same_flags")
    if same_flags is None or not any(c in _CONTROL_READ_AS_SPACE for c in case.text):
        return False
    without = "".join(c for c in case.text if c not in _CONTROL_READ_AS_SPACE)
    return same_flags(without) == list(theirs)


BERT_REMOVES_CONTROL_CHARACTERS = Excuse(
    "BERT_REMOVES_CONTROL_CHARACTERS",
    allows="a text holding U+000B, U+000C, U+001C-U+001F or U+0085: tokenizers' BertNormalizer "
           "(clean_text) removes these control characters, llama.cpp's WPM reads them as whitespace: "
           "tokenizers' ids are llama.cpp's (same flags) on the text without them",
    applies=_bert_removes_control_characters,
    allowed=(EncodeCase("a\x0bb", extras={"reference_same_flags": {"ab": [101, 5925, 102]}.get}),
             [101, 1037, 1038, 102], [101, 5925, 102]),
    refused=(EncodeCase("a b", extras={"reference_same_flags": {"ab": [101, 5925, 102]}.get}),
             [101, 1037, 1038, 102], [101, 5925, 102]))


# Characters llama.cpp's WPM preprocessing (llama_vocab's WPM session: NFD and category tables
# of unicode-data.cpp) reads otherwise than tokenizers' BertNormalizer + BertPreTokenizer: the
# keycap mark U+20E3 (Me: tokenizers keeps it, so the word is unknown), Hangul syllables
# (decomposed to jamo by tokenizers' NFD) and Devanagari vowel signs and virama (Mn/Mc).
_WPM_READ_OTHERWISE = re.compile("[\u20e3\uac00-\ud7a3\u093e-\u094d]")


def _wpm_reads_text_otherwise(case: EncodeCase, ours: list[int], theirs: list[int]) -> bool:
    same_flags, theirs_on = case.extras.get("reference_same_flags"), case.extras.get("theirs_on")
    if same_flags is None or theirs_on is None or _WPM_READ_OTHERWISE.search(case.text) is None:
        return False
    without = _WPM_READ_OTHERWISE.sub("", case.text)
    return same_flags(without) == theirs_on(without)


_AGREE_ON_BANG = {"reference_same_flags": {"!": [101, 999, 102]}.get, "theirs_on": {"!": [101, 999, 102]}.get}

WPM_TEXT_READ_OTHERWISE = Excuse(
    "WPM_TEXT_READ_OTHERWISE",
    allows="a text holding the keycap mark U+20E3, a Hangul syllable or a Devanagari vowel "
           "sign/virama: llama.cpp's WPM preprocessing and tokenizers' BertNormalizer + "
           "BertPreTokenizer read these characters otherwise: allowed when both give the same ids "
           "on the text without those characters (the difference lies in them)",
    applies=_wpm_reads_text_otherwise,
    allowed=(EncodeCase("\ud55c\uad6d\uc5b4!", extras=_AGREE_ON_BANG), [101, 29991, 29999, 999, 102],
             [101, 30006, 30021, 29991, 999, 102]),
    refused=(EncodeCase("one\u2028two", extras=_AGREE_ON_BANG), [2028, 2048], [2028, 2048, 2093]))
# ------------------------------------------------------------------ encode: llama.cpp vs tokenizers (GGUF -> json)

def _without_whitespace_stripped_by_tokens(text: str, strip_tokens) -> tuple[str, bool]:
    """`text` without the Unicode whitespace run next to each lstrip/rstrip token (on its
    stripping side), as tokenizers strips it; and whether a removed run holds non-ASCII."""
    cut = bytearray(len(text))               # 1 where a character is removed
    for content, lstrip, rstrip in strip_tokens:
        at = text.find(content)
        while at >= 0:
            end = at + len(content)
            if lstrip:
                i = at
                while i > 0 and text[i - 1].isspace():
                    i -= 1
                    cut[i] = 1
            if rstrip:
                i = end
                while i < len(text) and text[i].isspace():
                    cut[i] = 1
                    i += 1
            at = text.find(content, end)
    removed = [c for c, gone in zip(text, cut) if gone]
    return "".join(c for c, gone in zip(text, cut) if not gone), any(not c.isascii() for c in removed)


def _tokens_strip_unicode_whitespace(case: EncodeCase, ours: list[int], theirs: list[int]) -> bool:
    stripped, non_ascii = _without_whitespace_stripped_by_tokens(case.text, case.strip_tokens)
    return non_ascii and case.reference_on is not None and case.reference_on(stripped) == list(ours)


TOKENIZERS_STRIPS_UNICODE_WHITESPACE = Excuse(
    "TOKENIZERS_STRIPS_UNICODE_WHITESPACE",
    allows="a token with llama.cpp's LSTRIP/RSTRIP attribute (phi-3's <|end|>...) next to a run of "
           "whitespace holding a non-ASCII one ('\\u3000'): llama.cpp strips what C's isspace() "
           "accepts (ASCII, tokenizer_st_partition), tokenizers' lstrip/rstrip every Unicode "
           "whitespace: tokenizers' ids are llama.cpp's on the text without those whole runs",
    applies=_tokens_strip_unicode_whitespace,
    allowed=(EncodeCase("<|end|>\u3000x", reference_on={"<|end|>x": [5, 6]}.get,
                        strip_tokens=(("<|end|>", False, True),)), [5, 6], [5, 9, 6]),
    refused=(EncodeCase("<|end|> x", reference_on={"<|end|>x": [5, 6]}.get,
                        strip_tokens=(("<|end|>", False, True),)), [5, 6], [5, 9, 6]))


def _graphemes_cut_to_first_code_point(text: str) -> str:
    return "".join(g[0] for g in regex.findall(r"\X", text))


def _precompiled_per_grapheme(case: EncodeCase, ours: list[int], theirs: list[int]) -> bool:
    spell, ours_on = case.extras.get("spell"), case.extras.get("ours_on")
    if not (case.unigram and spell and ours_on and case.reference_on):
        return False
    cut = _graphemes_cut_to_first_code_point(case.text)
    return cut != case.text and spell(ours) != spell(theirs) and ours_on(cut) == case.reference_on(cut)


PRECOMPILED_PER_GRAPHEME = Excuse(
    "PRECOMPILED_PER_GRAPHEME",
    allows="UGM with a precompiled charsmap, a text with a grapheme of several code points ('e' + "
           "combining marks, halfwidth '\uff8a\uff9f', conjoining jamo): tokenizers' Precompiled looks the "
           "charsmap up per grapheme (a whole one under 6 bytes, else code point by code point), "
           "llama.cpp by the longest byte prefix, so the normalized texts differ: allowed when the "
           "two id lists spell different texts (llama.cpp's detokenize of each) and both references "
           "agree on the same text with every such grapheme cut to its first code point (the "
           "difference lies in those graphemes)",
    applies=_precompiled_per_grapheme,
    allowed=(EncodeCase("\uff8a\uff9f", reference_on={"\uff8a": [5]}.get, unigram=True,
                        extras={"spell": lambda ids: "x" * len(ids), "ours_on": {"\uff8a": [5]}.get}), [7, 8], [9]),
    refused=(EncodeCase("\uff8a\uff9f", reference_on={"\uff8a": [5]}.get, unigram=True,
                        extras={"spell": lambda ids: "x" * len(ids), "ours_on": {"\uff8a": [6]}.get}), [7, 8], [9]))


# ------------------------------------------------------------------ llama.cpp on a written GGUF vs sentencepiece on the .model

def _float32_total(scores: Sequence[float], ids: Sequence[int]) -> np.float32:
    total = np.float32(0)
    for i in ids:
        total = np.float32(total + np.float32(scores[i]))
    return total


def _unigram_equal_score_segmentation(case: EncodeCase, ours: list[int], theirs: list[int]) -> bool:
    return (case.unigram and len(ours) == len(theirs)
            and (math.fsum(case.scores[i] for i in ours) == math.fsum(case.scores[i] for i in theirs)
                 or _float32_total(case.scores, ours) == _float32_total(case.scores, theirs)))


UNIGRAM_EQUAL_SCORE_SEGMENTATION = Excuse(
    "UNIGRAM_EQUAL_SCORE_SEGMENTATION",
    allows="Unigram: the two segmentations have as many pieces and the same total score, exactly "
           "(math.fsum of the pieces' scores: the same pieces in another order) or as sentencepiece "
           "sums it in float32 (a tie: llama.cpp's UGM sums piece scores in double and breaks it "
           "otherwise); lines with long runs of '-', '=', CJK",
    applies=_unigram_equal_score_segmentation,
    allowed=(EncodeCase("ab", unigram=True, scores=[0.0, -1.5, -2.5, -2.0, -2.0]), [1, 2], [3, 4]),
    refused=(EncodeCase("ab", unigram=True, scores=[0.0, -1.5, -2.5, -2.0, -2.25]), [1, 2], [3, 4]))


def _sentencepiece_strips_trailing_u2581(case: EncodeCase, ours: list[int], theirs: list[int]) -> bool:
    stripped = case.text.rstrip(" \u2581")
    return (case.unigram and "\u2581" in case.text[len(stripped):] and case.reference_on is not None
            and case.reference_on(stripped) == list(theirs))


SENTENCEPIECE_STRIPS_TRAILING_U2581 = Excuse(
    "SENTENCEPIECE_STRIPS_TRAILING_U2581",
    allows="Unigram, a text ending in a run of spaces holding a literal U+2581: sentencepiece's "
           "remove_extra_whitespaces strips trailing U+2581 after escaping spaces (a literal one "
           "too), llama.cpp's UGM strips only spaces: sentencepiece's ids are llama.cpp's on the text "
           "without that trailing run",
    applies=_sentencepiece_strips_trailing_u2581,
    allowed=(EncodeCase("a \u2581", reference_on={"a": [4]}.get, unigram=True), [4, 4, 4], [4]),
    refused=(EncodeCase("a  ", reference_on={"a": [4]}.get, unigram=True), [4, 4, 4], [4]))


def each_invalid_byte_replaced(raw: bytes) -> str:
    """`raw` decoded as UTF-8 with one U+FFFD per byte of each invalid sequence (sentencepiece's
    normalizer replaces invalid input byte by byte)."""
    return raw.decode("utf-8", errors="sentencepiece-each-byte")


def _each_byte_replacement(error: UnicodeDecodeError) -> tuple[str, int]:
    return "\ufffd" * (error.end - error.start), error.end


codecs.register_error("sentencepiece-each-byte", _each_byte_replacement)


def _sentencepiece_replaces_invalid_bytes(case: EncodeCase, ours: list[int], theirs: list[int]) -> bool:
    raw = case.extras.get("raw")
    if raw is None or case.reference_on is None:
        return False
    try:
        raw.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return case.reference_on(each_invalid_byte_replaced(raw)) == list(theirs)


SENTENCEPIECE_REPLACES_INVALID_BYTES = Excuse(
    "SENTENCEPIECE_REPLACES_INVALID_BYTES",
    allows="invalid UTF-8 input: sentencepiece replaces each byte of an invalid sequence with "
           "U+FFFD, llama.cpp's SPM falls back to the raw bytes' <0xXX> pieces: sentencepiece's ids "
           "are llama.cpp's on the text with those U+FFFD",
    applies=_sentencepiece_replaces_invalid_bytes,
    allowed=(EncodeCase("", reference_on={"a\ufffd\ufffd": [5, 9]}.get, extras={"raw": b"a\xe2\x82"}), [5, 7, 8], [5, 9]),
    refused=(EncodeCase("", reference_on={"a\ufffd\ufffd": [5, 9]}.get, extras={"raw": b"a\xc3\xa9"}), [5, 7, 8], [5, 9]))


LLAMA_CPP_KEEPS_LEADING_SPACES = Excuse(
    "LLAMA_CPP_KEEPS_LEADING_SPACES",
    allows="decode (remove_special) of ids whose text starts with spaces: llama.cpp removes one "
           "leading space of the first token (detokenize's remove_space), sentencepiece every leading "
           "space before the first visible text: sentencepiece's text is llama.cpp's without its "
           "leading spaces",
    applies=lambda case, ours, theirs: ours[:1] == " " and theirs == ours.lstrip(" "),
    allowed=("\u2581\u2581hi", " hi", "hi"),
    refused=("\u2581\u2581hi", " hi", " hi!"))
