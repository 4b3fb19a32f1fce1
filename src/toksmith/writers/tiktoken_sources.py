"""What a merge-list byte-level BPE (GGUF "gpt2" vocabulary, byte-level tokenizer.json)
holds that a tiktoken rank file can carry, and what it cannot.

`rank_source(spec)` gives a `RankSource`: the ranks ("rank = id" for every ordinary
token, raw bytes), the special tokens, the pre-tokenizer as a rank-file pattern when it
is one, and a list of what a rank file cannot carry (a BOS rule, user-defined tokens, a
normalizer, a merge list that does not encode as ranks ...). llama.cpp's clean_spaces
decode rule is not carried and not refused: it changes no id, and the references
disagree on it (see `_gguf_source`). `tiktoken_file.write_tiktoken` adds what reading the ranks back
would change, and writes only when nothing is missing.

>>> source = rank_source(toksmith.load("hf/gpt2").spec)            # doctest: +SKIP
>>> source.pattern, source.special_tokens, source.missing           # doctest: +SKIP
(<SplitPattern.R50K: 'r50k'>, {'<|endoftext|>': 50256}, [])
"""
from __future__ import annotations

from dataclasses import dataclass, field

from toksmith.hf import components as c
from toksmith.hf._fields import shown_component
from toksmith.hf.split_patterns import GPT2_REGEX, LLAMA3_REGEX, O200K_REGEX
from toksmith.formats.tiktoken import PATTERN_REGEX
from toksmith.pretokenizers.llama_cpp import pre_tokenizer_spec
from toksmith.special_tokens import TokenAttr
from toksmith.spec import FileFormat, GgufBpeModel, SplitPattern, TokenizerSpec
from toksmith.vocab import TokenType
from toksmith.writers.byte_level_merges import from_byte_unicode, merge_list_rank_problems
from toksmith.writers.class_tables import Reference
from toksmith.writers.split_equivalence import LLAMA_CPP_PATTERNS, unicode_table_differences

def oniguruma_spelling(regex: str) -> str:
    """A rank-file pattern as tokenizers' Oniguruma must be given it to cut as tiktoken
    does: cl100k's possessive interval `\\p{N}{1,3}+` is, in Oniguruma's Ruby syntax,
    `(\\p{N}{1,3})+` (any digit run); it ends its alternative, so a plain `{1,3}` cuts as
    the possessive one. (`?+`, `*+` and `++` are possessive in both.)

    >>> oniguruma_spelling("[0-9]{1,3}+|x")
    '[0-9]{1,3}|x'
    """
    return regex.replace("{1,3}+", "{1,3}")


# A tokenizer.json Split regex -> the rank-file pattern it cuts as: tiktoken's texts spelled
# for Oniguruma (cl100k's text as tiktoken writes it cuts digit runs whole in tokenizers,
# so it is no rank-file pattern there), and the texts Hugging Face's files carry.
_HF_SPLIT_PATTERNS = {**{oniguruma_spelling(regex): pattern for pattern, regex in PATTERN_REGEX.items()},
                      LLAMA3_REGEX: SplitPattern.LLAMA3, O200K_REGEX: SplitPattern.O200K}


@dataclass
class RankSource:
    """ranks: raw bytes by id (None: no rank), or None when the merge list is refused.
    special_tokens: text -> id of the tokens matched before pre-tokenization.
    pattern: the pre-tokenizer as a rank-file pattern; None when it is none of them.
    pre_tokenizer: how messages name the source's pre-tokenizer.
    missing: what a rank file cannot carry of the source.
    inexact: what a rank file's reader would cut otherwise, though the pattern is the same
    (a GGUF's llama.cpp Unicode tables vs tiktoken's); written with save(..., exact=False)."""

    ranks: list[bytes | None] | None
    special_tokens: dict[str, int]
    pattern: SplitPattern | None
    pre_tokenizer: str
    missing: list[str] = field(default_factory=list)
    inexact: list[str] = field(default_factory=list)


def rank_source(spec: TokenizerSpec) -> RankSource:
    """The `RankSource` of a merge-list byte-level BPE spec (GGUF or tokenizer.json)."""
    if spec.file_format is FileFormat.GGUF and spec.byte_level is not None:
        return _gguf_source(spec)
    if spec.file_format is FileFormat.HF_JSON and isinstance(spec.hf, c.HfTokenizerSpec):
        return _hf_source(spec, spec.hf)
    raise ValueError(f"{spec.source}: not a merge-list byte-level BPE spec")


# ---------------------------------------------------------------------- GGUF

