"""Split regexes with \\X (extended grapheme clusters), \\y and \\Y, vs tokenizers 0.23.3.

tokenizers runs them on Oniguruma 6.9 (onig_sys 69.9.3): \\X is `(?>\\O(?:\\Y\\O)*)`, its
boundaries follow Oniguruma's own rules (no GB9c: "क्ष" is two clusters there, one in
Unicode 15.1+ segmenters) on its Unicode 16 data, looking back to the start of the piece
being split. toksmith follows Oniguruma.

- A character-level BPE trained by tokenizers' BpeTrainer on every corpus, then loaded with
  Split pre-tokenizers over \\X alone and combined with other regex parts, in several
  behaviors (and inverted): every line of every corpus (tricky_strings included: emoji ZWJ
  sequences, skin tones, flags, keycaps, Hangul jamo, Indic, CRLF), ids and decode.
- Every code point (surrogates aside) in a few contexts that decide its break value
  (after a letter, after a Prepend, around ZWJ + ©, after a regional indicator, between
  Hangul jamo): one text, split by \\X, pieces compared.
"""
from __future__ import annotations

import pytest
import tokenizers
from tokenizers import AddedToken, Regex, decoders, models, pre_tokenizers, trainers

import toksmith
from tests.conftest import CORPUS_FILES
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import spliced
from toksmith.hf.native_regex import compiled_pattern

SPECIALS = ["[UNK]", "<s>", "</s>"]
AGAINST = f"tokenizers {tokenizers.__version__}"

# (pattern, behavior, invert)
SPLITS = [
    (r"\X", "isolated", False),
    (r"\X{1,3}", "merged_with_previous", False),
    (r"(?:\p{L}\X*)", "isolated", False),      # from a letter to the end of the piece
    (r"\s+|\X", "removed", False),
    (r"[\X\y\Y]+|\y\X(?=\X)", "contiguous", True),     # in brackets \X \y \Y are letters
    (r"\y", "removed", False),
]


@pytest.fixture(scope="module")
def char_bpe(corpus_lines) -> tokenizers.Tokenizer:
    tok = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    lines = [line for name in CORPUS_FILES for line in corpus_lines[name][:3000]]
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=6000, special_tokens=SPECIALS,
                                                       show_progress=False))
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIALS])
    tok.decoder = decoders.Fuse()
    return tok


@pytest.mark.parametrize("pattern,behavior,invert", SPLITS)
def test_split_grapheme_patterns_match_tokenizers(char_bpe, corpus_lines, tmp_path, pattern, behavior, invert):
    """Every line with add_special and parse_special on; the first pattern also every 8th
    line with both off and decode (the other patterns change nothing there)."""
    path = tmp_path / "split.json"
    ref = tokenizers.Tokenizer.from_str(char_bpe.to_str())
    ref.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior=behavior, invert=invert)
    ref.save(str(path))
    ref = tokenizers.Tokenizer.from_file(str(path))
    tok = toksmith.load(path)
    texts = [text for name in CORPUS_FILES for text in spliced(corpus_lines[name], SPECIALS, seed=len(name))]
    first = pattern == SPLITS[0][0]
    runs = ((True, True, texts), (False, False, texts[::8])) if first else ((True, True, texts),)
    label = f"Split({pattern!r}, {behavior}, invert={invert}) over a trained char BPE"
    extra = ", every 8th with neither" if first else ""
    ids = Comparison(f"{label} ids: every corpus line (specials spliced) with add_special+parse_special{extra}",
                     against=AGAINST)
    decoded = Comparison(f"{label} decode of every 4th line's ids x skip_special 2", against=AGAINST)
    for add_special, parse_special, sample in runs:
        ref.encode_special_tokens = not parse_special
        want = [e.ids for e in ref.encode_batch(sample, add_special_tokens=add_special)]
        ids.all(sample, ours=tok.encode_batch(sample, add_special=add_special, parse_special=parse_special),
                theirs=want, what=f"add_special={add_special} parse_special={parse_special}")
        if first and parse_special:
            for skip in (False, True):
                sequences = want[::4]
                decoded.all(sequences, ours=[tok.decode(sequence, skip_special=skip) for sequence in sequences],
                            theirs=ref.decode_batch(sequences, skip_special_tokens=skip), what=f"skip_special={skip}")
    ids.finish()
    if first:
        decoded.finish()


def test_every_code_point_in_grapheme_contexts():
    contexts = ["a{}", "\u0600{}", "\u00a9\u200d{}", "\U0001F1E6{}", "\u1100{}", "{}\u1161", "{}\u11a8",
                "\uac00{}", "\r{}", "{}\u0301\u200d\u00a9"]
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = "".join(contexts[k % len(contexts)].replace("{}", ch) for k, ch in enumerate(points))
    split = pre_tokenizers.Split(Regex(r"\X"), behavior="isolated")
    want = [piece for piece, _ in split.pre_tokenize_str(text)]
    data = text.encode("utf-8")
    got = [data[start:end].decode("utf-8") for start, end in compiled_pattern("Regex", r"\X").find_matches(data)]
    assert "".join(got) == text
    check = Comparison(f"Split(\\X) clusters of every code point in 10 break contexts ({len(text)} characters, "
                       "one text)", against=AGAINST)
    check.all(range(len(want)), ours=got, theirs=want, what="cluster")
    check.finish()
