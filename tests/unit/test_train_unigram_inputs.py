"""toksmith.train_unigram: inputs, options and errors (no reference needed).

What the trainer learns is compared with sentencepiece in
tests/parity/test_train_unigram_sentencepiece.py; here: the ways a corpus reaches it,
determinism, and clear errors for bad input.
"""
from __future__ import annotations

import random

import pytest

import toksmith
from toksmith import NormalizationRule, ToksmithError

# A small corpus in two scripts, made here (no fixture needed): syllable words, seeded.
_RNG = random.Random(12)
_SYLLABLES = ["ka", "to", "ri", "ne", "so", "mu", "lan", "ter", "ph", "qu", "ing", "ed", "日", "本", "語", "東", "京"]
_WORDS = ["".join(_RNG.choice(_SYLLABLES) for _ in range(_RNG.randint(1, 4))) for _ in range(300)]
TEXTS = [" ".join(_RNG.choice(_WORDS) for _ in range(_RNG.randint(3, 12))) + f" {i % 97}" for i in range(800)]


def train(source=None, vocab_size=120, **options):
    """Train on `source` (default: TEXTS as an iterator: a list of str names files)."""
    return toksmith.train_unigram(iter(TEXTS) if source is None else source, vocab_size, show_progress=False,
                                  **options)


