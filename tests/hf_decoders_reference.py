"""tokenizers' decoders as the reference for toksmith's native decoder chains.

- `native(ref_decoder, texts)`: toksmith's HfDecoder for a tokenizers decoder (read back
  from its own JSON by toksmith's reader, so the reader's defaults are checked too) over a
  list of token texts (id i is texts[i]).
- `Reference(ref_decoder, texts)`: tokenizers' Tokenizer.decode over the same texts (a
  WordLevel model with that vocabulary: id_to_token gives the texts), batched in Rust;
  None for a text where tokenizers panics (its Strip decoder, see hf_decoders.pyx).
- Real vocabularies of the fixtures (`vocabulary(fixtures, name)`) and real id sequences
  (`real_ids`): each corpus line tokenized by the file's own reference library.

Example::

    ref = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback()])
    texts = vocabulary(fixtures, "llama2")
    assert native(ref, texts).decode(ids) == Reference(ref, texts).decode(ids)
"""
from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import tokenizers
from tokenizers import decoders as D
from tokenizers import models, pre_tokenizers

from tests.conftest import fixture_file
from toksmith._core.hf_decoders import HfDecoder
from toksmith.hf import components as c
from toksmith.hf.native_decoders import decoder_stages
from toksmith.hf.read_components import read_decoder

SOURCE = "decoder-test.json"
HF = c.HfTokenizerSpec(source=SOURCE, model=c.WordLevelModel(vocab={}))
VOCABULARIES = ("gpt2", "rut5", "minilm", "llama2")


def component(ref_decoder) -> c.Decoder | None:
    """toksmith's component for a tokenizers decoder (None: no decoder)."""
    if ref_decoder is None:
        return None
    return read_decoder(json.loads(ref_decoder.__getstate__()), "$.decoder", SOURCE)


def native(ref_decoder, texts: list[str], kinds: bytes | None = None) -> HfDecoder:
    stages, _ = decoder_stages(HF, component(ref_decoder), "$.decoder", False)
    return HfDecoder.build([t.encode("utf-8") for t in texts], kinds or bytes(len(texts)), stages)


def is_panic(error: BaseException) -> bool:
    return type(error).__name__ == "PanicException"


class Refused:
    """The outcome where tokenizers panics (its Strip decoder) and toksmith must refuse alike
    (ReferenceAbortsError): compared like any output, so a refusal is a comparison, not a skip."""

    def __repr__(self) -> str:
        return "<refused: tokenizers panics>"


REFUSED = Refused()


def reference_or_refused(call, *args, **kwargs):
    """tokenizers' output of `call`, or REFUSED where it panics."""
    try:
        return call(*args, **kwargs)
    except BaseException as error:       # pyo3's PanicException is a BaseException
        if not is_panic(error):
            raise
        return REFUSED


def ours_or_refused(call, *args, **kwargs):
    """toksmith's output of `call`, or REFUSED where it raises ReferenceAbortsError."""
    from toksmith.errors import ReferenceAbortsError
    try:
        return call(*args, **kwargs)
    except ReferenceAbortsError:
        return REFUSED


def decode_tokens(ref_decoder, tokens: list[str]) -> str | None:
    """tokenizers' Tokenizer::decode of token texts (no decoder: joined by spaces); None
    where tokenizers panics."""
    if ref_decoder is None:
        return " ".join(tokens)
    try:
        return ref_decoder.decode(tokens)
    except BaseException as error:       # pyo3's PanicException is a BaseException
        if not is_panic(error):
            raise
        return None


def describe(ref_decoder) -> str:
    return "no decoder" if ref_decoder is None else ref_decoder.__getstate__().decode()


class Reference:
    """Tokenizer.decode of a WordLevel tokenizer over `texts` with the decoder."""

    def __init__(self, ref_decoder, texts: list[str]):
        vocab = {t: i for i, t in enumerate(texts)}
        assert len(vocab) == len(texts), "token texts must be unique"
        self.tok = tokenizers.Tokenizer(models.WordLevel(vocab, unk_token=texts[0]))
        self.tok.decoder = ref_decoder
        self.ref_decoder = ref_decoder
        self.texts = texts

    def decode(self, ids: list[int]) -> str | None:
        return decode_tokens(self.ref_decoder, [self.texts[i] for i in ids])

    def decode_batch(self, batch: list[list[int]]) -> list[str | None]:
        try:
            return self.tok.decode_batch(batch, skip_special_tokens=False)
        except BaseException as error:
            if not is_panic(error):
                raise
            return [self.decode(ids) for ids in batch]


