"""A sentencepiece model (Unigram or BPE) as tokenizers components, following sentencepiece.

sentencepiece's pipeline, stage by stage (normalizer.cc Normalize, unigram_model.cc,
bpe_model.cc, sentencepiece_processor.cc Decode), in tokenizers' terms:

- normalizer: Precompiled(charsmap); with remove_extra_whitespaces, Replace regexes that drop
  leading spaces, collapse space runs and drop trailing spaces and "▁" (sentencepiece strips
  trailing space symbols after escaping, so a literal "▁" at the end goes too); with
  add_dummy_prefix, Prepend("▁") (Prepend adds nothing to an empty text, as sentencepiece);
  with escape_whitespaces, Replace(" ", "▁"). No pre-tokenizer: both models see the whole text.
- model: Unigram with the pieces and scores (tokenizers fuses unknown runs as sentencepiece
  does), or BPE whose merges are every split of a NORMAL piece into two symbols, ranked by the
  piece's score (sentencepiece merges the best-scoring pair, leftmost first), fuse_unk on.
- CONTROL and UNKNOWN pieces become special added tokens (what parse_special splits out).
- decoder: CONTROL pieces render as "", the unknown piece as the unk surface (" ⁇ "), byte
  pieces as their bytes, then one leading "▁" of the text is dropped (add_dummy_prefix or
  remove_extra_whitespaces) and "▁" becomes " ".

>>> import toksmith
>>> hf = hf_spec_from_sentencepiece(toksmith.load("spiece.model").spec)   # doctest: +SKIP
>>> type(hf.model).__name__                                                 # doctest: +SKIP
'UnigramModel'
"""
from __future__ import annotations

from toksmith.decoders.sentencepiece import DEFAULT_UNK_SURFACE
from toksmith.hf import components as c
from toksmith.spec import Algorithm, TokenizerSpec
from toksmith.vocab import TokenType
from toksmith.writers.common import cannot_write, refuse_inexact
from toksmith.writers.spm_bpe_scores import tokenizers_bpe_merge

TARGET = "a tokenizer.json"
SPACE_SYMBOL = "\u2581"
RESERVED = (TokenType.CONTROL, TokenType.UNKNOWN)


def piece_texts(spec: TokenizerSpec) -> list[str]:
    return [piece.decode("utf-8") for piece in spec.vocab.pieces]


def check_piece_types(spec: TokenizerSpec, allowed: frozenset[TokenType]) -> list[str]:
    """What tokenizers cannot express about the piece types of `spec` (one entry per type)."""
    missing = []
    names = {TokenType.USER_DEFINED: "USER_DEFINED pieces (sentencepiece matches them before normalizing "
                                      "and never splits them; tokenizers' added tokens split differently)",
             TokenType.UNUSED: "UNUSED pieces (the reference never produces them; tokenizers' models would)"}
    for token_type, why in names.items():
        if token_type not in allowed and token_type in spec.vocab.types:
            first = spec.vocab.types.index(token_type)
            missing.append(f"{spec.vocab.types.count(token_type)} {why}, e.g. id {first} "
                           f"{spec.vocab.piece(first)!r}")
    return missing


def whitespace_normalizers(charsmap: bytes, add_dummy_prefix: bool, remove_extra_whitespaces: bool,
                           escape_whitespaces: bool) -> list[c.Normalizer]:
    """sentencepiece's Normalize as tokenizers normalizers (see the module docstring)."""
    steps: list[c.Normalizer] = []
    if charsmap:
        steps.append(c.Precompiled(charsmap))
    if remove_extra_whitespaces:
        # Parity: normalizer.cc Normalize: heading spaces skipped, a space after a space dropped,
        # trailing space symbols (kSpaceSymbol when escaping) removed. \A and \z: in tokenizers'
        # Oniguruma (Ruby syntax) ^ and $ also match at line breaks.
        trailing = f"[ {SPACE_SYMBOL}]+\\z" if escape_whitespaces else " +\\z"
        steps += [c.Replace(c.RegexPattern("\\A +"), ""), c.Replace(c.RegexPattern(" {2,}"), " "),
                  c.Replace(c.RegexPattern(trailing), "")]
    if add_dummy_prefix:
        steps.append(c.Prepend(SPACE_SYMBOL if escape_whitespaces else " "))
    if escape_whitespaces:
        steps.append(c.Replace(c.StringPattern(" "), SPACE_SYMBOL))
    return steps


