"""Serialize an `HfTokenizerSpec` as tokenizers 0.23 serializes a Tokenizer (`to_str()`).

Field names, field order and the defaults written are those of tokenizers' serde impls
(tokenizer/serialization.rs, normalizers/*, pre_tokenizers/*, models/*/serialization.rs,
processors/*, decoders/*): the text is compact like `Tokenizer.to_str()`. Two things the
spec does not keep are written as tokenizers writes them when absent: `truncation` and
`padding` are null, BPE `dropout` is null (the reader refuses any other dropout but 0).

>>> from toksmith.hf import components as c
>>> spec = c.HfTokenizerSpec(source="t.json", model=c.WordLevelModel(vocab={"a": 0}, unk_token="a"))
>>> hf_tokenizer_json(spec)[:60]
'{"version":"1.0","truncation":null,"padding":null,"added_tok'
"""
from __future__ import annotations

import base64
import json
from typing import Any, Callable

from toksmith._core.hf_json_sections import MergeTable, TokenTable
from toksmith._core.json_text import json_vocab_text
from toksmith.hf import components as c
from toksmith.writers.hf_json_numbers import serde_exact_text

# Where the Unigram vocab (the one part with floats) goes in the text json.dumps writes.
_UNIGRAM_VOCAB_SLOT = "\x00unigram-vocab\x00"


def _pattern(pattern: c.Pattern) -> dict[str, str]:
    if isinstance(pattern, c.StringPattern):
        return {"String": pattern.text}
    return {"Regex": pattern.regex}


# ---------------------------------------------------------------------- normalizers

def normalizer_json(n: c.Normalizer) -> dict[str, Any]:
    """One normalizer as tokenizers serializes it (normalizers/mod.rs NormalizerWrapper).

    >>> normalizer_json(c.Strip(left=True, right=False))
    {'type': 'Strip', 'strip_left': True, 'strip_right': False}
    """
    if isinstance(n, c.BertNormalizer):
        return {"type": "BertNormalizer", "clean_text": n.clean_text, "handle_chinese_chars": n.handle_chinese_chars,
                "strip_accents": n.strip_accents, "lowercase": n.lowercase}
    if isinstance(n, c.ByteLevelNormalizer):
        return {"type": "ByteLevel"}
    if isinstance(n, c.Precompiled):
        return {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(n.charsmap).decode("ascii")}
    if isinstance(n, c.Prepend):
        return {"type": "Prepend", "prepend": n.prepend}
    if isinstance(n, c.Replace):
        return {"type": "Replace", "pattern": _pattern(n.pattern), "content": n.content}
    if isinstance(n, c.Strip):
        return {"type": "Strip", "strip_left": n.left, "strip_right": n.right}
    if isinstance(n, c.NormalizerSequence):
        return {"type": "Sequence", "normalizers": [normalizer_json(x) for x in n.normalizers]}
    # Lowercase, NFC, NFD, NFKC, NFKD, Nmt, StripAccents: the type alone
    return {"type": type(n).__name__}


# ---------------------------------------------------------------------- pre-tokenizers

def _byte_level(b: c.ByteLevel) -> dict[str, Any]:
    return {"type": "ByteLevel", "add_prefix_space": b.add_prefix_space, "trim_offsets": b.trim_offsets,
            "use_regex": b.use_regex}


def _metaspace(m: c.Metaspace) -> dict[str, Any]:
    return {"type": "Metaspace", "replacement": m.replacement, "prepend_scheme": m.prepend_scheme.value,
            "split": m.split}


def pre_tokenizer_json(p: c.PreTokenizer) -> dict[str, Any]:
    """One pre-tokenizer as tokenizers serializes it (pre_tokenizers/mod.rs PreTokenizerWrapper).

    >>> pre_tokenizer_json(c.Digits(individual_digits=True))
    {'type': 'Digits', 'individual_digits': True}
    """
    if isinstance(p, c.ByteLevel):
        return _byte_level(p)
    if isinstance(p, c.Metaspace):
        return _metaspace(p)
    if isinstance(p, c.CharDelimiterSplit):
        return {"type": "CharDelimiterSplit", "delimiter": p.delimiter}
    if isinstance(p, c.Digits):
        return {"type": "Digits", "individual_digits": p.individual_digits}
    if isinstance(p, c.FixedLength):
        return {"type": "FixedLength", "length": p.length}
    if isinstance(p, c.Punctuation):
        return {"type": "Punctuation", "behavior": p.behavior.value}
    if isinstance(p, c.Split):
        return {"type": "Split", "pattern": _pattern(p.pattern), "behavior": p.behavior.value, "invert": p.invert}
    if isinstance(p, c.PreTokenizerSequence):
        return {"type": "Sequence", "pretokenizers": [pre_tokenizer_json(x) for x in p.pretokenizers]}
    # BertPreTokenizer, UnicodeScripts, Whitespace, WhitespaceSplit: the type alone
    return {"type": type(p).__name__}


