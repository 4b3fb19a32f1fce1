"""RWKV vocabularies: RWKV's own ``rwkv_vocab_v20230424.txt``, and GGUF files whose
tokenizer.ggml.model is "rwkv" (what llama.cpp's converter writes from that file).

The .txt file has one ``id repr(token) length`` line per token: a Python bytes or str
literal as ``repr`` writes it (a str stands for its UTF-8 bytes) and the byte length.
Its reference is the rwkv package's TRIE_TOKENIZER, which ``eval``s each literal; here
literals are parsed by hand (`python_literal_bytes`) and nothing is ever evaluated.
That vocabulary has no special tokens and adds no BOS/EOS, so ``encode(add_special=...,
parse_special=...)`` and ``decode(skip_special=...)`` ignore their flags for it.

A GGUF stores each token as the text ``repr(bytes)[2:-1]``; llama.cpp unescapes it
(`unescape_rwkv_token`) into the bytes its trie matches.

>>> spec = read_rwkv_vocab("rwkv_vocab_v20230424.txt")   # doctest: +SKIP
>>> unescape_rwkv_token(rb"\\xe4\\xb8\\x80\\n")
b'\\xe4\\xb8\\x80\\n'
"""
from __future__ import annotations

import codecs
import os
import re
import unicodedata
from dataclasses import dataclass

from toksmith.errors import ModelFormatError
from toksmith.formats.bounded_read import read_model_file
from toksmith.formats.gguf import (_check_key_types, _flag, _number_array, _special_ids, _token_texts,
                                   end_of_generation_ids, gguf_file_fields, ids_by_text, token_types)
from toksmith.formats.llama_cpp_attributes import token_attributes
from toksmith.spec import Algorithm, FileFormat, ReferenceRules, TokenizerSpec
from toksmith.vocab import SpecialIds, TokenType, Vocab

# The largest id a .txt vocabulary may give: every id below it gets an entry.
MAX_TXT_ID = (1 << 24) - 1


@dataclass(frozen=True, eq=False, repr=False)
class RwkvSpec:
    """What the RWKV model and decoder stages are built from.

    token_bytes: each id's bytes (GGUF: the unescaped text; .txt: the literal's bytes;
        b"" for an id the .txt file gives no line).
    keys, key_ids: the trie: each distinct non-empty byte string and the id it matches
        (where two tokens have the same bytes, the later one, as both references keep it).
    present: .txt only: one byte per id, 1 where the file gives the id, 0 for a gap.
    add_space_prefix: GGUF tokenizer.ggml.add_space_prefix (detokenize strips one
        leading space of the first token).
    """

    token_bytes: list[bytes]
    keys: list[bytes]
    key_ids: list[int]
    present: bytes | None = None
    add_space_prefix: bool = False


def trie_entries(token_bytes: list[bytes], order: list[int] | None = None) -> tuple[list[bytes], list[int]]:
    """(keys, ids) of the match trie: a later id (in `order`, default id order) with the
    same bytes overwrites an earlier one; empty byte strings never match and are left out.

    Parity: llama-vocab.cpp llm_tokenizer_rwkv (naive_trie::insert of every id in turn);
    rwkv_tokenizer.py TRIE_TOKENIZER.__init__ (token2idx, then TRIE.add).
    """
    ids = range(len(token_bytes)) if order is None else order
    by_bytes = dict(zip((token_bytes[i] for i in ids), ids))
    by_bytes.pop(b"", None)
    return list(by_bytes), list(by_bytes.values())


# ---------------------------------------------------------------- the .txt vocabulary

_NAME = re.compile(r"rwkv_vocab.*\.txt$", re.IGNORECASE)
# The first line of a .txt vocabulary: id, a str or bytes literal, length.
_FIRST_LINE = re.compile(rb"[0-9]+ [bB]?(['\"]).*\1 [0-9]+\r?$")


def looks_like_rwkv_vocab(head: bytes, name: str) -> bool:
    """True for a file named rwkv_vocab*.txt, or whose first line reads ``id 'literal' length``.

    >>> looks_like_rwkv_vocab(b"1 '\\\\x00' 1\\n2 '\\\\x01' 1\\n", "vocab.txt")
    True
    >>> looks_like_rwkv_vocab(b"[PAD]\\n[unused0]\\n", "vocab.txt")
    False
    """
    if _NAME.search(os.path.basename(name)):
        return True
    return _FIRST_LINE.match(head.split(b"\n", 1)[0]) is not None