def sentencepiece_decoder(spec: TokenizerSpec, texts: list[str], unk_surface: str, strip_first_space: bool,
                          missing: list[str]) -> c.Decoder:
    """Decode as sentencepiece's Decode (see the module docstring); adds to `missing` what a
    Replace decoder could not do exactly."""
    steps: list[c.Decoder] = []
    types = spec.vocab.types
    reserved = [i for i, t in enumerate(types) if t in RESERVED]
    for i in reserved:
        text = texts[i]
        # a Replace decoder edits every token holding the text: only safe if no other piece does
        holder = next((j for j, other in enumerate(texts) if j != i and text in other), None)
        if holder is not None:
            missing.append(f"decoding piece {i} {text!r} as sentencepiece does: piece {holder} "
                           f"{texts[holder]!r} contains its text")
            continue
        surface = unk_surface if types[i] == TokenType.UNKNOWN else ""
        steps.append(c.Replace(c.StringPattern(text), surface))
    if spec.byte_fallback:
        steps.append(c.ByteFallback())
    steps.append(c.Fuse())
    if strip_first_space:
        # Parity: sentencepiece_processor.cc Decode: the first piece drops one leading kSpaceSymbol
        steps.append(c.StripDecoder(SPACE_SYMBOL, 1, 0))
    steps.append(c.Replace(c.StringPattern(SPACE_SYMBOL), " "))
    return c.DecoderSequence(tuple(steps))


def reserved_added_tokens(spec: TokenizerSpec, texts: list[str]) -> tuple[c.AddedToken, ...]:
    """CONTROL and UNKNOWN pieces as special added tokens (not normalized)."""
    return tuple(c.AddedToken(id=i, content=texts[i], special=True, normalized=False)
                 for i, t in enumerate(spec.vocab.types) if t in RESERVED)


def unigram_model(spec: TokenizerSpec, texts: list[str]) -> c.UnigramModel:
    """The pieces and scores; a reserved piece's score is raised to the lowest NORMAL score.

    Parity: unigram_model.cc Model::Model: the unknown penalty starts from the lowest score
    of the NORMAL pieces; tokenizers takes the lowest of all pieces."""
    types, scores = spec.vocab.types, spec.vocab.scores
    normal = [s for s, t in zip(scores, types) if t == TokenType.NORMAL]
    floor = min(normal) if normal else 0.0
    vocab = tuple((text, score if types[i] == TokenType.NORMAL else max(score, floor))
                  for i, (text, score) in enumerate(zip(texts, scores)))
    return c.UnigramModel(vocab=vocab, unk_id=spec.vocab.special.unk, byte_fallback=spec.byte_fallback)


def bpe_merges(spec: TokenizerSpec, texts: list[str], missing: list[str],
               inexact: list[str]) -> tuple[tuple[str, str], ...]:
    """Every (left, right) whose concatenation is a NORMAL piece, best piece score first;
    adds to `missing` what tokenizers cannot hold, to `inexact` what it would merge otherwise.

    Parity: bpe_model.cc SampleEncode: any two adjacent symbols whose text is a (non-reserved)
    piece may merge, the best score first, the leftmost first among equal scores. Symbols
    start as characters, so both sides must be pieces or characters, and tokenizers needs
    every side in its vocab. Equal scores of different pieces are refused: tokenizers ranks
    every merge apart, sentencepiece takes the leftmost."""
    types, scores = spec.vocab.types, spec.vocab.scores
    ids = {text: i for i, text in enumerate(texts)}
    symbols = {text for text, t in zip(texts, types) if t == TokenType.NORMAL}
    merges: list[tuple[float, int, str, str]] = []
    absent: set[str] = set()
    for i, (text, t) in enumerate(zip(texts, types)):
        if t != TokenType.NORMAL or len(text) < 2:
            continue
        for cut in range(1, len(text)):
            left, right = text[:cut], text[cut:]
            usable = True
            for side in (left, right):
                if side not in symbols:
                    if len(side) == 1:
                        if side not in ids or types[ids[side]] != TokenType.NORMAL:
                            absent.add(side)
                    usable = False
            if usable:
                merges.append((-scores[i], i, left, right))
    if absent:
        shown = ", ".join(repr(ch) for ch in sorted(absent)[:5])
        missing.append(f"BPE merges of {len(absent)} characters that are no NORMAL piece ({shown}): "
                       "sentencepiece merges any characters, tokenizers only tokens of its vocab")
    merges.sort(key=lambda m: (m[0], len(m[3]), -len(m[2]), m[1]))
    tied = _tied_pieces(merges, texts)
    if tied:
        missing.append(f"BPE pieces {tied[0]!r} and {tied[1]!r} with the same score: sentencepiece merges the "
                       "leftmost pair first, tokenizers ranks every merge apart")
    else:
        normal_scores = {text: scores[i] for i, (text, t) in enumerate(zip(texts, types)) if t == TokenType.NORMAL}
        differs = run_difference(merges, texts, normal_scores)
        if differs:
            inexact.append(differs)
    return tuple((left, right) for _, _, left, right in merges)


