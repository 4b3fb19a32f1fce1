"""The byte-level BPE family (GPT-2, Llama 3, Qwen, DeepSeek, tiktoken's encodings):
a `ByteLevelSpec` read from a GGUF or rank file becomes a `TokenizerSpec`, and that
spec becomes a compiled pipeline.

Stages, by the file's reference:

- llama.cpp (GGUF): special tokens by llama.cpp's attributes -> invalid UTF-8 made U+FFFD
  per byte (`LlamaCppUtf8Repair`; gemma4-style vocabularies also escape spaces) -> the
  pre type's native splitter (pretokenizers/llama_cpp.py) -> `ByteLevelBpe` in merges-list
  order -> BOS/EOS as the file and pre type say -> llama_detokenize's rendering.
  llama.cpp's other BPE sessions wrap stages of that pipeline (_core/*.pyx):
  tokenizer.ggml.model "whitespace": `WhitespaceSegments` cuts the text at whitespace
  (dropped) and runs the splitter and BPE per segment, after `LlamaCppLowercase` when the
  file's normalizer.lowercase says so; "hybriddna": `DnaRegionSplitter` turns the
  <dna>...</dna> regions of each raw-text fragment into k-mer ids after the special-token
  splitter. The pre type "whitespace" outside the whitespace model gets `SpacedPieceGuard`,
  which refuses the texts llama.cpp aborts on.
- tiktoken (rank files): special tokens only with parse_special -> invalid UTF-8 in bytes
  input made U+FFFD as ``bytes.decode("utf-8", "replace")`` does -> the encoding's pattern
  splitter -> `ByteLevelBpe` in token-rank order -> no BOS/EOS -> the tokens' bytes.

>>> engine = build_byte_level(tokenizer_spec_of_byte_level(read_tiktoken("cl100k_base.tiktoken")))  # doctest: +SKIP
"""
from __future__ import annotations

import dataclasses

from toksmith._core.detokenizer import LlamaCppDecoder, Render
from toksmith._core.dna_regions import DnaRegionSplitter
from toksmith._core.engine import Engine
from toksmith._core.model import Model
from toksmith._core.normalizer import Normalizer
from toksmith._core.pretokenizer import PreTokenizer
from toksmith._core.rank_file import missing_ranks
from toksmith._core.spaced_piece_guard import SpacedPieceGuard
from toksmith._core.specials import SpecialSplitter
from toksmith._core.utf8_repair import LlamaCppUtf8Repair, PythonUtf8Repair
from toksmith._core.whitespace_session import LlamaCppLowercase, WhitespaceSegments
from toksmith.errors import UnsupportedFeatureError
from toksmith.models.common import bad_data_names_file, build_engine, default_splitter, special_or_text_renders
from toksmith.pretokenizers.llama_cpp import (BPE_MODELS, DNA_KMER_LENGTH, DNA_KMER_MARKER, BpeSession,
                                              PreTokenizerSpec, pre_tokenizer_spec)
from toksmith.pretokenizers.tiktoken_encodings import TiktokenPattern
from toksmith.special_tokens import TokenAttr
from toksmith.spec import (Algorithm, ByteLevelSpec, FileFormat, LoadOptions, ReferenceRules, SplitPattern,
                           TokenizerSpec)
from toksmith.vocab import ByteLevelVocab, SpecialIds, TokenType, Vocab

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
    pre = pre_tokenizer_spec(bl.pre, source=bl.source)
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
    if BPE_MODELS[bl.gguf_model.value].strip_kmer_marker:
        # Parity: llama_vocab::impl::load (hybriddna): id_to_token texts lose the k-mer
        # marker; special-token splitting and token_get_text see them so.
        from toksmith.formats.gguf import without_kmer_markers
        texts = without_kmer_markers(texts)
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
    for token_id, text in special_token_texts(vocab).items():
        pieces[token_id] = text
        types[token_id] = TokenType.CONTROL
    return TokenizerSpec(source=bl.source, file_format=FileFormat.TIKTOKEN, algorithm=Algorithm.BYTE_BPE,
                         rules=ReferenceRules.TIKTOKEN,
                         vocab=Vocab(pieces=pieces, scores=[0.0] * n, types=bytes(types), special=SpecialIds()),
                         normalizer=None, decoder=None, source_data=bl.source_data, byte_level=bl,
                         load_options=load_options)


def special_token_texts(vocab: ByteLevelVocab) -> dict[int, bytes]:
    """The text each special id decodes to: where several texts share an id, the first given.

    Parity: tiktoken 0.14 CoreBPE::new builds its decoder from an FxHashMap of the special
    tokens, so which text of a shared id wins follows that map's order; for the one
    encoding that shares ids, o200k_harmony (<|endofprompt|> and <|reserved_200018|> are
    both 200018), it is <|endofprompt|>, the first given in openai_public.py."""
    texts: dict[int, bytes] = {}
    for text, token_id in vocab.special_tokens.items():
        texts.setdefault(token_id, text)
    return texts


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
        return _build_llama_cpp(spec, model)
    # Parity: tiktoken 0.14 Encoding.encode/encode_ordinary: a str UTF-8 cannot encode is
    # re-read through text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").
    return build_engine(spec, normalizer=PythonUtf8Repair(), pretokenizer=_rank_file_splitter(bl),
                        model=model, decoder=_tiktoken_decoder(spec), joins_surrogates=True)


