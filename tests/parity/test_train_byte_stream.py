"""`toksmith.train_bpe(..., like=None)`, the byte-stream configuration (issue 12).

1. Exactness against a naive implementation of the rules, written here from the spec
   (README "Training a BPE vocabulary"): ids 0-3 <|unk|> <|bos|> <|eos|> <|pad|>, 4-259
   the bytes (ascii_only: tab, LF, CR, 0x20-0x7E, every other byte a gap); a pair's
   count is the number of places its two tokens stand side by side in every sequence
   (each file or item on its own); the most frequent pair is merged, ties to the
   smallest (left id, right id), places replaced left to right; the merged bytes give
   the existing token when there is one; a pair spelling a special token is never
   merged; stop at vocab_size or when the best count is below min_frequency. The
   trained tokenizer.json must hold the same vocabulary (GPT-2's byte<->unicode map, or
   the ASCII characters as themselves) and merges (each pair once, where first learnt).
2. The trained tokenizer.json gives the same ids (and decodes) in `tokenizers` and in
   toksmith on every line of every fixture corpus, and on each whole corpus as one text.
3. The files written do not depend on the number of threads.
"""
from __future__ import annotations

import json
from collections import Counter

import pytest
from tokenizers import Tokenizer as HfTokenizer

import toksmith
from tests.conftest import CORPUS_FILES, fixture_file
from tests.gpt2_bytes import gpt2_bytes_to_unicode
from tests.parity.comparison import Comparison
from tests.parity.excuses.spm_tiktoken_training import TOKENIZERS
from tests.parity.llama_cpp_compare import spliced

SPECIALS = ["<|unk|>", "<|bos|>", "<|eos|>", "<|pad|>"]
ASCII = bytes([9, 10, 13]) + bytes(range(0x20, 0x7F))


# ---------------------------------------------------------------- the naive reference


def naive_train(sequences: list[bytes], vocab_size: int, min_frequency: int = 0, ascii_only: bool = False):
    """(vocab as bytes by id, merges as (a, b) in order learnt, stats): the spec, slowly."""
    vocab = [s.encode() for s in SPECIALS]
    for byte in (ASCII if ascii_only else range(256)):
        vocab.append(bytes([byte]))
    ids = {t: i for i, t in enumerate(vocab)}
    runs = []                      # the parts of each sequence between bytes that are no token
    for seq in sequences:
        run = []
        for byte in seq:
            token = ids.get(bytes([byte]))
            if token is None:
                runs.append(run)
                run = []
            else:
                run.append(token)
        runs.append(run)
    merges = []
    stats = Counter()
    while len(vocab) < vocab_size:
        counts = Counter()
        for run in runs:
            counts.update(zip(run, run[1:]))
        allowed = {}
        for pair, count in counts.items():
            if (vocab[pair[0]] + vocab[pair[1]]).decode("latin-1") in SPECIALS:
                stats["special spelt"] += 1
            else:
                allowed[pair] = count
        if not allowed:
            break
        best = max(allowed.values())
        if best < min_frequency:
            break
        pair = min(p for p, c in allowed.items() if c == best)
        text = vocab[pair[0]] + vocab[pair[1]]
        if text in ids:
            stats["existing token"] += 1
        else:
            ids[text] = len(vocab)
            vocab.append(text)
        new = ids[text]
        merges.append(pair)
        for k, run in enumerate(runs):
            out, i = [], 0
            while i < len(run):
                if i + 1 < len(run) and run[i] == pair[0] and run[i + 1] == pair[1]:
                    out.append(new)
                    i += 2
                else:
                    out.append(run[i])
                    i += 1
            runs[k] = out
    return vocab, merges, stats


def expected_json_model(vocab: list[bytes], merges: list[tuple[int, int]], ascii_only: bool):
    """(vocab text -> id, merges as text pairs, each once where first learnt)."""
    to_char = gpt2_bytes_to_unicode()
    texts = list(SPECIALS) + [t.decode("ascii") if ascii_only else "".join(to_char[b] for b in t)
                              for t in vocab[len(SPECIALS):]]
    seen, pairs = set(), []
    for pair in merges:
        if pair not in seen:
            seen.add(pair)
            pairs.append((texts[pair[0]], texts[pair[1]]))
    return {t: i for i, t in enumerate(texts)}, pairs


