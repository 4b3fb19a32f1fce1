"""A tokenizer.json of a SentencePiece-style pipeline as the parts of a sentencepiece .model.

What maps:
- normalizer: exactly sentencepiece's Normalize as toksmith writes it
  (hf_from_sentencepiece.whitespace_normalizers, no pre-tokenizer); or none / Precompiled
  with Metaspace; or Prepend("▁") + Replace(" " -> "▁") with no pre-tokenizer (the "legacy"
  Llama form of add_dummy_prefix). transformers' renderings of remove_extra_whitespaces
  ([Precompiled,] Strip(right) + Replace(" {2,}" -> "▁"), or Replace(" {2,}" -> " ")) are
  refused: they keep a space at the end of a text, or strip any Unicode whitespace there,
  which sentencepiece's rule does not;
- pre-tokenizer: Metaspace("▁") with prepend_scheme never (always/first add no "▁" before a
  text starting with one, which add_dummy_prefix cannot express: refused);
  split=true only when no piece holds "▁" past its first character (else sentencepiece
  could form pieces across the words tokenizers keeps apart);
- model: Unigram (scores as they are) or BPE (scores from the merge ranks,
  writers/spm_bpe_scores.py), byte_fallback (dropped when the vocabulary holds no byte
  piece: tokenizers then falls back to the unknown token), the unknown token;
- added tokens -> USER_DEFINED pieces, which sentencepiece matches in every text, as
  tokenizers extracts added tokens (no lstrip/rstrip/single_word); a special one the decoder
  writes as nothing (Replace(text -> "")), or any special one of a BPE model -> a CONTROL
  piece (never matched in text: tokenizers with parse_special off); and
- post-processor: none or a template [BOS] $A [EOS] of special added tokens: those become
  the bos/eos pieces, CONTROL (sentencepiece adds only CONTROL pieces, and never matches
  them in text).
Everything else raises UnsupportedConversionError listing every part a .model cannot hold.

>>> import toksmith
>>> parts = model_proto_parts_of_hf(toksmith.load("rut5-large/tokenizer.json").spec)   # doctest: +SKIP
>>> parts.trainer.model_type, parts.normalizer.remove_extra_whitespaces                 # doctest: +SKIP
(<ModelType.UNIGRAM: 1>, True)
"""
from __future__ import annotations

from dataclasses import dataclass

from toksmith.formats.sentencepiece import ModelType
from toksmith.hf import components as hf
from toksmith.normalizers.charsmap import CharsMapNormalizerSpec
from toksmith.spec import TokenizerSpec
from toksmith.vocab import TokenType
from toksmith.writers.common import cannot_write
from toksmith.writers.hf_from_sentencepiece import whitespace_normalizers
from toksmith.writers.spm_bpe_scores import merge_scores
from toksmith.writers.spm_model_proto import ModelProtoParts, TrainerFields

TARGET = "a sentencepiece .model"
SPACE_MARK = "\u2581"
BYTE_PIECES = {f"<0x{value:02X}>" for value in range(256)}


@dataclass(frozen=True)
class WhitespaceRules:
    """The normalizer_spec fields a tokenizer.json's normalizer and pre-tokenizer give."""

    charsmap: bytes = b""
    remove_extra_whitespaces: bool = False
    add_dummy_prefix: bool = False
    split_words: bool = False


