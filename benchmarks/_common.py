"""Shared pieces of the throughput benchmarks: peers, timing and the report table.

A peer is a `Peer(load, one, batch)`: `load()` returns a tokenizer object,
`one(tok, text)` encodes one line to a list of ids, `batch(tok, texts)` encodes
all lines at once with the library's batch API (None where it has none). Imports
happen inside `load`, so a library that is missing or cannot read the model
shows up as "unavailable: <reason>" and the others still run. Each peer is
loaded and timed in a forked process of its own (`in_child`), so none runs on the
state another one left.
"""
from __future__ import annotations

import argparse
import gc
import os
import pickle
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, NamedTuple, Optional

REFERENCE = "sentencepiece"  # every peer's ids are compared with this one's
SUBJECT = "toksmith"         # the ratio columns are SUBJECT's MB/s over each peer's


class Peer(NamedTuple):
    load: Callable[[], object]
    one: Callable[[object, str], list]
    batch: Optional[Callable[[object, list], list]]


def _load_toksmith(model_path: Path):
    import toksmith
    return toksmith.load(model_path)


def _load_sentencepiece(model_path: Path):
    import sentencepiece as spm
    return spm.SentencePieceProcessor(model_file=str(model_path))


def _load_hf(hf_json: Path):
    from tokenizers import Tokenizer
    return Tokenizer.from_file(str(hf_json))


def _load_tokie(hf_json: Path):
    import tokie
    return tokie.Tokenizer.from_json(str(hf_json))


def standard_peers(model_path: Path, hf_json: Path) -> dict[str, Peer]:
    """toksmith and sentencepiece read the .model; HF tokenizers and tokie read hf_json."""
    return {
        SUBJECT: Peer(lambda: _load_toksmith(model_path),
                      lambda t, s: t.encode(s, add_special=False),
                      lambda t, xs: t.encode_batch(xs, add_special=False)),
        REFERENCE: Peer(lambda: _load_sentencepiece(model_path),
                        lambda t, s: t.encode(s),
                        lambda t, xs: t.encode(xs, num_threads=os.cpu_count())),
        "hf-tokenizers": Peer(lambda: _load_hf(hf_json),
                              lambda t, s: t.encode(s, add_special_tokens=False).ids,
                              lambda t, xs: [e.ids for e in t.encode_batch(xs, add_special_tokens=False)]),
        "tokie": Peer(lambda: _load_tokie(hf_json),
                      lambda t, s: t.encode(s, add_special_tokens=False).ids,
                      lambda t, xs: [e.ids for e in t.encode_batch(xs, add_special_tokens=False)]),
    }


def toksmith_peer(path: Path) -> Peer:
    """toksmith reading `path` (any format it loads)."""
    return Peer(lambda: _load_toksmith(path), lambda t, s: t.encode(s, add_special=False),
                lambda t, xs: t.encode_batch(xs, add_special=False))


def _load_hf_unpadded(tokenizer_json: Path):
    # toksmith does not apply a file's padding and truncation sections (README), so the
    # reference must not either for its ids to be comparable.
    tok = _load_hf(tokenizer_json)
    tok.no_padding()
    tok.no_truncation()
    return tok


def _load_kitoken_json(tokenizer_json: Path):
    from kitoken import Kitoken
    return Kitoken.from_tokenizers_file(str(tokenizer_json))


def tokenizer_json_peers(tokenizer_json: Path) -> dict[str, Peer]:
    """HF tokenizers, tokie and kitoken, each reading the same tokenizer.json."""
    return {
        "hf-tokenizers": Peer(lambda: _load_hf_unpadded(tokenizer_json),
                              lambda t, s: t.encode(s, add_special_tokens=False).ids,
                              lambda t, xs: [e.ids for e in t.encode_batch(xs, add_special_tokens=False)]),
        "tokie": Peer(lambda: _load_tokie(tokenizer_json), lambda t, s: t.encode(s, add_special_tokens=False).ids,
                      lambda t, xs: [e.ids for e in t.encode_batch(xs, add_special_tokens=False)]),
        "kitoken": Peer(lambda: _load_kitoken_json(tokenizer_json), lambda t, s: t.encode(s),
                        lambda t, xs: t.encode_all(xs)),
    }