def read_rwkv_vocab(path: str | os.PathLike) -> TokenizerSpec:
    """The tokenizer of an RWKV .txt vocabulary file."""
    return parse_rwkv_vocab(read_model_file(path), os.fspath(path))


def parse_rwkv_vocab(data: bytes, source: str = "<bytes>") -> TokenizerSpec:
    """The tokenizer of an RWKV .txt vocabulary's bytes (see the module docstring).

    Parity: rwkv_tokenizer.py TRIE_TOKENIZER.__init__: the file is UTF-8 read with
    universal newlines; each line is ``id literal length``, cut at its first and last
    space; the literal's bytes must have that length. Refused here where it fails or
    would silently overwrite: a line that is not of that form, a literal that is not a
    str/bytes literal, a length that differs, an id given twice.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ModelFormatError(source, f"line {line}: not UTF-8 (byte {data[e.start]:#04x} at offset "
                                       f"{e.start}): an RWKV vocabulary is a UTF-8 text file") from None
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()   # the newline that ends the last line
    if not lines:
        raise ModelFormatError(source, "the vocabulary has no lines")
    by_id: dict[int, bytes] = {}
    for number, line in enumerate(lines, 1):
        token_id, token = _parse_line(line, number, source)
        if token_id in by_id:
            raise ModelFormatError(source, f"line {number}: id {token_id} is given twice (the rwkv package "
                                           f"would silently keep only this line's token)")
        by_id[token_id] = token
    n = max(by_id) + 1
    token_bytes = [b""] * n
    present = bytearray(n)
    for token_id, token in by_id.items():
        token_bytes[token_id] = token
        present[token_id] = 1
    keys, key_ids = trie_entries(token_bytes, list(by_id))
    types = bytes(present).replace(b"\x01", bytes([TokenType.NORMAL]))   # gaps stay UNDEFINED (0)
    return TokenizerSpec(
        source=source, file_format=FileFormat.RWKV_VOCAB, algorithm=Algorithm.RWKV,
        rules=ReferenceRules.RWKV,
        vocab=Vocab(pieces=token_bytes, scores=[0.0] * n, types=types, special=SpecialIds()),
        normalizer=None, decoder=None, source_data=bytes(data),
        rwkv=RwkvSpec(token_bytes=token_bytes, keys=keys, key_ids=key_ids, present=bytes(present)))


def _parse_line(line: str, number: int, source: str) -> tuple[int, bytes]:
    """(id, token bytes) of one ``id literal length`` line."""
    first, last = line.find(" "), line.rfind(" ")
    if first < 0 or first == last:
        shown = line if len(line) <= 60 else line[:57] + "..."
        raise ModelFormatError(source, f"line {number}: {shown!r} is not 'id literal length' "
                                       f"(e.g. \"33 ' ' 1\")")
    id_text, literal, length_text = line[:first], line[first + 1:last].strip(" \t"), line[last + 1:].strip()
    if not (id_text.isascii() and id_text.isdigit()):
        raise ModelFormatError(source, f"line {number}: the id {id_text!r} is not a decimal integer")
    token_id = int(id_text)
    if token_id > MAX_TXT_ID:
        raise ModelFormatError(source, f"line {number}: the id {token_id} is too large (at most {MAX_TXT_ID})")
    try:
        token = python_literal_bytes(literal)
    except ValueError as e:
        raise ModelFormatError(source, f"line {number} (id {token_id}): {e}") from None
    if not (length_text.isascii() and length_text.isdigit()):
        raise ModelFormatError(source, f"line {number} (id {token_id}): the length {length_text!r} is not "
                                       f"a decimal integer")
    if int(length_text) != len(token):
        raise ModelFormatError(source, f"line {number} (id {token_id}): token {literal} is {len(token)} "
                                       f"bytes, the line says {int(length_text)}")
    return token_id, token


# An escape sequence, or a quote character, inside a literal's body.
_ESCAPE_OR_QUOTE = re.compile(r"\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|N\{[^}]*\}|[0-7]{1,3}|.)"
                              r"|['\"]", re.S)
_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n",
                   "r": "\r", "t": "\t", "v": "\v"}


def python_literal_bytes(literal: str) -> bytes:
    """The bytes of a Python bytes literal, or the UTF-8 of a str literal, as ``repr`` writes
    them (no r/f prefixes, no concatenation); ValueError saying what is wrong.

    >>> python_literal_bytes("b'\\\\xff\\\\n'"), python_literal_bytes("'\\\\u4e00'")
    (b'\\xff\\n', b'\\xe4\\xb8\\x80')
    """
    is_bytes = literal[:1] in ("b", "B")
    body_start = 2 if is_bytes else 1
    quote = literal[body_start - 1:body_start]
    if quote not in ("'", '"') or len(literal) < body_start + 1 or literal[-1] != quote:
        raise ValueError(f"{_shown(literal)} is not a Python str or bytes literal as repr() writes "
                         f"it ('...' or b'...')")
    body = literal[body_start:-1]
    if is_bytes and not body.isascii():
        raise ValueError(f"{_shown(literal)}: a bytes literal holds only ASCII characters and escapes")
    if "\\" not in body and quote not in body:
        return _encoded(body, is_bytes, literal)
    parts: list[str] = []
    pos = 0
    for m in _ESCAPE_OR_QUOTE.finditer(body):
        parts.append(body[pos:m.start()])
        pos = m.end()
        token = m.group()
        if token == quote:
            raise ValueError(f"{_shown(literal)}: an unescaped {quote} ends the literal before its end")
        if token[0] != "\\":
            parts.append(token)   # the other quote character
            continue
        parts.append(_escape_value(m.group(1), is_bytes, literal))
    if "\\" in body[pos:]:
        raise ValueError(f"{_shown(literal)}: the closing {quote} is escaped, so the literal never ends")
    parts.append(body[pos:])
    return _encoded("".join(parts), is_bytes, literal)


def _escape_value(escape: str, is_bytes: bool, literal: str) -> str:
    """What one escape (after its backslash) stands for: a character, or for bytes a
    code point below 256 (a byte)."""
    kind = escape[0]
    if kind in _SIMPLE_ESCAPES and len(escape) == 1:
        return _SIMPLE_ESCAPES[kind]
    if kind == "x":
        if len(escape) != 3:
            raise ValueError(f"{_shown(literal)}: truncated \\xXX escape")
        return chr(int(escape[1:], 16))
    if kind in "01234567":
        value = int(escape, 8)
        if is_bytes and value > 0o377:
            raise ValueError(f"{_shown(literal)}: octal escape \\{escape} is past a byte's range")
        return chr(value)
    if not is_bytes and kind in "uUN":
        if kind == "N" and len(escape) > 1:
            try:
                return unicodedata.lookup(escape[2:-1])
            except KeyError:
                raise ValueError(f"{_shown(literal)}: unknown Unicode character name {escape[2:-1]!r}") from None
        if kind in "uU" and len(escape) > 1:
            value = int(escape[1:], 16)
            if value > 0x10FFFF:
                raise ValueError(f"{_shown(literal)}: \\{escape} is past U+10FFFF")
            return chr(value)
        raise ValueError(f"{_shown(literal)}: truncated \\{kind} escape")
    # Python keeps the backslash of an escape it does not know (with a warning).
    return "\\" + escape


def _encoded(value: str, is_bytes: bool, literal: str) -> bytes:
    """A bytes literal's value (code points below 256, ASCII where written as is) or a str
    literal's UTF-8."""
    if not is_bytes:
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{_shown(literal)}: a lone surrogate has no UTF-8 bytes") from None
    return value.encode("latin-1")   # ASCII characters and escapes below 256