def trained(tmp_path, name, source, vocab_size, **options) -> tuple[object, object, dict]:
    tok = toksmith.train_bpe(source, vocab_size, show_progress=False, **options)
    path = tmp_path / f"{name}.json"
    tok.save(str(path))
    return tok, path, json.loads(path.read_text(encoding="utf-8"))


NAIVE = "the naive reference of this file (naive_train)"


def assert_model(got: dict, want_vocab: dict, want_merges: list, label: str) -> None:
    """The trained tokenizer.json's vocabulary (every token of either) and merges, compared."""
    check = Comparison(f"byte-stream {label}: token ids, merges", against=NAIVE)
    compare_model(check, got, want_vocab, want_merges)
    check.finish()


def compare_model(check: Comparison, got: dict, want_vocab: dict, want_merges: list) -> None:
    vocab = got["model"]["vocab"]
    tokens = sorted(vocab.keys() | want_vocab.keys())
    check.all(tokens, ours=[vocab.get(t) for t in tokens], theirs=[want_vocab.get(t) for t in tokens],
              what="token id")
    check.all(range(len(want_merges)), ours=[tuple(m) for m in got["model"]["merges"]], theirs=want_merges,
              what="merge")


# ---------------------------------------------------------------- 1. exactness

def _slices(fixtures, size: int) -> dict[str, bytes]:
    """A slice of `size` bytes from the middle of each of a few corpora (cut anywhere:
    byte mode reads bytes, a slice may end inside a character)."""
    out = {}
    for name in ("botchan.txt", "man_ru.txt", "markup_json.txt", "man_ja.txt", "code_python_stdlib.py.txt",
                 "tricky_strings.txt"):
        data = fixture_file(fixtures, f"corpus/{name}").read_bytes()
        at = len(data) // 3
        out[name] = data[at:at + size]
    return out


ORACLE_CASES = [
    # (label, options, vocab_size)
    ("bytes", {}, 520),
    ("bytes-min3", {"min_frequency": 3}, 900),
    ("ascii", {"ascii_only": True}, 380),
    ("ascii-min2", {"ascii_only": True, "min_frequency": 2}, 700),
]


@pytest.mark.parametrize("label,options,vocab_size", ORACLE_CASES, ids=[c[0] for c in ORACLE_CASES])
def test_files_match_naive_reference(fixtures, tmp_path, label, options, vocab_size):
    """Slices as files (one sequence each), read from a folder."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    slices = _slices(fixtures, 1500)
    for i, (name, data) in enumerate(slices.items()):
        (folder / f"{i:02d}-{name}").write_bytes(data)
    vocab, merges, stats = naive_train(list(slices.values()), vocab_size, **options)
    _, _, got = trained(tmp_path, label, str(folder), vocab_size, num_threads=2, **options)
    assert_model(got, *expected_json_model(vocab, merges, options.get("ascii_only", False)), f"{label} (files)")


def test_lines_match_naive_reference(fixtures, tmp_path):
    """Items of an iterator (lines: many repeat, so sequences are counted, not copied). The
    files are read whole: TOKSMITH_PARITY_SAMPLE must not leave this test without lines."""
    lines = []
    for name in ("botchan.txt", "markup_svg.txt", "man_de.txt"):
        lines += fixture_file(fixtures, f"corpus/{name}").read_bytes().decode("utf-8").split("\n")[200:290]
    lines += lines[:40]
    data = [line.encode("utf-8") for line in lines]
    for label, options, vocab_size in (("bytes", {}, 600), ("ascii-min2", {"ascii_only": True, "min_frequency": 2}, 500)):
        vocab, merges, _ = naive_train(data, vocab_size, **options)
        _, _, got = trained(tmp_path, label, iter(lines), vocab_size, num_threads=2, **options)
        assert_model(got, *expected_json_model(vocab, merges, options.get("ascii_only", False)),
                     f"{label} ({len(lines)} lines as items)")


def test_edge_rules_match_naive_reference(fixtures, tmp_path):
    """Runs of one byte (overlapping pairs), texts spelling the special tokens in many
    contexts (so that the pair spelling one is the most frequent), invalid UTF-8, bytes
    outside ascii_only's alphabet."""
    invalid = fixture_file(fixtures, "corpus/tricky_invalid_utf8.bin").read_bytes()
    sequences = [f"{c}<|unk|>{d} {c}<|eos|>".encode() for c in "abcdefgh" for d in "ijklmnop"]
    sequences += [b"aaaaaaa", b"aaa", b"abababa", b"abcabcbcab" * 5, invalid, invalid[:50],
                  b"\xff\xfe" * 20 + b"a\tb\r\n" * 3]
    totals = Counter()
    check = Comparison("byte-stream edge rules, 3 trainings: token ids, merges", against=NAIVE)
    for label, options, vocab_size in (("bytes", {}, 330), ("ascii", {"ascii_only": True}, 200),
                                       ("bytes-min2", {"min_frequency": 2}, 400)):
        vocab, merges, stats = naive_train(sequences, vocab_size, **options)
        totals.update(stats)
        _, _, got = trained(tmp_path, label, iter(sequences), vocab_size, num_threads=2, **options)
        compare_model(check, got, *expected_json_model(vocab, merges, options.get("ascii_only", False)))
    assert totals["special spelt"] > 0, totals     # the rule is reached
    check.finish()


