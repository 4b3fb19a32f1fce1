"""toksmith.train_sentencepiece_bpe: inputs, determinism and errors (no reference needed).

What the trainer learns is compared with sentencepiece's own BPE trainer in
tests/parity/test_train_spm_bpe_sentencepiece.py.
"""
from __future__ import annotations

import random

import pytest

import toksmith
from toksmith import ToksmithError

_RNG = random.Random(7)
_SYLLABLES = ["ka", "to", "ri", "ne", "so", "mu", "lan", "ter", "ph", "qu", "ing", "ed", "日", "本", "語", "東", "京"]
_WORDS = ["".join(_RNG.choice(_SYLLABLES) for _ in range(_RNG.randint(1, 4))) for _ in range(300)]
TEXTS = [" ".join(_RNG.choice(_WORDS) for _ in range(_RNG.randint(3, 12))) + f" {i % 97}" for i in range(800)]


def train(source=None, vocab_size=150, **options):
    return toksmith.train_sentencepiece_bpe(iter(TEXTS) if source is None else source, vocab_size,
                                            show_progress=False, **options)


def test_file_and_texts_give_the_same_model(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    a, b = train([str(path)]), train(iter(TEXTS))
    assert a.vocab_size == 150
    assert [a.id_to_piece(i) for i in range(150)] == [b.id_to_piece(i) for i in range(150)]
    assert [a.id_to_piece(i) for i in range(3)] == ["<unk>", "<s>", "</s>"]


def test_scores_are_minus_the_rank_and_characters_come_last(tmp_path):
    tok = train()
    path = tmp_path / "m.model"
    tok.save(path)
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert [sp.get_score(i) for i in range(3, 150)] == [-float(i) for i in range(147)]
    assert len(sp.id_to_piece(149)) == 1          # the least frequent character
    assert len(sp.id_to_piece(3)) == 2            # the first merge


def test_same_model_bytes_whatever_the_thread_count(tmp_path):
    out = []
    for threads in (1, 2, 3):
        path = tmp_path / f"t{threads}.model"
        train(iter(TEXTS * 2), 150, num_threads=threads).save(path)
        out.append(path.read_bytes())
    assert out[0] == out[1] == out[2]


def test_round_trip_through_save_and_load(tmp_path):
    tok = train()
    for name in ("m.model", "tokenizer.json"):
        again = toksmith.load(tok.save(tmp_path / name))
        ids = again.encode(TEXTS[3], add_special=False)
        assert ids == tok.encode(TEXTS[3], add_special=False)
        assert again.decode(ids) == TEXTS[3]


def test_fewer_pairs_than_asked_needs_hard_vocab_limit_off():
    """spm_train --model_type=bpe --vocab_size=100 --hard_vocab_limit=false on "ab ab ab" gives
    these pieces (sentencepiece 0.2.3: equal counts pick the smaller piece, "ab" < "▁a" as
    bytes; "▁a" is taken after "▁ab" with no occurrence left; the characters by count, then
    code point)."""
    with pytest.raises(ValueError, match="Vocabulary size too high"):
        train(iter(["ab ab ab"]), 100)
    tok = train(iter(["ab ab ab"]), 100, hard_vocab_limit=False)
    assert [tok.id_to_piece(i) for i in range(tok.vocab_size)] == ["<unk>", "<s>", "</s>", "ab", "▁ab", "▁a",
                                                                        "a", "b", "▁"]


@pytest.mark.parametrize("options, message", [
    (dict(vocab_size=0), "vocab_size must be > 0"),
    (dict(vocab_size=5), "vocab_size 5 is smaller than the required characters"),
    (dict(character_coverage=0.5), "character_coverage must be in"),
    (dict(max_sentencepiece_length=0), "max_sentencepiece_length must be in"),
    (dict(unk_id=-1), "must be defined"),
    (dict(num_threads=0), "num_threads must be an int"),
    (dict(normalization_rule_name="nfd"), "unknown normalization rule"),
])
def test_bad_options_raise(options, message):
    vocab = options.pop("vocab_size", 150)
    with pytest.raises(ValueError, match=message):
        train(None, vocab, **options)


def test_unigram_only_options_are_not_taken():
    with pytest.raises(TypeError):
        train(shrinking_factor=0.75)


def test_bad_corpus_raises(tmp_path):
    with pytest.raises(ToksmithError, match="the corpus is empty"):
        train(iter(["", ""]))
    with pytest.raises(FileNotFoundError):
        train([str(tmp_path / "missing.txt")])
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff\n")
    with pytest.raises(ValueError, match="not UTF-8"):
        train([str(bad)])


def test_texts_keyword_takes_a_list_of_texts(tmp_path):
    """Issue 30 item 14: texts= reads a list of str as texts (given as files, it names files)."""
    path = tmp_path / "corpus.txt"
    path.write_text("".join(t + "\n" for t in TEXTS), encoding="utf-8")
    ids = list(range(150))
    assert toksmith.train_sentencepiece_bpe(texts=TEXTS, vocab_size=150, show_progress=False).decode_bytes(ids) == \
        train([str(path)]).decode_bytes(ids)
    with pytest.raises(FileNotFoundError, match="pass them as texts="):
        train(TEXTS[:3])
