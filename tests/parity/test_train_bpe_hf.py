"""`toksmith.train_bpe` learns the vocabulary and merges, ids included, that
`tokenizers.Tokenizer.from_file(like).train(files, BpeTrainer(...))` learns (0.23.3), and
the saved tokenizer.json encodes every corpus line identically in `tokenizers` and toksmith.

Pipelines (tests/parity/bpe_training_pipelines.py, made by tokenizers): GPT-2 ByteLevel,
Llama 3 Split + ByteLevel, Metaspace (SentencePiece-style BPE), Whitespace, BERT-style
(BertNormalizer + BertPreTokenizer with continuing_subword_prefix="##").

Where the reference disagrees with itself (written down here, followed as noted):
- tokenizers keeps `like`'s added tokens at their old ids in the trained object, but its
  own save + load renumbers them behind the new vocabulary; toksmith writes the saved
  form, so the reference here is `Tokenizer.from_str(trained.to_str())`.
- with continuing_subword_prefix or end_of_word_suffix, tokenizers numbers the "##x" /
  "x</w>" tokens in the iteration order of a randomly seeded hash map (two runs give
  different ids, and the pair tie rule then differs too). toksmith numbers them by first
  appearance in the corpus. The merge loop is proven exact from the reference's own
  initial numbering (`learn_merges` given tokenizers' first ids); the public result is
  checked to hold the same tokens before the first merge and to not depend on threads.
- limit_alphabet drops equally frequent characters in hash order in tokenizers; the
  limits below are picked where no tie straddles the cut.
"""
from __future__ import annotations

import json

import pytest
from tokenizers import Tokenizer as HfTokenizer
from tokenizers.trainers import BpeTrainer

import toksmith
from tests.conftest import CORPUS_FILES, fixture_file, multilingual_sample
from tests.parity.bpe_training_pipelines import compare_trained_json, merges_of, write_pipeline
from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import TOKENIZERS
from tests.parity.llama_cpp_compare import spliced
from toksmith._core.word_count import char_counts
from toksmith.training.bpe import BpeTrainerOptions
from toksmith.training.bpe_vocab import learn_merges
from toksmith.training.corpus import corpus_batches
from toksmith.training.word_counting import count_words

SMALL_CORPORA = ("botchan.txt", "man_ru.txt", "markup_json.txt", "tricky_strings.txt")
BPE_TRAINER = f"{TOKENIZERS} BpeTrainer"


@pytest.fixture(scope="module")
def pipelines(fixtures, tmp_path_factory):
    out = tmp_path_factory.mktemp("bpe_pipelines")
    return {name: write_pipeline(name, fixtures, out)
            for name in ("gpt2", "llama3", "metaspace", "whitespace", "bert")}


def _files(fixtures, names) -> list[str]:
    return [str(fixture_file(fixtures, f"corpus/{name}")) for name in names]


def _reference(like, files, **options) -> dict:
    ref = HfTokenizer.from_file(str(like))
    ref.train(files, BpeTrainer(show_progress=False, **options))
    return json.loads(HfTokenizer.from_str(ref.to_str()).to_str())   # the saved form (module doc)


def _ours(like, files, tmp_path, name, num_threads=2, **options):
    tok = toksmith.train_bpe(files, like=str(like), num_threads=num_threads, show_progress=False, **options)
    path = tmp_path / f"{name}.json"
    tok.save(str(path))
    return tok, path, json.loads(path.read_text(encoding="utf-8"))


def _assert_same_model(ours: dict, ref: dict, label: str) -> None:
    check = Comparison(f"{label}: trained vocabulary, merges, added tokens", against=BPE_TRAINER)
    compare_trained_json(check, ours, ref)
    check.finish()