# ---------------------------------------------------------------------- decoders

def decoder_json(d: c.Decoder) -> dict[str, Any]:
    """One decoder as tokenizers serializes it (decoders/mod.rs DecoderWrapper).

    >>> decoder_json(c.StripDecoder(content=" ", start=1))
    {'type': 'Strip', 'content': ' ', 'start': 1, 'stop': 0}
    """
    if isinstance(d, c.BpeDecoder):
        return {"type": "BPEDecoder", "suffix": d.suffix}
    if isinstance(d, c.ByteLevel):
        return _byte_level(d)
    if isinstance(d, c.Ctc):
        return {"type": "CTC", "pad_token": d.pad_token, "word_delimiter_token": d.word_delimiter_token,
                "cleanup": d.cleanup}
    if isinstance(d, c.Metaspace):
        return _metaspace(d)
    if isinstance(d, c.Replace):
        return {"type": "Replace", "pattern": _pattern(d.pattern), "content": d.content}
    if isinstance(d, c.StripDecoder):
        return {"type": "Strip", "content": d.content, "start": d.start, "stop": d.stop}
    if isinstance(d, c.WordPieceDecoder):
        return {"type": "WordPiece", "prefix": d.prefix, "cleanup": d.cleanup}
    if isinstance(d, c.DecoderSequence):
        return {"type": "Sequence", "decoders": [decoder_json(x) for x in d.decoders]}
    # ByteFallback, Fuse: the type alone
    return {"type": type(d).__name__}


# ---------------------------------------------------------------------- post-processors

def _template(pieces: tuple[c.TemplatePiece, ...]) -> list[dict[str, Any]]:
    out = []
    for piece in pieces:
        if isinstance(piece, c.TemplateSequence):
            out.append({"Sequence": {"id": piece.sequence.value, "type_id": piece.type_id}})
        else:
            out.append({"SpecialToken": {"id": piece.name, "type_id": piece.type_id}})
    return out


def post_processor_json(p: c.PostProcessor, token_text: Callable[[int], str]) -> dict[str, Any]:
    """One post-processor as tokenizers serializes it (processors/mod.rs PostProcessorWrapper).

    `token_text(id)` gives the `tokens` of a template's special token: the spec keeps only
    its ids (tokens only label Encoding.tokens; ids never depend on them).
    """
    if isinstance(p, c.TemplateProcessing):
        pair = p.pair if p.pair is not None else (c.TemplateSequence(c.Sequence.A),
                                                  c.TemplateSequence(c.Sequence.B, 1))
        # Parity: tokenizers processors/template.rs Tokens: serialized sorted by name.
        special = {name: {"id": name, "ids": list(ids), "tokens": [token_text(i) for i in ids]}
                   for name, ids in sorted(p.special_tokens.items())}
        return {"type": "TemplateProcessing", "single": _template(p.single), "pair": _template(pair),
                "special_tokens": special}
    if isinstance(p, c.BertProcessing):
        return {"type": "BertProcessing", "sep": list(p.sep), "cls": list(p.cls)}
    if isinstance(p, c.RobertaProcessing):
        return {"type": "RobertaProcessing", "sep": list(p.sep), "cls": list(p.cls), "trim_offsets": p.trim_offsets,
                "add_prefix_space": p.add_prefix_space}
    if isinstance(p, c.ByteLevel):
        return _byte_level(p)
    return {"type": "Sequence", "processors": [post_processor_json(x, token_text) for x in p.processors]}


# ---------------------------------------------------------------------- models

def _ordered_vocab(vocab) -> dict[str, int]:
    """token -> id in id order (tokenizers' OrderedVocabIter)."""
    items = vocab.items() if hasattr(vocab, "items") else vocab
    return dict(sorted(items, key=lambda kv: kv[1]))


