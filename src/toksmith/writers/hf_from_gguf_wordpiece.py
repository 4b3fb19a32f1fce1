"""A GGUF "bert" vocabulary (llama.cpp's WPM tokenizer) as tokenizers components.

llama.cpp (llama-vocab.cpp llm_tokenizer_wpm_session) normalizes and splits the text into
words itself, puts a phantom space "\u2581" before every word and matches the longest
vocabulary text from the left, a failing word becoming one [UNK]. The GGUF keeps the
converter's spelling (a word start "\u2581x", a continuation "x", from BERT's "x" and "##x"),
so the written WordPiece model keeps those texts as they are and looks them up the way
llama.cpp does:
- normalizer: llama.cpp's whitespace set (Unicode White_Space: \\x0b \\x0c \\x85 U+2028/9,
  which BertNormalizer's clean_text drops or keeps, included) to " "; Cc/Cf/Co/Cs dropped
  (unassigned code points kept); with strip_accents, a Hangul syllable becomes its leading
  jamo (llama.cpp's NFD maps a code point to one code point); "\u0130" -> "i" when lowercasing
  without NFD; then BertNormalizer(clean_text, handle_chinese_chars, strip_accents,
  lowercase); then with strip_accents every \\p{M} dropped (BertNormalizer drops only what
  its older tables call Mn);
- pre-tokenizer: WhitespaceSplit, Split(\\p{P} and ASCII symbols, isolated) (not
  BertPreTokenizer, whose tables are older), then Metaspace("\u2581", always, no split) for
  the phantom space of every word. Oniguruma's Unicode 16 marks and punctuation that
  llama.cpp's 15.1 tables leave undefined are kept out of \\p{M} and \\p{P};
- WordPiece with continuing_subword_prefix "" (llama.cpp looks continuations up as they
  are) and no word-length limit; [CLS] ... [SEP] with add_special;
- decoder: Fuse, the first "\u2581" dropped (add_space_prefix), "\u2581" back to " "
  (llama.cpp's token_to_piece) and its clean_spaces passes.

>>> import toksmith
>>> hf = hf_spec_from_wordpiece_gguf(toksmith.load("ggml-vocab-bert-bge.gguf").spec)   # doctest: +SKIP
>>> hf.model.continuing_subword_prefix                                                # doctest: +SKIP
''
"""
from __future__ import annotations

from toksmith.hf import components as c
from toksmith.spec import TokenizerSpec
from toksmith.vocab import TokenType
from toksmith.writers.common import cannot_write
from toksmith.writers.hf_from_gguf import added_tokens_of_types

TARGET = "a tokenizer.json"
PHANTOM_SPACE = "\u2581"
# tokenizers' WordPiece gives [UNK] for a word longer than this (a usize); llama.cpp has no
# limit. The largest u32 (what toksmith's own reader accepts): a word of 4 GiB of text.
# Parity: tokenizers models/wordpiece: `if char_len > self.max_input_chars_per_word`.
NO_WORD_LIMIT = 2 ** 32 - 1
# Parity: unicode-data.cpp unicode_set_whitespace (White_Space) minus what BertNormalizer's
# clean_text already turns into " " (\t \n \r and Zs).
LLAMA_WHITESPACE_NOT_BERT = "[\\u000b\\u000c\\u0085\\u2028\\u2029]"
# tokenizers' Oniguruma knows Unicode 16.0; llama.cpp's tables (unicode-data.cpp) are 15.1 and
# leave these undefined (a letter-like character kept in the word): left out of \p{M} and \p{P}.
UNICODE_16_MARKS = ("\\x{897}\\x{10d69}-\\x{10d6d}\\x{10efc}\\x{113b8}-\\x{113c0}\\x{113c2}\\x{113c5}"
                    "\\x{113c7}-\\x{113ca}\\x{113cc}-\\x{113d0}\\x{113d2}\\x{113e1}-\\x{113e2}\\x{11f5a}"
                    "\\x{1611e}-\\x{1612f}\\x{1e5ee}-\\x{1e5ef}")
UNICODE_16_PUNCTUATION = ("\\x{1b4e}-\\x{1b4f}\\x{1b7f}\\x{10d6e}\\x{113d4}-\\x{113d5}\\x{113d7}-\\x{113d8}"
                          "\\x{11be1}\\x{16d6d}-\\x{16d6f}\\x{1e5ff}")
# Parity: llm_tokenizer_wpm_session::preprocess drops flags.is_accent_mark (\p{M}); BertNormalizer
# drops only what its own (older) tables call Mn.
MARKS = f"[\\p{{M}}&&[^{UNICODE_16_MARKS}]]"
# Parity: preprocess drops flags.is_control (\p{C}; unassigned code points are kept) after the
# whitespace check.
CONTROLS = "[\\p{Cc}\\p{Cf}\\p{Co}\\p{Cs}&&[^\\t\\n\\r]]"
# Parity: preprocess isolates flags.is_punctuation and ASCII symbols (CJK: BertNormalizer's
# handle_chinese_chars puts spaces around them, with llama.cpp's ranges). BertPreTokenizer's
# older tables call U+166D (a symbol) punctuation, so the split is this regex instead.
PUNCTUATION = f"[[\\p{{P}}&&[^{UNICODE_16_PUNCTUATION}]]!-/:-@\\[-`{{-~]"
# A literal U+2581 that starts a word (at the start, after a space or a split-off punctuation
# character): llama.cpp puts its phantom "\u2581" before it all the same; tokenizers' Metaspace
# prepends none to a word that already starts with one. Doubled in the normalizer instead
# (a normalized text holds no other white space than " "), so Metaspace sees it begun.
WORD_START_SPACE_SYMBOL = f"(?<![^ {PUNCTUATION[1:-1]}])\u2581"
# Parity: unicode-data.cpp unicode_ranges_nfd maps a Hangul syllable to its leading jamo only
# (tokenizers' NFD gives every jamo): the 19 leading consonants, 588 syllables each.
HANGUL_FIRST, HANGUL_PER_LEAD, HANGUL_LEADS, JAMO_FIRST_LEAD = 0xAC00, 588, 19, 0x1100
# Parity: llama-vocab.cpp detokenize clean_spaces, first to third pass, in order.
CLEAN_SPACES_REPLACEMENTS = ((" ?", "?"), (" !", "!"), (" .", "."), (" ,", ","), (" ' ", "'"),
                             (" 's", "'s"), (" 'm", "'m"), (" 're", "'re"), (" 've", "'ve"))