def _tied_pieces(merges: list[tuple[float, int, str, str]], texts: list[str]) -> tuple[str, str] | None:
    """Two merged pieces of equal score whose order tokenizers cannot express, or None.

    Equal scores are expressible where every tied piece repeats one character (Llama 2's
    runs of "▁", all scored -1e9) and the merge ranks grow every run as sentencepiece does
    (`run_difference`): sentencepiece takes the leftmost of the tied pairs, tokenizers the
    lowest rank."""
    by_score: dict[float, set[int]] = {}
    for score, i, _, _ in merges:
        by_score.setdefault(score, set()).add(i)
    for ids in by_score.values():
        if len(ids) < 2:
            continue
        chars = {ch for i in ids for ch in texts[i]}
        if len(chars) != 1:
            first, second = sorted(ids)[:2]
            return texts[first], texts[second]
    return None


def run_difference(merges: list[tuple[float, int, str, str]], texts: list[str],
                   scores: dict[str, float]) -> str | None:
    """How a run of one repeated character splits otherwise in sentencepiece and in
    tokenizers with the ranks of `merges`, or None where every run checked splits alike.

    Tied run pieces (Llama 2's and Mistral's "▁"*k, all scored -1e9) compete by position in
    sentencepiece and by rank in tokenizers. With every length from 1 to the longest present,
    ranking (c*(k-1), c) before (c*(k-2), c) grows each run from its left end as sentencepiece
    does; with some lengths missing (a trained model's) the two can part a run differently
    (issue 30, a Mistral-v3-style model: "B2SUM(1)" + 25 spaces + "Các" is "▁"*16 "▁"*8 in
    sentencepiece, "▁"*14 "▁"*10 in tokenizers). Both only merge near the left end of what is
    still single characters, so runs up to 8 times the longest run piece are checked (a bound
    taken, not proven; a run is checked alone, not beside pieces that hold the character and
    a score above the tie). Runs without tied pieces need no check: with one piece per score, both merge the
    same pair at every step (spm_bpe_scores.py's argument, the other way round)."""
    rank_of = {(left, right): rank for rank, (_, _, left, right) in enumerate(merges)}
    pieces_per_score: dict[float, set[int]] = {}
    for score, i, _, _ in merges:
        pieces_per_score.setdefault(score, set()).add(i)
    runs: dict[str, int] = {}
    for score, i, _, _ in merges:
        text = texts[i]
        if len(set(text)) == 1 and len(pieces_per_score[score]) > 1:
            runs[text[0]] = max(runs.get(text[0], 0), len(text))
    for char, longest in runs.items():
        for length in range(2, 8 * longest + 1):
            want = sentencepiece_bpe_symbols(char * length, scores)
            got, _ = tokenizers_bpe_merge(char * length, rank_of)
            if want != got:
                return (f"a run of {length} {char!r}: sentencepiece merges it to lengths "
                        f"{[len(s) for s in want]}, tokenizers' BPE (ranks are not positions) to "
                        f"{[len(s) for s in got]}")
    return None


