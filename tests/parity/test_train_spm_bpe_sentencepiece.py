"""toksmith.train_sentencepiece_bpe against sentencepiece 0.2.3 itself.

- the pieces: the same input and options give the same pieces, scores and ids as
  spm_train --model_type=bpe (the default options at two vocabulary sizes, and option sets
  on a multilingual sample);
- exactness: the .model toksmith writes loads in sentencepiece, and sentencepiece and
  toksmith give the same ids and decodes on every line of every fixture corpus;
- held-out text: trained on part of the corpora, every held-out line gives the same ids with
  toksmith's model as with spm_train's (the pieces are the same, so nothing is excused);
- the same result whatever the thread count.

Training here is small (vocabulary 3000-6000 on about 600 KB) to keep CI time low.
"""
from __future__ import annotations

import pytest
import sentencepiece as spm

import toksmith
from tests.conftest import multilingual_sample, report
from tests.parity import spm_training
from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import SENTENCEPIECE_TRAINER
from tests.parity.spm_training import split_corpora, write_lines

VOCAB = 6000


@pytest.fixture(scope="module")
def split(fixtures) -> tuple[list[str], list[str]]:
    return split_corpora(fixtures)


@pytest.fixture(scope="module")
def train_file(split, tmp_path_factory):
    return write_lines(tmp_path_factory.mktemp("spm_bpe") / "train.txt", split[0])


def sentencepiece_model(train_file, out_dir, vocab_size: int, **options) -> spm.SentencePieceProcessor:
    return spm_training.sentencepiece_model(train_file, out_dir, "bpe", vocab_size, **options)


def toksmith_model(train_file, out_dir, vocab_size: int, threads: int = 2, **options):
    tok = toksmith.train_sentencepiece_bpe([str(train_file)], vocab_size, num_threads=threads,
                                           show_progress=False, **options)
    path = out_dir / f"toksmith-{threads}.model"
    tok.save(path)
    return tok, path


def pieces(sp: spm.SentencePieceProcessor) -> list[tuple[str, float, str]]:
    """(piece, score, type) of every id."""
    out = []
    for i in range(sp.get_piece_size()):
        kind = next((k for k in ("control", "unknown", "byte", "unused") if getattr(sp, f"is_{k}")(i)), "normal")
        out.append((sp.id_to_piece(i), sp.get_score(i), kind))
    return out


@pytest.fixture(scope="module")
def default_model(train_file, tmp_path_factory):
    return toksmith_model(train_file, tmp_path_factory.mktemp("default"), VOCAB)


@pytest.mark.parametrize("vocab_size", [3500, VOCAB])
def test_same_pieces_as_spm_train(vocab_size, default_model, train_file, tmp_path):
    if vocab_size == VOCAB:
        path = default_model[1]
    else:
        path = toksmith_model(train_file, tmp_path, vocab_size)[1]
    ours = pieces(spm.SentencePieceProcessor(model_file=str(path)))
    ref = pieces(sentencepiece_model(train_file, tmp_path, vocab_size))
    assert len(ref) == vocab_size
    check = Comparison(f"train_sentencepiece_bpe vocab {vocab_size}: (piece, score, type) of every id",
                       against=SENTENCEPIECE_TRAINER)
    check.all(range(len(ref)), ours=ours, theirs=ref)
    check.finish()


def test_trained_model_encodes_every_corpus_line_as_sentencepiece(default_model, corpus_lines):
    tok, path = default_model
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert sp.get_piece_size() == tok.vocab_size == VOCAB
    spm_training.assert_encodes_every_corpus_line(tok, sp, corpus_lines, f"train_sentencepiece_bpe vocab {VOCAB}")


def test_held_out_lines_encode_as_with_spm_trains_model(default_model, train_file, split, tmp_path):
    """Same settings, same text: every held-out line gets the same ids from toksmith's trained
    model (run by toksmith) as from spm_train's (run by sentencepiece)."""
    tok = default_model[0]
    ref = sentencepiece_model(train_file, tmp_path, VOCAB)
    held_out = split[1]
    check = Comparison(f"train_sentencepiece_bpe vocab {VOCAB}: ids of {len(held_out)} held-out lines, toksmith's "
                       f"trained model", against=f"{SENTENCEPIECE_TRAINER}'s model in sentencepiece")
    ours = tok.encode_batch(held_out, add_special=False)
    check.all(held_out, ours=ours, theirs=ref.encode(held_out))
    check.finish()
    ours_tpb = sum(map(len, ours)) / sum(len(line.encode("utf-8")) for line in held_out)
    report(f"train_sentencepiece_bpe vocab {VOCAB} on {len(held_out)} held-out lines: tokens/byte {ours_tpb:.5f} vs "
           f"sentencepiece {spm_training.tokens_per_byte(ref, held_out):.5f}")


def test_thread_count_does_not_change_the_file(default_model, train_file, tmp_path):
    _, path = toksmith_model(train_file, tmp_path, VOCAB, threads=1)
    assert path.read_bytes() == default_model[1].read_bytes()


OPTION_SETS = {
    "bytes_userdef_control": dict(byte_fallback=True, user_defined_symbols=["<sep>", "[MASK]", "ing", "の"],
                                  control_symbols=["<ctrl>", "<extra_id_0>"], character_coverage=0.995),
    "identity_keep_whitespace": dict(normalization_rule_name="identity", remove_extra_whitespaces=False,
                                     byte_fallback=True),
    "nfkc_no_dummy_prefix": dict(normalization_rule_name="nfkc", add_dummy_prefix=False),
    "nmt_nfkc_cf_split_digits": dict(normalization_rule_name="nmt_nfkc_cf", split_digits=True),
    "nfkc_cf_ids": dict(normalization_rule_name="nfkc_cf", unk_id=1, bos_id=0, eos_id=-1, pad_id=3),
    "whitespace_suffix": dict(treat_whitespace_as_suffix=True, allow_whitespace_only_pieces=True),
    "whitespace_only_pieces": dict(allow_whitespace_only_pieces=True, remove_extra_whitespaces=False),
    "no_whitespace_split": dict(split_by_whitespace=False, max_sentencepiece_length=8),
    "no_script_split_delimiter": dict(split_by_unicode_script=False, split_by_number=False,
                                      pretokenization_delimiter="_"),
    "first_sentences": dict(input_sentence_size=1500, shuffle_input_sentence=False),
    "soft_limit": dict(hard_vocab_limit=False, character_coverage=1.0),
}
OPTIONS_VOCAB = 3000


@pytest.mark.parametrize("name", sorted(OPTION_SETS))
def test_trainer_options_against_sentencepiece(name, corpus_lines, tmp_path):
    options = OPTION_SETS[name]
    text = tmp_path / "train.txt"
    text.write_text("\n".join(multilingual_sample(corpus_lines, 150)) + "\n", encoding="utf-8")
    tok, path = toksmith_model(text, tmp_path, OPTIONS_VOCAB, **options)
    ours = spm.SentencePieceProcessor(model_file=str(path))
    ref = sentencepiece_model(text, tmp_path, OPTIONS_VOCAB, **options)
    a, b = pieces(ours), pieces(ref)
    assert len(b) == OPTIONS_VOCAB or not options.get("hard_vocab_limit", True)
    check = Comparison(f"train_sentencepiece_bpe {name}: (piece, score, type) of every id",
                       against=SENTENCEPIECE_TRAINER)
    check.all(range(len(b)), ours=a, theirs=b)
    check.finish()
    spm_training.assert_encodes_sample(tok, ours, multilingual_sample(corpus_lines, 400),
                                       f"train_sentencepiece_bpe {name}")
