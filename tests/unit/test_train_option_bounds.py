"""Issue 30 item 10: every trainer's numeric and flag options bounded by what the files
and the core hold, refused with a ValueError/TypeError naming the option (before: an
OverflowError from the core, a bare MemoryError from a table sized by vocab_size, an
hour-long walk over 2**31 ids, or a silent int-for-bool)."""
from __future__ import annotations

import pytest
from tokenizers import Tokenizer as HfTokenizer
from tokenizers import pre_tokenizers
from tokenizers.models import BPE

import toksmith

TEXTS = [f"the quick brown fox jumps over the lazy dog {i}" for i in range(200)]
INT32_MAX = 2**31 - 1


@pytest.fixture(scope="module")
def like(tmp_path_factory):
    tok = HfTokenizer(BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path_factory.mktemp("like") / "like.json"
    tok.save(str(path))
    return str(path)


def _trainers(like):
    return {
        "unigram": lambda **o: toksmith.train_unigram(iter(TEXTS), show_progress=False, **o),
        "spm_bpe": lambda **o: toksmith.train_sentencepiece_bpe(iter(TEXTS), show_progress=False, **o),
        "bpe_like": lambda **o: toksmith.train_bpe(iter(TEXTS), like=like, show_progress=False, **o),
        "byte_stream": lambda **o: toksmith.train_bpe(iter(TEXTS), show_progress=False, **o),
    }


@pytest.mark.parametrize("trainer", ["unigram", "spm_bpe", "bpe_like", "byte_stream"])
@pytest.mark.parametrize("vocab_size", [2**31, 2**40, 2**64])
def test_vocab_size_past_int32_is_refused(like, trainer, vocab_size):
    with pytest.raises(ValueError, match=rf"vocab_size must be at most {INT32_MAX} \(token ids are int32"):
        _trainers(like)[trainer](vocab_size=vocab_size)


@pytest.mark.parametrize("trainer", ["unigram", "spm_bpe"])
def test_largest_vocab_size_says_what_the_corpus_allows(like, trainer):
    """2**31 - 1 is a valid int32: sentencepiece's own message, at once (hard_vocab_limit),
    or the pieces the corpus gives (hard_vocab_limit=False)."""
    with pytest.raises(ValueError, match=rf"Vocabulary size too high \({INT32_MAX}\)\. Please set it to a value <="):
        _trainers(like)[trainer](vocab_size=INT32_MAX)
    tok = _trainers(like)[trainer](vocab_size=INT32_MAX, hard_vocab_limit=False)
    assert 50 < tok.vocab_size < 1000


@pytest.mark.parametrize("trainer", ["bpe_like", "byte_stream"])
def test_largest_vocab_size_trains_to_the_end(like, trainer):
    base = _trainers(like)[trainer](vocab_size=100000)
    tok = _trainers(like)[trainer](vocab_size=INT32_MAX)
    assert tok.vocab_size == base.vocab_size


@pytest.mark.parametrize("trainer, options, error, message", [
    ("unigram", dict(seed_sentencepiece_size=2**31), ValueError, "seed_sentencepiece_size must be at most 2147483647"),
    ("unigram", dict(input_sentence_size=-5), ValueError, "input_sentence_size must be >= 0"),
    ("unigram", dict(input_sentence_size=2**64), ValueError, "input_sentence_size must be at most"),
    ("unigram", dict(pad_id=-2), ValueError, "pad_id must be >= -1"),
    ("spm_bpe", dict(bos_id=2**31), ValueError, "bos_id must be at most 2147483647"),
    ("unigram", dict(max_sentencepiece_length=2**40), ValueError, r"max_sentencepiece_length must be in \[1, 512\]"),
    ("unigram", dict(character_coverage=float("nan")), ValueError, "character_coverage must be in"),
    ("unigram", dict(vocab_size=100.0), TypeError, "vocab_size must be an int, not float"),
    ("unigram", dict(split_digits=1), TypeError, "split_digits must be a bool, not int 1"),
    ("spm_bpe", dict(byte_fallback="yes"), TypeError, "byte_fallback must be a bool"),
    ("spm_bpe", dict(hard_vocab_limit=0), TypeError, "hard_vocab_limit must be a bool"),
    ("bpe_like", dict(min_frequency=2**64), ValueError, r"min_frequency must be at most 9223372036854775807 \(counts"),
    ("bpe_like", dict(max_token_length=2**64), ValueError, "max_token_length must be at most"),
    ("bpe_like", dict(limit_alphabet=-1), ValueError, "limit_alphabet must be >= 0"),
    ("bpe_like", dict(vocab_size=True), TypeError, "vocab_size must be an int, not bool"),
    ("byte_stream", dict(min_frequency=2**64), ValueError, "min_frequency must be at most"),
    ("byte_stream", dict(ascii_only=1), TypeError, "ascii_only must be a bool"),
])
def test_bad_numbers_and_flags_are_named(like, trainer, options, error, message):
    options.setdefault("vocab_size", 300)
    with pytest.raises(error, match=message):
        _trainers(like)[trainer](**options)


@pytest.mark.parametrize("trainer", ["unigram", "spm_bpe", "bpe_like", "byte_stream"])
def test_more_threads_than_the_pool_is_not_an_error(like, trainer):
    """num_threads never changes the result; past what the core's pool runs it is capped
    (2**40 overflowed the core's int before)."""
    vocab = 50 if trainer == "unigram" else 300
    assert _trainers(like)[trainer](vocab_size=vocab, num_threads=2**40).vocab_size == \
        _trainers(like)[trainer](vocab_size=vocab, num_threads=1).vocab_size


@pytest.mark.parametrize("trainer", ["unigram", "spm_bpe", "bpe_like", "byte_stream"])
@pytest.mark.parametrize("value", [1, "no", 0.0])
def test_show_progress_must_be_a_bool(like, trainer, value):
    """show_progress is None (a bar when stderr is a terminal) or a bool; "no" used to show bars."""
    trainers = {
        "unigram": toksmith.train_unigram, "spm_bpe": toksmith.train_sentencepiece_bpe,
        "bpe_like": lambda *a, **o: toksmith.train_bpe(*a, like=like, **o), "byte_stream": toksmith.train_bpe,
    }
    with pytest.raises(TypeError, match=rf"show_progress must be a bool, not {type(value).__name__}"):
        trainers[trainer](texts=TEXTS, vocab_size=300, show_progress=value)


@pytest.mark.parametrize("value", [1, "yes"])
def test_train_bpe_ascii_only_must_be_a_bool(like, value):
    for options in ({}, {"like": like}):
        with pytest.raises(TypeError, match="ascii_only must be a bool"):
            toksmith.train_bpe(texts=TEXTS, vocab_size=300, ascii_only=value, show_progress=False, **options)
