"""toksmith.train_unigram against sentencepiece 0.2.3 itself.

- exactness: the .model toksmith writes loads in sentencepiece, and sentencepiece and
  toksmith give the same ids and decodes on every line of every fixture corpus (default
  options, and a few option sets on a multilingual sample);
- quality: trained on part of the corpora with the same settings as sentencepiece's own
  trainer, on held-out lines its tokens per byte are within 1% of sentencepiece's model and
  at least 90% of the pieces are shared (benchmarks/unigram_quality.py runs the full-size
  table);
- the tokenizer.json written from it loads in tokenizers with the same pieces and scores.

Training here is small (vocabulary 2000-6000 on about 600 KB) to keep CI time low.
"""
from __future__ import annotations

import pytest
import sentencepiece as spm

import toksmith
from tests.conftest import first_difference, multilingual_sample, report
from tests.parity import spm_training
from tests.parity.spm_training import split_corpora, write_lines



@pytest.fixture(scope="module")
def split(corpus_lines) -> tuple[list[str], list[str]]:
    return split_corpora(corpus_lines)


@pytest.fixture(scope="module")
def train_file(split, tmp_path_factory):
    return write_lines(tmp_path_factory.mktemp("unigram") / "train.txt", split[0])


def sentencepiece_model(train_file, out_dir, vocab_size: int, **options) -> spm.SentencePieceProcessor:
    return spm_training.sentencepiece_model(train_file, out_dir, "unigram", vocab_size, **options)


def toksmith_model(train_file, out_dir, vocab_size: int, **options):
    tok = toksmith.train_unigram([str(train_file)], vocab_size, num_threads=2, show_progress=False, **options)
    path = out_dir / "toksmith.model"
    tok.save(path)
    return tok, path


def pieces(sp: spm.SentencePieceProcessor) -> list[str]:
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


@pytest.fixture(scope="module")
def default_model(train_file, tmp_path_factory):
    return toksmith_model(train_file, tmp_path_factory.mktemp("default"), 6000)


def test_trained_model_encodes_every_corpus_line_as_sentencepiece(default_model, corpus_lines):
    tok, path = default_model
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert sp.get_piece_size() == tok.vocab_size == 6000
    total = spm_training.assert_encodes_every_corpus_line(tok, sp, corpus_lines)
    report(f"train_unigram vocab 6000 .model in sentencepiece vs toksmith: {total} lines, "
           f"0 mismatches, 0 decode mismatches")


def test_quality_against_sentencepiece_trainer(default_model, train_file, split, tmp_path):
    """Same settings, same text: held-out tokens per byte within 1%, >= 90% shared pieces."""
    tok, path = default_model
    ours = spm.SentencePieceProcessor(model_file=str(path))
    ref = sentencepiece_model(train_file, tmp_path, 6000)
    held_out = split[1]
    ours_tpb = spm_training.tokens_per_byte(ours, held_out)
    ref_tpb = spm_training.tokens_per_byte(ref, held_out)
    shared = len(set(pieces(ours)) & set(pieces(ref))) / ref.get_piece_size()
    report(f"train_unigram vocab 6000 quality on {len(held_out)} held-out lines: tokens/byte {ours_tpb:.5f} vs "
           f"sentencepiece {ref_tpb:.5f} ({ours_tpb / ref_tpb - 1:+.3%}), {shared:.2%} pieces shared")
    assert abs(ours_tpb / ref_tpb - 1) <= 0.01
    assert shared >= 0.90


OPTION_SETS = {
    "bytes_userdef_control": dict(byte_fallback=True, user_defined_symbols=["<sep>", "[MASK]", "ing", "の"],
                                  control_symbols=["<ctrl>", "<extra_id_0>"], character_coverage=0.995),
    "identity_keep_whitespace": dict(normalization_rule_name="identity", remove_extra_whitespaces=False,
                                     byte_fallback=True),
    "nfkc_no_dummy_prefix": dict(normalization_rule_name="nfkc", add_dummy_prefix=False),
    "nmt_nfkc_cf_split_digits": dict(normalization_rule_name="nmt_nfkc_cf", split_digits=True),
    "nfkc_cf_ids": dict(normalization_rule_name="nfkc_cf", unk_id=1, bos_id=0, eos_id=-1, pad_id=3),
    "whitespace_suffix": dict(treat_whitespace_as_suffix=True, allow_whitespace_only_pieces=True),
    "no_whitespace_split": dict(split_by_whitespace=False, max_sentencepiece_length=8, shrinking_factor=0.6,
                                num_sub_iterations=1),
    "no_script_split_delimiter": dict(split_by_unicode_script=False, split_by_number=False,
                                      pretokenization_delimiter="_"),
    "first_sentences": dict(input_sentence_size=1500, shuffle_input_sentence=False),
}


OPTIONS_VOCAB = 3000


def meta_pieces(sp: spm.SentencePieceProcessor) -> list[tuple[int, str, str]]:
    """(id, piece, type) of the pieces that are not NORMAL."""
    out = []
    for i in range(sp.get_piece_size()):
        for kind in ("control", "unknown", "byte", "unused"):
            if getattr(sp, f"is_{kind}")(i):
                out.append((i, sp.id_to_piece(i), kind))
    return out