def model_proto_parts_of_hf(spec: TokenizerSpec) -> ModelProtoParts:
    """The .model parts of a tokenizer.json spec (raises UnsupportedConversionError)."""
    pipeline = spec.hf
    missing: list[str] = []
    rules = _whitespace_rules(pipeline, missing)
    surfaces = _check_decoder(pipeline, missing)
    model = pipeline.model
    texts = [piece.decode("utf-8", "surrogatepass") for piece in spec.vocab.pieces]
    types = bytearray([TokenType.NORMAL]) * len(texts)
    for token in pipeline.added_tokens:
        if token.lstrip or token.rstrip or token.single_word:
            missing.append(f"added token {token.content!r} with lstrip/rstrip/single_word")
        # A special token the decoder writes as nothing is a CONTROL piece (sentencepiece writes
        # those as nothing and never matches them in text), as hf_from_sentencepiece writes them.
        # So is every special token of a BPE model: no merge forms its text (merge_scores, C0), so
        # with parse_special off tokenizers reads its text as text, as sentencepiece reads a CONTROL
        # piece's (transformers' Llama json keeps <s> and </s> so, its decoder writing their text).
        control = token.special and (surfaces.get(token.content) == "" or isinstance(model, hf.BpeModel))
        types[token.id] = TokenType.CONTROL if control else TokenType.USER_DEFINED
    if isinstance(model, hf.UnigramModel):
        model_type, unk_id, byte_fallback = ModelType.UNIGRAM, model.unk_id, model.byte_fallback
        scores = list(model.vocab.score_list()) + [0.0] * (len(texts) - len(model.vocab))
    elif isinstance(model, hf.BpeModel):
        model_type, byte_fallback = ModelType.BPE, model.byte_fallback
        unk_id = _bpe_unk_id(model, pipeline, missing)
        if model.continuing_subword_prefix or model.end_of_word_suffix:
            missing.append("a BPE continuing_subword_prefix / end_of_word_suffix")
        if model.ignore_merges:
            missing.append("BPE ignore_merges (words found whole in the vocabulary skip the merges)")
        if not model.fuse_unk and not model.byte_fallback:
            # Parity: SentencePieceProcessor::Encode merges a run of unknown pieces into one.
            missing.append("BPE without fuse_unk (sentencepiece gives one <unk> for a run of unknown characters)")
        scores = [0.0] * len(texts)
    else:
        raise cannot_write(spec, TARGET, missing + [f"a {type(model).__name__} (a .model holds Unigram and "
                                                    f"BPE models only)"])
    if unk_id is None:
        missing.append("an unknown token (sentencepiece needs exactly one UNKNOWN piece)")
    else:
        types[unk_id] = TokenType.UNKNOWN
    byte_fallback = _byte_fallback(byte_fallback, texts, missing)
    if byte_fallback:
        for index, text in enumerate(texts):
            if text in BYTE_PIECES:
                types[index] = TokenType.BYTE
    if rules.split_words:
        inner = next((t for t, k in zip(texts, types) if k == TokenType.NORMAL and SPACE_MARK in t[1:]), None)
        if inner is not None:
            missing.append(f"Metaspace split=true with piece {inner!r} holding {SPACE_MARK!r} inside (sentencepiece "
                           f"would form it across words)")
    bos, eos = _template_bos_eos(pipeline.post_processor, pipeline.added_tokens, missing)
    for framing in (bos, eos):
        if framing is not None:
            types[framing] = TokenType.CONTROL
    bos = bos if bos is not None else _default_control(texts, types, "<s>")
    eos = eos if eos is not None else _default_control(texts, types, "</s>")
    pad = _default_control(texts, types, "<pad>")
    if model_type is ModelType.BPE and not missing:
        normal = {t for t, k in zip(texts, types) if k == TokenType.NORMAL}
        try:
            derived = merge_scores(_vocab_dict(model), model.merges, normal)
        except ValueError as e:
            missing.append(f"a BPE merge order that no sentencepiece piece scores reproduce: {e}")
        else:
            scores = [derived.get(text, 0.0) for text in texts]
    if missing:
        raise cannot_write(spec, TARGET, missing)
    trainer = TrainerFields(
        model_type=model_type, vocab_size=len(texts), byte_fallback=byte_fallback,
        unk_id=unk_id, bos_id=-1 if bos is None else bos, eos_id=-1 if eos is None else eos,
        pad_id=-1 if pad is None else pad, unk_piece=spec.vocab.pieces[unk_id],
        bos_piece=b"" if bos is None else spec.vocab.pieces[bos],
        eos_piece=b"" if eos is None else spec.vocab.pieces[eos],
        pad_piece=b"" if pad is None else spec.vocab.pieces[pad],
        unk_surface=surfaces.get(texts[unk_id], texts[unk_id]).encode("utf-8"))
    normalizer = CharsMapNormalizerSpec(
        name="precompiled" if rules.charsmap else "identity", precompiled_charsmap=rules.charsmap,
        add_dummy_prefix=rules.add_dummy_prefix, remove_extra_whitespaces=rules.remove_extra_whitespaces,
        escape_whitespaces=True)
    return ModelProtoParts(pieces=spec.vocab.pieces, scores=scores, types=bytes(types), trainer=trainer,
                           normalizer=normalizer)


def _flatten(normalizer) -> list:
    if normalizer is None:
        return []
    if isinstance(normalizer, hf.NormalizerSequence):
        return [part for inner in normalizer.normalizers for part in _flatten(inner)]
    return [normalizer]


def _is_replace(part, pattern_type, pattern_text: str, content: str) -> bool:
    if not isinstance(part, hf.Replace) or part.content != content:
        return False
    pattern = part.pattern
    return isinstance(pattern, pattern_type) and getattr(pattern, "text", getattr(pattern, "regex", None)) == pattern_text


