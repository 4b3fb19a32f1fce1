"""sentencepiece .model files converted to tokenizer.json by transformers' converters.

``convert(model_file, converter_name, **settings)`` runs one converter class of
transformers' ``convert_slow_tokenizer`` (T5Converter, AlbertConverter, LlamaConverter...)
on a fixture .model, as ``transformers.convert_slow_tokenizer`` runs it on a slow
tokenizer, and returns the ``tokenizers.Tokenizer`` it builds. The slow tokenizer is a
stand-in (``SlowTokenizerStandIn``) that holds ``vocab_file`` and the settings a converter
reads (``do_lower_case``, ``keep_accents``, ``legacy``, ``_extra_ids``...); its
``convert_tokens_to_ids`` looks tokens up in the vocabulary the converter itself builds,
as the real slow tokenizer (whose ids are the converted file's) does.

``from_tokenizer_class(model_file, class_name)``: transformers 5's own tokenizer classes
(``T5Tokenizer.from_pretrained`` of a folder holding the .model, offline), which build
their tokenizer.json from the .model without the converter classes.

Two repairs of transformers 5.23.0 itself, without which BPE .model files do not convert
(both raise AttributeError there):
- ``SpmConverter.tokenizer`` calls ``SentencePieceExtractor(vocab_file).extract(vocab_scores)``
  with transformers 4's signature (5.23's ``extract`` takes a model class and returns
  keyword arguments): the stand-in extractor here is transformers 4's, returning
  ``(vocab, merges)`` from ``convert_slow_tokenizer.generate_merges`` (5.23's own function).
- ``GemmaSentencePieceExtractor.extract`` reads ``self.sp``, which 5.23's extractor no
  longer sets: a SentencePieceProcessor of the file is set.
"""
from __future__ import annotations

import importlib
import json
import os
import shutil
import tempfile
import warnings

import sentencepiece as spm
import tokenizers

cst = importlib.import_module("transformers.convert_slow_tokenizer")   # the module, not the function


class _ExtractorWithV4Signature(cst.SentencePieceExtractor):
    """transformers 4's SentencePieceExtractor.extract(vocab_scores) -> (vocab, merges)."""

    def extract(self, vocab_scores=None):
        vocab = {piece.piece: i for i, piece in enumerate(self.proto.pieces)}
        return vocab, cst.generate_merges(vocab, vocab_scores)


class _GemmaExtractorWithSp(cst.GemmaSentencePieceExtractor):
    def __init__(self, model: str):
        super().__init__(model)
        self.sp = spm.SentencePieceProcessor(model_file=model)


class SlowTokenizerStandIn:
    """What a converter reads from the slow tokenizer it converts."""

    def __init__(self, vocab_file: str, **settings):
        self.vocab_file = vocab_file
        self.converter = None
        for key, value in settings.items():
            setattr(self, key, value)

    def _ids(self) -> dict[str, int]:
        vocab = self.converter.vocab(self.converter.proto)
        ids: dict[str, int] = {}
        for i, (piece, _) in enumerate(vocab):
            ids.setdefault(piece, i)
        return ids

    def convert_tokens_to_ids(self, token: str) -> int:
        ids = self._ids()
        return ids[token] if token in ids else self.converter.unk_id(self.converter.proto)

    def convert_ids_to_tokens(self, token_id: int) -> str:
        return self.converter.proto.pieces[token_id].piece


def convert(model_file: str, converter_name: str, **settings) -> tokenizers.Tokenizer:
    """The tokenizer transformers' `converter_name` builds from `model_file`."""
    base = getattr(cst, converter_name)
    repairs = {}
    if base.SpmExtractor is cst.GemmaSentencePieceExtractor:
        repairs["SpmExtractor"] = _GemmaExtractorWithSp
    elif base.SpmExtractor is cst.SentencePieceExtractor:
        repairs["SpmExtractor"] = _ExtractorWithV4Signature
    converter_class = type(converter_name, (base,), repairs)
    stand_in = SlowTokenizerStandIn(model_file, **settings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # "uses the byte fallback option which is not implemented"
        converter = converter_class(stand_in)
    stand_in.converter = converter
    return converter.converted()


def from_tokenizer_class(model_file: str, class_name: str, **kwargs) -> tokenizers.Tokenizer:
    """The tokenizer transformers 5's `class_name` builds from `model_file` (offline)."""
    import transformers
    cls = getattr(transformers, class_name)
    folder = tempfile.mkdtemp(prefix="converted_spm_")
    try:
        shutil.copy(model_file, os.path.join(folder, cls.vocab_files_names.get("vocab_file", "spiece.model")))
        tok = cls.from_pretrained(folder, local_files_only=True, **kwargs)
        return tokenizers.Tokenizer.from_str(tok.backend_tokenizer.to_str())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def components(tok: tokenizers.Tokenizer) -> str:
    """normalizer / pre-tokenizer / model / post-processor / decoder types, for reports."""
    data = json.loads(tok.to_str())

    def kind(part):
        if part is None:
            return "-"
        if part.get("type") == "Sequence":
            inner = part.get("normalizers") or part.get("pretokenizers") or part.get("processors") \
                or part.get("decoders") or []
            return "[" + ",".join(kind(p) for p in inner) + "]"
        return part.get("type", "?")
    return "/".join(kind(data.get(k)) for k in ("normalizer", "pre_tokenizer", "model", "post_processor", "decoder"))