def _shown(literal: str) -> str:
    return repr(literal if len(literal) <= 60 else literal[:57] + "...")


# ---------------------------------------------------------------- GGUF "rwkv" vocabularies

# Parity: llama_vocab::impl::load, tokenizer_model == "rwkv": no default special ids.
GGUF_DEFAULT_SPECIAL: dict[str, int] = {}
# Parity: llama-vocab.cpp llama_unescape_rwkv_token: escapes the fast path decodes as it does.
_PLAIN_ESCAPES = re.compile(rb"\\(x[0-9a-f]{2}|[tnr\\'\"])")


def unescape_rwkv_token(escaped: bytes) -> bytes:
    """The bytes llama.cpp matches for a GGUF RWKV token text.

    Parity: llama-vocab.cpp llama_unescape_rwkv_token: ``\\t \\n \\r``; ``\\x`` and the next
    two characters c, each worth ``c >= 'a' ? c - 'a' + 10 : c - '0'`` (c a signed char,
    as on x86), summed as a uint8 (so only lowercase hex reads right); a backslash before
    any other character gives that character; an escape cut off by the end gives nothing.

    >>> unescape_rwkv_token(rb"\\xe6\\x97\\xa5 \\\\ \\'"), unescape_rwkv_token(rb"\\xFF")
    (b"\\xe6\\x97\\xa5 \\\\ '", b'v')
    """
    if b"\\" not in escaped:
        return escaped
    if b"\\" not in _PLAIN_ESCAPES.sub(b"", escaped):
        return codecs.escape_decode(escaped)[0]
    out = bytearray()
    escaping = False
    hex_remaining = hex_acc = 0
    for c in escaped:
        if hex_remaining:
            signed = c - 256 if c >= 0x80 else c
            value = (signed - 0x61 + 10) if signed >= 0x61 else (signed - 0x30)
            hex_acc = ((hex_acc << 4) + value) & 0xFF
            hex_remaining -= 1
            if not hex_remaining:
                out.append(hex_acc)
                hex_acc = 0
        elif escaping:
            if c == 0x78:   # x
                hex_remaining = 2
            else:
                out.append({0x74: 0x09, 0x6E: 0x0A, 0x72: 0x0D}.get(c, c))
            escaping = False
        elif c == 0x5C:     # backslash
            escaping = True
        else:
            out.append(c)
    return bytes(out)


