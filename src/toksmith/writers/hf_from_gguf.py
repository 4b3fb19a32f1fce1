"""A GGUF vocabulary as tokenizers components, following llama.cpp (src/llama-vocab.cpp).

- byte-level "gpt2" vocabularies: llama.cpp's regex list of the `tokenizer.ggml.pre` name as
  Split(Regex, Isolated) pre-tokenizers, each class escape spelled to match llama.cpp's own
  Unicode tables in Oniguruma (class_tables.oniguruma_regex_for_llama_cpp) (unicode_regex_split keeps matches and the text
  between them, one regex after the other), then ByteLevel without its own regex; BPE over
  the stored texts and merges (ignore_merges where the pre name sets it); a ByteLevel
  decoder, then llama.cpp's clean_spaces passes as Replace decoders where the pre sets it.
- SPM "llama" vocabularies: Prepend("▁") (llama.cpp prefixes a space to every text fragment
  that follows a special token or starts the text, as tokenizers' normalizer does to every
  segment between added tokens) and Replace(" ", "▁"); BPE with merges from the scores
  (hf_from_sentencepiece.bpe_merges), byte_fallback; llama.cpp's token_to_piece rendering.
- WPM "bert" vocabularies: hf_from_gguf_wordpiece.py; UGM "t5" vocabularies:
  hf_from_gguf_unigram.py (each imported when used: they take added_tokens_of_types from here).
- CONTROL and UNKNOWN tokens become special added tokens (what parse_special splits out),
  USER_DEFINED tokens non-special ones (llama.cpp splits them out with or without
  parse_special), with llama.cpp's lstrip/rstrip attributes; add_bos/add_eos a template.

>>> import toksmith
>>> hf = hf_spec_from_gguf(toksmith.load("ggml-vocab-gpt-2.gguf").spec)   # doctest: +SKIP
>>> hf.pre_tokenizer.pretokenizers[-1]                                      # doctest: +SKIP
ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
"""
from __future__ import annotations

from toksmith.hf import components as c
from toksmith.pretokenizers.llama_cpp import PRE_NAMES
from toksmith.special_tokens import TokenAttr
from toksmith.spec import Algorithm, TokenizerSpec
from toksmith.vocab import TokenType
from toksmith.writers.class_tables import oniguruma_regex_for_llama_cpp
from toksmith.writers.common import cannot_write, refuse_inexact
from toksmith.writers.split_equivalence import ONIGURUMA_VERIFIED_PRE_TYPES
from toksmith.writers.hf_from_sentencepiece import SPACE_SYMBOL, bos_eos_template, bpe_merges, check_piece_types

TARGET = "a tokenizer.json"
# Parity: llama-vocab.cpp detokenize clean_spaces, first to third pass, in order.
CLEAN_SPACES_REPLACEMENTS = ((" ?", "?"), (" !", "!"), (" .", "."), (" ,", ","), (" ' ", "'"),
                             (" 's", "'s"), (" 'm", "'m"), (" 're", "'re"), (" 've", "'ve"))


def added_tokens_of_types(texts: list[str], types: bytes, attributes: tuple[int, ...] | None) -> tuple[c.AddedToken, ...]:
    """CONTROL/UNKNOWN -> special, other USER_DEFINED -> non-special added tokens, on the raw text.

    Parity: llama-vocab.cpp cache_special_tokens (attributes CONTROL | USER_DEFINED | UNKNOWN)
    and tokenizer_st_partition (only USER_DEFINED without parse_special; LSTRIP/RSTRIP). The
    attributes are llama.cpp's, which override a file's type (an end-of-generation text such as
    "</s>" stored NORMAL or USER_DEFINED becomes CONTROL); without them, from the types."""
    from_type = {TokenType.CONTROL: TokenAttr.CONTROL, TokenType.UNKNOWN: TokenAttr.UNKNOWN,
                 TokenType.USER_DEFINED: TokenAttr.USER_DEFINED}
    out = []
    for i, text in enumerate(texts):
        attr = attributes[i] if attributes is not None else from_type.get(types[i], 0)
        if not attr & (TokenAttr.CONTROL | TokenAttr.UNKNOWN | TokenAttr.USER_DEFINED) or not text:
            continue
        out.append(c.AddedToken(id=i, content=text, special=bool(attr & (TokenAttr.CONTROL | TokenAttr.UNKNOWN)), normalized=False,
                                lstrip=bool(attr & TokenAttr.LSTRIP), rstrip=bool(attr & TokenAttr.RSTRIP)))
    return tuple(out)


def hf_spec_from_gguf(spec: TokenizerSpec) -> c.HfTokenizerSpec:
    """The tokenizers components of a GGUF vocabulary (see the module docstring);
    UnsupportedConversionError naming what tokenizers cannot express."""
    if spec.byte_level is not None:
        return hf_spec_from_byte_level(spec)
    if spec.algorithm is Algorithm.SPM_BPE:
        return _llama_spm(spec)
    if spec.algorithm is Algorithm.WORDPIECE:
        from toksmith.writers.hf_from_gguf_wordpiece import hf_spec_from_wordpiece_gguf
        return hf_spec_from_wordpiece_gguf(spec)
    if spec.algorithm is Algorithm.UNIGRAM:
        from toksmith.writers.hf_from_gguf_unigram import hf_spec_from_unigram_gguf
        return hf_spec_from_unigram_gguf(spec)
    raise cannot_write(spec, TARGET, [f"a {spec.algorithm.value} vocabulary"])


