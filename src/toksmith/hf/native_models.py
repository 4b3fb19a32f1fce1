"""tokenizer.json models -> native `Model` stages.

One builder per model type of `toksmith.hf.components` (BPE, Unigram, WordPiece,
WordLevel); a model without a native stage yet is refused by name.

>>> build_model(spec, hf)                                       # doctest: +SKIP
"""
from __future__ import annotations

from typing import Callable

from toksmith._core.hf_json_sections import MergeTable, PieceTable, TokenTable
from toksmith._core.hf_unigram import HfUnigram
from toksmith._core.model import Model
from toksmith._core.wordpiece import WordLevel, WordPiece
from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec


def build_model(spec: TokenizerSpec, hf: c.HfTokenizerSpec) -> Model:
    """The native model stage of the file's model (at JSON path `$.model`)."""
    builder = MODEL_BUILDERS.get(type(hf.model))
    if builder is None:
        from toksmith.hf.pipeline import unsupported
        raise unsupported(hf, "$.model", hf.model, "no native model for this type yet")
    return builder(spec, hf, hf.model)


def _keys_and_ids(vocab: dict[str, int]) -> tuple[list[bytes], list[int]]:
    """The tokens as UTF-8 (a lone surrogate from the JSON kept as is) and their ids."""
    if isinstance(vocab, TokenTable):
        return vocab.texts(), vocab.id_list()
    try:
        keys = list(map(str.encode, vocab))      # 5x faster than an encode with an error handler
    except UnicodeEncodeError:
        keys = [k.encode("utf-8", "surrogatepass") for k in vocab]
    return keys, list(vocab.values())


def _wordpiece(spec: TokenizerSpec, hf: c.HfTokenizerSpec, model: c.WordPieceModel) -> Model:
    # Parity: tokenizers models/wordpiece: the unk token is looked up in the model's own vocabulary
    keys, ids = _keys_and_ids(model.vocab)
    return WordPiece(keys, ids, unk_id=model.vocab.get(model.unk_token, -1),
                     prefix=model.continuing_subword_prefix.encode("utf-8", "surrogatepass"),
                     max_input_chars_per_word=model.max_input_chars_per_word)


def _wordlevel(spec: TokenizerSpec, hf: c.HfTokenizerSpec, model: c.WordLevelModel) -> Model:
    keys, ids = _keys_and_ids(model.vocab)
    return WordLevel(keys, ids, unk_id=model.vocab.get(model.unk_token, -1))


def _bpe(spec: TokenizerSpec, hf: c.HfTokenizerSpec, model: c.BpeModel) -> Model:
    """tokenizers' BPE over characters (models/bpe/model.rs), as `_core.hf_bpe.HfBpe`.

    The reader checked every merge against the vocabulary as BpeBuilder::build does, so
    each (left, right) names two tokens and the token they form."""
    from toksmith._core.hf_bpe import HfBpe
    from toksmith.hf.read_models import merged_token
    vocab = model.vocab
    merges = model.merges
    prefix = (model.continuing_subword_prefix or "").encode("utf-8", "surrogatepass")
    plen = len(prefix)
    if isinstance(vocab, TokenTable) and isinstance(merges, MergeTable) and merges.resolved_prefix_length == plen:
        # the scanner's tables (read_hf_json's fast path): resolved to ids by the reader
        texts = vocab.texts_by_id()
        lefts, rights, mergeds = merges.left_ids(), merges.right_ids(), merges.merged_ids()
        short_right = merges.any_right_at_most(plen)
    else:
        texts = [None] * (max(vocab.values(), default=-1) + 1)
        for text, i in vocab.items():
            texts[i] = text.encode("utf-8", "surrogatepass")
        lefts = [vocab[a] for a, _ in merges]
        rights = [vocab[b] for _, b in merges]
        if plen:
            mergeds = [vocab[merged_token(a, b, plen)] for a, b in merges]
        else:
            mergeds = [vocab[a + b] for a, b in merges]
        short_right = any(len(b.encode("utf-8", "surrogatepass")) <= plen for _, b in merges)
    unk = model.unk_token
    unk_id = vocab.get(unk, -1) if unk is not None else -1
    # Word::merge_all checks a popped entry by the token its pair forms now. A pair that
    # changed covers more symbols, and forms a longer text, unless a merge's right side is
    # no longer than the prefix it loses (the reader made sure none is shorter): only
    # then may a changed pair form the same token (see HfBpe._merge_heap). Without a
    # prefix that is an empty right side.
    exact = short_right
    return HfBpe.build(texts, lefts, rights, mergeds, unk_id=unk_id,
                       unk_missing=unk is not None and unk_id < 0, fuse_unk=model.fuse_unk,
                       byte_fallback=model.byte_fallback, prefix=prefix,
                       suffix=(model.end_of_word_suffix or "").encode("utf-8", "surrogatepass"),
                       ignore_merges=model.ignore_merges, exact_stale_check=exact,
                       cut_chars=[c.encode() for c in _cut_characters(model)])


def _cut_characters(model: c.BpeModel) -> list[str]:
    """The characters a word may be cut before (HfBpe.build's cut_chars): " " and U+2581
    (Llama's escaped space) where no merge joins one to a text that does not end with it.

    Before such a character c (a token) that follows another character, a merge would need
    a left side ending there and a right side starting with c; the left side's text ends
    with the character before (one character other than c), or with unk_token or a
    "<0xXX>" text. So no merge (a, b) with b starting with c and a not ending with c, and
    no unk_token ending with c, means no merge crosses that place, and the pieces merge
    on their own exactly as the whole word does."""
    if model.continuing_subword_prefix or model.end_of_word_suffix or model.ignore_merges:
        return []
    cuts = []
    merges = model.merges
    for char in (" ", "\u2581"):
        if char not in model.vocab or (model.unk_token or "").endswith(char):
            continue
        if isinstance(merges, MergeTable):
            joins = merges.any_joins_before(char.encode())
        else:
            joins = any(b.startswith(char) and not a.endswith(char) for a, b in merges)
        if not joins:
            cuts.append(char)
    return cuts


def _unigram(spec: TokenizerSpec, hf: c.HfTokenizerSpec, model: c.UnigramModel) -> Model:
    # Parity: tokenizers models/unigram/model.rs (encode_optimized, tokenize).
    if isinstance(model.vocab, PieceTable):
        pieces, scores = model.vocab.texts(), model.vocab.score_list()
    else:
        pieces = [piece.encode("utf-8", "surrogatepass") for piece, _ in model.vocab]
        scores = [score for _, score in model.vocab]
    return HfUnigram(pieces, scores,
                     -1 if model.unk_id is None else model.unk_id, model.byte_fallback)


# type of model -> builder(spec, hf, model) -> Model
MODEL_BUILDERS: dict[type, Callable[..., Model]] = {
    c.WordPieceModel: _wordpiece,
    c.WordLevelModel: _wordlevel,
    c.BpeModel: _bpe,
    c.UnigramModel: _unigram,
}
