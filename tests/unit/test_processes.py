"""Tokenizers in worker processes (fork, spawn, forkserver) and the batch thread count.

The fork case is issue 7's reproduction: the parent runs a batch big enough to
start the batch thread pool, then a forked child runs batches itself. With
OpenMP's pool the child hung forever; every pool call here has a timeout, so a
regression fails instead of hanging the run.
"""
from __future__ import annotations

import multiprocessing
import os
import threading
import time

import pytest

import toksmith
from tests.conftest import fixture_file

# Seconds a pool may take for a few thousand lines; far more than it needs.
POOL_TIMEOUT = 120

# The tokenizer a forked child inherits (set by the test that forks).
_inherited = None


def _batch_with_inherited(lines):
    return _inherited.encode_batch(lines)


def _batch_with(tok, lines):
    return tok.encode_batch(lines)


def _run_pool(method, func, args):
    """pool.starmap(func, args) in 2 `method` workers; fails (and kills them) on timeout."""
    with multiprocessing.get_context(method).Pool(2) as pool:   # __exit__ terminates
        try:
            return pool.starmap_async(func, args).get(timeout=POOL_TIMEOUT)
        except multiprocessing.TimeoutError:
            pytest.fail(f"{method} pool: no result in {POOL_TIMEOUT} s (a worker hangs)")


@pytest.fixture(scope="module")
def man_en_lines(fixtures):
    return fixture_file(fixtures, "corpus/man_en.txt").read_text(encoding="utf-8").split("\n")


@pytest.fixture(scope="module")
def llama2(fixtures):
    return toksmith.load(fixture_file(fixtures, "spm/llama2_tokenizer.model"))


def test_fork_child_batches_after_parent_started_its_thread_pool(llama2, man_en_lines):
    global _inherited
    # Each chunk is ~40 KB, so a child's batch uses every core it may (2 or more).
    chunks = [man_en_lines[i:i + 1000] for i in range(0, 2000, 1000)]
    expected = [[llama2.encode(line) for line in chunk] for chunk in chunks]
    assert llama2.encode_batch(man_en_lines[:1000]) == expected[0]   # starts the parent's pool
    _inherited = llama2
    try:
        got = _run_pool("fork", _batch_with_inherited, [(chunk,) for chunk in chunks])
    finally:
        _inherited = None
    assert got == expected


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_pool_workers_get_the_parents_ids(method, llama2, man_en_lines):
    # The tokenizer travels as an argument: pickled for spawn and forkserver.
    chunks = [man_en_lines[i:i + 700] for i in range(0, 2800, 700)]
    llama2.encode_batch(man_en_lines[:1000])
    got = _run_pool(method, _batch_with, [(llama2, chunk) for chunk in chunks])
    assert got == [[llama2.encode(line) for line in chunk] for chunk in chunks]


def test_embedded_tokenizer_in_a_spawn_pool():
    tok = toksmith.load_embedded("sentencepiece-demo")
    texts = [["Hello, world", "日本語のテキスト"], ["naïve café " * 50]]
    assert _run_pool("spawn", _batch_with, [(tok, t) for t in texts]) == [tok.encode_batch(t) for t in texts]


def test_os_fork_child_batches():
    """A bare os.fork (no multiprocessing) after a parallel batch in the parent."""
    tok = toksmith.load_embedded("sentencepiece-demo")
    texts = ["The quick brown fox jumps over the lazy dog. " * 40] * 64
    expected = tok.encode_batch(texts, num_threads=2)
    pid = os.fork()
    if pid == 0:   # child: report through the exit status, never return into pytest
        code = 1
        try:
            code = 0 if tok.encode_batch(texts, num_threads=2) == expected else 2
        finally:
            os._exit(code)
    for _ in range(POOL_TIMEOUT * 10):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child's batch hangs")
    assert os.waitstatus_to_exitcode(status) == 0


def test_batches_from_several_python_threads_share_the_pool(fixtures, llama2, man_en_lines):
    """Four threads run big batches at once, on two tokenizers: the pool serves them all."""
    t5 = toksmith.load(fixture_file(fixtures, "spm/t5_base_japanese_spiece.model"))
    ja = fixture_file(fixtures, "corpus/man_ja.txt").read_text(encoding="utf-8").split("\n")
    jobs = [(llama2, man_en_lines[:1500]), (t5, ja[:1500]), (llama2, ja[:1500]), (t5, man_en_lines[:1500])]
    expected = [[tok.encode(line) for line in lines] for tok, lines in jobs]
    got, errors = {}, []
    barrier = threading.Barrier(len(jobs))

    def work(k):
        try:
            barrier.wait()
            got[k] = [jobs[k][0].encode_batch(jobs[k][1], num_threads=4) for _ in range(3)]
        except BaseException as e:   # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=POOL_TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a batch hangs"
    assert not errors, errors
    for k, want in enumerate(expected):
        assert got[k] == [want] * 3, k


# ----------------------------------------------------------------- num_threads


@pytest.mark.parametrize("value", [1, 2, 3, 64, 2**31, 2**64])
def test_num_threads_any_positive_int(value):
    tok = toksmith.load_embedded("sentencepiece-demo")
    texts = ["Hello, world", "日本語", "a b c " * 100] * 5
    assert tok.encode_batch(texts, num_threads=value) == [tok.encode(t) for t in texts]


@pytest.mark.parametrize("value", [0, -1, -(2**63)])
def test_num_threads_below_one_is_a_value_error(value):
    tok = toksmith.load_embedded("sentencepiece-demo")
    with pytest.raises(ValueError, match="num_threads"):
        tok.encode_batch(["a"], num_threads=value)


@pytest.mark.parametrize("value", [True, False, 2.0, "2", [2]])
def test_num_threads_not_an_int_is_a_type_error(value):
    tok = toksmith.load_embedded("sentencepiece-demo")
    with pytest.raises(TypeError, match="num_threads"):
        tok.encode_batch(["a"], num_threads=value)


def test_num_threads_is_checked_for_an_empty_batch_too():
    with pytest.raises(ValueError, match="num_threads"):
        toksmith.load_embedded("sentencepiece-demo").encode_batch([], num_threads=0)
