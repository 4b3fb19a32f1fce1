"""RWKV vocabularies against their references.

- RWKV's own ``rwkv/rwkv_vocab_v20230424.txt`` against the rwkv package's TRIE_TOKENIZER
  (pure Python, its ``rwkv_tokenizer`` module needs no torch): every corpus line encoded
  (ids, batch ids; the flags change nothing, that vocabulary has no special tokens) and
  decoded (decode, decode_bytes), the invalid UTF-8 lines as bytes, random id lists, long
  adversarial texts.
- A GGUF written from that file with the `gguf` package as llama.cpp's converter writes it
  (tests/rwkv_gguf.py) against llama.cpp (tests/llama_cpp_reference.py): every corpus line,
  "<s>" spliced into a seeded quarter of them, (add_special, parse_special) = (False, False)
  and (True, True), encode and encode_batch, decode with both skip_special values against
  llama_detokenize, decode_bytes; the invalid UTF-8 lines as bytes; random id lists; long
  texts; copies with other flags and with tokens whose escapes llama.cpp reads oddly.
- Small GGUF vocabularies for the unknown-byte and looping cases.

decode(skip_special=False) is llama_detokenize(remove_special=False, unparse_special=True)
and decode(skip_special=True) is llama_detokenize(remove_special=True, unparse_special=False).
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
import time

import pytest
from rwkv.rwkv_tokenizer import TRIE_TOKENIZER   # the rwkv package

import toksmith
from tests import llama_cpp_reference   # llama-cpp-python
from tests.conftest import fixture_file, report
from tests.gguf_copy import copy_gguf, copy_gguf_with_tokens
from tests.parity.reference_worker import REPO_ROOT
from tests.parity.comparison import Comparison
from tests.parity.llama_cpp_compare import compare_corpora, compare_decodes, compare_encodes, special_texts_of
from tests.rwkv_gguf import write_rwkv_gguf, write_rwkv_world_gguf

VOCAB_TXT = "rwkv/rwkv_vocab_v20230424.txt"
NORMAL = 1   # GGUF token type
LONG_TEXTS = ["a" * 200_000, " " * 200_000, "\n" * 50_000 + "x", "日本語漢字" * 40_000,
              "🦙😀" * 30_000, "0123456789" * 20_000, "\x00" * 50_000, "ab " * 60_000]


@pytest.fixture(scope="module")
def vocab_txt(fixtures):
    return fixture_file(fixtures, VOCAB_TXT)


@pytest.fixture(scope="module")
def trie_tokenizer(vocab_txt):
    return TRIE_TOKENIZER(str(vocab_txt))


@pytest.fixture(scope="module")
def world_gguf(vocab_txt, tmp_path_factory):
    return write_rwkv_world_gguf(vocab_txt, tmp_path_factory.mktemp("rwkv") / "rwkv-world.gguf")


# ------------------------------------------------------------------ the .txt vocabulary

def test_txt_vocabulary_matches_trie_tokenizer(vocab_txt, trie_tokenizer, corpus_lines, invalid_utf8_lines):
    tok = toksmith.load(vocab_txt)
    ref = trie_tokenizer
    assert tok.vocab_size == max(ref.idx2token) + 1
    check = Comparison(f"{VOCAB_TXT} every corpus line x 2 flag combinations (encode, encode_batch), decode x2 and "
                       f"decode_bytes of rwkv's ids; the invalid UTF-8 lines (encode, decode, decode_bytes)",
                       against="rwkv TRIE_TOKENIZER")
    for corpus, lines in corpus_lines.items():
        want = [ref.encode(line) for line in lines]
        for add_special, parse_special in ((False, False), (True, True)):
            flags = dict(add_special=add_special, parse_special=parse_special)
            check.all(lines, ours=tok.encode_batch(lines, **flags), theirs=want, what=f"{corpus} encode_batch {flags}")
            check.all(lines, ours=[tok.encode(line, **flags) for line in lines], theirs=want,
                      what=f"{corpus} encode {flags}")
        compare_trie_decodes(check, tok, ref, want, label=corpus)
    want = [ref.encodeBytes(raw) for raw in invalid_utf8_lines]
    check.all(invalid_utf8_lines, ours=[tok.encode(raw) for raw in invalid_utf8_lines], theirs=want,
              what="invalid UTF-8 encode")
    compare_trie_decodes(check, tok, ref, want, label="invalid UTF-8")
    # decode_bytes gives the invalid text back as it was
    check.all(invalid_utf8_lines, ours=[tok.decode_bytes(ids) for ids in want], theirs=invalid_utf8_lines,
              what="invalid UTF-8 decode_bytes is the text")
    check.finish(at_least=6 * len(invalid_utf8_lines))


def compare_trie_decodes(check: Comparison, tok, ref, id_lists, *, label: str) -> None:
    """decode with both skip_special values and decode_bytes against TRIE_TOKENIZER (no special tokens)."""
    for ids in id_lists:
        want = ref.decode(ids)
        for skip in (False, True):
            check.one(ids, tok.decode(ids, skip_special=skip), want, what=f"{label} decode(skip_special={skip})")
        check.one(ids, tok.decode_bytes(ids), ref.decodeBytes(ids), what=f"{label} decode_bytes")


def test_txt_random_id_lists_decode_like_trie_tokenizer(vocab_txt, trie_tokenizer):
    """Seeded random id lists, weighted to the single-byte tokens (partial UTF-8: the rwkv
    package then decodes the whole text to one U+FFFD)."""
    tok = toksmith.load(vocab_txt)
    ref = trie_tokenizer
    ids_given = sorted(ref.idx2token)
    rnd = random.Random(7)
    id_lists = [[rnd.randint(1, 256) if rnd.random() < 0.5 else rnd.choice(ids_given)
                 for _ in range(rnd.randint(0, 10))] for _ in range(3000)]
    invalid = sum(ref.decode(ids) == "\ufffd" for ids in id_lists)
    assert invalid > 100   # the invalid UTF-8 rule is exercised
    with Comparison(f"{VOCAB_TXT} random id lists ({invalid} not UTF-8; decode x2, decode_bytes)",
                    against="rwkv TRIE_TOKENIZER") as check:
        compare_trie_decodes(check, tok, ref, id_lists, label="random ids")


def test_txt_ids_the_file_does_not_give_are_refused(vocab_txt, trie_tokenizer):
    """Id 0 has no line. TRIE_TOKENIZER.decode's bare except turns its KeyError into U+FFFD;
    toksmith raises TokenIdError, as for any id outside the vocabulary."""
    tok = toksmith.load(vocab_txt)
    assert 0 not in trie_tokenizer.idx2token and trie_tokenizer.decode([0]) == "\ufffd"
    with pytest.raises(toksmith.TokenIdError, match="token id 0 is no token"):
        tok.decode([33, 0])
    with pytest.raises(toksmith.TokenIdError):
        tok.decode([tok.vocab_size])


def test_txt_long_texts_match_trie_tokenizer(vocab_txt, trie_tokenizer):
    tok = toksmith.load(vocab_txt)
    with Comparison(f"{VOCAB_TXT} long repeated texts (up to 200k characters; encode)",
                    against="rwkv TRIE_TOKENIZER") as check:
        check.all(LONG_TEXTS, ours=[tok.encode(text) for text in LONG_TEXTS],
                  theirs=[trie_tokenizer.encode(text) for text in LONG_TEXTS])


def test_txt_small_vocabularies_match_trie_tokenizer(tmp_path):
    """Hand-made .txt files: ids out of order and with gaps, str and bytes literals with the
    same bytes (the later line wins the match), escapes of every kind, quotes and spaces."""
    lines = ["7 'ab' 2", "1 'a' 1", "2 b'b' 1", "3 b'a' 1", "9 ' ' 1", "4 ' a b ' 5", "5 \"'\" 1",
             "6 b'\\x00\\xff' 2", "8 '\\u4e00' 3", "10 b'\\xe4' 1", "11 b'\\xb8' 1", "12 b'\\x80' 1",
             "13 '\\x00' 1", "14 b'\\xff' 1", "15 '\\'\\\\' 2", "16 '\\\\' 1", "20 'ab ' 3"]
    path = tmp_path / "rwkv_vocab_small.txt"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    tok, ref = toksmith.load(path), TRIE_TOKENIZER(str(path))
    assert tok.vocab_size == 21
    texts = [b"abab a b ab", b"'\\'\\", "\u4e00a\u4e00".encode(), b"\x00\xff\x00\xe4\xb8", b"ab  a b  ab "]
    for text in texts:
        assert tok.encode(text) == ref.encodeBytes(text), text
        ids = ref.encodeBytes(text)
        assert tok.decode(ids) == ref.decode(ids) and tok.decode_bytes(ids) == ref.decodeBytes(ids)
    assert tok.decode([3, 1, 10]) == ref.decode([3, 1, 10]) == "\ufffd"


def test_txt_tokenizer_pickles(vocab_txt, trie_tokenizer):
    import pickle
    tok = toksmith.load(vocab_txt)
    again = pickle.loads(pickle.dumps(tok))
    text = "Pickled RWKV 日本語 \n\n"
    assert again.encode(text) == tok.encode(text) == trie_tokenizer.encode(text)
    assert again.spec.file_format is toksmith.spec.FileFormat.RWKV_VOCAB


# ------------------------------------------------------------------ GGUF vs llama.cpp

@pytest.mark.parametrize("architecture", ["rwkv6", "rwkv7"])
def test_world_gguf_loads_in_both(world_gguf, tmp_path, architecture):
    path = copy_gguf(world_gguf, tmp_path / "arch.gguf", {"general.architecture": architecture})
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        tok = toksmith.load(path)
        assert tok.vocab_size == ref.n_tokens == 65536
        text = b"Hello <s> world\n\n[PAD65535]\xff"
        for flags in ((False, False), (True, True)):
            assert tok.encode(text, add_special=flags[0], parse_special=flags[1]) == ref.tokenize(text, *flags)
    finally:
        ref.close()


def test_world_gguf_matches_llama_cpp(world_gguf, corpus_lines, invalid_utf8_lines):
    tok = toksmith.load(world_gguf)
    ref = llama_cpp_reference.load_vocab(world_gguf)
    assert tok.vocab_size == ref.n_tokens
    specials = special_texts_of(world_gguf)
    assert specials == ["<s>"]   # the converter's one CONTROL token; no USER_DEFINED ones
    flags = ((False, False), (True, True))
    check = Comparison("RWKV world GGUF (gguf package, as the converter writes it) every corpus line (a seeded quarter "
                       "with <s> spliced in) and the invalid UTF-8 lines x 2 flag combinations (encode, encode_batch; "
                       "decode x2 and decode_bytes of llama.cpp's ids with parse_special)", against="llama.cpp")
    spliced_count = compare_corpora(check, tok, ref, corpus_lines, specials, flags=flags)
    compare_encodes(check, tok, ref, invalid_utf8_lines, flags=flags, label="invalid UTF-8")
    report(f"  RWKV world GGUF: {spliced_count} lines with <s> spliced in")
    check.finish(at_least=7 * len(invalid_utf8_lines))


def test_world_gguf_long_texts_match_llama_cpp(world_gguf):
    tok = toksmith.load(world_gguf)
    ref = llama_cpp_reference.load_vocab(world_gguf)
    with Comparison("RWKV world GGUF long repeated texts (up to 200k characters; encode)", against="llama.cpp") as check:
        check.all(LONG_TEXTS, ours=[tok.encode(text) for text in LONG_TEXTS],
                  theirs=[ref.tokenize(text.encode(), False, False) for text in LONG_TEXTS])


def random_id_lists(n: int, seed: int, cases: int) -> list[list[int]]:
    """Id lists weighted to <s>, single bytes (partial UTF-8), "\\n\\n" (eot) and [PAD] ids."""
    rnd = random.Random(seed)
    pool = [0, 0, 261] + list(range(1, 257)) + list(range(n - 20, n))
    return [[rnd.choice(pool) if rnd.random() < 0.6 else rnd.randrange(n) for _ in range(rnd.randint(0, 10))]
            for _ in range(cases)]


def test_world_gguf_random_id_lists_decode_like_detokenize(world_gguf):
    tok = toksmith.load(world_gguf)
    ref = llama_cpp_reference.load_vocab(world_gguf)
    with Comparison("RWKV world GGUF random id lists (decode x2, decode_bytes)",
                    against="llama.cpp (llama_detokenize)") as check:
        compare_decodes(check, tok, ref, random_id_lists(tok.vocab_size, seed=3, cases=3000))


@pytest.mark.parametrize("flags", [
    {"tokenizer.ggml.add_space_prefix": True},
    {"tokenizer.ggml.add_bos_token": True, "tokenizer.ggml.add_eos_token": True},
    {"tokenizer.ggml.add_space_prefix": True, "tokenizer.ggml.add_bos_token": True,
     "tokenizer.ggml.bos_token_id": 33, "tokenizer.ggml.eos_token_id": 34},
], ids=["space_prefix", "bos_eos", "space_prefix_bos_eos_normal_ids"])
def test_world_gguf_flag_keys_match_llama_cpp(world_gguf, tmp_path, flags):
    """The flags llama.cpp reads for every vocabulary type: add_bos/add_eos add nothing to
    an RWKV encode, but llama_detokenize's remove_special drops a leading BOS and trailing
    EOS for them; add_space_prefix makes detokenize strip one leading space."""
    path = copy_gguf(world_gguf, tmp_path / "flags.gguf", flags)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        texts = [" leading space", "<s> x", "!\n\n\"", "  two", "\x00end"]
        for text in texts:
            for add_special, parse_special in ((False, False), (True, True)):
                want = ref.tokenize(text.encode(), add_special, parse_special)
                assert tok.encode(text, add_special=add_special, parse_special=parse_special) == want
        lists = random_id_lists(tok.vocab_size, seed=5, cases=1000)
        lists += [[33, 34], [34, 33, 34], [0, 33, 0], [33], [34], [33, 33]]
        with Comparison(f"RWKV world GGUF with {sorted(flags)} random id lists (decode x2, decode_bytes)",
                        against="llama.cpp (llama_detokenize)") as check:
            compare_decodes(check, tok, ref, lists)
    finally:
        ref.close()


# Texts as the GGUF stores them, each with what llama_unescape_rwkv_token reads in it.
ODD_ESCAPES = [
    rb"\xFF\xfe",        # uppercase hex: 'F' - '0' = 22 per digit, (22 << 4) + 22 as a uint8: 0x76
    rb"ab\\",            # an escaped backslash at the end
    rb"cd\\x",           # a backslash then 'x' (escaped backslash, then plain x)
    rb"zq\x4",           # a \x escape cut off by the end: nothing for it
    rb"\q\'\"ok",        # unknown escapes give the character
    rb"\x00\x00nul",     # NUL bytes in the token
    rb"t\tn\nr\r!",      # the three named escapes
    rb"\x61\x62\x63",    # "abc" written in hex: the same bytes as a plain token, later id wins
    rb"\xgz\x~~",        # non-hex characters through the same arithmetic
]


def test_odd_escapes_match_llama_cpp(world_gguf, tmp_path):
    """Tokens appended to the world vocabulary whose escaped texts llama.cpp reads by its
    own arithmetic; the texts that hold each one's bytes encode and decode as llama.cpp does."""
    path = copy_gguf_with_tokens(world_gguf, tmp_path / "odd.gguf", [t.decode() for t in ODD_ESCAPES],
                                 [NORMAL] * len(ODD_ESCAPES), {})
    tok = toksmith.load(path)
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        first = tok.vocab_size - len(ODD_ESCAPES)
        pieces = [ref.token_to_piece(first + k, 0, True) for k in range(len(ODD_ESCAPES))]
        texts = [b"x" + piece + b"y" + piece for piece in pieces] + [b"abc", b"ab\\cd\\x", b"\x00\x00nul"]
        for text in texts:
            want = ref.tokenize(text, False, False)
            assert tok.encode(text, add_special=False) == want, text
        assert set(range(first, tok.vocab_size)) & {i for t in texts for i in ref.tokenize(t, False, False)}
        ids = list(range(first, tok.vocab_size))
        assert tok.decode_bytes(ids) == ref.detokenize(ids, False, True) == b"".join(pieces)
    finally:
        ref.close()


