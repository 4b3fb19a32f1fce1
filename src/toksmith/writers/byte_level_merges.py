"""Byte-level BPE as ranks (tiktoken) and as a merge list (GPT-2, tokenizer.json, GGUF).

tiktoken merges, in a piece, the adjacent pair whose concatenation has the lowest rank
(the leftmost of equals); a merge-list BPE merges the adjacent pair that comes first in
its merge list. The two meet through each token's *canonical split*: the two parts that
tiktoken's BPE, run on the token's bytes alone, merges last.

Why the canonical split is all that matters. Take any state tiktoken reaches while
encoding any text, and two adjacent parts `a`, `b` whose bytes make a token `t`. Every
merge that built `a` and `b` stayed inside the span of `t` (parts only grow, and `a`, `b`
tile the span now), and each was the lowest-ranked, leftmost pair of the whole state, so
also of the pairs inside the span; pairs inside the span change only by merges inside
it. So the merges inside the span are exactly those tiktoken does on `t`'s bytes alone,
up to the state [a, b], after which that run merges (a, b) into t. Hence (a, b) is t's
canonical split, and t is *reachable* (tiktoken on t's bytes alone ends in t). In words:
in any state tiktoken reaches, an adjacent pair whose concatenation is a token is that
token's canonical split.

- ranks -> merges (`merge_list_vocab`): one merge per reachable token, its canonical
  split, in rank order. By induction on the steps, a merge-list BPE with those merges
  has, in every state, the same candidate pairs as tiktoken with the same order, so it
  merges the same pairs; with `ignore_merges` (a piece that is a token is one id, as
  tiktoken's `encode_ordinary` does) it also gives an unreachable token for a piece that
  is that token. This is how Hugging Face's tiktoken-derived files are made, with one
  merge per token instead of every split (transformers' TikTokenConverter lists them all).
- merges -> ranks (`merge_list_rank_problems`): a merge list behaves as the ranks "token
  id = rank" when (1) every pair it could merge has a token for a result (else the merge
  list makes a part tiktoken never makes), (2) every reachable token's canonical split is
  in the list, and (3) those canonical merges come in the order of their tokens' ids.
  Then, in every state, the merge list's candidates are the canonical pairs tiktoken has
  (2, and every other listed pair is never adjacent with its concatenation a token, by
  the fact above), ordered alike (3): the same merges, step by step. Finally (4) a piece
  that is a token gives that token: with ignore_merges always, else only when every
  token is reachable. Extra merges (other splits, as transformers writes them) are
  harmless. The check is sufficient, not necessary: it may refuse a list that happens to
  behave alike (a merge listed twice, which tokenizers and llama.cpp resolve differently,
  or a merge to a text no rank token has, even one that can never apply), never accept
  one that behaves otherwise.

>>> v = ByteLevelVocab(texts=[bytes([b]) for b in range(256)] + [b"ab", b"abc"],
...                    merge_order=MergeOrder.TOKEN_RANK, ignore_merges=True)
>>> merge_list_vocab(v).merges[-2:]
[b'a b', b'ab c']
"""
from __future__ import annotations

from collections.abc import Sequence

from toksmith.errors import UnsupportedConversionError
from toksmith.vocab import ByteLevelVocab, MergeOrder

# A rank no pair has (above every rank a file can give).
_NO_RANK = 1 << 62


def _byte_chars() -> str:
    """The 256 characters of GPT-2's byte<->unicode map, by byte."""
    from toksmith._core.byte_unicode import byte_unicode_encode
    return "".join(byte_unicode_encode(bytes([b])).decode("utf-8") for b in range(256))


_BYTE_CHARS = _byte_chars()
# str.translate table: the latin-1 character of each byte -> its byte<->unicode character.
_TO_BYTE_UNICODE = {b: _BYTE_CHARS[b] for b in range(256)}
_FROM_BYTE_UNICODE = {ord(_BYTE_CHARS[b]): b for b in range(256)}
_MAP_CHARS = frozenset(_BYTE_CHARS)


def to_byte_unicode(raw: bytes) -> str:
    """The GPT-2 byte<->unicode text of raw bytes (one character per byte).

    >>> to_byte_unicode(b" hi\\n")
    'Ġhi\\u010a'
    """
    return raw.decode("latin-1").translate(_TO_BYTE_UNICODE)