class _LlamaCppVocab:
    """A vocab-only llama.cpp model (no context) through llama-cpp-python's C API, its log off."""

    def __init__(self, gguf_path: Path):
        import llama_cpp
        self._lc = llama_cpp
        self._log = llama_cpp.llama_log_callback(lambda level, text, data: None)   # kept alive here
        llama_cpp.llama_log_set(self._log, None)
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self._model = llama_cpp.llama_model_load_from_file(str(gguf_path).encode(), params)
        if not self._model:
            raise RuntimeError(f"llama.cpp could not load {gguf_path}")
        self._vocab = llama_cpp.llama_model_get_vocab(self._model)
        self._buf = (llama_cpp.llama_token * 4096)()

    def tokenize(self, text: str) -> list[int]:
        """One llama_tokenize call (add_special and parse_special off), into a buffer kept
        between calls (no allocation charged to llama.cpp per line)."""
        data = text.encode("utf-8")
        if len(data) + 8 > len(self._buf):
            self._buf = (self._lc.llama_token * (2 * len(data) + 8))()
        n = self._lc.llama_tokenize(self._vocab, data, len(data), self._buf, len(self._buf), False, False)
        if n < 0:   # more ids than the buffer holds: llama.cpp says how many
            self._buf = (self._lc.llama_token * -n)()
            n = self._lc.llama_tokenize(self._vocab, data, len(data), self._buf, len(self._buf), False, False)
        return self._buf[:n]


def llama_cpp_peer(gguf_path: Path) -> Peer:
    """llama.cpp itself (llama-cpp-python), one llama_tokenize call per line. It has no batch API."""
    return Peer(lambda: _LlamaCppVocab(gguf_path), lambda t, s: t.tokenize(s), None)


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def first_and_warm_pass(repeat: int, load: Callable[[], object], encode: Callable[[object], object]):
    """-> (best first-pass seconds, best warm seconds) over `repeat` freshly loaded tokenizers.

    Each repeat loads a new tokenizer (not timed), times its first pass over the
    input (no word cache is warm from an earlier repeat), then a second pass on
    the same tokenizer (warm caches, reported beside the first).
    """
    first, warm = [], []
    for _ in range(repeat):
        tok = load()
        # Every library starts its pass with the same empty collector: a full collection
        # owed to earlier allocations (the load, the parity runs) is not charged to it.
        gc.collect()
        start = time.perf_counter()
        encode(tok)
        first.append(time.perf_counter() - start)
        gc.collect()
        start = time.perf_counter()
        encode(tok)
        warm.append(time.perf_counter() - start)
    return min(first), min(warm)