def test_random_escaped_texts_unescape_as_llama_cpp_does(world_gguf, tmp_path):
    """Seeded random token texts of backslashes, escape letters, hex digits of both cases and
    other bytes, appended to the world vocabulary: each token's bytes (decode_bytes) are
    llama.cpp's token_to_piece, and texts made of them encode as llama.cpp encodes them."""
    rnd = random.Random(13)
    alphabet = ["\\", "\\", "x", "t", "n", "r", "'", '"', "a", "f", "F", "0", "9", "g", "~", "\u00e9", " "]
    existing = set(rwkv_world_tokens_texts(world_gguf))
    texts = []
    while len(texts) < 400:
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 8)))
        if text.encode() not in existing and text not in texts:
            texts.append(text)
    path = copy_gguf_with_tokens(world_gguf, tmp_path / "random.gguf", texts, [NORMAL] * len(texts), {})
    tok = toksmith.load(path)
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        first = tok.vocab_size - len(texts)
        check = Comparison("RWKV GGUF random escaped token texts: each token's decode_bytes (llama.cpp: token_to_piece) "
                           "and texts of 5 of them (encode)", against="llama.cpp")
        pieces = [ref.token_to_piece(first + k, 0, True) for k in range(len(texts))]
        check.all(texts, ours=[tok.decode_bytes([first + k]) for k in range(len(texts))], theirs=pieces,
                  what="decode_bytes of one token")
        joined = [b"".join(pieces[j:j + 5]) for j in range(0, len(texts), 5)]
        check.all(joined, ours=[tok.encode(text, add_special=False) for text in joined],
                  theirs=[ref.tokenize(text, False, False) for text in joined], what="encode")
    finally:
        ref.close()
    check.finish(at_least=len(texts) + len(joined))


