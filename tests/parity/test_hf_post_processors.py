"""Every tokenizer.json post-processor, single sequences and pairs, vs tokenizers 0.23.3.

The fixture files already compare their own templates (TemplateProcessing in MiniLM, rut5,
the trained WordPiece/Unigram files and the converted sentencepiece models; ByteLevel in
llama3). Here each post-processor type and option runs on real vocabularies:

- the GPT-2 byte-level BPE (hf/gpt2 vocab.json + merges.txt, "<s>"/"</s>"/"<sep/>" added):
  RobertaProcessing (default, and trim_offsets/add_prefix_space off), ByteLevel (default,
  and every option off), Sequence [ByteLevel, TemplateProcessing] as Llama 3 ships it,
  Sequence [ByteLevel, RobertaProcessing], TemplateProcessing with the pair's sequences
  in reverse order ($B before $A: tokenizers keeps that order without add_special too),
  with $B twice, with a special token of several ids, with no pair
  template (tokenizers joins the two with "$A:0 $B:1"), and no post-processor at all;
  Sequences of several processors (Roberta then Template, Template then Template,
  Template then Bert, a repeating Template then ByteLevel then Roberta), where each
  member works on the list of encodings the one before gave;
- the all-MiniLM-L6-v2 WordPiece vocabulary: BertProcessing, Sequence [BertProcessing],
  and Sequence [BertProcessing, BertProcessing];
- a Sequence of two templates of which tokenizers panics on the second: refused at load.

For each: 300 pairs of lines (English, Japanese, Russian, Python source; added-token texts
spliced into a quarter) with the four add_special x parse_special combinations, and the
single sequences with encode_batch, against tokenizers' encode(a, b).
"""
from __future__ import annotations

import pytest
import tokenizers
from tokenizers import AddedToken, models, normalizers, pre_tokenizers, processors

import toksmith
from tests.conftest import fixture_file
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import spliced

FLAGS = ((False, False), (False, True), (True, False), (True, True))   # add_special, parse_special
PAIRS = 300
AGAINST = f"tokenizers {tokenizers.__version__}"

pytestmark = pytest.mark.filterwarnings("ignore:the text starts with a BOS token")

BYTE_LEVEL_ADDED = ["<s>", "</s>", "<sep/>"]


def _gpt2(fixtures) -> tokenizers.Tokenizer:
    vocab, merges = fixture_file(fixtures, "hf/gpt2/vocab.json"), fixture_file(fixtures, "hf/gpt2/merges.txt")
    tok = tokenizers.Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.add_special_tokens([AddedToken("<s>", special=True, normalized=False),
                            AddedToken("</s>", special=True, normalized=False),
                            AddedToken("<sep/>", special=True, lstrip=True, normalized=False)])
    tok.add_tokens([AddedToken(" New York", lstrip=True)])
    return tok


def _byte_level_processors(tok: tokenizers.Tokenizer) -> dict:
    bos, eos, sep = tok.token_to_id("<s>"), tok.token_to_id("</s>"), tok.token_to_id("<sep/>")
    P = processors
    return {
        "RobertaProcessing": P.RobertaProcessing(("</s>", eos), ("<s>", bos)),
        "RobertaProcessing-no-trim-no-prefix": P.RobertaProcessing(("</s>", eos), ("<s>", bos), trim_offsets=False,
                                                                   add_prefix_space=False),
        "ByteLevel": P.ByteLevel(),
        "ByteLevel-options-off": P.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
        "Sequence-ByteLevel-Template": P.Sequence([
            P.ByteLevel(trim_offsets=False),
            P.TemplateProcessing(single="<s> $A", pair="<s> $A <s>:1 $B:1", special_tokens=[("<s>", bos)])]),
        "Sequence-ByteLevel-Roberta": P.Sequence([P.ByteLevel(), P.RobertaProcessing(("</s>", eos), ("<s>", bos))]),
        "Template-B-before-A": P.TemplateProcessing(single="$A:0 </s>:0", pair="$B:1 <sep/>:1 $A:0 </s>:0",
                                                    special_tokens=[("</s>", eos), ("<sep/>", sep)]),
        "Template-B-twice": P.TemplateProcessing(single="$A", pair="<sep/> $B:1 </s> $A:0 </s>:0 $B:1",
                                                 special_tokens=[("</s>", eos), ("<sep/>", sep)]),
        "Template-multi-id-special": P.TemplateProcessing(
            single="[PROMPT] $A </s>", pair="[PROMPT] $A [PROMPT]:1 $B:1 </s>:1",
            special_tokens=[{"id": "[PROMPT]", "ids": [bos, 50256, sep], "tokens": ["<s>", "<|endoftext|>", "<sep/>"]},
                            ("</s>", eos)]),
        "Template-single-only": P.TemplateProcessing(single="<s> $A </s>",
                                                     special_tokens=[("<s>", bos), ("</s>", eos)]),
        # Sequences of several processors: each gets the list of encodings the one before
        # gave (a template's pieces are encodings of their own)
        "Sequence-Roberta-Template": P.Sequence([
            P.RobertaProcessing(("</s>", eos), ("<s>", bos)),
            P.TemplateProcessing(single="<sep/> $A", pair="$A <sep/> $B:1", special_tokens=[("<sep/>", sep)])]),
        "Sequence-Template-Template": P.Sequence([
            P.TemplateProcessing(single="$A", pair="$B:1 $A", special_tokens=[]),
            P.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>",
                                 special_tokens=[("<s>", bos), ("</s>", eos)])]),
        "Sequence-Template-then-Bert": P.Sequence([
            P.TemplateProcessing(single="<sep/> $A", pair="<sep/> $A <sep/> $B:1", special_tokens=[("<sep/>", sep)]),
            P.BertProcessing(("</s>", eos), ("<s>", bos))]),
        "Sequence-Template-repeating-then-Roberta": P.Sequence([
            P.TemplateProcessing(single="$A $A", pair="$A $B:1 $A", special_tokens=[]),
            P.ByteLevel(),
            P.RobertaProcessing(("</s>", eos), ("<s>", bos))]),
        "none": None,
    }


