"""What a tokenizer.json post-processor does to the ids, worked out once at load time.

tokenizers runs a post-processor over a list of encodings (one per input text, two for
a pair): each processor maps that list to a new one (BertProcessing wraps every encoding
in its special tokens, TemplateProcessing lays out its template's pieces, each piece an
encoding of its own, a Sequence chains its members), and the final list is merged. Only
whole encodings are moved and special ids inserted, so the result is a fixed layout of
special ids and the input texts, one layout per add_special value. `layout` computes it
by running the processors over symbolic encodings (lists of special ids and
`Sequence` markers).

    >>> layout(bert_spec, [Sequence.A], add_special=True)        # doctest: +SKIP
    [101, <Sequence.A: 'A'>, 102]

`engine_post_processor` turns the single-text layouts into the engine's stage.
"""
from __future__ import annotations

from typing import Union

from toksmith._core.postprocessor import PostProcessor, TemplateIds, TemplateLayout
from toksmith.errors import UnsupportedModelError
from toksmith.hf import components as c
from toksmith.hf._fields import shown_component

Item = Union[int, c.Sequence]      # a special id, or where an input text goes
Encoding = list[Item]


def layout(hf: c.HfTokenizerSpec, texts: list[c.Sequence], add_special: bool) -> list[Item]:
    """The ids tokenizers gives for `texts` ([A] or [A, B]): special ids and the texts,
    in the order the templates put them (a text may be there twice, or not at all).

    UnsupportedModelError (naming the JSON path) where tokenizers would panic instead of
    giving a result."""
    encodings = _processed(hf, hf.post_processor, "$.post_processor", [[t] for t in texts], add_special)
    return [item for encoding in encodings for item in encoding]


def engine_post_processor(hf: c.HfTokenizerSpec) -> PostProcessor:
    """The engine's post-processor for one text: nothing, fixed ids around the text
    (TemplateIds), or for a layout that repeats the text the whole layout (TemplateLayout)."""
    with_special = layout(hf, [c.Sequence.A], add_special=True)
    repeats = layout(hf, [c.Sequence.A], add_special=False).count(c.Sequence.A)
    if repeats == 0 or c.Sequence.A not in with_special:
        raise UnsupportedModelError(hf.source, "$.post_processor: the single template leaves the text out "
                                               f"(it names no $A): {_shown(hf.post_processor)}")
    if repeats == 1 and with_special.count(c.Sequence.A) == 1:
        at = with_special.index(c.Sequence.A)
        prefix, suffix = with_special[:at], with_special[at + 1:]
        return TemplateIds(prefix, suffix) if prefix or suffix else PostProcessor()
    return TemplateLayout([None if item is c.Sequence.A else item for item in with_special], repeats)


def _processed(hf: c.HfTokenizerSpec, post, path: str, encodings: list[Encoding],
               add_special: bool) -> list[Encoding]:
    """Parity: tokenizers PostProcessor::process_encodings of each processor type."""
    if post is None or isinstance(post, c.ByteLevel):
        return encodings          # ByteLevel changes offsets only
    if isinstance(post, c.PostProcessorSequence):
        # processors/sequence.rs: each member gets the list the one before gave
        for i, member in enumerate(post.processors):
            encodings = _processed(hf, member, f"{path}.processors[{i}]", encodings, add_special)
        return encodings
    if isinstance(post, (c.BertProcessing, c.RobertaProcessing)):
        # processors/bert.rs, roberta.rs: nothing without add_special; the first encoding
        # becomes [CLS] ids [SEP], every later one ids [SEP] (Roberta: [SEP] ids [SEP])
        if not add_special:
            return encodings
        cls, sep = post.cls[1], post.sep[1]
        lead = [sep] if isinstance(post, c.RobertaProcessing) else []
        return [[cls, *e, sep] if i == 0 else [*lead, *e, sep] for i, e in enumerate(encodings)]
    if isinstance(post, c.TemplateProcessing):
        return _templated(hf, post, path, encodings, add_special)
    raise UnsupportedModelError(hf.source, f"{path}: {type(post).__name__} is not supported: {_shown(post)}")


def _templated(hf: c.HfTokenizerSpec, post: c.TemplateProcessing, path: str, encodings: list[Encoding],
               add_special: bool) -> list[Encoding]:
    # Parity: processors/template.rs TemplateProcessing::process_encodings: the single
    # template for one encoding, the pair one for two (others: todo!(), a panic); each
    # piece becomes an encoding of its own, special pieces only with add_special.
    if len(encodings) not in (1, 2):
        raise UnsupportedModelError(hf.source, f"{path}: tokenizers cannot apply a template to the "
                                               f"{len(encodings)} encodings the processor before it gives "
                                               f"(it panics): {_shown(post)}")
    key = "single" if len(encodings) == 1 else "pair"
    template = post.single if key == "single" else post.pair
    if template is None:
        raise ValueError(f"{hf.source}: the TemplateProcessing post-processor has no pair template")
    out: list[Encoding] = []
    for piece in template:
        if isinstance(piece, c.TemplateSequence):
            index = 0 if piece.sequence is c.Sequence.A else 1
            if index >= len(encodings):
                raise UnsupportedModelError(hf.source, f"{path}.{key}: the {key} template names "
                                                       f"${piece.sequence.value}, which a single text does not "
                                                       f"have (tokenizers panics): {_shown(post)}")
            out.append(list(encodings[index]))
        elif add_special:
            out.append(list(post.special_tokens[piece.name]))
    return out


def _shown(component: object) -> str:
    return shown_component(component, 200)