def rwkv_world_tokens_texts(path) -> list[bytes]:
    from tests.gguf_reference import read_metadata
    return list(read_metadata(path)["tokenizer.ggml.tokens"])


# ------------------------------------------------------------------ small vocabularies

def tiny_tokens(*extra: bytes) -> list[bytes]:
    return [b"<unk>", b"<", b"\\n", b"a", b"b", b"ab", b"abc"] + list(extra)


def test_byte_no_token_starts_is_the_unknown_token(tmp_path):
    """llm_tokenizer_rwkv_session pushes token_unk() for a byte no token starts with."""
    tokens = tiny_tokens()
    path = write_rwkv_gguf(tmp_path / "unk.gguf", tokens, [2] + [NORMAL] * (len(tokens) - 1), unk=0)
    tok = toksmith.load(path)
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        for text in (b"abz", b"zz\xff", b"abcab\nq", b"ab<unk>"):
            for flags in ((False, False), (True, True)):
                assert tok.encode(text, add_special=flags[0], parse_special=flags[1]) == ref.tokenize(text, *flags)
    finally:
        ref.close()


def test_byte_no_token_starts_without_unknown_token_is_refused(tmp_path):
    """Without an unk id, llama.cpp emits -1 (LLAMA_TOKEN_NULL) for such a byte: toksmith
    raises instead of returning an id that is no token."""
    tokens = tiny_tokens()
    path = write_rwkv_gguf(tmp_path / "nounk.gguf", tokens, [NORMAL] * len(tokens))
    tok = toksmith.load(path)
    ref = llama_cpp_reference.LlamaCppVocab(path)
    try:
        assert ref.tokenize(b"abz", False, False) == [5, -1]
        assert tok.encode("ab") == [5]
        with pytest.raises(ValueError, match="no token of the vocabulary matches"):
            tok.encode("abz")
    finally:
        ref.close()


