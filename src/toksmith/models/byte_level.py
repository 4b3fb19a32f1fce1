"""The byte-level BPE family (GPT-2, Llama 3, Qwen, DeepSeek, tiktoken's encodings):
a `ByteLevelSpec` read from a GGUF or rank file becomes a `TokenizerSpec`, and that
spec becomes a compiled pipeline.

Stages, by the file's reference:

- llama.cpp (GGUF): special tokens by llama.cpp's attributes -> invalid UTF-8 made U+FFFD
  per byte (`LlamaCppUtf8Repair`; gemma4-style vocabularies also escape spaces) -> the
  pre type's native splitter (pretokenizers/llama_cpp.py) -> `ByteLevelBpe` in merges-list
  order -> BOS/EOS as the file and pre type say -> llama_detokenize's rendering.
- tiktoken (rank files): special tokens only with parse_special -> invalid UTF-8 in bytes
  input made U+FFFD as ``bytes.decode("utf-8", "replace")`` does -> the encoding's pattern
  splitter -> `ByteLevelBpe` in token-rank order -> no BOS/EOS -> the tokens' bytes.

>>> engine = build_byte_level(tokenizer_spec_of_byte_level(read_tiktoken("cl100k_base.tiktoken")))  # doctest: +SKIP
"""
from __future__ import annotations

import dataclasses

from toksmith._core.detokenizer import LlamaCppDecoder, Render
from toksmith._core.engine import Engine
from toksmith._core.normalizer import Normalizer
from toksmith._core.rank_file import missing_ranks
from toksmith._core.utf8_repair import LlamaCppUtf8Repair, PythonUtf8Repair
from toksmith.errors import UnsupportedFeatureError, UnsupportedModelError
from toksmith.models.common import bad_data_names_file, build_engine
from toksmith.pretokenizers.llama_cpp import (BPE_MODELS, BpeSession, PreTokenizerSpec, PreType,
                                              pre_tokenizer_spec, regexes_for)
from toksmith.pretokenizers.tiktoken_encodings import TiktokenPattern
from toksmith.special_tokens import TokenAttr
from toksmith.spec import (Algorithm, ByteLevelSpec, FileFormat, LoadOptions, ReferenceRules, SplitPattern,
                           TokenizerSpec)
from toksmith.vocab import SpecialIds, TokenType, Vocab

# The native splitter of each rank-file pattern.
_TIKTOKEN_PATTERNS = {SplitPattern.R50K: TiktokenPattern.R50K, SplitPattern.CL100K: TiktokenPattern.CL100K,
                      SplitPattern.O200K: TiktokenPattern.O200K}


def tokenizer_spec_of_byte_level(bl: ByteLevelSpec,
                                 load_options: LoadOptions = LoadOptions()) -> TokenizerSpec:
    """The `TokenizerSpec` of a byte-level file: its vocabulary as pieces and types (what
    `id_to_piece`, `special_tokens` and `inspect` show) and its BOS/EOS rules resolved."""
    if bl.file_format is FileFormat.GGUF:
        return _gguf_spec(bl, load_options)
    return _rank_file_spec(bl, load_options)


def _gguf_spec(bl: ByteLevelSpec, load_options) -> TokenizerSpec:
    model = BPE_MODELS[bl.gguf_model.value]
    if model.session is not BpeSession.STANDARD:
        # llama.cpp's whitespace and hybriddna sessions drop or rewrite text before BPE.
        raise UnsupportedModelError(bl.source, f"GGUF tokenizer model {bl.gguf_model.value!r} "
                                               f"(llama.cpp's {model.session.name.lower()} session) is not "
                                               f"supported yet")
    pre = pre_tokenizer_spec(bl.pre, source=bl.source)
    if pre.pre_type is PreType.WHITESPACE:
        # llama.cpp's "whitespace" pre-tokenizer goes with its whitespace session; under a
        # gpt2 model its pieces keep their spaces and llama.cpp aborts (find_bpe_rank asserts).
        raise UnsupportedModelError(bl.source, "tokenizer.ggml.pre 'whitespace' belongs to tokenizer.ggml.model "
                                               "'whitespace', which is not supported yet (llama.cpp aborts on "
                                               f"it under {bl.gguf_model.value!r})")
    vocab = bl.vocab
    special = vocab.special
    if pre.no_bos_token:
        special = dataclasses.replace(special, bos=None)
    # Parity: llama_vocab::impl::load: the file's add_bos/add_eos keys override the pre
    # type's defaults, except that GEMMA4 forces add_bos afterwards.
    add_bos = pre.add_bos if bl.add_bos is None else bl.add_bos
    if pre.force_add_bos:
        add_bos = True
    add_eos = pre.add_eos if bl.add_eos is None else bl.add_eos
    texts = [t if t is not None else b"" for t in vocab.texts]
    pieces = Vocab(pieces=texts, scores=[0.0] * len(texts),
                   types=vocab.types if vocab.types is not None else bytes([TokenType.NORMAL]) * len(texts),
                   special=special)
    bl = dataclasses.replace(bl, vocab=dataclasses.replace(vocab, special=special))
    return TokenizerSpec(source=bl.source, file_format=FileFormat.GGUF, algorithm=Algorithm.BYTE_BPE,
                         rules=ReferenceRules.LLAMA_CPP, vocab=pieces, normalizer=None, decoder=None,
                         add_bos=add_bos, add_eos=add_eos, token_attributes=bl.token_attributes,
                         source_data=bl.source_data, byte_level=bl, load_options=load_options)


