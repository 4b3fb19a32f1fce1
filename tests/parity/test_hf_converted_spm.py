"""sentencepiece .model files converted by transformers' converters vs tokenizers on the file.

Every sentencepiece .model of the fixture set is converted to tokenizer.json by the
converter class transformers 5.23.0 uses for that model family (tests/parity/converted_spm.py
runs it, repairing two transformers 5.23 bugs that make BPE .model files unconvertible),
saved, and loaded by toksmith.load and by tokenizers.Tokenizer.from_file:

- llama2_tokenizer.model: LlamaConverter legacy (Prepend + Replace normalizer, no
  pre-tokenizer, BPE byte_fallback, Replace/ByteFallback/Fuse/Strip decoder, as Meta's
  Llama 2 tokenizer.json) and non-legacy (no normalizer, Metaspace prepend_scheme "first"
  split off); GemmaConverter (Replace normalizer, Split(" ", merged_with_previous), pieces
  0-2 renamed <pad>/<eos>/<bos>, unk id 3); and transformers 5's own LlamaTokenizer class
  (Metaspace, TemplateProcessing "<s> $A").
- llama2c_tok512.model: LlamaConverter legacy (256 byte pieces: byte fallback everywhere).
- hf_test_sentencepiece_bpe.model (transformers' own Camembert test model): CamembertConverter
  (BPE with fuse_unk over a shifted vocabulary <s>NOTUSED..., nmt_nfkc Precompiled + Strip
  + regex Replace, Metaspace "always", <s> $A </s> template).
- sentencepiece_test_model.model: AlbertConverter lower-casing without accents (Replace,
  NFKD, StripAccents, Lowercase, Precompiled, regex Replace; Unigram with scores -100 for
  non-numeric pieces; its [CLS]/[SEP] template ids are the unk id, as this vocabulary has
  neither) and XLNetConverter keeping accents and case.
- sentencepiece_test_ja_model.model: XLMRobertaConverter (fairseq offset vocabulary,
  <s>/</s> template, "</s> </s>" pair separator).
- t5_base_japanese_spiece.model: T5Converter (100 <extra_id_N> tokens appended, $A </s>)
  and transformers 5's own T5Tokenizer class (Precompiled, [WhitespaceSplit, Metaspace]).

Compared, with added-token texts spliced into a quarter of the lines: one file per .model
(the first of each above) every line of every corpus with add_special and parse_special on
(ids by encode_batch, every 11th line also by encode), the other files every 3rd line;
the other three add_special x parse_special combinations every 16th line (a full run of
each is slow in `tokenizers`); decode of the reference ids of every compared line with
skip_special off, every 4th with it on; and 99 pairs.

Where the conversion differs from sentencepiece itself, the tokenizer.json follows
tokenizers, and so does toksmith. Measured on the first 300 lines of each corpus (ids
compared as pieces, unknown pieces as <unk>):
- llama2 legacy: 1 of 4045 lines differs (added-token texts such as "<s>" in the text are
  split out by tokenizers, sentencepiece encodes them as text).
- llama2 non-legacy: 2145 differ: Metaspace "first" adds no "▁" before a line that starts
  with a space ("    FeatureName": ['▁▁▁', '▁Fe'...] vs sentencepiece ['▁▁▁▁', '▁Fe'...]).
- Gemma: 3415 differ: no dummy prefix at all ('This' vs '▁This').
- tok512 legacy: 2192 differ: the model's remove_extra_whitespaces is ignored by the
  converter (". ␣␣You": ['▁', '▁', 'Y'...] vs ['▁', 'Y'...]).
- Camembert BPE: 3 differ (fuse_unk and the Precompiled grapheme handling of combining marks).
- Albert lower-case: 1560 differ (the lower-casing and accent stripping the converter adds).
- XLNet: 12 differ ('' and `` become '"'; a line of one space gives ['▁'], sentencepiece []).
- XLM-R ja: 8 differ (trailing tabs stripped by Strip(right); combining-mark graphemes).
- T5 ja: 11 differ (Unigram ties: '_xxx' as ['_', 'x', 'xx'] vs ['_', 'xx', 'x']; 'ế' kept
  as the piece 'ê' + unk by the grapheme-wise Precompiled, one <unk> in sentencepiece).
"""
from __future__ import annotations

import pytest
import tokenizers

import toksmith
from tests.conftest import LONG_RUNS, fixture_file
from tests.parity.comparison import Comparison
from tests.parity.converted_spm import components, convert, from_tokenizer_class
from tests.parity.llama_cpp_compare import spliced

FULL = (True, True)                 # add_special, parse_special: every line of the main files
SAMPLED = ((False, False), (False, True), (True, False))
SAMPLE_STEP = 16                    # the three other combinations
SECONDARY_STEP = 3                  # files that share a .model with a main file
DECODE_SKIP_STEP = 4                # decode with skip_special: every 4th compared line
TOKENIZERS = f"tokenizers {tokenizers.__version__}"