def parse_args(doc: str, extra: Optional[Callable[[argparse.ArgumentParser], object]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("fixtures", nargs="?", default="../shared/fixtures")
    parser.add_argument("--repeat", type=int, default=3)
    if extra is not None:
        extra(parser)
    return parser.parse_args()


def read_corpora(root: Path, names) -> dict[str, list[str]]:
    return {name: (root / "corpus" / name).read_text(encoding="utf-8").split("\n") for name in names}


def print_preamble(repeat: int) -> None:
    print(f"cores: {os.cpu_count()}; lines encoded one call each; MB/s of UTF-8 input; best of {repeat} "
          f"first passes, each on a freshly loaded tokenizer (warm: a second pass on the same one); "
          f"each library measured in a process of its own")


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or "(no message)"
    return f"{type(exc).__name__}: {text}"


def in_child(fn: Callable[[], object]) -> object:
    """fn() run in a forked child process; its result (pickled through a pipe) returned here.

    Every peer is measured in a child of its own, forked from a parent that has run no
    peer, so no library starts from the heap, threads or caches another one left behind
    (in one process, tokie's first pass on GPT-2 ran 10% slower after HF tokenizers had
    run than alone). An exception in the child is raised here as RuntimeError(reason)."""
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        try:
            data = pickle.dumps((True, fn()))
        except BaseException as exc:  # reported by the parent
            data = pickle.dumps((False, _reason(exc)))
        with os.fdopen(write_end, "wb") as out:
            out.write(data)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as inp:
        data = inp.read()
    os.waitpid(pid, 0)
    if not data:
        raise RuntimeError("the measuring process died")
    ok, value = pickle.loads(data)
    if not ok:
        raise RuntimeError(value)
    return value


def load_ms(peer: Peer) -> float:
    """Milliseconds to load `peer`'s tokenizer: the median of 5 loads after a first one."""
    peer.load()
    return 1000 * statistics.median(best_of(1, peer.load) for _ in range(5))


def load_peers(table: dict[str, Peer]):
    """-> (load ms of each peer that loads, {name: reason} for peers that failed), each
    peer in a process of its own (in_child)."""
    loaded_ms, failed = {}, {}
    for name, peer in table.items():
        try:
            loaded_ms[name] = in_child(lambda: load_ms(peer))
        except RuntimeError as exc:  # missing package, unsupported model, bad file...
            failed[name] = str(exc)
    return loaded_ms, failed


def measure_peer(peer: Peer, lines: list[str], repeat: int):
    """-> (ids of every line, single (first, warm) s, batch (first, warm) s or None, lines
    whose batch ids differ from the one-call ids), in the calling process."""
    tok = peer.load()
    ids = [list(peer.one(tok, s)) for s in lines]
    single = first_and_warm_pass(repeat, peer.load, lambda t: [peer.one(t, s) for s in lines])
    batch, off = None, 0
    if peer.batch is not None:
        batch = first_and_warm_pass(repeat, peer.load, lambda t: peer.batch(t, lines))
        off = sum(list(a) != b for a, b in zip(peer.batch(tok, lines), ids))
    return ids, single, batch, off


def _ratio(num: Optional[float], den: Optional[float]) -> str:
    return f"{num / den:.2f}" if num and den else "-"


def bench_model(label: str, rel: str, table: dict[str, Peer], corpora: dict[str, list[str]], repeat: int,
                reference: str = REFERENCE) -> None:
    """Load every peer, then time each on every corpus and print one table for the model.

    "same ids" is the share of lines where a peer's ids equal `reference`'s."""
    loaded_ms, failed = load_peers(table)
    print(f"\n== {label}: {rel}")
    print("load ms: " + (", ".join(f"{n} {v:.1f}" for n, v in loaded_ms.items()) or "-"))
    for name, reason in failed.items():
        print(f"{name}: unavailable: {reason}")
    print(f"{'corpus':<26}{'tokenizer':<15}{'1-thread MB/s':>14}{'(warm)':>8}{'batch MB/s':>12}{'(warm)':>8}"
          f"{f'{SUBJECT} x':>12}{'x batch':>9}{'same ids as ' + reference:>26}")
    for corpus, lines in corpora.items():
        mb = sum(len(s.encode()) for s in lines) / 1e6
        rows, ids, notes = {}, {}, []
        for name in loaded_ms:
            peer = table[name]
            try:
                ids[name], single, batch, off = in_child(lambda: measure_peer(peer, lines, repeat))
            except RuntimeError as exc:
                rows[name] = f"error: {exc}"
                continue
            if off:
                notes.append(f"  note: {name} batch ids differ from its one-call ids on {off} lines")
            rows[name] = (mb / single[0], mb / single[1],
                          *((mb / batch[0], mb / batch[1]) if batch else (None, None)))
        ref = ids.get(reference)
        mine = rows.get(SUBJECT) if isinstance(rows.get(SUBJECT), tuple) else (None,) * 4
        for name, row in rows.items():
            if isinstance(row, str):
                print(f"{corpus:<26}{name:<15}{row}")
                continue
            single, single_warm, batch, batch_warm = row
            same = "-" if ref is None else \
                f"{100 * sum(a == b for a, b in zip(ids[name], ref)) / len(lines):.2f}%"
            print(f"{corpus:<26}{name:<15}{single:>14.1f}{f'({single_warm:.1f})':>8}"
                  f"{(f'{batch:.1f}' if batch else '-'):>12}{(f'({batch_warm:.1f})' if batch else ''):>8}"
                  f"{_ratio(mine[0], single):>12}{_ratio(mine[2], batch):>9}{same:>26}")
        for note in notes:
            print(note)


def run(doc: str, corpus_names, models: dict[str, str],
        build_hf_json: Callable[[Path, Path], Path],
        make_peers: Callable[[Path, Path], dict[str, Peer]] = standard_peers) -> None:
    """The whole benchmark: parse the command line, then time every model on every corpus."""
    import tempfile

    args = parse_args(doc)
    root = Path(args.fixtures)
    corpora = read_corpora(root, corpus_names)
    print_preamble(args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        for label, rel in models.items():
            model_path = root / rel
            hf_json = build_hf_json(model_path, Path(tmp) / f"{model_path.stem}.json")
            bench_model(label, rel, make_peers(model_path, hf_json), corpora, args.repeat)
