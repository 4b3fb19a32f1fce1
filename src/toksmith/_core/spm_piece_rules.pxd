# What sentencepiece's trainers accept as a piece (shared by its Unigram and BPE trainers).
#
# `valid_piece(s, n, &rules)` says whether the UTF-8 string s[:n] may become a piece:
# Parity: sentencepiece trainer_interface.cc TrainerInterface::IsValidSentencePiece
# (length in characters, no U+2585/NUL/U+001F/space, where U+2581 may stand, one Unicode
# script per piece with Hiragana/Katakana counted as Han, digits alone with split_digits).
from libc.stdint cimport int32_t, uint32_t

include "spm_scripts.pxi"

cdef enum:
    WS_CHAR = 0x2581          # U+2581, the escaped space
    UNK_CHAR = 0x2585         # U+2585, stands for a character left out of the alphabet
    BOUNDARY_CHAR = 0x1F      # kPretokenizationBoundaryChar
    ANY_SCRIPT = 0x7FFFFFFF   # kAnyType: matches every script


cdef struct PieceRules:
    int max_piece_length            # max_sentencepiece_length (characters)
    bint split_by_unicode_script
    bint split_by_number
    bint split_by_whitespace
    bint split_digits
    bint treat_whitespace_as_suffix
    bint allow_whitespace_only_pieces


cdef inline uint32_t decode_char(const unsigned char* s, Py_ssize_t n, int* length) noexcept nogil:
    """The code point at s (well-formed UTF-8 expected), its byte length in *length;
    a malformed byte reads as U+FFFD of length 1 (sentencepiece DecodeUTF8)."""
    cdef unsigned char c = s[0]
    if c < 0x80:
        length[0] = 1
        return c
    if c >= 0xC2 and c < 0xE0 and n >= 2:
        length[0] = 2
        return ((c & 0x1F) << 6) | (s[1] & 0x3F)
    if c >= 0xE0 and c < 0xF0 and n >= 3:
        length[0] = 3
        return ((c & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
    if c >= 0xF0 and c < 0xF5 and n >= 4:
        length[0] = 4
        return ((c & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F)
    length[0] = 1
    return 0xFFFD


cdef inline Py_ssize_t utf8_chars(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """Characters in s[:n]: bytes that are not continuation bytes (sentencepiece UTF8Len)."""
    cdef Py_ssize_t i, count = 0
    for i in range(n):
        if (s[i] & 0xC0) != 0x80:
            count += 1
    return count


cdef inline bint is_decimal(uint32_t c) noexcept nogil:
    # Parity: trainer_interface.cc is_unicode_decimal_number
    return (0x30 <= c <= 0x39) or (0xFF10 <= c <= 0xFF19)


cdef inline bint valid_piece(const unsigned char* s, Py_ssize_t n, const PieceRules* rules) noexcept nogil:
    """Parity: sentencepiece trainer_interface.cc TrainerInterface::IsValidSentencePiece."""
    cdef Py_ssize_t size = utf8_chars(s, n), i = 0, pos = 0
    cdef uint32_t c
    cdef int length
    cdef int32_t script, prev_script = ANY_SCRIPT
    cdef bint all_ws = True
    if size == 0 or size > rules.max_piece_length:
        return False
    while i < n:
        if decode_char(s + i, n - i, &length) != WS_CHAR:
            all_ws = False
            break
        i += length
    i = 0
    while i < n:
        c = decode_char(s + i, n - i, &length)
        i += length
        if c == UNK_CHAR or c == 0 or c == BOUNDARY_CHAR or c == 0x20:
            return False
        if not (c < 0xD800 or (0xE000 <= c <= 0x10FFFF)):
            return False
        if c == WS_CHAR:
            if not rules.allow_whitespace_only_pieces or not all_ws:
                if rules.treat_whitespace_as_suffix:
                    if (rules.split_by_whitespace and pos < size - 1) or \
                            (not rules.split_by_whitespace and pos < size - 1 and pos == 0):
                        return False
                else:
                    if (rules.split_by_whitespace and pos > 0) or \
                            (not rules.split_by_whitespace and pos > 0 and pos == size - 1):
                        return False
        else:
            script = spm_script(c)
            if script == HIRAGANA_SCRIPT or script == KATAKANA_SCRIPT or c == 0x30FC:
                script = HAN_SCRIPT
            elif script == INHERITED_SCRIPT:
                script = prev_script
            if not rules.split_by_number and is_decimal(c):
                script = ANY_SCRIPT
            if rules.split_digits and is_decimal(c) and size > 1:
                return False
            if rules.split_by_unicode_script and script != ANY_SCRIPT and prev_script != ANY_SCRIPT \
                    and prev_script != script:
                return False
            prev_script = script
        pos += 1
    return True