# name -> (fixture .model, how it is converted, settings the converter reads, main file of its .model)
# how: a converter class of transformers.convert_slow_tokenizer, or "class:" + a transformers 5
# tokenizer class built from the .model (converted_spm.from_tokenizer_class).
CONVERSIONS = {
    "llama2-legacy": ("spm/llama2_tokenizer.model", "LlamaConverter", {"legacy": True}, True),
    "llama2-nonlegacy": ("spm/llama2_tokenizer.model", "LlamaConverter", {"legacy": False}, False),
    "llama2-gemma": ("spm/llama2_tokenizer.model", "GemmaConverter",
                     {"pad_token": "<pad>", "eos_token": "<eos>", "bos_token": "<bos>"}, False),
    "llama2-LlamaTokenizer": ("spm/llama2_tokenizer.model", "class:LlamaTokenizer", {}, False),
    "tok512-legacy": ("spm/llama2c_tok512.model", "LlamaConverter", {"legacy": True}, True),
    "bpe-camembert": ("spm/hf_test_sentencepiece_bpe.model", "CamembertConverter", {}, True),
    "unigram-albert-lower": ("spm/sentencepiece_test_model.model", "AlbertConverter",
                             {"do_lower_case": True, "keep_accents": False}, True),
    "unigram-xlnet-accents": ("spm/sentencepiece_test_model.model", "XLNetConverter",
                              {"do_lower_case": False, "keep_accents": True}, False),
    "ja-xlm-roberta": ("spm/sentencepiece_test_ja_model.model", "XLMRobertaConverter", {}, True),
    "t5-japanese": ("spm/t5_base_japanese_spiece.model", "T5Converter", {"_extra_ids": 100}, True),
    "t5-japanese-T5Tokenizer": ("spm/t5_base_japanese_spiece.model", "class:T5Tokenizer", {}, False),
}


@pytest.fixture(scope="module")
def converted(fixtures, tmp_path_factory):
    folder = tmp_path_factory.mktemp("converted_spm")
    files = {}
    for name, (model, how, settings, _) in CONVERSIONS.items():
        path = folder / f"{name}.json"
        model_file = str(fixture_file(fixtures, model))
        if how.startswith("class:"):
            built = from_tokenizer_class(model_file, how[len("class:"):], **settings)
        else:
            built = convert(model_file, how, **settings)
        built.save(str(path))
        files[name] = path
    return files


def _compare_ids(tok, ref, texts, add_special, parse_special, where, batch: Comparison, single: Comparison):
    """encode_batch ids of every text, encode of every 11th; returns the reference's ids."""
    flags = f"{where} add_special={add_special} parse_special={parse_special}"
    ref.encode_special_tokens = not parse_special
    want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=add_special)]
    batch.all(texts, ours=tok.encode_batch(texts, add_special=add_special, parse_special=parse_special), theirs=want,
              what=flags)
    for text, ids in single.pairs(texts[::11], want[::11]):
        single.one(text, tok.encode(text, add_special=add_special, parse_special=parse_special), ids, what=flags)
    ref.encode_special_tokens = False
    return want


@pytest.mark.filterwarnings("ignore:the text starts with a BOS token")   # lines with "<s>" spliced in
@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_converted_files_match_tokenizers(converted, corpus_lines, name):
    path = converted[name]
    ref = tokenizers.Tokenizer.from_file(str(path))
    tok = toksmith.load(path)
    assert tok.vocab_size == ref.get_vocab_size()
    added = [t.content for t in ref.get_added_tokens_decoder().values()][:40]
    main = CONVERSIONS[name][3]
    lines_compared = 'every corpus line' if main else f'every {SECONDARY_STEP}rd line'
    label = f"converted {name} ({components(ref)})"
    full = Comparison(f"{label} encode_batch ids ({lines_compared}) add_special+parse_special", against=TOKENIZERS)
    sampled = Comparison(f"{label} encode_batch ids (every {SAMPLE_STEP}th line) x 3 other flag pairs",
                         against=TOKENIZERS)
    single = Comparison(f"{label} encode ids (every 11th line of the above)", against=TOKENIZERS)
    decoded = Comparison(f"{label} decode of the reference's ids (skip_special off; on, every "
                         f"{DECODE_SKIP_STEP}th)", against=TOKENIZERS)
    for corpus, lines in corpus_lines.items():
        texts = spliced(lines, added, seed=len(corpus))
        if corpus == "tricky_strings.txt":
            texts += LONG_RUNS
        elif not main:
            texts = texts[::SECONDARY_STEP]
        want = _compare_ids(tok, ref, texts, *FULL, corpus, full, single)
        for skip, step in ((False, 1), (True, DECODE_SKIP_STEP)):
            ids = want[::step]
            decoded.all(ids, ours=[tok.decode(i, skip_special=skip) for i in ids],
                        theirs=ref.decode_batch(ids, skip_special_tokens=skip), what=f"{corpus} skip_special={skip}")
        sample = texts[::SAMPLE_STEP // (1 if main else SECONDARY_STEP)]
        for add_special, parse_special in SAMPLED:
            _compare_ids(tok, ref, sample, add_special, parse_special, corpus, sampled, single)
    lines = [line for line in corpus_lines["man_en.txt"] if line.strip()][:100]
    with Comparison(f"{label} pairs of man_en.txt lines", against=TOKENIZERS) as pairs:
        for first, second in zip(lines, lines[1:]):     # each line with the next: inputs only
            pairs.one((first, second), tok.encode(first, pair=second), ref.encode(first, second).ids)
    for check in (full, sampled, single, decoded):
        check.finish()