def _rank_file_spec(bl: ByteLevelSpec, load_options) -> TokenizerSpec:
    vocab = bl.vocab
    n = len(vocab)
    # pieces are the tokens' raw bytes (id_to_piece shows them as UTF-8 with replacement)
    pieces = _rank_file_pieces(vocab.texts, n)
    types = bytearray([TokenType.NORMAL]) * len(vocab.texts) + bytearray([TokenType.UNDEFINED]) * (n - len(vocab.texts))
    for i in missing_ranks(vocab.texts):
        types[i] = TokenType.UNDEFINED
    for text, token_id in vocab.special_tokens.items():
        pieces[token_id] = text
        types[token_id] = TokenType.CONTROL
    return TokenizerSpec(source=bl.source, file_format=FileFormat.TIKTOKEN, algorithm=Algorithm.BYTE_BPE,
                         rules=ReferenceRules.TIKTOKEN,
                         vocab=Vocab(pieces=pieces, scores=[0.0] * n, types=bytes(types), special=SpecialIds()),
                         normalizer=None, decoder=None, source_data=bl.source_data, byte_level=bl,
                         load_options=load_options)


def _rank_file_pieces(texts: list[bytes | None], n: int) -> list[bytes]:
    """Each id's raw bytes; b"" for a rank no line gives and for the ids past the ranks."""
    pieces = list(texts)
    for i in missing_ranks(texts):
        pieces[i] = b""
    return pieces + [b""] * (n - len(texts))


def build_byte_level(spec: TokenizerSpec) -> Engine:
    """The compiled pipeline of a byte-level BPE `TokenizerSpec`."""
    bl = spec.byte_level
    if bl is None:
        raise ValueError(f"{spec.source}: not a byte-level BPE spec")
    if spec.rules is ReferenceRules.SENTENCEPIECE:
        raise UnsupportedFeatureError(f"{spec.source}: a byte-level BPE vocabulary has no "
                                      f"sentencepiece rules; use rules='llama.cpp' or 'tiktoken'")
    with bad_data_names_file(spec.source, "vocabulary"):
        model = bl.vocab.build_model()
    if bl.file_format is FileFormat.GGUF:
        pre = pre_tokenizer_spec(bl.pre, source=bl.source)
        normalizer = _llama_cpp_normalizer(pre)
        pretokenizer = pre.build_splitter()
        decoder = _llama_cpp_decoder(spec, pre)
    else:
        normalizer = PythonUtf8Repair()
        pretokenizer = _rank_file_splitter(bl)
        decoder = _tiktoken_decoder(spec)
    return build_engine(spec, normalizer=normalizer, pretokenizer=pretokenizer, model=model,
                        decoder=decoder)


def _llama_cpp_normalizer(pre: PreTokenizerSpec) -> Normalizer:
    # Parity: llama_vocab::impl::tokenize (BPE): llama_escape_whitespace (gemma4-style
    # vocabularies) before the session decodes the text as UTF-8.
    return LlamaCppUtf8Repair(escape_spaces=pre.escape_whitespaces)


def _rank_file_splitter(bl: ByteLevelSpec):
    pattern = bl.pattern
    if pattern is SplitPattern.LLAMA3:
        from toksmith._core.pretok_llama import LlamaSplitter
        return LlamaSplitter(regexes_for(PreType.LLAMA3))
    if isinstance(pattern, SplitPattern):
        return _TIKTOKEN_PATTERNS[pattern].build_splitter()
    raise UnsupportedFeatureError(
        f"{bl.source}: no native pre-tokenizer for the pattern {pattern!r}; the patterns of "
        f"OpenAI's encodings and Llama 3 are supported (pattern=SplitPattern.R50K, CL100K, O200K, LLAMA3)")


def _llama_cpp_decoder(spec: TokenizerSpec, pre: PreTokenizerSpec) -> LlamaCppDecoder:
    """Parity: llama_detokenize for BPE vocabularies: token_to_piece of every token (as
    its cache holds it, special=True), CONTROL/UNKNOWN shown only with unparse_special,
    BOS/EOS dropped by remove_special when the model adds them, clean_spaces."""
    from toksmith.formats.gguf import llama_cpp_token_pieces
    bl = spec.byte_level
    pieces = llama_cpp_token_pieces(bl, special=True, escape_whitespaces=pre.escape_whitespaces)
    attrs = spec.token_attributes or [int(TokenAttr.NORMAL)] * len(pieces)
    hidden = int(TokenAttr.CONTROL | TokenAttr.UNKNOWN)
    special_render, text_render = int(Render.RENDER_SPECIAL), int(Render.RENDER_TEXT)
    renders = bytes([special_render if a & hidden else text_render for a in attrs])
    special = spec.vocab.special
    return LlamaCppDecoder.build(pieces, renders, [-1] * len(pieces), add_space_prefix=False,
                                 add_bos=spec.add_bos, add_eos=spec.add_eos,
                                 bos_id=-1 if special.bos is None else special.bos,
                                 eos_id=-1 if special.eos is None else special.eos,
                                 clean_spaces=pre.clean_spaces)


def _tiktoken_decoder(spec: TokenizerSpec) -> LlamaCppDecoder:
    """Parity: tiktoken Encoding.decode_bytes: every token's bytes, special tokens' texts
    included; skip_special drops the special tokens; an id no token has is refused."""
    bl = spec.byte_level
    texts = bl.vocab.texts
    n = len(spec.vocab)
    pieces = _rank_file_pieces(texts, n)
    renders = bytearray([Render.RENDER_TEXT]) * len(texts) + bytearray([Render.RENDER_INVALID]) * (n - len(texts))
    for i in missing_ranks(texts):
        renders[i] = Render.RENDER_INVALID
    for text, token_id in bl.vocab.special_tokens.items():
        pieces[token_id] = text
        renders[token_id] = Render.RENDER_SPECIAL
    return LlamaCppDecoder.build(pieces, bytes(renders), [-1] * n)