def hf_spec_from_wordpiece_gguf(spec: TokenizerSpec) -> c.HfTokenizerSpec:
    """The tokenizers components of a GGUF WPM vocabulary (see the module docstring);
    UnsupportedConversionError naming what tokenizers cannot express."""
    options = spec.wordpiece
    texts = [piece.decode("utf-8") for piece in spec.vocab.pieces]
    special = spec.vocab.special
    missing = []
    if special.unk is None or special.bos is None or special.sep is None:
        missing.append("a WPM vocabulary without UNK, BOS ([CLS]) and SEP ids")
    if len(set(texts)) != len(texts):
        missing.append("two tokens with one text (llama.cpp's text_to_token keeps one of them)")
    types = spec.vocab.types
    kinds = {TokenType.NORMAL, TokenType.CONTROL, TokenType.UNKNOWN, TokenType.UNUSED}
    others = sorted({TokenType(t).name for t in types if t not in kinds})
    if others:
        missing.append(f"{', '.join(others)} tokens in a WPM vocabulary")
    if missing:
        raise cannot_write(spec, TARGET, missing)
    steps: list[c.Normalizer] = [c.Replace(c.RegexPattern(LLAMA_WHITESPACE_NOT_BERT), " "),
                                 c.Replace(c.RegexPattern(CONTROLS), "")]
    if options.strip_accents:
        steps += _hangul_leading_jamo()
    if options.lowercase and not options.strip_accents:
        # Parity: unicode-data.cpp unicode_map_lowercase {0x130, 0x69}; Rust's to_lowercase gives "i\u0307"
        steps.append(c.Replace(c.StringPattern("\u0130"), "i"))
    steps.append(c.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                  strip_accents=options.strip_accents, lowercase=options.lowercase))
    if options.strip_accents:
        # after BertNormalizer's NFD: also the Mc of a decomposed character (U+0B94 -> U+0B92 U+0BD7)
        steps.append(c.Replace(c.RegexPattern(MARKS), ""))
    steps.append(c.Replace(c.RegexPattern(WORD_START_SPACE_SYMBOL), PHANTOM_SPACE * 2))
    model = c.WordPieceModel(vocab={text: i for i, text in enumerate(texts)}, unk_token=texts[special.unk],
                             continuing_subword_prefix="", max_input_chars_per_word=NO_WORD_LIMIT)
    pre = c.PreTokenizerSequence((c.WhitespaceSplit(),
                                  c.Split(c.RegexPattern(PUNCTUATION), c.SplitBehavior.ISOLATED),
                                  c.Metaspace(PHANTOM_SPACE, c.PrependScheme.ALWAYS, split=False)))
    decoders: list[c.Decoder] = [c.Fuse()]
    if options.add_space_prefix:
        # Parity: llama-vocab.cpp detokenize: remove_space = add_space_prefix, for the first token
        decoders.append(c.StripDecoder(PHANTOM_SPACE, 1, 0))
    decoders.append(c.Replace(c.StringPattern(PHANTOM_SPACE), " "))
    decoders += [c.Replace(c.StringPattern(a), b) for a, b in CLEAN_SPACES_REPLACEMENTS]
    bos, sep = texts[special.bos], texts[special.sep]
    # Parity: llama-vocab.cpp tokenize_impl LLAMA_VOCAB_TYPE_WPM: BOS ... SEP with add_special.
    template = c.TemplateProcessing(
        single=(c.TemplateSpecialToken(bos), c.TemplateSequence(c.Sequence.A), c.TemplateSpecialToken(sep)),
        pair=(c.TemplateSpecialToken(bos), c.TemplateSequence(c.Sequence.A), c.TemplateSpecialToken(sep),
              c.TemplateSequence(c.Sequence.B, 1), c.TemplateSpecialToken(sep, 1)),
        special_tokens={bos: (special.bos,), sep: (special.sep,)})
    return c.HfTokenizerSpec(source=spec.source, model=model, normalizer=c.NormalizerSequence(tuple(steps)),
                             pre_tokenizer=pre, post_processor=template, decoder=c.DecoderSequence(tuple(decoders)),
                             added_tokens=added_tokens_of_types(texts, types, spec.token_attributes))


def _hangul_leading_jamo() -> list[c.Normalizer]:
    """One Replace per leading consonant: its 588 syllables -> the jamo (U+AC00.. -> U+1100..)."""
    out: list[c.Normalizer] = []
    for lead in range(HANGUL_LEADS):
        first = HANGUL_FIRST + lead * HANGUL_PER_LEAD
        out.append(c.Replace(c.RegexPattern(f"[\\u{first:04x}-\\u{first + HANGUL_PER_LEAD - 1:04x}]"),
                             chr(JAMO_FIRST_LEAD + lead)))
    return out
