"""A tokenizer.json's components (`toksmith.hf.components`) become a `TokenizerSpec`, and
that spec a compiled pipeline of native stages.

Stages, as tokenizers 0.23 runs them (tokenizer/mod.rs `encode_single_sequence`):
added tokens split out of the raw text (`HfAddedTokenSplitter`) -> normalizer ->
pre-tokenizer -> model -> post-processor (the single template's ids, with add_special)
-> decoder. Each component type gets a native stage; a pipeline this version has no
native stage for is refused with `UnsupportedModelError` naming the component, never
run approximately.

>>> engine = build_hf_engine(hf_tokenizer_spec(read_hf_json(data, "tokenizer.json")))  # doctest: +SKIP
"""
from __future__ import annotations

import dataclasses

from typing import Callable

from toksmith._core.byte_unicode import byte_unicode_decode_or_keep
from toksmith._core.detokenizer import Decoder, LlamaCppDecoder, Render
from toksmith._core.engine import Engine
from toksmith._core.hf_json_sections import MergeTable, PieceTable, TokenTable
from toksmith._core.hf_added_tokens import (HF_LSTRIP, HF_NORMALIZED, HF_RSTRIP, HF_SINGLE_WORD, HF_SPECIAL,
                                            HfAddedTokenSplitter)
from toksmith._core.stage_sequences import NormalizerSequence
from toksmith._core.utf8_repair import PythonUtf8Repair
from toksmith.errors import ModelFormatError, UnsupportedModelError
from toksmith.hf import components as c
from toksmith.hf._fields import shown_component
from toksmith.hf.post_processing import engine_post_processor
from toksmith.hf.sparse_ids import densify, file_components
from toksmith.hf.special_roles import special_ids_of
from toksmith.hf.split_patterns import byte_level_splitter
from toksmith.models.common import bad_data_names_file
from toksmith.spec import Algorithm, FileFormat, ReferenceRules, TokenizerSpec
from toksmith.vocab import ByteLevelVocab, MergeOrder, TokenType, Vocab


def hf_tokenizer_spec(hf: c.HfTokenizerSpec, source_data: bytes | None = None,
                      named_specials: dict[str, str] | None = None, *, renumber: bool = True) -> TokenizerSpec:
    """The `TokenizerSpec` of a tokenizer.json: every id's piece as tokenizers'
    `id_to_token` shows it (the model's token, or the added token's content), typed
    NORMAL, CONTROL (special added token) or USER_DEFINED (other added token); its
    special ids from the file and `named_specials` (a model folder's config files,
    `toksmith.hf.special_roles`). A file whose ids are not 0..n-1 is held renumbered
    (`toksmith.hf.sparse_ids`): the spec's `sparse_ids` gives the file's ids back. With
    `renumber` false the ids stay the file's, each id without a token a gap (see
    `spec_by_file_ids`)."""
    hf, sparse_ids = densify(hf) if renumber else (hf, None)
    size = max(_model_id_end(hf.model), max([t.id + 1 for t in hf.added_tokens], default=0))
    if size == 0:
        raise ModelFormatError(hf.source, "$.model.vocab: the vocabulary is empty")
    pieces, types = _model_pieces(hf.model, size)
    for token in hf.added_tokens:
        pieces[token.id] = token.content.encode("utf-8", "surrogatepass")
        types[token.id] = TokenType.CONTROL if token.special else TokenType.USER_DEFINED
    return TokenizerSpec(source=hf.source, file_format=FileFormat.HF_JSON, algorithm=_algorithm(hf),
                         rules=ReferenceRules.HF, vocab=Vocab(pieces=pieces, scores=[0.0] * size, types=bytes(types),
                                                              special=special_ids_of(hf, pieces, named_specials)),
                         normalizer=None, decoder=None, source_data=source_data, hf=hf, sparse_ids=sparse_ids)


def spec_by_file_ids(spec: TokenizerSpec) -> TokenizerSpec:
    """A tokenizer.json's spec held renumbered (`spec.sparse_ids`), held by the file's own ids
    instead, each id without a token a gap: what the writers of formats that number tokens by
    position (GGUF, .model, .tiktoken) write, filling each gap as that format's converter does
    (a cl100k-derived file: its specials start at 100257, past its 100256 ranks). The caller
    checks that the gaps are few (`SparseIds.gaps_are_few`).

    >>> spec_by_file_ids(toksmith.load("cl100k.json").spec).vocab.piece(100256)   # doctest: +SKIP
    ''
    """
    sparse = spec.sparse_ids
    by_file_ids = hf_tokenizer_spec(file_components(spec.hf, sparse), spec.source_data, renumber=False)
    vocab = dataclasses.replace(by_file_ids.vocab, special=sparse.outward_special(spec.vocab.special))
    return dataclasses.replace(by_file_ids, vocab=vocab)