@pytest.mark.parametrize("name", sorted(OPTION_SETS))
def test_trainer_options_against_sentencepiece(name, corpus_lines, tmp_path):
    options = OPTION_SETS[name]
    text = tmp_path / "train.txt"
    text.write_text("\n".join(multilingual_sample(corpus_lines, 150)) + "\n", encoding="utf-8")
    tok, path = toksmith_model(text, tmp_path, OPTIONS_VOCAB, **options)
    ours = spm.SentencePieceProcessor(model_file=str(path))
    ref = sentencepiece_model(text, tmp_path, OPTIONS_VOCAB, **options)
    # meta pieces (unk/bos/eos/pad, symbols, bytes) at the same ids with the same types
    assert ours.get_piece_size() == ref.get_piece_size() == OPTIONS_VOCAB
    assert meta_pieces(ours) == meta_pieces(ref)
    shared = len(set(pieces(ours)) & set(pieces(ref))) / ref.get_piece_size()
    lines = multilingual_sample(corpus_lines, 400)
    spm_training.assert_encodes_sample(tok, ours, lines)
    report(f"train_unigram {name} .model in sentencepiece vs toksmith: {len(lines)} lines, 0 mismatches; "
           f"{shared:.2%} pieces shared with sentencepiece's trainer")
    assert shared >= 0.90


def test_tokenizer_json_loads_in_tokenizers(default_model, corpus_lines, tmp_path):
    """The converted file: same pieces, and tokenizers encodes as sentencepiece but where two
    segmentations tie (the same pieces in another order: equal total score, which each
    library breaks its own way; README: Unigram ties of equal score)."""
    from tokenizers import Tokenizer as HfTokenizer
    tok, path = default_model
    out = tmp_path / "tokenizer.json"
    tok.save(out)
    hf = HfTokenizer.from_file(str(out))
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert hf.get_vocab_size() == sp.get_piece_size()
    assert [hf.id_to_token(i) for i in range(sp.get_piece_size())] == pieces(sp)
    lines = corpus_lines["botchan.txt"] + corpus_lines["man_en.txt"]
    want = sp.encode(lines)
    got = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    bad = [i for i in range(len(lines)) if got[i] != want[i]]
    ties = [i for i in bad if sorted(got[i]) == sorted(want[i])]
    report(f"train_unigram vocab 6000 tokenizer.json in tokenizers vs sentencepiece: {len(lines)} lines, "
           f"{len(bad)} mismatches, all {len(ties)} Unigram ties of equal score")
    other = [i for i in bad if i not in ties]
    assert not other, f"line {other[0]}: {first_difference(got[other[0]], want[other[0]])}"


def _seed_file(path, lines: list[str]) -> set[str]:
    """A seed file from the text's own words: each word with and without U+2581, and its
    first 2-4 characters, with the word's count; plus lines sentencepiece skips (a space,
    U+2585, a repeat). The set of its pieces."""
    import collections
    import re
    counts = collections.Counter(w for line in lines for w in re.findall(r"\w+|[^\w\s]+", line))
    entries = []
    for word, n in counts.most_common():
        for piece in ("\u2581" + word, word, word[:2], word[:3], word[:4]):
            entries.append(f"{piece}\t{n}")
    entries[5:5] = ["a b\t900", "x\u2585\t900", entries[0]]
    path.write_text("\n".join(entries) + "\n", encoding="utf-8")
    return {entry.split("\t")[0] for entry in entries}


@pytest.mark.parametrize("seed_size", [1000000, 8000])
def test_seed_sentencepieces_file_against_sentencepiece(train_file, split, tmp_path, seed_size):
    """seed_sentencepieces_file: training starts from the corpus's characters and the file's
    pieces (the first `seed_sentencepiece_size` seeds) and only prunes them."""
    seeds = _seed_file(tmp_path / "seeds.tsv", split[0])
    options = dict(seed_sentencepieces_file=str(tmp_path / "seeds.tsv"), seed_sentencepiece_size=seed_size)
    tok, path = toksmith_model(train_file, tmp_path, 4000, **options)
    ours = spm.SentencePieceProcessor(model_file=str(path))
    ref = sentencepiece_model(train_file, tmp_path, 4000, **options)
    chars = {c for line in split[0] for c in line}
    outside = [p for p in pieces(ours)[3:] if p not in seeds and len(p) > 1]
    assert not outside, outside[:10]
    shared = len(set(pieces(ours)) & set(pieces(ref))) / ref.get_piece_size()
    held_out = split[1]
    ours_tpb, ref_tpb = spm_training.tokens_per_byte(ours, held_out), spm_training.tokens_per_byte(ref, held_out)
    report(f"train_unigram seed_sentencepieces_file ({len(seeds)} pieces, seed_sentencepiece_size {seed_size}): "
           f"{shared:.2%} pieces shared with sentencepiece's trainer, held-out tokens/byte {ours_tpb:.5f} vs "
           f"{ref_tpb:.5f} ({ours_tpb / ref_tpb - 1:+.3%}); {len(chars)} corpus characters")
    assert shared >= 0.90
    assert abs(ours_tpb / ref_tpb - 1) <= 0.01