def _llama_spm(spec: TokenizerSpec) -> c.HfTokenizerSpec:
    missing = check_piece_types(spec, frozenset({TokenType.USER_DEFINED}))
    texts = [piece.decode("utf-8") for piece in spec.vocab.pieces]
    norm = spec.normalizer
    if norm.precompiled_charsmap or norm.remove_extra_whitespaces:
        missing.append("a charsmap or remove_extra_whitespaces in a llama.cpp SPM vocabulary")
    steps: list[c.Normalizer] = []
    if norm.add_dummy_prefix:
        steps.append(c.Prepend(SPACE_SYMBOL))
    steps.append(c.Replace(c.StringPattern(" "), SPACE_SYMBOL))
    inexact: list[str] = []
    merges = bpe_merges(spec, texts, missing, inexact)
    unk = spec.vocab.special.unk
    model = c.BpeModel(vocab={text: i for i, text in enumerate(texts)}, merges=merges,
                       unk_token=None if unk is None else texts[unk], fuse_unk=True, byte_fallback=spec.byte_fallback)
    decoder: list[c.Decoder] = []
    if spec.byte_fallback:
        decoder.append(c.ByteFallback())
    decoder.append(c.Fuse())
    if norm.add_dummy_prefix:
        # Parity: llama-vocab.cpp detokenize: the first token drops its leading space (remove_space)
        decoder.append(c.StripDecoder(SPACE_SYMBOL, 1, 0))
    decoder.append(c.Replace(c.StringPattern(SPACE_SYMBOL), " "))
    if missing:
        raise cannot_write(spec, TARGET, missing)
    refuse_inexact(spec, TARGET, inexact)
    return c.HfTokenizerSpec(source=spec.source, model=model, normalizer=c.NormalizerSequence(tuple(steps)),
                             decoder=c.DecoderSequence(tuple(decoder)),
                             added_tokens=added_tokens_of_types(texts, spec.vocab.types, spec.token_attributes),
                             post_processor=bos_eos_template(spec, texts))


def hf_spec_from_byte_level(spec: TokenizerSpec) -> c.HfTokenizerSpec:
    """A byte-level BPE vocabulary of GGUF's "gpt2" family (rank files: hf_from_tiktoken)."""
    bl = spec.byte_level
    vocab = bl.vocab
    missing = []
    pre = PRE_NAMES.get(bl.pre or "default")
    if bl.gguf_model is None or bl.gguf_model.value != "gpt2":
        missing.append(f"a {bl.gguf_model.value if bl.gguf_model else 'non-GGUF'} BPE session "
                       "(only llama.cpp's gpt2 byte-level session is written)")
    if pre is None or not pre.byte_encode:
        missing.append(f"the pre-tokenizer {bl.pre!r}")
    elif pre.pre_type not in ONIGURUMA_VERIFIED_PRE_TYPES:
        missing.append(f"llama.cpp's pre-tokenizer {bl.pre!r}: its regexes in tokenizers' Oniguruma are not "
                       f"verified to cut as llama.cpp's splitter does")
    elif bl.add_sep or pre.add_sep:
        missing.append("add_sep (llama.cpp's SEP rule)")
    if not vocab.byte_unicode or vocab.texts.count(None):
        missing.append("token texts outside GPT-2's byte map")
    if missing:
        raise cannot_write(spec, TARGET, missing)
    texts = [t.decode("utf-8") for t in vocab.texts]
    merges = vocab.merges if isinstance(vocab.merges, list) else vocab.merges.split(b"\n")
    pairs = tuple(tuple(m.decode("utf-8").split(" ", 1)) for m in merges)
    model = c.BpeModel(vocab={text: i for i, text in enumerate(texts)}, merges=pairs,
                       ignore_merges=vocab.ignore_merges)
    splits = tuple(c.Split(c.RegexPattern(oniguruma_regex_for_llama_cpp(regex)), c.SplitBehavior.ISOLATED)
                   for regex in pre.regexes)
    pre_tokenizer = c.PreTokenizerSequence((*splits, c.ByteLevel(add_prefix_space=False, trim_offsets=False,
                                                                  use_regex=False)))
    decoders: list[c.Decoder] = [c.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)]
    if pre.clean_spaces:
        decoders += [c.Replace(c.StringPattern(a), b) for a, b in CLEAN_SPACES_REPLACEMENTS]
    types = vocab.types or bytes([TokenType.NORMAL]) * len(texts)
    return c.HfTokenizerSpec(source=spec.source, model=model, pre_tokenizer=pre_tokenizer,
                             decoder=c.DecoderSequence(tuple(decoders)),
                             added_tokens=added_tokens_of_types(texts, types, bl.token_attributes),
                             post_processor=bos_eos_template(spec, texts))