def _gguf_source(spec: TokenizerSpec) -> RankSource:
    bl = spec.byte_level
    vocab = bl.vocab
    pre = pre_tokenizer_spec(bl.pre, source=spec.source)
    missing = []
    if bl.gguf_model is not GgufBpeModel.GPT2 or not vocab.byte_unicode:
        missing.append(f"tokenizer.ggml.model {bl.gguf_model.value!r}: a rank file's BPE is GPT-2's byte-level BPE")
    types = vocab.types or bytes([TokenType.NORMAL]) * len(vocab.texts)
    attributes = spec.token_attributes or ()
    ranks: list[bytes | None] = [None] * len(vocab.texts)
    specials: dict[str, int] = {}
    other_types: dict[str, int] = {}
    undecodable = []
    stripping = []
    for token_id, (text, token_type) in enumerate(zip(vocab.texts, types)):
        if token_type == TokenType.NORMAL:
            raw = from_byte_unicode(text.decode("utf-8", "surrogatepass")) if text is not None else None
            if raw is None:
                undecodable.append(token_id)
            ranks[token_id] = raw
        elif token_type == TokenType.CONTROL:
            specials[text.decode("utf-8", "replace")] = token_id
            if token_id < len(attributes) and attributes[token_id] & (TokenAttr.LSTRIP | TokenAttr.RSTRIP):
                stripping.append(token_id)
        elif token_type == TokenType.UNUSED:
            # A rank-file gap: llama.cpp's converter fills ids no token has with "[PAD<id>]"
            # UNUSED tokens, which llama.cpp never gives (not matched as special; a merge
            # making its text is refused below, as no rank token is that text).
            continue
        else:
            name = TokenType(token_type).name.lower().replace("_", "-")
            other_types[name] = other_types.get(name, 0) + 1
    if undecodable:
        missing.append(f"{len(undecodable)} normal tokens whose text is not GPT-2 byte<->unicode text "
                       f"(first id {undecodable[0]})")
    if other_types:
        missing.append("tokens of types " + ", ".join(f"{name} ({count})" for name, count in other_types.items())
                       + ": a rank file has ranks and special tokens only (llama.cpp matches user-defined "
                         "tokens even without parse_special)")
    if stripping:
        missing.append(f"special tokens that strip the spaces beside them (lstrip/rstrip, first id {stripping[0]})")
    if spec.add_bos or spec.add_eos or bl.add_sep or (bl.add_sep is None and pre.add_sep):
        added = [name for name, on in (("BOS", spec.add_bos), ("EOS", spec.add_eos),
                                       ("SEP", bl.add_sep or (bl.add_sep is None and pre.add_sep))) if on]
        missing.append(f"the rule adding {' and '.join(added)} with add_special (llama.cpp, pre "
                       f"{bl.pre!r}): a rank file's reader adds nothing")
    # Not carried, and not refused: llama.cpp's clean_spaces decode rule (most pre types;
    # it drops the space before punctuation when decoding). It changes no id; it is where
    # the references disagree on one vocabulary (llama.cpp decodes GPT-2's GGUF with it,
    # tiktoken decodes r50k_base without), and a rank file decodes as tiktoken does. The
    # parity tests record it.
    merges = [_raw_merge(line) for line in _merge_lines(vocab.merges)]
    if not undecodable:
        problems = merge_list_rank_problems(ranks, [m for m in merges if m is not None], vocab.ignore_merges)
        if problems:
            missing.append("merges that do not encode as ranks: " + problems[0])
            ranks = None
    else:
        ranks = None
    pattern = LLAMA_CPP_PATTERNS.get(pre.pre_type)
    inexact = [] if pattern is None else unicode_table_differences(bl.pre, Reference.TIKTOKEN)
    return RankSource(ranks=ranks, special_tokens=specials, pattern=pattern,
                      pre_tokenizer=f"llama.cpp pre {bl.pre!r}", missing=missing, inexact=inexact)


def _merge_lines(merges) -> list[bytes]:
    if merges is None:
        return []
    if isinstance(merges, bytes):
        return merges.split(b"\n") if merges else []
    return list(merges)


def _raw_merge(line: bytes) -> tuple[bytes, bytes] | None:
    """A "left right" merge line as raw bytes; None for one no byte-level part can match."""
    sides = line.decode("utf-8", "surrogatepass").split(" ")
    if len(sides) != 2:
        return None
    left, right = from_byte_unicode(sides[0]), from_byte_unicode(sides[1])
    return None if left is None or right is None else (left, right)


# ---------------------------------------------------------------------- tokenizer.json