_LOOP_PROBE = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    from tests import llama_cpp_reference
    vocab = llama_cpp_reference.LlamaCppVocab(sys.argv[1])
    print("loaded", vocab.tokenize(b"ab", False, False), flush=True)
    vocab.tokenize(b"b" + sys.argv[2].encode(), False, False)
    print("returned", flush=True)
""")
LOOP_GROWTH = 512 << 20   # bytes of memory a 2-byte text's tokens could never need
LOOP_DEADLINE_S = 60      # today the growth shows within about 2 s


def data_size(pid: int) -> int:
    """The process's data segment (VmData of /proc/PID/status), in bytes."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) << 10 for line in status if line.startswith("VmData:"))


def watch_for_endless_loop(child: subprocess.Popen) -> str:
    """After the child printed "loaded", wait until its memory has grown by LOOP_GROWTH while it
    is still running and has printed nothing more (an endless loop pushing tokens). Returns what
    was seen if that never happens (it died, returned, or stayed still until the deadline)."""
    first = child.stdout.readline()
    if not first.startswith(b"loaded [5]"):
        return f"first line {first!r}"
    start = data_size(child.pid)
    deadline = time.monotonic() + LOOP_DEADLINE_S
    while time.monotonic() < deadline:
        if child.poll() is not None:
            return f"the child ended (status {child.returncode}) after loading"
        if data_size(child.pid) - start >= LOOP_GROWTH:
            return "looping"
        time.sleep(0.1)
    return f"still running after {LOOP_DEADLINE_S} s but its memory grew by only {data_size(child.pid) - start} bytes"