def model_json(m: c.Model) -> dict[str, Any]:
    """The model section; a Unigram vocab is left as a slot that `hf_tokenizer_json` fills."""
    if isinstance(m, c.BpeModel):
        # vocab and merges: the last fields, written by _bpe_tables_text
        return {"type": "BPE", "dropout": None, "unk_token": m.unk_token,
                "continuing_subword_prefix": m.continuing_subword_prefix, "end_of_word_suffix": m.end_of_word_suffix,
                "fuse_unk": m.fuse_unk, "byte_fallback": m.byte_fallback, "ignore_merges": m.ignore_merges}
    if isinstance(m, c.UnigramModel):
        return {"type": "Unigram", "unk_id": m.unk_id, "vocab": _UNIGRAM_VOCAB_SLOT, "byte_fallback": m.byte_fallback}
    if isinstance(m, c.WordPieceModel):
        return {"type": "WordPiece", "unk_token": m.unk_token, "continuing_subword_prefix": m.continuing_subword_prefix,
                "max_input_chars_per_word": m.max_input_chars_per_word, "vocab": _ordered_vocab(m.vocab)}
    return {"type": "WordLevel", "vocab": _ordered_vocab(m.vocab), "unk_token": m.unk_token}


def _unigram_vocab_text(vocab) -> str:
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    return "[" + ",".join(f"[{dumps(piece)},{serde_exact_text(score)}]" for piece, score in vocab) + "]"


# ---------------------------------------------------------------------- the file

def _token_text_lookup(spec: c.HfTokenizerSpec) -> Callable[[int], str]:
    texts: dict[int, str] = {}

    def token_text(token_id: int) -> str:
        if not texts:
            model = spec.model
            if isinstance(model, c.UnigramModel):
                texts.update((i, piece) for i, (piece, _) in enumerate(model.vocab))
            else:
                texts.update((i, t) for t, i in model.vocab.items())
            texts.update((t.id, t.content) for t in spec.added_tokens)
        return texts.get(token_id, "")
    return token_text


def hf_tokenizer_json(spec: c.HfTokenizerSpec) -> str:
    """The tokenizer.json text of `spec` (compact, as `tokenizers.Tokenizer.to_str()`)."""
    data = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        # Parity: tokenizers AddedVocabulary serialize: sorted by id.
        "added_tokens": [{"id": t.id, "content": t.content, "single_word": t.single_word, "lstrip": t.lstrip,
                          "rstrip": t.rstrip, "normalized": t.normalized, "special": t.special}
                         for t in sorted(spec.added_tokens, key=lambda t: t.id)],
        "normalizer": None if spec.normalizer is None else normalizer_json(spec.normalizer),
        "pre_tokenizer": None if spec.pre_tokenizer is None else pre_tokenizer_json(spec.pre_tokenizer),
        "post_processor": (None if spec.post_processor is None
                           else post_processor_json(spec.post_processor, _token_text_lookup(spec))),
        "decoder": None if spec.decoder is None else decoder_json(spec.decoder),
        "model": model_json(spec.model),
    }
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    model = spec.model
    if isinstance(model, c.UnigramModel):
        # the model is the last section: its slot is the last occurrence
        before, slot, after = text.rpartition(json.dumps(_UNIGRAM_VOCAB_SLOT))
        text = before + _unigram_vocab_text(model.vocab) + after
    elif isinstance(model, c.BpeModel):
        text = with_bpe_tables(text, *_bpe_tables_text(model))
    return text


def with_bpe_tables(document: str, vocab: str, merges: str) -> str:
    """`document` (compact JSON) ends with its BPE model, which lacks vocab and merges:
    they are added as the model's last fields (as tokenizers writes them).

    >>> with_bpe_tables('{"model":{"type":"BPE"}}', '{"a":0}', '[]')
    '{"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}'
    """
    if not document.endswith("}}"):
        raise ValueError("the document must end with its model object")
    return f'{document[:-2]},"vocab":{vocab},"merges":{merges}}}}}'


def _bpe_tables_text(model: c.BpeModel) -> tuple[str, str]:
    """The model's vocab and merges as JSON text: written natively from the reader's
    tables (32k merges in 2 ms, not 40), else by json.dumps."""
    compact = {"ensure_ascii": False, "separators": (",", ":")}
    vocab = (json_vocab_text(model.vocab.texts_by_id()).decode("utf-8") if isinstance(model.vocab, TokenTable)
             else json.dumps(_ordered_vocab(model.vocab), **compact))
    merges = (model.merges.json_text().decode("utf-8") if isinstance(model.merges, MergeTable)
              else json.dumps([list(pair) for pair in model.merges], **compact))
    return vocab, merges