def test_file_and_texts_give_the_same_model(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    from_file = train([str(path)])
    from_texts = train(iter(TEXTS))
    assert [from_file.id_to_piece(i) for i in range(120)] == [from_texts.id_to_piece(i) for i in range(120)]
    assert from_file.vocab_size == 120
    assert from_file.id_to_piece(0) == "<unk>" and from_file.id_to_piece(1) == "<s>"


def test_same_model_bytes_whatever_the_thread_count(tmp_path):
    paths = []
    for threads in (1, 2, 3):
        path = tmp_path / f"t{threads}.model"
        train(iter(TEXTS * 3), 120, num_threads=threads).save(path)
        paths.append(path.read_bytes())
    assert paths[0] == paths[1] == paths[2]


def test_model_round_trips_through_save(tmp_path):
    tok = train()
    path = tmp_path / "m.model"
    tok.save(path)
    again = toksmith.load(path)
    assert again.encode(TEXTS[5], add_special=False) == tok.encode(TEXTS[5], add_special=False)
    assert again.decode(again.encode(TEXTS[5], add_special=False)) == TEXTS[5]


def test_sampled_sentences_are_deterministic():
    """shuffle_input_sentence samples with a seeded reservoir: the same model every run."""
    first = train(input_sentence_size=300, vocab_size=100)
    again = train(input_sentence_size=300, vocab_size=100)
    assert [first.id_to_piece(i) for i in range(100)] == [again.id_to_piece(i) for i in range(100)]
    with pytest.raises(ValueError, match="input_sentence_size must be 0"):
        train(input_sentence_size=50)


def test_normalization_rule_enum_or_name():
    by_enum = train(normalization_rule_name=NormalizationRule.IDENTITY)
    by_name = train(normalization_rule_name="identity")
    assert [by_enum.id_to_piece(i) for i in range(120)] == [by_name.id_to_piece(i) for i in range(120)]
    with pytest.raises(ValueError, match=r"unknown normalization rule 'nfc'.*'nmt_nfkc', 'nfkc', 'nmt_nfkc_cf', "
                                         r"'nfkc_cf', 'identity'"):
        train(normalization_rule_name="nfc")


def test_empty_corpus(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"\n\n\n")
    with pytest.raises(ToksmithError, match="the corpus is empty"):
        train([str(empty)])
    with pytest.raises(ToksmithError, match="the corpus is empty"):
        train(iter([]))


def test_vocab_smaller_than_alphabet_and_specials():
    with pytest.raises(ValueError, match=r"vocab_size 20 is smaller than the required characters and meta pieces "
                                         r"\(\d+ characters \+ 3 meta pieces"):
        train(vocab_size=20)
    with pytest.raises(ValueError, match=r"Vocabulary size too high \(5000\)"):
        train(vocab_size=5000)
    assert train(vocab_size=5000, hard_vocab_limit=False).vocab_size < 5000


def test_non_utf8_file_names_file_and_offset(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"fine line\ncaf\xe9\n")
    with pytest.raises(ToksmithError, match=r"latin1.txt: byte offset 13: not UTF-8"):
        train([str(path)])


def test_missing_file_and_bad_items(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such corpus file"):
        train([str(tmp_path / "missing.txt")])
    with pytest.raises(TypeError, match="text 1 of the corpus is a int"):
        train(iter(["a b", 7]))


@pytest.mark.parametrize("options, message", [
    (dict(character_coverage=0.5), r"character_coverage must be in \[0.98, 1.0\]"),
    (dict(shrinking_factor=0.99), r"shrinking_factor must be in \[0.5, 0.95\]"),
    (dict(max_sentencepiece_length=0), r"max_sentencepiece_length must be in \[1, 512\]"),
    (dict(num_sub_iterations=11), r"num_sub_iterations must be in \[1, 10\]"),
    (dict(unk_id=-1), r"<unk> must be defined"),
    (dict(bos_id=0), r"bos_id 0 .* already taken"),
    (dict(user_defined_symbols="abc"), r"user_defined_symbols must be a list of str"),
    (dict(control_symbols=["<x>", "<x>"]), r"<x> is already defined"),
    (dict(user_defined_symbols=["<unk>"]), r"<unk> must not be defined with control_symbols"),
    (dict(num_threads=0), r"num_threads must be an int >= 1"),
])
def test_bad_options(options, message):
    with pytest.raises((ValueError, TypeError), match=message):
        train(**options)


def test_meta_pieces_placed_like_spm_train():
    tok = train(vocab_size=380, control_symbols=["<sep>"], user_defined_symbols=["<mask>", "<s>"],
                byte_fallback=True, pad_id=3)
    assert [tok.id_to_piece(i) for i in range(6)] == ["<unk>", "<s>", "</s>", "<pad>", "<sep>", "<mask>"]
    assert tok.id_to_piece(6) == "<0x00>" and tok.id_to_piece(261) == "<0xFF>"


def test_same_model_with_or_without_the_node_cache(tmp_path, monkeypatch):
    """The words' lattice nodes are cached within a memory budget; without the cache (the
    trie walked on every pass) the model is byte-identical."""
    import toksmith.training.unigram as unigram
    cached = tmp_path / "cached.model"
    train(vocab_size=120).save(cached)
    monkeypatch.setattr(unigram, "CACHE_BUDGET_PER_BYTE", 0)
    walked = tmp_path / "walked.model"
    train(vocab_size=120).save(walked)
    assert cached.read_bytes() == walked.read_bytes()


def test_texts_keyword_takes_a_list_of_texts(tmp_path):
    """Issue 30 item 14: texts= reads a list of str as texts (given as files, it names files)."""
    path = tmp_path / "corpus.txt"
    path.write_text("".join(t + "\n" for t in TEXTS), encoding="utf-8")
    from_file = train([str(path)])
    ours = toksmith.train_unigram(texts=TEXTS, vocab_size=120, show_progress=False)
    assert ours.decode_bytes(list(range(120))) == from_file.decode_bytes(list(range(120)))
    with pytest.raises(FileNotFoundError, match="pass them as texts="):
        train(TEXTS[:3])
    with pytest.raises(ValueError, match="not both"):
        toksmith.train_unigram([str(path)], 120, texts=TEXTS)
    with pytest.raises(TypeError, match="train_unigram\\(\\) needs vocab_size"):
        toksmith.train_unigram(texts=TEXTS)


def test_a_generator_of_paths_is_told_to_be_a_list(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("a b c\n", encoding="utf-8")
    with pytest.raises(TypeError, match=r"text 0 of the corpus is a path \(.*corpus.txt'\), not a str: give files "
                                        r"as a list"):
        toksmith.train_unigram((p for p in [path]), 50, show_progress=False)