def test_vocabulary_where_llama_cpp_loops_is_refused(tmp_path):
    """A byte that starts tokens but is no token itself ("c" here: "cd" is a token, "c" is
    not): llama.cpp's walk from it can pass no token's end, and then it pushes token 0 and
    restarts at position 0, forever. toksmith refuses such a vocabulary; llama.cpp (in a
    child process, memory capped) loads it, tokenizes other texts, and on "bc" keeps running
    while its memory grows by hundreds of MB (a crash, or a return, fails the test; left
    alone it dies of std::bad_alloc at the cap, about 10 s in)."""
    tokens = tiny_tokens(b"cd")
    path = write_rwkv_gguf(tmp_path / "loop.gguf", tokens, [NORMAL] * len(tokens))
    with pytest.raises(toksmith.ModelFormatError, match=r"token 7 b'cd' starts with the byte 0x63.*loop"):
        toksmith.load(path)
    env = dict(os.environ, GGML_NO_BACKTRACE="1")   # no gdb backtrace on an abort
    child = subprocess.Popen([sys.executable, "-c", _LOOP_PROBE, path, "c"], cwd=REPO_ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        seen = watch_for_endless_loop(child)
    finally:
        child.kill()
        _, err = child.communicate()
    assert seen == "looping", f"{seen}; stderr: {err[-400:]!r}"