def sentencepiece_bpe_symbols(text: str, scores: dict[str, float]) -> list[str]:
    """The symbols sentencepiece's BPE makes of `text` (characters merged; `scores`: the
    mergeable pieces).

    Parity: sentencepiece 0.2 bpe_model.cc Model::SampleEncode: the adjacent pair whose text
    is a piece of best score first, the leftmost first among equal scores."""
    symbols = list(text)
    while True:
        best = None
        for position in range(len(symbols) - 1):
            score = scores.get(symbols[position] + symbols[position + 1])
            if score is not None and (best is None or score > best[0]):
                best = (score, position)
        if best is None:
            return symbols
        position = best[1]
        symbols[position:position + 2] = [symbols[position] + symbols[position + 1]]


def hf_spec_from_sentencepiece(spec: TokenizerSpec) -> c.HfTokenizerSpec:
    """The tokenizers components of a sentencepiece .model (see the module docstring);
    UnsupportedConversionError naming what tokenizers cannot express."""
    missing: list[str] = []
    # tokenizers can hold these pieces (as pieces of its model) but splits some text otherwise
    inexact = check_piece_types(spec, frozenset())
    if spec.algorithm not in (Algorithm.UNIGRAM, Algorithm.SPM_BPE):
        raise cannot_write(spec, TARGET, [f"a {spec.algorithm.value} model"])
    norm, decoder_spec = spec.normalizer, spec.decoder
    if decoder_spec is not None and decoder_spec.denormalizer is not None:
        missing.append("a denormalizer charsmap (tokenizers has no decode-time normalizer)")
    if norm.treat_whitespace_as_suffix:
        missing.append("treat_whitespace_as_suffix (tokenizers' Metaspace and Prepend put the space first)")
    texts = piece_texts(spec)
    steps = whitespace_normalizers(norm.precompiled_charsmap, norm.add_dummy_prefix, norm.remove_extra_whitespaces,
                                   norm.escape_whitespaces)
    unk_surface = decoder_spec.unk_surface if decoder_spec is not None else DEFAULT_UNK_SURFACE
    decoder = sentencepiece_decoder(spec, texts, unk_surface,
                                    norm.add_dummy_prefix or norm.remove_extra_whitespaces, missing)
    if spec.algorithm is Algorithm.UNIGRAM:
        model: c.Model = unigram_model(spec, texts)
    else:
        unk = spec.vocab.special.unk
        model = c.BpeModel(vocab={text: i for i, text in enumerate(texts)}, merges=bpe_merges(spec, texts, missing, inexact),
                           unk_token=None if unk is None else texts[unk], fuse_unk=True,
                           byte_fallback=spec.byte_fallback)
    if missing:
        raise cannot_write(spec, TARGET, missing)
    refuse_inexact(spec, TARGET, inexact)
    return c.HfTokenizerSpec(source=spec.source, model=model,
                             normalizer=c.NormalizerSequence(tuple(steps)) if steps else None,
                             decoder=decoder, added_tokens=reserved_added_tokens(spec, texts),
                             post_processor=bos_eos_template(spec, texts))


def bos_eos_template(spec: TokenizerSpec, texts: list[str]) -> c.TemplateProcessing | None:
    """BOS/EOS as add_special adds them (spec.add_bos / add_eos), or None when neither."""
    bos, eos = spec.vocab.special.bos, spec.vocab.special.eos
    add_bos = spec.add_bos and bos is not None
    add_eos = spec.add_eos and eos is not None
    if not (add_bos or add_eos):
        return None
    special: dict[str, tuple[int, ...]] = {}
    head: list[c.TemplatePiece] = []
    tail: list[c.TemplatePiece] = []
    if add_bos:
        special[texts[bos]] = (bos,)
        head.append(c.TemplateSpecialToken(texts[bos]))
    if add_eos:
        special[texts[eos]] = (eos,)
        tail.append(c.TemplateSpecialToken(texts[eos]))
    single = (*head, c.TemplateSequence(c.Sequence.A), *tail)
    pair = (*single, *(c.TemplateSpecialToken(p.name, 1) for p in head), c.TemplateSequence(c.Sequence.B, 1),
            *(c.TemplateSpecialToken(p.name, 1) for p in tail))
    return c.TemplateProcessing(single=single, pair=pair, special_tokens=special)