def _compare_encodings(ours_tok, saved_path, lines: list[str], label: str, specials: list[str]) -> None:
    """Every line through tokenizers on the saved json and toksmith's trained tokenizer:
    all lines with the defaults (add_special, added tokens parsed), a spliced sample in the
    four add_special x parse_special combinations."""
    ref = HfTokenizer.from_file(str(saved_path))
    check = Comparison(f"{label} trained tokenizer: every line with the defaults, a spliced sample with "
                       f"add_special x parse_special", against=f"{TOKENIZERS} on the saved json")
    check.all(lines, ours=ours_tok.encode_batch(lines, parse_special=True),
              theirs=[e.ids for e in ref.encode_batch(lines)], what="defaults")
    combos = spliced(lines[:: max(1, len(lines) // 2000)], specials, 12)
    for add_special in (False, True):
        for parse_special in (False, True):
            ref.encode_special_tokens = not parse_special
            check.all(combos, ours=ours_tok.encode_batch(combos, add_special=add_special, parse_special=parse_special),
                      theirs=[e.ids for e in ref.encode_batch(combos, add_special_tokens=add_special)],
                      what=f"add_special={add_special} parse_special={parse_special}")
    check.finish()


FULL = [
    ("gpt2", {}),
    ("llama3", {"special_tokens": ["<|begin_of_text|>", "<|end_of_text|>"]}),
    ("metaspace", {"special_tokens": ["<unk>", "<s>", "</s>"]}),
    ("whitespace", {"special_tokens": ["[UNK]"], "min_frequency": 3}),
]


@pytest.mark.parametrize("name,options", FULL, ids=[n for n, _ in FULL])
def test_vocab_8000_on_every_corpus(fixtures, corpus_lines, pipelines, tmp_path, name, options):
    files = _files(fixtures, CORPUS_FILES)
    ref = _reference(pipelines[name], files, vocab_size=8000, **options)
    tok, path, ours = _ours(pipelines[name], files, tmp_path, name, vocab_size=8000, **options)
    _assert_same_model(ours, ref, f"{name} train_bpe vocab 8000")
    lines = [line for corpus in corpus_lines.values() for line in corpus]
    specials = [t["content"] for t in ours["added_tokens"]] or ["<|endoftext|>"]
    _compare_encodings(tok, path, lines, name, specials)


SMALL = [
    ("gpt2", {"special_tokens": ["<|endoftext|>", "<pad>"], "min_frequency": 2}),
    ("llama3", {"max_token_length": 4, "initial_alphabet": ["€uro", "ß", "\U0001F999"]}),
    ("metaspace", {"special_tokens": ["<unk>"], "limit_alphabet": 200}),
    ("whitespace", {"initial_alphabet": ["Ω"], "max_token_length": 6, "min_frequency": 5}),
    ("gpt2", {"max_token_length": 0}),
]


def _tie_free_limit(fixtures, pipeline, files, wanted: int) -> int:
    """The largest limit <= wanted whose cut does not split equally frequent characters."""
    from toksmith.training.bpe import _like
    words = count_words(_like(str(pipeline))[1], corpus_batches(files), 2)
    counts = sorted(char_counts(words.blob, words.offsets, words.counts).values())
    limit = wanted
    while 0 < limit < len(counts) and counts[len(counts) - limit - 1] == counts[len(counts) - limit]:
        limit -= 1
    return limit


@pytest.mark.parametrize("name,options", SMALL, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SMALL)])
def test_vocab_1000_with_options(fixtures, pipelines, tmp_path, name, options):
    files = _files(fixtures, SMALL_CORPORA)
    options = dict(options)
    if "limit_alphabet" in options:
        options["limit_alphabet"] = _tie_free_limit(fixtures, pipelines[name], files, options["limit_alphabet"])
    ref = _reference(pipelines[name], files, vocab_size=1000, **options)
    _, _, ours = _ours(pipelines[name], files, tmp_path, name, vocab_size=1000, **options)
    _assert_same_model(ours, ref, f"{name} train_bpe vocab 1000 {sorted(options)}")


def test_texts_are_sequences_as_train_from_iterator(corpus_lines, pipelines, tmp_path):
    """An iterable of str: each item one sequence (tokenizers' train_from_iterator)."""
    texts = multilingual_sample(corpus_lines, 400)
    ref = HfTokenizer.from_file(str(pipelines["metaspace"]))
    ref.train_from_iterator(texts, BpeTrainer(vocab_size=5000, show_progress=False))
    ref = json.loads(HfTokenizer.from_str(ref.to_str()).to_str())
    _, _, ours = _ours(pipelines["metaspace"], iter(texts), tmp_path, "texts", vocab_size=5000)
    _assert_same_model(ours, ref, f"metaspace train_bpe on {len(texts)} texts (train_from_iterator)")


AFFIXED = [
    ("bert", CORPUS_FILES, 8000, {"continuing_subword_prefix": "##", "special_tokens": ["[UNK]", "[CLS]"]}),
    ("bert", SMALL_CORPORA, 1000, {"continuing_subword_prefix": "##", "end_of_word_suffix": "</w>",
                                   "limit_alphabet": 150}),
    ("whitespace", SMALL_CORPORA, 1000, {"end_of_word_suffix": "</w>", "max_token_length": 5}),
]


@pytest.mark.parametrize("name,corpora,size,options", AFFIXED, ids=["bert-8000", "bert-1000", "whitespace-1000"])
def test_affixed_tokens(fixtures, corpus_lines, pipelines, tmp_path, name, corpora, size, options):
    """Merge loop exact from the reference's own numbering of the first tokens; the
    public result deterministic and holding the same first tokens (module docstring)."""
    files = _files(fixtures, corpora)
    options = dict(options)
    if "limit_alphabet" in options:
        options["limit_alphabet"] = _tie_free_limit(fixtures, pipelines[name], files, options["limit_alphabet"])
    ref = _reference(pipelines[name], files, vocab_size=size, **options)
    ref_vocab = ref["model"]["vocab"]
    by_id = sorted(ref_vocab, key=ref_vocab.get)
    prefix = options.get("continuing_subword_prefix") or ""
    made = {a + (b[len(prefix):] if prefix and b.startswith(prefix) else b) for a, b in merges_of(ref["model"])}
    first = [t for t in by_id if t not in made]
    assert first == by_id[:len(first)]
    from toksmith.training.bpe import _like
    words = count_words(_like(str(pipelines[name]))[1], corpus_batches(files), 2)
    vocab, merges = learn_merges(words, [t.encode() for t in first], BpeTrainerOptions(size, **options), False)
    texts = [t.decode() for t in vocab]
    label = f"{name} train_bpe vocab {size} {sorted(options)}"
    check = Comparison(f"{label} merge loop (its first {len(first)} ids given): token ids, merges",
                       against=BPE_TRAINER)
    tokens = sorted(set(texts) | ref_vocab.keys())
    ours_ids = {t: i for i, t in enumerate(texts)}
    check.all(tokens, ours=[ours_ids.get(t) for t in tokens], theirs=[ref_vocab.get(t) for t in tokens],
              what="token id")
    check.all(range(len(ref["model"]["merges"])), ours=[(texts[a], texts[b]) for a, b in merges],
              theirs=merges_of(ref["model"]), what="merge")
    # tokenizers numbers the first tokens in hash order (module docstring): compared as a set
    tok, path, ours = _ours(pipelines[name], files, tmp_path, name, vocab_size=size, **options)
    our_vocab = ours["model"]["vocab"]
    check.one("first tokens", set(sorted(our_vocab, key=our_vocab.get)[:len(first)]), set(first),
              what="public train_bpe's first tokens, as a set")
    check.finish()
    _, _, ours1 = _ours(pipelines[name], files, tmp_path, name + "1", num_threads=1, vocab_size=size, **options)
    with Comparison(f"{label} trained json", against="itself (1 thread vs 2)") as threads:
        threads.one("tokenizer.json", ours1, ours)
    if size == 8000:
        lines = [line for corpus in corpus_lines.values() for line in corpus]
        _compare_encodings(tok, path, lines, f"{name} ##", ["[UNK]", "[CLS]"])


def test_thread_count_changes_nothing(fixtures, pipelines, tmp_path):
    """Counting and the large merges (words merged on the thread pool) give the same file."""
    files = _files(fixtures, CORPUS_FILES)
    _, one, _ = _ours(pipelines["llama3"], files, tmp_path, "t1", num_threads=1, vocab_size=3000)
    _, three, _ = _ours(pipelines["llama3"], files, tmp_path, "t3", num_threads=3, vocab_size=3000)
    with Comparison("llama3 train_bpe vocab 3000 tokenizer.json bytes", against="itself (1 thread vs 3)") as check:
        check.one("tokenizer.json", one.read_bytes(), three.read_bytes())


def test_like_file_in_any_key_order_with_json_looking_tokens(fixtures, pipelines, tmp_path):
    """A like= file whose model comes first, whose model holds vocab and merges before its
    other fields, and whose added tokens look like the JSON around the vocab: the trained
    file is still tokenizers' own (the output is laid out anew, tables last)."""
    data = json.loads(pipelines["gpt2"].read_text(encoding="utf-8"))
    model = data.pop("model")
    model = {"vocab": model.pop("vocab"), "merges": model.pop("merges"), **model}
    data = {"model": model, **data}
    data["added_tokens"].append({"id": 50257, "content": '}},"vocab":{', "single_word": False, "lstrip": False,
                                 "rstrip": False, "normalized": False, "special": True})
    like = tmp_path / "reordered.json"
    like.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    files = _files(fixtures, ["botchan.txt"])
    _, _, ours = _ours(like, files, tmp_path, "reordered", vocab_size=2000, special_tokens=['"merges":['])
    ref = _reference(like, files, vocab_size=2000, special_tokens=['"merges":['])
    _assert_same_model(ours, ref, "gpt2 train_bpe vocab 2000, reordered like file")