@functools.lru_cache(maxsize=None)
def _vocabulary(root: str, name: str) -> tuple[str, ...]:
    fixtures = Path(root)
    if name == "gpt2":
        vocab = json.loads(fixture_file(fixtures, "hf/gpt2/vocab.json").read_text(encoding="utf-8"))
        texts = sorted(vocab, key=vocab.get)
    elif name == "rut5":
        data = json.loads(fixture_file(fixtures, "hf/rut5-large/tokenizer.json").read_text(encoding="utf-8"))
        texts = [piece for piece, _ in data["model"]["vocab"]]
    elif name == "minilm":
        data = json.loads(fixture_file(fixtures, "hf/all-MiniLM-L6-v2/tokenizer.json").read_text(encoding="utf-8"))
        texts = sorted(data["model"]["vocab"], key=data["model"]["vocab"].get)
    elif name == "llama2":
        import sentencepiece
        sp = sentencepiece.SentencePieceProcessor(model_file=os.fspath(fixture_file(fixtures, "spm/llama2_tokenizer.model")))
        texts = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    else:
        raise ValueError(name)
    return tuple(texts)


def vocabulary(fixtures, name: str) -> list[str]:
    """The token texts of a fixture vocabulary, by id: GPT-2's byte-level texts (Ġhello),
    ruT5's Unigram pieces (▁), MiniLM's WordPiece vocabulary (##), Llama 2's sentencepiece
    pieces (▁, <0xXX> byte pieces)."""
    return list(_vocabulary(os.fspath(fixtures), name))


def real_ids(fixtures, name: str, lines: list[str]) -> list[list[int]]:
    """Each line's ids in that vocabulary, as the vocabulary's reference library encodes it."""
    if name == "gpt2":
        tok = tokenizers.Tokenizer(models.BPE.from_file(os.fspath(fixture_file(fixtures, "hf/gpt2/vocab.json")),
                                                        os.fspath(fixture_file(fixtures, "hf/gpt2/merges.txt"))))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        return [e.ids for e in tok.encode_batch(lines, add_special_tokens=False)]
    if name in ("rut5", "minilm"):
        path = {"rut5": "hf/rut5-large/tokenizer.json", "minilm": "hf/all-MiniLM-L6-v2/tokenizer.json"}[name]
        tok = tokenizers.Tokenizer.from_file(os.fspath(fixture_file(fixtures, path)))
        tok.no_truncation()
        tok.no_padding()
        return [e.ids for e in tok.encode_batch(lines, add_special_tokens=True)]
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=os.fspath(fixture_file(fixtures, "spm/llama2_tokenizer.model")))
    return sp.encode(lines)


# Decoders run over each vocabulary: the ones models ship with, and others that its texts
# exercise (a suffix, prefix or pad that occurs in them). Some can make tokenizers panic
# (Strip with stop > 0 on a text of only its character): both sides must refuse then.
CONFIGS = {
    "gpt2": [
        None,
        D.ByteLevel(),
        D.Fuse(),
        D.Sequence([D.ByteLevel(), D.Strip(" ", 1, 0)]),
        D.Sequence([D.Replace("\u0120", " "), D.ByteLevel()]),
        D.Sequence([D.ByteLevel(), D.Replace(" the", " THE"), D.Replace("\u00e9", "e")]),
        D.Sequence([D.Fuse(), D.ByteLevel(), D.Strip("\n", 0, 2)]),
        D.Metaspace(replacement="\u0120", prepend_scheme="always"),
        D.WordPiece(prefix="\u0120"),
        D.BPEDecoder(suffix="\u0120"),
        D.CTC(pad_token="\u0120", word_delimiter_token="\u010a"),
    ],
    "rut5": [
        D.Metaspace(),
        D.Metaspace(prepend_scheme="first"),
        D.Metaspace(prepend_scheme="never", split=False),
        D.Sequence([D.Replace("\u2581", " "), D.Strip(" ", 1, 0)]),
        D.Sequence([D.Metaspace(), D.Fuse(), D.Strip(" ", 0, 1)]),
        D.BPEDecoder(suffix="\u2581"),
    ],
    "minilm": [
        D.WordPiece(),
        D.WordPiece(cleanup=False),
        D.CTC(pad_token="[PAD]", word_delimiter_token="|"),
        D.BPEDecoder(suffix="##"),
        D.Sequence([D.WordPiece(), D.Replace("[CLS]", ""), D.Fuse(), D.Strip(" ", 1, 1)]),
    ],
    "llama2": [
        # Llama 2's tokenizer.json (transformers' LlamaConverter)
        D.Sequence([D.Replace("\u2581", " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 1, 0)]),
        D.ByteFallback(),
        D.Sequence([D.ByteFallback(), D.Metaspace(prepend_scheme="first")]),
        D.Sequence([D.Metaspace(), D.ByteFallback(), D.Fuse()]),
        D.Sequence([D.ByteFallback(), D.Fuse(), D.Metaspace()]),
        D.Sequence([D.Replace("\u2581", " "), D.ByteFallback(), D.Strip(" ", 0, 1)]),
    ],
}