def _model_id_end(model: c.Model) -> int:
    """The model's largest id + 1 (0 when empty)."""
    vocab = model.vocab
    if isinstance(vocab, TokenTable):
        return vocab.max_id + 1
    if isinstance(model, c.UnigramModel):
        return len(vocab)
    return max(vocab.values(), default=-1) + 1


def _model_pieces(model: c.Model, size: int) -> tuple[list[bytes], bytearray]:
    """Each id's text (UTF-8, b"" for a gap) and type (NORMAL, or UNDEFINED for a gap)."""
    vocab = model.vocab
    if isinstance(vocab, TokenTable):
        pieces, present = vocab.pieces_by_id(size)
        return pieces, present.translate(_PRESENT_TO_TYPE)
    if isinstance(vocab, PieceTable):
        pieces = vocab.texts() + [b""] * (size - len(vocab))
        types = bytearray([TokenType.NORMAL]) * len(vocab) + bytearray([TokenType.UNDEFINED]) * (size - len(vocab))
        return pieces, types
    pieces = [b""] * size
    types = bytearray([TokenType.UNDEFINED]) * size
    for text, i in model_vocab(model).items():
        pieces[i] = text.encode("utf-8", "surrogatepass")
        types[i] = TokenType.NORMAL
    return pieces, types


_PRESENT_TO_TYPE = bytes([TokenType.UNDEFINED, TokenType.NORMAL]) + bytes(254)


def model_vocab(model: c.Model) -> dict[str, int]:
    """token text -> id of a model."""
    if isinstance(model, c.UnigramModel):
        return {piece: i for i, (piece, _) in enumerate(model.vocab)}
    return model.vocab


def _algorithm(hf: c.HfTokenizerSpec) -> Algorithm:
    model = hf.model
    if isinstance(model, c.BpeModel):
        return Algorithm.BYTE_BPE if is_byte_level(hf) else Algorithm.BPE
    if isinstance(model, c.UnigramModel):
        return Algorithm.UNIGRAM
    if isinstance(model, c.WordPieceModel):
        return Algorithm.WORDPIECE
    return Algorithm.WORD_LEVEL


def is_byte_level(hf: c.HfTokenizerSpec) -> bool:
    """The text reaches the model through GPT-2's byte<->unicode map (a ByteLevel
    pre-tokenizer or normalizer)."""
    return any(isinstance(p, c.ByteLevel) for p in _flat(hf.pre_tokenizer, c.PreTokenizerSequence, "pretokenizers")) \
        or any(isinstance(n, c.ByteLevelNormalizer) for n in _flat(hf.normalizer, c.NormalizerSequence, "normalizers"))


def _flat(component, sequence_type, field_name: str) -> list:
    """A component and the members of nested sequences, in order."""
    if component is None:
        return []
    if isinstance(component, sequence_type):
        return [x for member in getattr(component, field_name) for x in _flat(member, sequence_type, field_name)]
    return [component]


def unsupported(hf: c.HfTokenizerSpec, path: str, component: object, why: str = "") -> UnsupportedModelError:
    """The error for a well-formed component this version cannot run natively yet,
    naming its JSON path and type."""
    shown = shown_component(component, 200)
    return UnsupportedModelError(hf.source, f"{path}: {type(component).__name__} is not supported yet"
                                            + (f" ({why})" if why else "") + f": {shown}")


def build_hf_engine(spec: TokenizerSpec) -> Engine:
    """The compiled pipeline of a tokenizer.json `TokenizerSpec`."""
    hf = spec.hf
    if spec.algorithm is Algorithm.BYTE_BPE:
        try:
            return _build_byte_level(spec, hf)
        except UnsupportedModelError:
            # The general path runs any byte-level BPE file exactly too (ByteLevel as a
            # rewriting pre-tokenizer or normalizer, then tokenizers' BPE over characters),
            # more slowly; when it cannot either, its error names the component it lacks.
            pass
    return _build_generic(spec, hf)


# ---------------------------------------------------------------------- any pipeline

