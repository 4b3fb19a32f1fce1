"""Run the reference tokenizers (sentencepiece, llama.cpp) on untrusted model files
in a child process, so that a reference that aborts (llama.cpp's GGML_ASSERT, a
C++ exception thrown through the C API) or crashes kills only the child.

The parent sends one request per model file: the reference, the path and the
texts (with flags) to tokenize. The child answers ``("loaded", None)`` as soon
as the reference has loaded the file, then ``("ok", [ids, ...])``; or
``("rejected", message)`` when the reference refuses the file. A child that dies
is restarted, and the request answers ``("died", None)`` when it died while
loading (a rejection, by abort) or ``("died tokenizing", None)`` when it had
loaded the file and died while tokenizing (a reference bug, not a verdict on
the file).

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
    """A long-lived child process that loads model files with a reference library."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self.restarts = 0

    def __enter__(self) -> "ReferenceWorker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            env = dict(os.environ, PYTHONPATH=REPO_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
            self._process = subprocess.Popen(
                [sys.executable, "-m", "tests.parity.reference_worker"], cwd=REPO_ROOT, env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return self._process

    def tokenize(self, reference: str, path: str, texts: list) -> tuple[str, object]:
        process = self._start()
        payload = pickle.dumps((reference, path, texts))
        loaded = False
        try:
            process.stdin.write(struct.pack("<Q", len(payload)) + payload)
            process.stdin.flush()
            while True:
                answer = self._read(process)
                if answer is None:
                    break
                if answer[0] != "loaded":
                    return answer
                loaded = True
        except BrokenPipeError:
            pass
        process.wait()
        self._process = None
        self.restarts += 1
        return ("died tokenizing" if loaded else "died"), None

    @staticmethod
    def _read(process: subprocess.Popen) -> tuple[str, object] | None:
        """One answer from the child, or None when it died."""
        header = process.stdout.read(8)
        if len(header) == 8:
            (size,) = struct.unpack("<Q", header)
            body = process.stdout.read(size)
            if len(body) == size:
                return pickle.loads(body)
        return None

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.stdin.close()
            self._process.wait(timeout=30)
        self._process = None


# ---------------------------------------------------------------- the child side

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
    try:
        return "ok", [vocab.tokenize(text, **flags) for text, flags in texts]
    finally:
        vocab.close()


def _serve() -> None:
    handlers = {"sentencepiece": _sentencepiece, "llama.cpp": _llama_cpp}
    stdin = sys.stdin.buffer
    # The answers get their own descriptor: C libraries may print to fd 1.
    stdout = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)

    def send(answer: tuple[str, object]) -> None:
        data = pickle.dumps(answer)
        stdout.write(struct.pack("<Q", len(data)) + data)
        stdout.flush()

    while True:
        header = stdin.read(8)
        if len(header) < 8:
            return
        (size,) = struct.unpack("<Q", header)
        reference, path, texts = pickle.loads(stdin.read(size))
        send(handlers[reference](path, texts, lambda: send(("loaded", None))))


if __name__ == "__main__":
    _serve()
