"""Run the reference tokenizers (sentencepiece, llama.cpp) on untrusted model files
in a child process, so that a reference that aborts (llama.cpp's GGML_ASSERT, a
C++ exception thrown through the C API) or crashes kills only that process.

One long-lived worker process imports the references once; for each llama.cpp
request it forks a child that loads the file and tokenizes the texts, so an abort
costs a fork (milliseconds), not a new interpreter (sentencepiece runs in the
worker itself; if it dies, the worker is restarted and the request is "died"). The child reports ``loaded`` as soon
as the reference has loaded the file, then its ids; the worker answers:

- ``("ok", [ids, ...])``: loaded, and the ids of every text;
- ``("rejected", message)``: the reference refused the file;
- ``("died", status)``: the child died while loading (a rejection, by abort);
- ``("died tokenizing", status)``: it had loaded the file and died while
  tokenizing: a reference bug, not a verdict on the file.

Example::

    with ReferenceWorker() as worker:
        worker.tokenize("sentencepiece", "m.model", [("Hello", {})])   # ("ok", [[...]])
        worker.tokenize("llama.cpp", "m.gguf", [(b"Hello", {"add_special": True,
                                                          "parse_special": False})])
"""
from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ReferenceWorker:
    """A long-lived worker process that loads model files with a reference library."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self.restarts = 0

    def __enter__(self) -> "ReferenceWorker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            # GGML_NO_BACKTRACE: ggml_abort would otherwise start gdb for a backtrace on every abort.
            env = dict(os.environ, PYTHONPATH=REPO_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
                       GGML_NO_BACKTRACE="1")
            self._process = subprocess.Popen(
                [sys.executable, "-m", "tests.parity.reference_worker"], cwd=REPO_ROOT, env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return self._process

    def tokenize(self, reference: str, path: str, texts: list) -> tuple[str, object]:
        process = self._start()
        try:
            _send(process.stdin, (reference, path, texts))
            answer = _receive(process.stdout)
            if answer is not None:
                return answer
        except BrokenPipeError:
            pass
        # The worker itself died (it should not: the reference runs in its children).
        process.wait()
        self._process = None
        self.restarts += 1
        return "died", None

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.stdin.close()
            self._process.wait(timeout=30)
        self._process = None


def _send(stream, message) -> None:
    data = pickle.dumps(message)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream):
    """One message, or None at the end of the stream (the writer died)."""
    header = stream.read(8)
    if len(header) == 8:
        (size,) = struct.unpack("<Q", header)
        body = stream.read(size)
        if len(body) == size:
            return pickle.loads(body)
    return None


# ---------------------------------------------------------------- the worker side

def _sentencepiece(path: str, texts: list, loaded) -> tuple[str, object]:
    import sentencepiece as spm
    try:
        sp = spm.SentencePieceProcessor(model_file=path)
    except (OSError, RuntimeError) as e:
        return "rejected", str(e)
    loaded()
    return "ok", [sp.encode(text, **flags) for text, flags in texts]


def _llama_cpp(path: str, texts: list, loaded) -> tuple[str, object]:
    from tests.llama_cpp_reference import LlamaCppVocab
    try:
        vocab = LlamaCppVocab(path)
    except ValueError as e:
        return "rejected", str(e)
    loaded()
    return "ok", [vocab.tokenize(text, **flags) for text, flags in texts]


HANDLERS = {"sentencepiece": _sentencepiece, "llama.cpp": _llama_cpp}


def _run_in_child(reference: str, path: str, texts: list) -> tuple[str, object]:
    """Run one request in a forked child; its answer, or how it died."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: answer on the pipe, then leave without cleanup
        os.close(read_end)
        with os.fdopen(write_end, "wb") as out:
            _send(out, HANDLERS[reference](path, texts, lambda: _send(out, ("loaded", None))))
        os._exit(0)
    os.close(write_end)
    loaded = False
    with os.fdopen(read_end, "rb") as answers:
        while (answer := _receive(answers)) is not None and answer[0] == "loaded":
            loaded = True
    _, status = os.waitpid(pid, 0)
    if answer is not None:
        return answer
    return ("died tokenizing" if loaded else "died"), status


def _serve() -> None:
    import sentencepiece   # noqa: F401 - imported once, before any fork
    from tests import llama_cpp_reference
    llama_cpp_reference._init()
    stdin = sys.stdin.buffer
    # The answers get their own descriptor: C libraries may print to fd 1.
    stdout = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    while (request := _receive(stdin)) is not None:
        reference, path, texts = request
        if reference == "sentencepiece":
            # sentencepiece refuses bad files with an exception (the test keeps byte flips
            # out of the charsmap it reads unchecked): run in place, a fork costs ~8 ms.
            # Should it crash all the same, the parent restarts the worker ("died").
            _send(stdout, _sentencepiece(path, texts, lambda: None))
        else:
            _send(stdout, _run_in_child(reference, path, texts))


if __name__ == "__main__":
    _serve()