def test_random_small_corpora_match_naive_reference(tmp_path):
    import random
    rnd = random.Random(12)
    check = Comparison("byte-stream random small corpora: token ids, merges", against=NAIVE)
    for case in range(150):
        alphabet = rnd.choice([b"ab", b"abc", b"a b\n\xff", b"<|unk>", b"xyz\t", b"aab"])
        sequences = [bytes(rnd.choice(alphabet) for _ in range(rnd.randint(0, 120))) for _ in range(rnd.randint(1, 6))]
        sequences += sequences[:rnd.randint(0, 2)]
        if not any(sequences):
            sequences.append(b"ab")
        ascii_only = rnd.random() < 0.3
        options = {"ascii_only": ascii_only, "min_frequency": rnd.choice([0, 0, 2, 4])}
        vocab_size = rnd.randint(102, 140) if ascii_only else rnd.randint(260, 300)
        if ascii_only and not any(byte in ASCII for s in sequences for byte in s):
            continue        # no byte of the alphabet: nothing to train (a corpus drawn, not a case skipped)
        vocab, merges, _ = naive_train(sequences, vocab_size, **options)
        _, _, got = trained(tmp_path, f"r{case}", iter(sequences), vocab_size, num_threads=1 + case % 3, **options)
        compare_model(check, got, *expected_json_model(vocab, merges, ascii_only))
    check.finish()


# ---------------------------------------------------------------- 2. tokenizers vs toksmith

def _all_files(fixtures) -> list[str]:
    return [str(fixture_file(fixtures, f"corpus/{name}")) for name in CORPUS_FILES]