def from_byte_unicode(text: str) -> bytes | None:
    """The raw bytes a byte<->unicode text stands for; None when a character is outside the map.

    >>> from_byte_unicode("Ġhi"), from_byte_unicode("a b")
    (b' hi', None)
    """
    if not _MAP_CHARS.issuperset(text):
        return None
    return text.translate(_FROM_BYTE_UNICODE).encode("latin-1")


def canonical_splits(texts: Sequence[bytes | None]) -> list[int]:
    """Per rank, where its token's canonical split cuts it (bytes on the left): 0 for a
    single byte or a gap (None), -1 for a token tiktoken's BPE never builds (unreachable).

    Parity: tiktoken src/lib.rs byte_pair_merge (lowest rank, leftmost), run on each
    token's bytes alone until two parts are left.

    >>> canonical_splits([b"a", b"b", b"c", b"ab", b"bc", b"abc"])
    [0, 0, 0, 1, 1, 2]
    """
    ranks = {text: rank for rank, text in enumerate(texts) if text is not None}
    get = ranks.get
    out = [0] * len(texts)
    for rank, token in enumerate(texts):
        if token is None or len(token) < 2:
            continue
        n = len(token)
        if n == 2:
            out[rank] = 1 if token[:1] in ranks and token[1:] in ranks else -1
            continue
        if n == 3:   # speed: the two pairs decide it (single bytes are tokens when it is reachable)
            first, second = get(token[:2], _NO_RANK), get(token[1:], _NO_RANK)
            if first == second == _NO_RANK:
                out[rank] = -1
            elif first <= second:
                out[rank] = 2 if token[2:] in ranks and token[:1] in ranks and token[1:2] in ranks else -1
            else:
                out[rank] = 1 if token[:1] in ranks and token[2:] in ranks and token[1:2] in ranks else -1
            continue
        bounds = list(range(n + 1))          # where the parts start, and the end
        pair_ranks = [get(token[i:i + 2], _NO_RANK) for i in range(n - 1)]
        while len(pair_ranks) > 1:
            best = min(pair_ranks)
            if best == _NO_RANK:
                break
            i = pair_ranks.index(best)       # the leftmost of the lowest
            del bounds[i + 1]
            del pair_ranks[i]
            if i > 0:
                pair_ranks[i - 1] = get(token[bounds[i - 1]:bounds[i + 1]], _NO_RANK)
            if i < len(pair_ranks):
                pair_ranks[i] = get(token[bounds[i]:bounds[i + 2]], _NO_RANK)
        reachable = len(pair_ranks) == 1 and token[:bounds[1]] in ranks and token[bounds[1]:] in ranks
        out[rank] = bounds[1] if reachable else -1
    return out


def missing_single_bytes(texts: Sequence[bytes | None]) -> list[int]:
    """The byte values no token is (tiktoken needs all 256 to encode any text)."""
    present = {text[0] for text in texts if text is not None and len(text) == 1}
    return [b for b in range(256) if b not in present]


def merge_list_vocab(vocab: ByteLevelVocab, source: str = "<ranks>") -> ByteLevelVocab:
    """`merge_list_vocab_counting_unreachable` without the count."""
    return merge_list_vocab_counting_unreachable(vocab, source)[0]