def rwkv_gguf_spec(meta: dict[str, object], value_types: dict[str, int], payload: bytes,
                   source: str) -> TokenizerSpec:
    """The tokenizer of a GGUF whose tokenizer.ggml.model is "rwkv".

    Parity: llama_vocab::impl::load (type RWKV: no default special ids, add_space_prefix,
    add_bos and add_eos false unless the file's keys say otherwise) and llm_tokenizer_rwkv.
    """
    texts = _token_texts(meta, source)
    n = len(texts)
    _check_key_types(meta, value_types, source)
    scores = _number_array(meta, "tokenizer.ggml.scores", n, source, default=0.0, typecodes="fi")
    types = token_types(meta, n, source)
    by_text = ids_by_text(texts, source)
    special = _special_ids(meta, value_types, n, GGUF_DEFAULT_SPECIAL, source)
    token_bytes = [unescape_rwkv_token(t) for t in texts]
    _refuse_looping_vocabulary(texts, token_bytes, source)
    end_ids = end_of_generation_ids(meta, special["eos"], n)
    keys, key_ids = trie_entries(token_bytes)
    return TokenizerSpec(
        source=source, file_format=FileFormat.GGUF, algorithm=Algorithm.RWKV, rules=ReferenceRules.LLAMA_CPP,
        vocab=Vocab(pieces=texts, scores=list(scores), types=types, special=SpecialIds(**special)),
        normalizer=None, decoder=None,
        add_bos=_flag(meta, "tokenizer.ggml.add_bos_token", False, source),
        add_eos=_flag(meta, "tokenizer.ggml.add_eos_token", False, source),
        token_attributes=tuple(token_attributes(texts, types, meta, end_ids, by_text)),
        source_data=payload,
        file_fields=gguf_file_fields(meta, value_types),
        rwkv=RwkvSpec(token_bytes=token_bytes, keys=keys, key_ids=key_ids,
                      add_space_prefix=_flag(meta, "tokenizer.ggml.add_space_prefix", False, source)))


def _refuse_looping_vocabulary(texts: list[bytes], token_bytes: list[bytes], source: str) -> None:
    """Refuse a vocabulary where a byte starts tokens but is no token by itself.

    Parity: llm_tokenizer_rwkv_session::tokenize: when the trie walk from a position passes
    no token's end it pushes token 0 and restarts at position 0, so llama.cpp loops
    forever (its output growing) on any text that ends in such a byte, and on others.
    A walk always passes one exactly when every byte that starts a token is a token.
    """
    singles = {b for b in token_bytes if len(b) == 1}
    starts = {b[:1] for b in token_bytes if b}
    dead = starts - singles
    if not dead:
        return
    byte = min(dead)
    token = next(i for i, b in enumerate(token_bytes) if b[:1] == byte)
    raise ModelFormatError(source, f"token {token} {texts[token]!r} starts with the byte {byte[0]:#04x}, "
                                   f"which is no token by itself: llama.cpp's RWKV tokenizer would loop "
                                   f"forever on a text ending in that byte (its trie walk finds no token "
                                   f"and restarts at position 0), so this vocabulary is refused")
