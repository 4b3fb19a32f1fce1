"""Read a Hugging Face tokenizer.json into an `HfTokenizerSpec`.

Every component type and option tokenizers 0.23.3 deserializes, with its defaults; anything
else -- malformed JSON, a wrong type, an unknown component type or option, a merge naming a
token not in the vocab, a duplicate or out-of-range id, a template naming an undefined
special token, BPE dropout, a regex Oniguruma refuses -- is a `ModelFormatError` naming the
file and the JSON path.

>>> spec = read_hf_json(b'{"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}', "t.json")
>>> spec.model.vocab, spec.normalizer
({'a': 0}, None)
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable

from toksmith._core.hf_json_sections import (SERDE_JSON_MAX_NESTING, PieceTable, TokenTable, first_too_deep,
                                             scan_tokenizer_json)
from toksmith.gc_pause import paused_gc

from . import components as c
from ._fields import Fields, as_u32, expect_type, fail
from .json_numbers import serde_json_f64
from .read_components import read_decoder, read_normalizer, read_pre_tokenizer
from .read_encode_params import read_padding, read_truncation
from .read_models import read_model
from .read_processors import read_post_processor

_SECTIONS = ("version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer",
             "post_processor", "decoder", "model")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_SURROGATE_ESCAPE_TEXT = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def _refuse_lone_surrogates(value: Any, source: str) -> None:
    """A ModelFormatError at the first string (key or value) holding a lone surrogate.

    Parity: serde_json refuses a \\u escape of half a surrogate pair ("lone leading
    surrogate in hex escape"), so tokenizers loads no such file; Python's json accepts it."""
    stack = [(value, "$")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                _check_text(key, f"{path} (a key)", source)
                stack.append((child, f"{path}.{key}" if key.isascii() and key.isidentifier() else f"{path}[{key!r}]"))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(item))
        elif isinstance(item, str):
            _check_text(item, path, source)


def _check_text(text: str, path: str, source: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            fail(source, path, f"malformed JSON: a lone surrogate \\u{ord(text[exc.start]):04x} in a "
                               "string (tokenizers refuses the file)")


def parse_json(data: bytes | str, source: str) -> Any:
    """json.loads, with every failure (bad UTF-8, syntax, NaN, nesting, lone surrogates) a
    ModelFormatError.

    Parity: fractional numbers get the value serde_json's default parser gives them (see
    json_numbers.py), which is not always Python's float()."""
    try:
        value = json.loads(data, parse_constant=_refuse_constant, parse_float=serde_json_f64)
    except json.JSONDecodeError as exc:
        fail(source, "$", f"malformed JSON: {exc.msg} (line {exc.lineno} column {exc.colno})")
    except UnicodeDecodeError as exc:
        fail(source, "$", f"malformed JSON: not UTF-8 text ({exc.reason} at byte {exc.start})")
    except ValueError as exc:
        fail(source, "$", f"malformed JSON: {exc}")
    except RecursionError:
        fail(source, "$", "malformed JSON: nested too deeply")
    # In bytes only a \u escape gives a string a surrogate (UTF-8 cannot): walk the strings
    # only when the text holds one (a few in emoji-rich files, none in most). A str given
    # directly may hold one as a character.
    if isinstance(data, bytes):
        if _SURROGATE_ESCAPE_BYTES.search(data):
            _refuse_lone_surrogates(value, source)
    elif _SURROGATE_ESCAPE_TEXT.search(data) or not data.isascii():
        _refuse_lone_surrogates(value, source)
    return value


def _model_size(model: c.Model) -> int:
    # Parity: tokenizers Model::get_vocab_size: the number of entries, not the largest id + 1.
    return len(model.vocab)


def _model_id_of(model: c.Model) -> Callable[[str], int | None]:
    """token text -> the model's id of it, or None."""
    vocab = model.vocab
    if isinstance(vocab, PieceTable):
        return vocab.id_of
    if isinstance(model, c.UnigramModel):
        return {piece: i for i, (piece, _) in enumerate(vocab)}.get
    return vocab.get


def _added_tokens(value: Any, path: str, source: str, model: c.Model) -> tuple[c.AddedToken, ...]:
    """The added tokens with the ids tokenizers gives them; a file id that differs is an error.

    Parity: tokenizers serialization.rs TokenizerVisitor + AddedVocabulary::add_tokens: the
    file's `id` is only compared (a warning); a content already in the model keeps the model's
    id, a new one gets the next id after the model's vocab size (or after the largest added id).
    """
    items = expect_type(value, list, "an array of added tokens", source, path)
    model_id_of = _model_id_of(model)
    size = _model_size(model)
    by_content: dict[str, int] = {}
    by_id: dict[int, c.AddedToken] = {}
    next_id = size
    for i, item in enumerate(items):
        f = Fields(item, f"{path}[{i}]", source)
        file_id = f.u32("id")
        token = dict(content=f.str("content"), single_word=f.bool("single_word"), lstrip=f.bool("lstrip"),
                     rstrip=f.bool("rstrip"), normalized=f.bool("normalized"), special=f.bool("special"))
        f.done()
        content = token["content"]
        if not content:
            continue                                    # Parity: add_tokens skips empty contents
        if content in by_content:
            token_id = by_content[content]
        else:
            token_id = model_id_of(content)
            if token_id is None:
                token_id = next_id
                next_id += 1
        if file_id != token_id:
            other = by_id.get(file_id)
            owner = (f" (the id of added token {other.content!r})" if other is not None else "")
            fail(source, f.at("id"), f"id {file_id}{owner} but tokenizers gives {content!r} id {token_id}: "
                 "duplicate or out-of-range id")
        by_content[content] = token_id
        by_id[token_id] = c.AddedToken(id=token_id, **token)
    return tuple(by_id[i] for i in sorted(by_id))


def read_hf_json(data: bytes | str, source: str) -> c.HfTokenizerSpec:
    """Parse the bytes of a tokenizer.json; `source` names the file in error messages."""
    return read_hf_json_sections(data, source)[0]


def read_hf_json_sections(data: bytes | str, source: str, *,
                          read_merges: bool = True) -> tuple[c.HfTokenizerSpec, bytes | None]:
    """(`read_hf_json`'s spec, the document with `$.model.vocab` and `$.model.merges`
    replaced by null, or None where the native scanner declined the file). A trainer
    keeps the rest of the document and replaces the vocabulary:

    >>> spec, rest = read_hf_json_sections(open("tokenizer.json", "rb").read(), "x")  # doctest: +SKIP

    read_merges=False (a trainer's like= file): where the scanner takes the file, the BPE
    merges are only checked to be a JSON list, and the spec's model has none (the vocab
    and every other section are read and checked as always).
    """
    # Speed: json.loads and the merge tuples create ~1M containers; each collection of the
    # cyclic GC would walk all of them again (Llama 3: about half of the load time).
    with paused_gc():
        scanned = _read_scanned(data, source, read_merges)
        if scanned is not None:
            return scanned
        return _read(parse_tokenizer_json(data, source), source), None


def parse_tokenizer_json(data: bytes | str, source: str) -> Any:
    """`parse_json` of a whole tokenizer.json, refusing first what serde_json refuses in
    it: a byte-order mark, and nesting past its recursion limit. (The scanner declines
    both, so the plain path sees every such file.)"""
    text = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    _refuse_byte_order_mark(text, source)
    _refuse_deep_nesting(text, source)
    return parse_json(data, source)


_UTF8_BOM = b"\xef\xbb\xbf"


def _refuse_byte_order_mark(text: bytes, source: str) -> None:
    """Parity: tokenizers 0.23.3 reads the file with serde_json::from_str, which refuses a
    BOM ("expected value at line 1 column 1"); Python's json.loads skips one in bytes."""
    if text.startswith(_UTF8_BOM):
        fail(source, "$", "malformed JSON: a UTF-8 byte-order mark before the JSON (tokenizers refuses it; "
                          "save the file without one)")


def _refuse_deep_nesting(text: bytes, source: str) -> None:
    """Parity: serde_json's recursion limit: tokenizers refuses SERDE_JSON_MAX_NESTING
    nested arrays/objects anywhere in the file ("recursion limit exceeded"); json.loads
    would nest on to the interpreter's recursion limit, and the component readers recurse
    once per level."""
    at = first_too_deep(text)
    if at >= 0:
        line = text.count(b"\n", 0, at) + 1
        column = at - (text.rfind(b"\n", 0, at) + 1) + 1
        fail(source, "$", f"malformed JSON: arrays/objects nested {SERDE_JSON_MAX_NESTING} deep at line {line} "
                          f"column {column} (byte {at}): past serde_json's recursion limit, so tokenizers "
                          "refuses the file")


def _read_scanned(data: bytes | str, source: str,
                  read_merges: bool = True) -> tuple[c.HfTokenizerSpec, bytes] | None:
    """The fast path: `model.vocab` and `model.merges` read natively into tables
    (_core/hf_json_sections.pyx), json.loads for the rest; (the spec, the rest). None
    whenever the scanner or any check declines: the plain path then reads the file again
    and gives the exact result or error (messages come only from the plain path)."""
    if type(data) is not bytes:
        return None
    scanned = scan_tokenizer_json(data, read_merges=read_merges)
    if scanned is None:
        return None
    rest, vocab, merges = scanned
    try:
        obj = parse_json(rest, source)
        model = obj["model"]
        model["vocab"] = vocab
        if merges is not None:
            model["merges"] = merges
        return _read(obj, source), rest
    except Exception:       # noqa: BLE001 -- any failure: the plain path decides
        return None


def _read(obj: Any, source: str) -> c.HfTokenizerSpec:
    f = Fields(obj, "$", source)
    version = f.raw("version", "1.0")
    if version != "1.0":
        # Parity: tokenizers TokenizerVisitor: "Unknown tokenizer version".
        f.fail("version", f"expected \"1.0\"; found {version!r}")
    has_truncation = read_truncation(f.raw("truncation", None), f.at("truncation"), source)
    pad_token = read_padding(f.raw("padding", None), f.at("padding"), source)
    has_padding = pad_token is not None
    if not f.has("model"):
        f.fail(None, "missing field 'model'")
    model = read_model(f.raw("model"), f.at("model"), source)
    normalizer = read_normalizer(f.raw("normalizer", None), f.at("normalizer"), source)
    pre_tokenizer = read_pre_tokenizer(f.raw("pre_tokenizer", None), f.at("pre_tokenizer"), source)
    decoder = read_decoder(f.raw("decoder", None), f.at("decoder"), source)
    added = _added_tokens(f.raw("added_tokens", []), f.at("added_tokens"), source, model)
    size = _model_size(model)
    model_ids = model.vocab.values() if isinstance(model.vocab, dict) else None
    has_id = model.vocab.has_id if isinstance(model.vocab, TokenTable) else None
    added_ids = {t.id for t in added}

    def is_token_id(token_id: int) -> bool:
        if token_id in added_ids:
            return True
        if has_id is not None:
            return has_id(token_id)
        if model_ids is None:                           # Unigram: ids are positions
            return token_id < size
        return token_id in _id_set()

    id_cache: list[set[int]] = []

    def _id_set() -> set[int]:
        if not id_cache:
            id_cache.append(set(model_ids))
        return id_cache[0]

    post_processor = read_post_processor(f.raw("post_processor", None), f.at("post_processor"), source, is_token_id)
    f.done()
    return c.HfTokenizerSpec(source=source, model=model, normalizer=normalizer, pre_tokenizer=pre_tokenizer,
                             post_processor=post_processor, decoder=decoder, added_tokens=added,
                             has_truncation=has_truncation, has_padding=has_padding, pad_token=pad_token)


__all__ = ["read_hf_json", "parse_json", "as_u32"]