def merge_list_vocab_counting_unreachable(vocab: ByteLevelVocab,
                                          source: str = "<ranks>") -> tuple[ByteLevelVocab, int]:
    """(the merge-list vocabulary, how many rank tokens tiktoken never builds).

    The merge-list vocabulary (texts through GPT-2's byte<->unicode map, merges "left
    right" in rank order) encodes as the rank vocabulary `vocab` does; see the module
    docstring for why. Gaps stay gaps (None); special tokens are kept; a token
    tiktoken never builds gets no merge (a piece that is that token still gives it:
    ignore_merges). Raises UnsupportedConversionError when a byte has no token.

    >>> v = ByteLevelVocab(texts=[bytes([b]) for b in range(256)] + [b" t"],
    ...                    merge_order=MergeOrder.TOKEN_RANK, ignore_merges=True)
    >>> m, unreachable = merge_list_vocab_counting_unreachable(v)
    >>> m.texts[-1].decode(), m.merges, unreachable
    ('Ġt', [b'\\xc4\\xa0 t'], 0)
    """
    if vocab.merge_order is not MergeOrder.TOKEN_RANK or vocab.byte_unicode:
        raise ValueError(f"{source}: merge_list_vocab takes a rank vocabulary of raw bytes, "
                         f"not {vocab!r}")
    texts = vocab.texts
    missing = missing_single_bytes(texts)
    if missing:
        raise UnsupportedConversionError(
            f"the rank file {source!r}", "a merge list",
            [f"no token for the single bytes {', '.join(f'0x{b:02x}' for b in missing[:8])}"
             f"{' ...' if len(missing) > 8 else ''} ({len(missing)} in all): tiktoken cannot encode them"])
    splits = canonical_splits(texts)
    mapped = [None if t is None else to_byte_unicode(t) for t in texts]
    merges = [f"{m[:k]} {m[k:]}".encode("utf-8") for m, k in zip(mapped, splits) if k > 0]
    unreachable = splits.count(-1)
    merged = ByteLevelVocab(texts=[None if m is None else m.encode("utf-8") for m in mapped],
                            merge_order=MergeOrder.MERGE_LIST, merges=merges, byte_unicode=True,
                            ignore_merges=vocab.ignore_merges or unreachable > 0,
                            special_tokens=dict(vocab.special_tokens), special=vocab.special)
    return merged, unreachable


def merge_list_rank_problems(raw_texts: Sequence[bytes | None], merges: Sequence[tuple[bytes, bytes]],
                             ignore_merges: bool) -> list[str]:
    """Why the merge list `merges` (raw-byte pairs, best first) over the tokens
    `raw_texts` (raw bytes by id, None: not a rank token) does not encode as the ranks
    "rank = id" do under tiktoken; [] when it does (conditions 1-4 of the module docstring).

    >>> texts = [bytes([b]) for b in range(256)] + [b"ab"]
    >>> merge_list_rank_problems(texts, [(b"a", b"b")], False)
    []
    >>> merge_list_rank_problems(texts, [(b"b", b"c")], False)[0][:46]
    'a merge whose result is no token: (b"b", b"c")'
    """
    problems = []
    missing = missing_single_bytes(raw_texts)
    if missing:
        problems.append(f"no token for {len(missing)} single bytes (first 0x{missing[0]:02x}): "
                        f"tiktoken needs all 256")
        return problems
    id_of = {text: i for i, text in enumerate(raw_texts) if text is not None}
    first_index: dict[tuple[bytes, bytes], int] = {}
    for index, (left, right) in enumerate(merges):
        if left not in id_of or right not in id_of:
            continue                          # never applies: its sides are no tokens
        if left + right not in id_of:
            problems.append(f"a merge whose result is no token: ({_show(left)}, {_show(right)}) "
                            f"at {index} (merge-list BPE makes a part tiktoken never makes)")
            return problems
        if (left, right) in first_index:
            # tokenizers keeps the last of two equal merges, llama.cpp the first
            problems.append(f"the merge ({_show(left)}, {_show(right)}) is listed twice "
                            f"(at {first_index[left, right]} and {index})")
            return problems
        first_index[left, right] = index
    splits = canonical_splits(raw_texts)
    last_index, last_id = -1, -1
    for token_id, (text, k) in enumerate(zip(raw_texts, splits)):
        if k == -1 and not ignore_merges:
            problems.append(f"the token {_show(text)} (id {token_id}) is not built by BPE from its bytes "
                            f"and the merge list does not ignore merges: tiktoken gives it for a "
                            f"piece that is that token")
            return problems
        if k <= 0:
            continue
        index = first_index.get((text[:k], text[k:]))
        if index is None:
            problems.append(f"the merge ({_show(text[:k])}, {_show(text[k:])}) tiktoken makes to build "
                            f"{_show(text)} (id {token_id}) is not in the merge list")
            return problems
        if index <= last_index:
            problems.append(f"the merges are not in the order of their tokens' ids: the merge building "
                            f"id {token_id} ({_show(text)}) is at {index}, before the merge building "
                            f"id {last_id} (at {last_index})")
            return problems
        last_index, last_id = index, token_id
    return problems


def _show(raw: bytes) -> str:
    """A token's bytes for a message: b"..." as Python shows them (double quotes)."""
    return "b" + '"' + repr(raw)[2:-1].replace('"', '\\"') + '"'
