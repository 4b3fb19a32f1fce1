"""What the tokenizer.json -> GGUF routes share: token texts and types, the add_bos/add_eos
and special ids a post-processor implies, and checks of added tokens.

>>> add_bos_eos(None)
(False, False, None, None)
"""
from __future__ import annotations

from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec
from toksmith.vocab import TokenType

GAP_TYPE = TokenType.UNUSED


def token_list(spec: TokenizerSpec, *, user_defined_spaces: bool = True) -> tuple[list[bytes], list[int]]:
    """(texts, GGUF token types) of every id: the model's tokens NORMAL, special added tokens
    CONTROL, other added tokens USER_DEFINED (U+2581 made a space, as the converter
    pre-normalizes them), an id no token has "[PAD<id>]" UNUSED.

    Parity: conversion/base.py get_vocab_base. The converter also makes CONTROL an added token
    that only looks special (does_token_look_special); here `special` alone decides, since
    tokenizers splits a non-special added token out of the text whatever its look.
    """
    texts = list(spec.vocab.pieces)
    types = list(spec.vocab.types)
    for i, kind in enumerate(types):
        if kind == TokenType.UNDEFINED:
            texts[i], types[i] = f"[PAD{i}]".encode(), GAP_TYPE
    for token in spec.hf.added_tokens:
        if not token.special and user_defined_spaces:
            texts[token.id] = token.content.replace("\u2581", " ").encode("utf-8", "surrogatepass")
    return texts, types


def add_bos_eos(post_processor) -> tuple[bool, bool, int | None, int | None]:
    """(add_bos, add_eos, bos id, eos id) of a post-processor whose single template is
    [special]? $A [special]?; raises ValueError (the reason) for any other that adds tokens.

    Parity: gguf-py vocab.py SpecialVocab._try_load_from_tokenizer_json (TemplateProcessing:
    the first special of the single template is BOS, the last EOS).
    """
    if post_processor is None or isinstance(post_processor, c.ByteLevel):
        return False, False, None, None
    if isinstance(post_processor, c.PostProcessorSequence):
        found = [add_bos_eos(p) for p in post_processor.processors]
        adding = [f for f in found if f[0] or f[1]]
        if len(adding) > 1:
            raise ValueError("a post-processor sequence with more than one template")
        return adding[0] if adding else (False, False, None, None)
    if isinstance(post_processor, c.BertProcessing):
        return True, True, post_processor.cls[1], post_processor.sep[1]
    if isinstance(post_processor, c.TemplateProcessing):
        single = list(post_processor.single)
        bos = eos = None
        if single and isinstance(single[0], c.TemplateSpecialToken):
            bos = _one_id(post_processor, single.pop(0).name)
        if single and isinstance(single[-1], c.TemplateSpecialToken):
            eos = _one_id(post_processor, single.pop().name)
        if len(single) != 1 or not isinstance(single[0], c.TemplateSequence):
            raise ValueError("a TemplateProcessing single template other than [special] $A [special] "
                             "(llama.cpp adds at most BOS before and EOS after the text)")
        return bos is not None, eos is not None, bos, eos
    raise ValueError(f"the post-processor {type(post_processor).__name__} (llama.cpp adds at most "
                     f"BOS before and EOS after the text)")


def _one_id(template: c.TemplateProcessing, name: str) -> int:
    ids = template.special_tokens.get(name, ())
    if len(ids) != 1:
        raise ValueError(f"the template's special token {name!r} stands for {len(ids)} ids (llama.cpp adds one)")
    return ids[0]


def added_token_problems(spec: TokenizerSpec) -> list[str]:
    """Added-token options llama.cpp has no equivalent of."""
    problems = []
    for option in ("lstrip", "rstrip", "single_word"):
        names = [t.content for t in spec.hf.added_tokens if getattr(t, option)]
        if names:
            shown = ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            problems.append(f"{option} added tokens ({shown}): llama.cpp strips around a few "
                            f"token names of its own only")
    return problems