def _hf_source(spec: TokenizerSpec, hf: c.HfTokenizerSpec) -> RankSource:
    model = hf.model
    missing = []
    if not isinstance(model, c.BpeModel):
        return RankSource(None, {}, None, "", [f"a {type(model).__name__}: a rank file holds a BPE"])
    if hf.normalizer is not None:
        missing.append(f"the normalizer {_short(hf.normalizer)}: a rank file's reader normalizes nothing")
    for name in ("continuing_subword_prefix", "end_of_word_suffix"):
        if getattr(model, name):
            missing.append(f"the model's {name} {getattr(model, name)!r}")
    added = _added_token_problems(hf)
    missing += added
    adds = _post_processor_additions(hf.post_processor)
    if adds:
        missing.append(f"the post-processor adding {', '.join(adds)} with add_special: a rank file's reader "
                       f"adds nothing")
    if not isinstance(hf.decoder, c.ByteLevel):
        missing.append(f"the decoder {_short(hf.decoder)}: a rank file decodes every token's bytes "
                       f"(a ByteLevel decoder)")
    # Added tokens that are in the model vocabulary too (GPT-2's <|endoftext|>) are special
    # tokens, not ranks. With ignore_merges such a text would be one id if a pre-token were
    # the whole text; the special tokens of the encodings a rank file is read back as are
    # all "<|...|>", which their patterns always cut ("<|", letters, "|>"), so it never is.
    special_ids = {token.id for token in hf.added_tokens}
    specials = {token.content: token.id for token in hf.added_tokens}
    vocab = model.vocab
    items = vocab.items() if not hasattr(vocab, "texts_by_id") else \
        [(t.decode("utf-8", "surrogatepass"), i) for i, t in enumerate(vocab.texts_by_id()) if t is not None]
    size = max([i + 1 for _, i in items] + [0])
    ranks: list[bytes | None] = [None] * size
    undecodable = []
    for text, token_id in items:
        if token_id in special_ids:
            continue
        raw = from_byte_unicode(text)
        if raw is None:
            undecodable.append(text)
        ranks[token_id] = raw
    if undecodable:
        missing.append(f"{len(undecodable)} model tokens whose text is not GPT-2 byte<->unicode text "
                       f"(first {undecodable[0]!r})")
        ranks = None
    else:
        merges = [(from_byte_unicode(left), from_byte_unicode(right)) for left, right in model.merges]
        problems = merge_list_rank_problems(ranks, [(a, b) for a, b in merges if a is not None and b is not None],
                                            model.ignore_merges)
        if problems:
            missing.append("merges that do not encode as ranks: " + problems[0])
            ranks = None
    pattern, described = hf_rank_pattern(hf.pre_tokenizer)
    return RankSource(ranks=ranks, special_tokens=specials, pattern=pattern, pre_tokenizer=described,
                      missing=missing)


def hf_rank_pattern(pre) -> tuple[SplitPattern | None, str]:
    """The rank-file pattern a byte-level pre-tokenizer is (None: none), and its description."""
    if isinstance(pre, c.ByteLevel) and pre.use_regex and not pre.add_prefix_space:
        # Parity: tokenizers pre_tokenizers/byte_level.rs: ByteLevel's regex is GPT-2's
        return SplitPattern.R50K, f"ByteLevel with GPT-2's regex {GPT2_REGEX!r}"
    if isinstance(pre, c.PreTokenizerSequence) and len(pre.pretokenizers) == 2:
        split, last = pre.pretokenizers
        if (isinstance(split, c.Split) and isinstance(split.pattern, c.RegexPattern) and not split.invert
                and split.behavior is c.SplitBehavior.ISOLATED and isinstance(last, c.ByteLevel)
                and not last.use_regex and not last.add_prefix_space):
            regex = split.pattern.regex
            return _HF_SPLIT_PATTERNS.get(regex), f"Split by {regex!r}, then ByteLevel"
    return None, _short(pre)


def _added_token_problems(hf: c.HfTokenizerSpec) -> list[str]:
    """Added tokens a rank file's special tokens cannot be: not special (tokenizers
    matches them always, and they are no rank), or stripping / whole-word ones."""
    plain = [t.content for t in hf.added_tokens if not t.special]
    shaped = [t.content for t in hf.added_tokens if t.lstrip or t.rstrip or t.single_word]
    out = []
    if plain:
        out.append(f"{len(plain)} added tokens that are not special (first {plain[0]!r}): a rank file's "
                   f"special tokens are matched only with parse_special")
    if shaped:
        out.append(f"{len(shaped)} added tokens with lstrip, rstrip or single_word (first {shaped[0]!r})")
    return out


def _post_processor_additions(post) -> list[str]:
    """The tokens a post-processor adds to a single sequence ([] for none)."""
    if post is None or isinstance(post, c.ByteLevel):
        return []
    if isinstance(post, c.PostProcessorSequence):
        return [name for member in post.processors for name in _post_processor_additions(member)]
    if isinstance(post, c.TemplateProcessing):
        return [piece.name for piece in post.single if isinstance(piece, c.TemplateSpecialToken)]
    if isinstance(post, (c.BertProcessing, c.RobertaProcessing)):
        return [post.cls[0], post.sep[0]]
    return [type(post).__name__]


def _short(component) -> str:
    return shown_component(component, 120)