def _build_generic(spec: TokenizerSpec, hf: c.HfTokenizerSpec) -> Engine:
    """Every component of the file as its own native stage (toksmith.hf.native_*)."""
    from toksmith.hf.native_decoders import build_decoder
    from toksmith.hf.native_models import build_model
    from toksmith.hf.native_normalizers import build_root_normalizer
    from toksmith.hf.native_pretokenizers import build_pretokenizer
    normalizer = build_root_normalizer(hf)
    pretokenizer = build_pretokenizer(hf, hf.pre_tokenizer, "$.pre_tokenizer")
    with bad_data_names_file(hf.source, "$.model"):
        model = build_model(spec, hf)
    decoder = build_decoder(spec, hf)
    raw_splitter, normalized_splitter = added_token_splitters(
        hf, has_normalizer=normalizer is not None,
        normalize=normalizer.normalize_text if normalizer is not None else None)
    # Parity: tokenizers takes str; bytes given to toksmith are decoded as Python's
    # bytes.decode("utf-8", "replace") does first, before the file's own normalizer (unless
    # its first stage does that itself: a second pass over valid text costs ~8%).
    if normalizer is None:
        normalizer = PythonUtf8Repair()
    elif not _repairs_invalid_utf8(normalizer):
        normalizer = NormalizerSequence([PythonUtf8Repair(), normalizer])
    with bad_data_names_file(hf.source):
        return Engine(len(spec.vocab), spec.vocab.types, splitter=raw_splitter, normalizer=normalizer,
                      pretokenizer=pretokenizer, model=model, postprocessor=engine_post_processor(hf),
                      decoder=decoder, normalized_splitter=normalized_splitter,
                      # Parity: tokenizers' Encoding.tokens: the vocabulary's strings, except
                      # Unigram's unknown token, which shows its text (models/unigram/model.rs)
                      token_text=spec.vocab.piece, unknown_as_text=False,
                      text_shown_id=_unigram_unk_id(hf.model))


def _unigram_unk_id(model) -> int:
    """The id a Unigram model gives unknown text (tokenize shows its text), else -1."""
    return model.unk_id if isinstance(model, c.UnigramModel) and model.unk_id is not None else -1


def _repairs_invalid_utf8(stage) -> bool:
    """The stage (or the first of a sequence) decodes invalid UTF-8 as Python's "replace"
    does before its own work (HfPrecompiledNormalizer.repairs_invalid_utf8)."""
    while isinstance(stage, NormalizerSequence):
        stage = stage.members[0]
    return getattr(stage, "repairs_invalid_utf8", False)


# ---------------------------------------------------------------------- byte-level BPE

def _build_byte_level(spec: TokenizerSpec, hf: c.HfTokenizerSpec) -> Engine:
    model = hf.model
    if hf.normalizer is not None:
        raise unsupported(hf, "$.normalizer", hf.normalizer, "byte-level BPE runs without a normalizer here")
    splitter_stage = byte_level_splitter(hf)
    for name in ("continuing_subword_prefix", "end_of_word_suffix"):
        if getattr(model, name):
            raise unsupported(hf, f"$.model.{name}", model, f"{name} with a ByteLevel pre-tokenizer")
    if isinstance(model.vocab, TokenTable) and isinstance(model.merges, MergeTable):
        # the scanner's tables (read_hf_json's fast path): the same lists, made natively
        texts = model.vocab.texts_by_id()
        missing = _bytes_without_token(model.vocab.id_of_bytes)
        merges = model.merges.byte_level_blob()
    else:
        texts = [None] * (max(model.vocab.values(), default=-1) + 1)
        for text, i in model.vocab.items():
            texts[i] = text.encode("utf-8", "surrogatepass")
        present = {t for t in texts if t is not None}
        missing = _bytes_without_token(lambda text: text if text in present else None)
        # One join and one split in C instead of 280k small encodes (Llama 3). Byte-level
        # texts hold no space or newline (GPT-2's map shows them as Ġ and Ċ).
        merges = "\n".join([f"{a} {b}" for a, b in model.merges]).encode("utf-8", "surrogatepass").split(b"\n") \
            if model.merges else []
    if missing and (model.unk_token is not None or model.byte_fallback):
        # the unknown character becomes unk_token or byte tokens, which may merge further:
        # the general path's model (hf_bpe.pyx) does that
        raise unsupported(hf, "$.model.vocab", hf.model, f"byte-level vocabulary without the characters of bytes "
                                                         f"{missing[:8]}, with an unk_token or byte_fallback")
    # Parity: tokenizers BPE::merge_word: with neither, such a byte is left out before
    # merging (a vocabulary trained without ByteLevel.alphabet() lacks the bytes its
    # corpus never held).
    vocab = ByteLevelVocab(texts=texts, merge_order=MergeOrder.MERGE_LIST, merges=merges, byte_unicode=True,
                           ignore_merges=model.ignore_merges, drop_unknown_bytes=bool(missing))
    with bad_data_names_file(hf.source, "$.model"):
        bpe = vocab.build_model()
    with bad_data_names_file(hf.source):
        return Engine(len(spec.vocab), spec.vocab.types, splitter=added_token_splitter(hf),
                      # Parity: tokenizers takes str; bytes given to toksmith are decoded as
                      # Python's bytes.decode("utf-8", "replace") does first.
                      normalizer=PythonUtf8Repair(), pretokenizer=splitter_stage, model=bpe,
                      postprocessor=engine_post_processor(hf), decoder=byte_level_decoder(spec, hf),
                      token_text=spec.vocab.piece, unknown_as_text=False)   # Encoding.tokens


