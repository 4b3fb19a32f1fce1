"""Read the `post_processor` section of a tokenizer.json.

TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel and Sequence, as tokenizers
0.23.3 deserializes them (processors/*.rs), plus two checks tokenizers leaves to encode time:
every special token a template names is defined, and every id a processor adds is a token of
the vocabulary.

>>> tp = read_post_processor({"type": "TemplateProcessing",
...     "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
...     "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
...     "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}, "$.post_processor", "t.json",
...     lambda i: i < 10)
>>> tp.single[0], tp.special_tokens
(TemplateSpecialToken(name='<s>', type_id=0), {'<s>': (1,)})
"""
from __future__ import annotations

from typing import Any, Callable

from . import components as c
from ._fields import Fields, as_u32, expect_type, fail, shown

IsTokenId = Callable[[int], bool]


def _token_pair(f: Fields, key: str, is_token_id: IsTokenId) -> tuple[str, int]:
    value = f.raw(key)
    path = f.at(key)
    if not (isinstance(value, list) and len(value) == 2):
        fail(f.source, path, f"expected a pair [token, id]; found {shown(value)}")
    token = expect_type(value[0], str, "a string", f.source, f"{path}[0]")
    token_id = as_u32(value[1], f.source, f"{path}[1]")
    if not is_token_id(token_id):
        fail(f.source, f"{path}[1]", f"id {token_id} of {token!r} is no token of the vocabulary")
    return token, token_id


def _template(value: Any, path: str, source: str) -> tuple[c.TemplatePiece, ...]:
    items = expect_type(value, list, "an array of template pieces", source, path)
    pieces: list[c.TemplatePiece] = []
    for i, item in enumerate(items):
        where = f"{path}[{i}]"
        obj = expect_type(item, dict, 'an object {"Sequence": ...} or {"SpecialToken": ...}', source, where)
        if len(obj) != 1 or next(iter(obj)) not in ("Sequence", "SpecialToken"):
            fail(source, where, f'expected {{"Sequence": ...}} or {{"SpecialToken": ...}}; found keys '
                 f'{", ".join(repr(k) for k in obj) or "none"}')
        kind, body = next(iter(obj.items()))
        f = Fields(body, f"{where}.{kind}", source)
        type_id = f.u32("type_id")
        if kind == "Sequence":
            pieces.append(c.TemplateSequence(f.enum(c.Sequence, "id"), type_id))
        else:
            pieces.append(c.TemplateSpecialToken(f.str("id"), type_id))
        f.done()
    return tuple(pieces)


def _special_tokens(value: Any, path: str, source: str, is_token_id: IsTokenId) -> dict[str, tuple[int, ...]]:
    obj = expect_type(value, dict, "an object of name: special token", source, path)
    result: dict[str, tuple[int, ...]] = {}
    for name, body in obj.items():
        f = Fields(body, f"{path}[{name!r}]", source)
        f.str("id")
        ids_value = f.list("ids")
        ids = tuple(as_u32(x, source, f"{f.at('ids')}[{i}]") for i, x in enumerate(ids_value))
        tokens = f.list("tokens")
        for i, token in enumerate(tokens):
            expect_type(token, str, "a string", source, f"{f.at('tokens')}[{i}]")
        for i, token_id in enumerate(ids):
            if not is_token_id(token_id):
                fail(source, f"{f.at('ids')}[{i}]", f"id {token_id} is no token of the vocabulary")
        f.done()
        result[name] = ids
    return result


def _template_processing(f: Fields, is_token_id: IsTokenId) -> c.TemplateProcessing:
    # Parity: tokenizers processors/template.rs TemplateProcessingDeserializer: all three required.
    single = _template(f.raw("single"), f.at("single"), f.source)
    pair = _template(f.raw("pair"), f.at("pair"), f.source)
    specials = _special_tokens(f.raw("special_tokens"), f.at("special_tokens"), f.source, is_token_id)
    for key, template in (("single", single), ("pair", pair)):
        for i, piece in enumerate(template):
            if isinstance(piece, c.TemplateSpecialToken) and piece.name not in specials:
                known = ", ".join(repr(name) for name in specials) or "none"
                fail(f.source, f"{f.at(key)}[{i}].SpecialToken.id",
                     f"special token {piece.name!r} is not defined in special_tokens (defined: {known})")
    return c.TemplateProcessing(single=single, pair=pair, special_tokens=specials)


def _roberta_or_bert(f: Fields, is_token_id: IsTokenId) -> c.RobertaProcessing | c.BertProcessing:
    # Parity: tokenizers processors/mod.rs PostProcessorWrapper is untagged and serde ignores the
    # tag: a "RobertaProcessing" without trim_offsets and add_prefix_space loads as BertProcessing.
    if not f.has("trim_offsets") and not f.has("add_prefix_space"):
        return c.BertProcessing(sep=_token_pair(f, "sep", is_token_id), cls=_token_pair(f, "cls", is_token_id))
    return c.RobertaProcessing(sep=_token_pair(f, "sep", is_token_id), cls=_token_pair(f, "cls", is_token_id),
                               trim_offsets=f.bool("trim_offsets"), add_prefix_space=f.bool("add_prefix_space"))


def _byte_level(f: Fields, is_token_id: IsTokenId) -> c.ByteLevel:
    return c.ByteLevel(add_prefix_space=f.bool("add_prefix_space"), trim_offsets=f.bool("trim_offsets"),
                       use_regex=f.bool("use_regex", True))


def _sequence(f: Fields, is_token_id: IsTokenId) -> c.PostProcessorSequence:
    items = f.list("processors")
    return c.PostProcessorSequence(tuple(
        _item(item, f"{f.at('processors')}[{i}]", f.source, is_token_id) for i, item in enumerate(items)))


_PROCESSORS = {
    "TemplateProcessing": _template_processing,
    "BertProcessing": lambda f, ids: c.BertProcessing(sep=_token_pair(f, "sep", ids), cls=_token_pair(f, "cls", ids)),
    "RobertaProcessing": _roberta_or_bert,
    "ByteLevel": _byte_level,
    "Sequence": _sequence,
}


def _item(value: Any, path: str, source: str, is_token_id: IsTokenId) -> c.PostProcessor:
    f = Fields(value, path, source)
    kind = f.raw("type", None)
    if not isinstance(kind, str) or kind not in _PROCESSORS:
        if kind is None:
            f.fail(None, f"missing field 'type' (a post-processor type: {', '.join(_PROCESSORS)})")
        f.fail("type", f"expected one of {', '.join(_PROCESSORS)}; found {shown(kind)}")
    result = _PROCESSORS[kind](f, is_token_id)
    f.done()
    return result


def read_post_processor(value: Any, path: str, source: str, is_token_id: IsTokenId) -> c.PostProcessor | None:
    """The `post_processor` section (null: none); `is_token_id` tells the ids the tokenizer has."""
    return None if value is None else _item(value, path, source, is_token_id)