def _whitespace_rules(pipeline, missing: list[str]) -> WhitespaceRules:
    """normalizer_spec fields of the normalizer + pre-tokenizer (appends to `missing`)."""
    exact = _sentencepiece_rendering(pipeline)
    if exact is not None:
        return exact
    parts = _flatten(pipeline.normalizer)
    charsmap = b""
    if parts and isinstance(parts[0], hf.Precompiled):
        charsmap = parts.pop(0).charsmap
    legacy_prefix = False
    if (len(parts) == 2 and isinstance(parts[0], hf.Strip) and not parts[0].left and parts[0].right
            and _is_replace(parts[1], hf.RegexPattern, " {2,}", SPACE_MARK)) \
            or (len(parts) == 1 and _is_replace(parts[0], hf.RegexPattern, " {2,}", " ")):
        # transformers' SpmConverter renderings of remove_extra_whitespaces: not sentencepiece's rule.
        missing.append("the normalizer Replace(' {2,}') with which transformers renders sentencepiece's "
                       "remove_extra_whitespaces: tokenizers then keeps a space at the end of a text (and "
                       "Strip drops any Unicode whitespace there) where sentencepiece's rule drops trailing "
                       "spaces only, so a .model would tokenize text ending in whitespace otherwise")
        parts = []
    elif len(parts) == 2 and not charsmap and isinstance(parts[0], hf.Prepend) and parts[0].prepend == SPACE_MARK \
            and _is_replace(parts[1], hf.StringPattern, " ", SPACE_MARK):
        legacy_prefix, parts = True, []
    for part in parts:
        missing.append(f"normalizer {type(part).__name__} ({part!r:.80})")
    pre = pipeline.pre_tokenizer
    if legacy_prefix:
        if pre is not None:
            missing.append(f"pre-tokenizer {type(pre).__name__} after a Prepend normalizer")
        if any(not t.special for t in pipeline.added_tokens):
            # Parity: tokenizers AddedVocabulary::extract_and_normalize normalizes each text
            # between added tokens on its own, so Prepend adds a "▁" after each of them.
            missing.append("a Prepend normalizer with non-special added tokens (tokenizers prepends "
                           f"{SPACE_MARK!r} to the text after each of them; sentencepiece does not)")
        return WhitespaceRules(charsmap=charsmap, add_dummy_prefix=True)
    if not isinstance(pre, hf.Metaspace):
        missing.append(f"pre-tokenizer {type(pre).__name__ if pre is not None else 'none'} (a .model splits "
                       f"words as Metaspace does)")
        return WhitespaceRules(charsmap=charsmap)
    if pre.replacement != SPACE_MARK:
        missing.append(f"Metaspace replacement {pre.replacement!r} (sentencepiece writes {SPACE_MARK!r})")
    if pre.prepend_scheme is not hf.PrependScheme.NEVER:
        # Parity: tokenizers pre_tokenizers/metaspace.rs: always/first prepend "▁" only where the
        # text does not start with one; sentencepiece's add_dummy_prefix prepends to every text.
        missing.append(f"Metaspace prepend_scheme {pre.prepend_scheme.name.lower()} (tokenizers adds no "
                       f"{SPACE_MARK!r} before a text that starts with a space or {SPACE_MARK!r}, sentencepiece's "
                       f"add_dummy_prefix always does: transformers' non-legacy form; its legacy form "
                       f"Prepend + Replace converts)")
    if pre.prepend_scheme is hf.PrependScheme.ALWAYS and any(not t.special for t in pipeline.added_tokens):
        missing.append("Metaspace prepend_scheme always with non-special added tokens (tokenizers prepends "
                       "▁ after each of them; sentencepiece does not)")
    return WhitespaceRules(charsmap=charsmap, add_dummy_prefix=pre.prepend_scheme is not hf.PrependScheme.NEVER,
                           split_words=pre.split)


def _sentencepiece_rendering(pipeline) -> WhitespaceRules | None:
    """The rules of a normalizer that is exactly sentencepiece's Normalize as toksmith writes it
    (writers/hf_from_sentencepiece.whitespace_normalizers), with no pre-tokenizer; else None."""
    if pipeline.pre_tokenizer is not None:
        return None
    parts = _flatten(pipeline.normalizer)
    charsmap = parts[0].charsmap if parts and isinstance(parts[0], hf.Precompiled) else b""
    for add_dummy_prefix in (False, True):
        for remove_extra in (False, True):
            if parts == whitespace_normalizers(charsmap, add_dummy_prefix, remove_extra, True):
                return WhitespaceRules(charsmap=charsmap, remove_extra_whitespaces=remove_extra,
                                       add_dummy_prefix=add_dummy_prefix)
    return None