def _build_llama_cpp(spec: TokenizerSpec, model: Model) -> Engine:
    """The pipeline of a GGUF BPE vocabulary: the stages of llama.cpp's BPE session, and of
    the whitespace or hybriddna session around it when the tokenizer model says so."""
    bl = spec.byte_level
    pre = pre_tokenizer_spec(bl.pre, source=bl.source)
    session = BPE_MODELS[bl.gguf_model.value].session
    # Parity: llama_vocab::impl::tokenize (BPE): llama_escape_whitespace (gemma4-style
    # vocabularies) before the session decodes the text as UTF-8.
    normalizer: Normalizer = LlamaCppUtf8Repair(escape_spaces=pre.escape_whitespaces)
    pretokenizer: PreTokenizer | None = pre.build_splitter()
    splitter = None
    if session is BpeSession.WHITESPACE_SEGMENTS:
        if _whitespace_lowercase(bl, pre):
            normalizer = LlamaCppLowercase(escape_spaces=pre.escape_whitespaces)
        model = WhitespaceSegments(pretokenizer, model)
        pretokenizer = None
    elif not pre.byte_encode and not pre.escape_whitespaces:
        # Pieces of raw UTF-8 keep their spaces (pre type "whitespace"): llama.cpp aborts on
        # a pre-token of two characters or more with a space (find_bpe_rank asserts).
        pretokenizer = SpacedPieceGuard(pretokenizer)
    if session is BpeSession.DNA_KMERS:
        splitter = _dna_region_splitter(spec, pre)
    return build_engine(spec, normalizer=normalizer, pretokenizer=pretokenizer, model=model,
                        decoder=_llama_cpp_decoder(spec, pre), splitter=splitter)


def _whitespace_lowercase(bl: ByteLevelSpec, pre: PreTokenizerSpec) -> bool:
    """Parity: llama_vocab::impl::load: normalizer_opts.lowercase is true unless the pre
    name "whitespace" sets it false; the file's tokenizer.ggml.normalizer.lowercase key,
    read after, overrides both."""
    if bl.lowercase is not None:
        return bl.lowercase
    return pre.bert_lowercase if pre.bert_lowercase is not None else True


def _dna_region_splitter(spec: TokenizerSpec, pre: PreTokenizerSpec) -> SpecialSplitter | None:
    """The hybriddna stage around the file's special-token splitter; None (build_engine's
    default splitter alone) when <dna>, </dna> or <oov> is no token: llama.cpp then runs
    the plain BPE session.

    Parity: llm_tokenizer_hybriddna_session::tokenize looks the tags and every k-mer up with
    text_to_token, i.e. by the texts as stored (k-mers with their U+E000 marker)."""
    texts = spec.byte_level.vocab.texts
    ids = {}
    kmers = {}
    marker = DNA_KMER_MARKER.encode()
    for i, text in enumerate(texts):
        if text in _DNA_TAGS:
            ids[text] = i
        elif text is not None and len(text) == DNA_KMER_LENGTH + len(marker) and text.endswith(marker):
            kmers[text[:DNA_KMER_LENGTH]] = i
    if len(ids) < len(_DNA_TAGS):
        return None
    return DnaRegionSplitter(default_splitter(spec), ids[b"<dna>"], ids[b"</dna>"], ids[b"<oov>"], kmers,
                             escape_spaces=pre.escape_whitespaces)


_DNA_TAGS = frozenset({b"<dna>", b"</dna>", b"<oov>"})


def _rank_file_splitter(bl: ByteLevelSpec):
    pattern = bl.pattern
    if pattern is SplitPattern.LLAMA3:
        # Meta's Llama 3 pattern runs on tiktoken: tiktoken's Unicode tables and (?i) folding,
        # not llama.cpp's (tiktoken 0.14.0; tests/parity/test_unicode_code_point_scan.py).
        from toksmith._core.pretok_llama import LlamaSplitter
        from toksmith.formats.tiktoken import PATTERN_REGEX
        return LlamaSplitter([PATTERN_REGEX[SplitPattern.LLAMA3]], tiktoken=True)
    if isinstance(pattern, SplitPattern):
        return _TIKTOKEN_PATTERNS[pattern].build_splitter()
    from toksmith.pretokenizers.fancy_regex import PatternSyntaxError, RegexUnsupported, tiktoken_splitter
    try:
        return tiktoken_splitter(pattern)
    except PatternSyntaxError as exc:
        raise ValueError(f"{bl.source}: pattern= is not a valid regex: {exc}") from None
    except RegexUnsupported as exc:
        raise UnsupportedFeatureError(f"{bl.source}: the pattern cannot be run exactly as tiktoken runs it: "
                                      f"{exc}") from None


def _llama_cpp_decoder(spec: TokenizerSpec, pre: PreTokenizerSpec) -> LlamaCppDecoder:
    """Parity: llama_detokenize for BPE vocabularies: token_to_piece of every token (as
    its cache holds it, special=True), CONTROL/UNKNOWN shown only with unparse_special,
    BOS/EOS dropped by remove_special when the model adds them, clean_spaces."""
    from toksmith.formats.gguf import llama_cpp_token_pieces
    bl = spec.byte_level
    pieces = llama_cpp_token_pieces(bl, special=True, escape_whitespaces=pre.escape_whitespaces)
    renders = special_or_text_renders(spec.token_attributes or [int(TokenAttr.NORMAL)] * len(pieces))
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
    for token_id, text in special_token_texts(bl.vocab).items():
        pieces[token_id] = text
        renders[token_id] = Render.RENDER_SPECIAL
    return LlamaCppDecoder.build(pieces, bytes(renders), [-1] * n)