def _minilm_processors() -> dict:
    bert = processors.BertProcessing(("[SEP]", 102), ("[CLS]", 101))
    return {"BertProcessing": bert,
            "Sequence-BertProcessing": processors.Sequence([bert]),
            "Sequence-BertProcessing-twice": processors.Sequence([bert, bert])}


def _minilm(fixtures) -> tokenizers.Tokenizer:
    vocab = fixture_file(fixtures, "hf/all-MiniLM-L6-v2/vocab.txt")
    tok = tokenizers.Tokenizer(models.WordPiece.from_file(str(vocab), unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")])
    return tok


NAMES = ["RobertaProcessing", "RobertaProcessing-no-trim-no-prefix", "ByteLevel", "ByteLevel-options-off",
         "Sequence-ByteLevel-Template", "Sequence-ByteLevel-Roberta", "Template-B-before-A", "Template-B-twice",
         "Template-multi-id-special", "Template-single-only", "Sequence-Roberta-Template",
         "Sequence-Template-Template", "Sequence-Template-then-Bert", "Sequence-Template-repeating-then-Roberta",
         "none", "BertProcessing", "Sequence-BertProcessing", "Sequence-BertProcessing-twice"]
MINILM_NAMES = ("BertProcessing", "Sequence-BertProcessing", "Sequence-BertProcessing-twice")


@pytest.fixture(scope="module")
def built(fixtures, tmp_path_factory):
    folder = tmp_path_factory.mktemp("hf_post_processors")
    out = {}
    for name in NAMES:
        if name in MINILM_NAMES:
            tok, processor = _minilm(fixtures), _minilm_processors()[name]
        else:
            tok = _gpt2(fixtures)
            processor = _byte_level_processors(tok)[name]
        if processor is not None:
            tok.post_processor = processor
        path = folder / f"{name}.json"
        tok.save(str(path))
        out[name] = str(path)
    return out


def _lines(corpus_lines) -> list[str]:
    lines = []
    for corpus in ("man_en.txt", "man_ja.txt", "man_ru.txt", "code_python_stdlib.py.txt"):
        lines += [line for line in corpus_lines[corpus] if line.strip()][:PAIRS // 4 + 1]
    return lines + ["", " ", "<s>", "a"]


def test_names_are_every_processor(fixtures):
    # NAMES is written out for test ids; it must list every processor built above
    assert NAMES == [*_byte_level_processors(_gpt2(fixtures)), *_minilm_processors()]


@pytest.mark.parametrize("name", NAMES)
def test_pairs_match_tokenizers(built, corpus_lines, name):
    path = built[name]
    ref = tokenizers.Tokenizer.from_file(path)
    tok = toksmith.load(path)
    added = BYTE_LEVEL_ADDED if name not in MINILM_NAMES else ["[CLS]", "[SEP]", "[MASK]"]
    lines = spliced(_lines(corpus_lines), added, seed=17)
    pairs = list(zip(lines, lines[1:] + lines[:1]))
    check = Comparison(f"post-processor {name}: pairs one call each, single lines in a batch, x 4 flag combinations",
                       against=AGAINST)
    for add_special, parse_special in FLAGS:
        ref.encode_special_tokens = not parse_special
        flags = f"add_special={add_special} parse_special={parse_special}"
        for first, second in pairs:
            ours = tok.encode(first, pair=second, add_special=add_special, parse_special=parse_special)
            check.one((first, second), ours,
                      ref.encode(first, second, add_special_tokens=add_special).ids, what=f"pair {flags}")
        check.all(lines, ours=tok.encode_batch(lines, add_special=add_special, parse_special=parse_special),
                  theirs=[e.ids for e in ref.encode_batch(lines, add_special_tokens=add_special)], what=flags)
    check.finish()


def test_template_after_a_template_of_three_pieces_is_refused(fixtures, tmp_path):
    # "<s> $A </s>" gives three encodings with add_special; a template after it has no
    # template for three (tokenizers: todo!(), a panic), so toksmith refuses the file.
    tok = _gpt2(fixtures)
    bos, eos = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    template = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1",
                                             special_tokens=[("<s>", bos), ("</s>", eos)])
    tok.post_processor = processors.Sequence([template, template])
    path = tmp_path / "template-twice.json"
    tok.save(str(path))
    with pytest.raises(BaseException, match="not yet implemented"):     # a PanicException
        tokenizers.Tokenizer.from_file(str(path)).encode("a b")
    with pytest.raises(toksmith.errors.UnsupportedModelError,
                       match=r"\$\.post_processor\.processors\[1\]: tokenizers cannot apply a template to the 3"):
        toksmith.load(path)