@pytest.mark.parametrize("ascii_only,vocab_size", [(False, 8000), (True, 3000)], ids=["bytes", "ascii"])
def test_trained_json_same_ids_in_tokenizers(fixtures, corpus_lines, tmp_path, ascii_only, vocab_size):
    tok, path, _ = trained(tmp_path, "full", _all_files(fixtures), vocab_size, ascii_only=ascii_only, num_threads=2)
    assert tok.vocab_size == vocab_size
    ref = HfTokenizer.from_file(str(path))
    loaded = toksmith.load(str(path))
    lines = [line for corpus in corpus_lines.values() for line in corpus]
    wholes = ["\n".join(corpus) for corpus in corpus_lines.values()]
    label = f"byte-stream {'ascii_only' if ascii_only else 'bytes'} vocab {vocab_size}"
    check = Comparison(f"{label}: every line and whole corpus (trained and loaded tokenizer), decode of a "
                       f"sample, spliced special tokens", against=f"{TOKENIZERS} on the saved json")
    for kind, texts in (("line", lines), ("whole corpus", wholes)):
        want = [e.ids for e in ref.encode_batch(texts)]
        check.all(texts, ours=tok.encode_batch(texts), theirs=want, what=f"{kind} (trained)")
        check.all(texts, ours=loaded.encode_batch(texts), theirs=want, what=f"{kind} (loaded)")
        sample = want[:: max(1, len(want) // 3000)]
        check.all(sample, ours=[loaded.decode(ids) for ids in sample],
                  theirs=[ref.decode(ids, skip_special_tokens=False) for ids in sample], what=f"{kind} decode")
        check.all(sample, ours=[loaded.decode(ids, skip_special=True) for ids in sample],
                  theirs=[ref.decode(ids, skip_special_tokens=True) for ids in sample], what=f"{kind} decode skip")
    # special tokens in the text: tokenizers splits them unless encode_special_tokens
    combos = spliced(lines[:: max(1, len(lines) // 2000)], SPECIALS, 12)
    for parse_special in (False, True):
        ref.encode_special_tokens = not parse_special
        check.all(combos, ours=loaded.encode_batch(combos, parse_special=parse_special),
                  theirs=[e.ids for e in ref.encode_batch(combos)], what=f"spliced parse_special={parse_special}")
    check.finish()
    if not ascii_only:
        # lossless: decode gives every line back
        with Comparison(f"{label}: decode of encode of every line", against="the line itself") as lossless:
            lossless.all(lines, ours=[loaded.decode(ids) for ids in loaded.encode_batch(lines)], theirs=lines)


def test_wide_symbols_learn_what_narrow_ones_do(fixtures):
    """Symbols are laid out as int16 up to a 32,768-token vocabulary (the path the oracle
    cases above take) and as int32 past it: training is the same loop whatever the
    stopping point, so a 40,000-token run's first merges are the 32,768-token run's."""
    from toksmith._core.byte_stream_trainer import ByteStreamTrainer
    data = b"".join(fixture_file(fixtures, f"corpus/{name}").read_bytes()
                    for name in ("man_en.txt", "man_ja.txt", "man_ru.txt", "code_python_stdlib.py.txt",
                                 "wagahaiwa_nekodearu.txt", "markup_svg.txt"))
    results = {}
    for vocab_size in (32768, 40000):
        trainer = ByteStreamTrainer(False)
        trainer.add(data)
        trainer.prepare(vocab_size, 0, 2)
        assert trainer.narrow == (vocab_size == 32768)
        trainer.run(1 << 30)
        results[vocab_size] = trainer.vocab(), trainer.merges()
    narrow_vocab, narrow_merges = results[32768]
    wide_vocab, wide_merges = results[40000]
    assert len(narrow_vocab) == 32768 and len(wide_vocab) == 40000
    with Comparison("byte-stream 40,000-token run (int32 symbols): first tokens and merges",
                    against="itself (the 32,768-token run, int16 symbols)") as check:
        check.all(range(32768), ours=wide_vocab[:32768], theirs=narrow_vocab, what="token")
        check.all(range(len(narrow_merges)), ours=wide_merges[:len(narrow_merges)], theirs=narrow_merges,
                  what="merge")


# ---------------------------------------------------------------- 3. determinism

def test_same_file_whatever_the_threads(fixtures, tmp_path):
    files = _all_files(fixtures)[:6]
    check = Comparison("byte-stream vocab 2000 tokenizer.json bytes, 2 and 3 threads",
                       against="itself (1 thread)")
    for ascii_only in (False, True):
        written = [trained(tmp_path, f"t{threads}", files, 2000, ascii_only=ascii_only, num_threads=threads)[1]
                   .read_bytes() for threads in (1, 2, 3)]
        check.all([(ascii_only, 2), (ascii_only, 3)], ours=written[1:], theirs=written[:1] * 2)
    check.finish()


def test_pairs_of_many_places_match_naive_reference(tmp_path):
    # Merges whose pair stands in 65,536 places or more drop the places walked while
    # merging (issue 30 item 10): one run of a byte, and a biased random run (pairs of
    # 100k places), the latter twice (a count of 2).
    import random
    rnd = random.Random(30)
    biased = bytes(rnd.choice(b"aaaab") for _ in range(150_000))
    sequences = [b"a" * 150_000, biased, biased]
    vocab, merges, _ = naive_train(sequences, 276)
    _, _, got = trained(tmp_path, "many", iter(sequences), 276)
    assert_model(got, *expected_json_model(vocab, merges, False), "pairs of many places")