def _check_decoder(pipeline, missing: list[str]) -> dict[str, str]:
    """sentencepiece's decode: ▁ -> space, byte pieces -> bytes, the first space dropped, and
    reserved pieces written as Replace(text -> surface) of a special added token (as
    hf_from_sentencepiece.sentencepiece_decoder writes them). Returns those surfaces by text."""
    decoder = pipeline.decoder
    if decoder is None or isinstance(decoder, hf.Metaspace):
        return {}
    special_texts = {t.content for t in pipeline.added_tokens if t.special}
    surfaces: dict[str, str] = {}
    parts = decoder.decoders if isinstance(decoder, hf.DecoderSequence) else (decoder,)
    for part in parts:
        if isinstance(part, (hf.ByteFallback, hf.Fuse, hf.StripDecoder, hf.Metaspace)):
            continue
        if _is_replace(part, hf.StringPattern, SPACE_MARK, " "):
            continue
        if isinstance(part, hf.Replace) and isinstance(part.pattern, hf.StringPattern) \
                and part.pattern.text in special_texts:
            surfaces[part.pattern.text] = part.content
            continue
        missing.append(f"decoder {type(part).__name__} ({part!r:.80})")
    return surfaces


def _byte_fallback(byte_fallback: bool, texts: list[str], missing: list[str]) -> bool:
    """The .model's byte_fallback: a json's byte_fallback without any byte piece falls back to
    the unknown token in tokenizers (as sentencepiece without byte_fallback); some but not all
    of the 256 byte pieces cannot be written (sentencepiece refuses to load such a model).

    Parity: tokenizers models/bpe/model.rs merge_word and unigram: byte pieces are used for a
    character only when all of its bytes are in the vocabulary, else the unknown token."""
    if not byte_fallback:
        return False
    count = len(BYTE_PIECES.intersection(texts))
    if count == 0:
        return False
    if count < len(BYTE_PIECES):
        missing.append(f"byte_fallback with {count} of the 256 byte pieces (sentencepiece needs all of them)")
    return True


def _default_control(texts: list[str], types: bytearray, default_piece: str) -> int | None:
    """The id of the CONTROL piece `default_piece`, or None.

    Parity: sentencepiece TrainerSpec's defaults bos_piece "<s>", eos_piece "</s>", pad_piece
    "<pad>": sentencepiece's model finds BOS/EOS/PAD as the CONTROL piece of that text, so a
    json without a template keeps the BOS/EOS that add_bos/add_eos add."""
    index = next((i for i, text in enumerate(texts) if text == default_piece), None)
    return index if index is not None and types[index] == TokenType.CONTROL else None


def _bpe_unk_id(model, pipeline, missing: list[str]) -> int | None:
    """The BPE model's unk token, or (byte fallback, no unk_token) an added "<unk>"."""
    vocab = _vocab_dict(model)
    if model.unk_token is not None:
        if model.unk_token not in vocab:
            missing.append(f"unk_token {model.unk_token!r} is not in the vocabulary")
            return None
        return vocab[model.unk_token]
    if model.byte_fallback:
        return next((t.id for t in pipeline.added_tokens if t.content == "<unk>"), None)
    return None


def _vocab_dict(model) -> dict[str, int]:
    """{text: id} of a BPE model (a dict, or the reader's TokenTable)."""
    return model.vocab if isinstance(model.vocab, dict) else model.vocab.as_dict()


def _template_bos_eos(post, added_tokens, missing: list[str]) -> tuple[int | None, int | None]:
    """BOS/EOS ids of a `[BOS] $A [EOS]` template (either optional), special added tokens."""
    if post is None:
        return None, None
    if not isinstance(post, hf.TemplateProcessing):
        missing.append(f"post-processor {type(post).__name__}")
        return None, None
    single = list(post.single)
    sequences = [i for i, piece in enumerate(single) if isinstance(piece, hf.TemplateSequence)]
    if len(sequences) != 1 or sequences[0] > 1 or len(single) - sequences[0] > 2:
        missing.append("a post-processor template other than [BOS] $A [EOS]")
        return None, None
    found = []
    for piece in (single[:sequences[0]], single[sequences[0] + 1:]):
        if not piece:
            found.append(None)
            continue
        ids = post.special_tokens.get(piece[0].name, ())
        if len(ids) != 1 or not any(t.id == ids[0] and t.special for t in added_tokens):
            missing.append(f"template token {piece[0].name!r} (sentencepiece adds one special piece)")
            found.append(None)
        else:
            found.append(ids[0])
    return found[0], found[1]