def _bytes_without_token(find: Callable[[bytes], object]) -> list[int]:
    """The bytes whose GPT-2 character is no token (`find`: UTF-8 text -> None when no
    token has it)."""
    from toksmith._core.byte_unicode import byte_unicode_encode
    return [b for b in range(256) if find(byte_unicode_encode(bytes([b]))) is None]


def byte_level_decoder(spec: TokenizerSpec, hf: c.HfTokenizerSpec) -> Decoder:
    """Parity: tokenizers decoders/byte_level.rs: each token's characters mapped back to
    bytes (a token with a character outside the map keeps its UTF-8), joined, decoded
    with replacement; skip_special drops the special added tokens. Any other decoder
    runs as the chain of hf/native_decoders.py."""
    if not isinstance(hf.decoder, c.ByteLevel):
        from toksmith.hf.native_decoders import build_decoder
        return build_decoder(spec, hf)
    n = len(spec.vocab)
    pieces = byte_unicode_decode_or_keep(spec.vocab.pieces)
    kinds = bytearray([Render.RENDER_TEXT]) * 256
    kinds[TokenType.CONTROL] = Render.RENDER_SPECIAL
    kinds[TokenType.UNDEFINED] = Render.RENDER_INVALID
    renders = bytes(spec.vocab.types).translate(kinds)
    return LlamaCppDecoder.build(pieces, renders, [-1] * n)


# ---------------------------------------------------------------------- added tokens

def added_token_splitter(hf: c.HfTokenizerSpec) -> HfAddedTokenSplitter | None:
    """The splitter of the added tokens of a file without a normalizer (None when it has
    no added tokens): tokens marked `normalized` are matched in a second pass."""
    if hf.normalizer is not None and any(t.normalized and t.content for t in hf.added_tokens):
        raise unsupported(hf, "$.added_tokens", next(t for t in hf.added_tokens if t.normalized),
                          "normalized added tokens under a normalizer")
    return added_token_splitters(hf, has_normalizer=False)[0]


def added_token_splitters(hf: c.HfTokenizerSpec, *, has_normalizer: bool,
                          normalize: Callable[[str], str] | None = None
                          ) -> tuple[HfAddedTokenSplitter | None, HfAddedTokenSplitter | None]:
    """(the splitter of the raw text, the splitter of each fragment's normalized text).

    Parity: tokenizers AddedVocabulary::extract_and_normalize: the tokens marked
    `normalized` are matched in the normalizer's output, the others in the raw input;
    a `normalized` token is matched by its content normalized (`normalize`: the file's
    normalizer; AddedVocabulary::add_tokens keeps that form in normalized_cache).
    Without a normalizer one splitter does both passes."""
    tokens = [t for t in hf.added_tokens if t.content]
    if not has_normalizer:
        return _splitter(tokens), None
    normalized = [t for t in tokens if t.normalized]
    texts = [normalize(t.content) if normalize is not None else t.content for t in normalized]
    return (_splitter([t for t in tokens if not t.normalized]),
            _splitter([t for t, text in zip(normalized, texts) if text], [text for text in texts if text]))


def _splitter(tokens: list[c.AddedToken], contents: list[str] | None = None) -> HfAddedTokenSplitter | None:
    """The splitter of `tokens`, matched by `contents` (default: their own contents)."""
    if not tokens:
        return None
    texts = [t.encode("utf-8", "surrogatepass") for t in (contents or [t.content for t in tokens])]
    flags = bytes((HF_SPECIAL if t.special else 0) | (HF_SINGLE_WORD if t.single_word else 0)
                  | (HF_LSTRIP if t.lstrip else 0) | (HF_RSTRIP if t.rstrip else 0)
                  | (HF_NORMALIZED if t.normalized else 0) for t in tokens)
    return HfAddedTokenSplitter.build(texts, [t.id for t in tokens], flags)
