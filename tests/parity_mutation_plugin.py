"""A pytest plugin that breaks toksmith on purpose, for the mutation check of the parity suite.

tests/parity/test_parity_mutations.py runs the parity modules in a child pytest with this
plugin (``-p tests.parity_mutation_plugin --mutation=empty --mutation-report=out.json``) and
requires every module to fail: a parity test that still passes while toksmith's outputs are
emptied or cut compares less than its report says.

- ``--mutation=empty``: every output of `toksmith.Tokenizer` is empty (encode -> [],
  encode_batch -> [] (the batch loses its items), decode -> "", tokenize -> [], stream
  decoding -> "").
- ``--mutation=truncated``: every output loses its last item (the last id, piece, character
  or byte; encode_batch: the last id of each text's ids).
- ``--mutation-target``: what is broken. ``api`` (the default) is the Tokenizer methods above;
  ``writers`` the bytes of every file toksmith writes (empty: an empty file; truncated: its first
  merges or best pieces taken out, tests/parity/written_file_mutations.py); ``trainers`` what
  the trainers learn (truncated only: one merge or piece less); ``stages`` the outputs of the
  compiled stages that test code builds itself (a model's encode_piece/encode_pieces, a
  splitter's split_text, a normalizer's normalize_text, a regex's find_matches, llama.cpp's token
  pieces): every id list, piece list, text or match list emptied or cut by its last item.

``--mutation=none`` patches nothing: the control run, where the first failing test of each
module must pass.

To keep the run short, once a test of a module has failed the module's remaining tests are
skipped (the run only has to show that the module can fail), and once one parametrization of a
test function has passed its other parametrizations are skipped. ``--mutation-report`` names a
JSON file written at the end: per module, the first failure, the tests that passed, the
collection error if any, and the seconds its tests took (setup, call and teardown).
"""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

MUTATIONS = ("empty", "truncated", "none")   # none: the control run, nothing patched
TARGETS = ("api", "writers", "trainers", "stages")


def pytest_addoption(parser) -> None:
    group = parser.getgroup("parity mutation check")
    group.addoption("--mutation", choices=MUTATIONS, required=True,
                    help="how toksmith's outputs are broken: emptied or cut by one item (none: the control)")
    group.addoption("--mutation-target", choices=TARGETS, default="api",
                    help="what is broken: the Tokenizer API, the file writers, the trainers, or the "
                         "compiled stages that tests build")
    group.addoption("--mutation-report", default=None, help="JSON file for the per-module outcome")


# ---------------------------------------------------------------- the mutations


def _emptied(output: Any) -> Any:
    return output[:0]


def _cut(output: Any) -> Any:
    return output[:-1]


class _MutatedStream:
    """A StreamDecoder whose every returned text is mutated (StreamDecoder is a compiled
    class: it cannot be patched, so `Tokenizer.stream_decoder` hands out this wrapper)."""

    def __init__(self, inner, mutate: Callable[[Any], Any]):
        self._inner = inner
        self._mutate = mutate

    def feed(self, ids):
        return self._mutate(self._inner.feed(ids))

    def finish(self):
        return self._mutate(self._inner.finish())

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _patch_api(monkeypatch: pytest.MonkeyPatch, mutation: str) -> None:
    """Every output of toksmith.Tokenizer emptied or cut (Tokenizer is a Python subclass of the
    compiled TokenizerCore: attributes set on it shadow the compiled methods)."""
    from toksmith.tokenizer import Tokenizer
    mutate = _emptied if mutation == "empty" else _cut

    def single(name: str) -> None:
        original = getattr(Tokenizer, name)
        monkeypatch.setattr(Tokenizer, name, lambda self, *a, **k: mutate(original(self, *a, **k)))

    for name in ("encode", "tokenize", "decode", "decode_bytes"):
        single(name)
    encode_batch = Tokenizer.encode_batch
    if mutation == "empty":
        monkeypatch.setattr(Tokenizer, "encode_batch", lambda self, *a, **k: [])
    else:
        monkeypatch.setattr(Tokenizer, "encode_batch",
                            lambda self, *a, **k: [mutate(ids) for ids in encode_batch(self, *a, **k)])
    stream_decoder = Tokenizer.stream_decoder
    monkeypatch.setattr(Tokenizer, "stream_decoder",
                        lambda self, *a, **k: _MutatedStream(stream_decoder(self, *a, **k), mutate))


# The function that writes each format's bytes (spec -> bytes). toksmith.writers.WRITERS imports
# them when called, and tests import them after the session has started: patched here, every
# file toksmith writes is mutated (Tokenizer.save, `toksmith convert`, direct calls).
WRITER_FUNCTIONS = {
    "tokenizer.json": ("toksmith.writers.tokenizer_json", "write_tokenizer_json"),
    "sentencepiece": ("toksmith.writers.sentencepiece_model", "write_sentencepiece_model"),
    "gguf": ("toksmith.writers.gguf_file", "write_gguf"),
    "tiktoken": ("toksmith.writers.tiktoken_file", "write_tiktoken"),
}


def _patch_writers(monkeypatch: pytest.MonkeyPatch, mutation: str) -> None:
    """Every written file emptied, or without its first merges or best pieces (written_file_mutations.py)."""
    import importlib

    from tests.parity.written_file_mutations import cut_written_file
    for file_format, (module_name, function) in WRITER_FUNCTIONS.items():
        module = importlib.import_module(module_name)
        original = getattr(module, function)

        def mutated(spec, *args, _write=original, _format=file_format, **kwargs):
            data = _write(spec, *args, **kwargs)
            return b"" if mutation == "empty" else cut_written_file(_format, data)
        monkeypatch.setattr(module, function, mutated)
    _patch_merge_lists(monkeypatch, mutation)


def _patch_merge_lists(monkeypatch: pytest.MonkeyPatch, mutation: str) -> None:
    """The merge list toksmith derives from a rank file (writers/byte_level_merges.py, written
    into tokenizer.json and GGUF files) loses every merge, or its first EDITS merges."""
    import dataclasses

    from tests.parity.written_file_mutations import EDITS
    from toksmith.writers import byte_level_merges
    derive = byte_level_merges.merge_list_vocab_counting_unreachable

    def mutated(vocab, *args, **kwargs):
        derived, unreachable = derive(vocab, *args, **kwargs)
        merges = [] if mutation == "empty" else list(derived.merges)[EDITS:]
        return dataclasses.replace(derived, merges=merges), unreachable
    # merge_list_vocab calls it through the module's globals: one patch serves both.
    monkeypatch.setattr(byte_level_merges, "merge_list_vocab_counting_unreachable", mutated)


TRAINERS = ("train_bpe", "train_unigram", "train_sentencepiece_bpe")


def _patch_trainers(monkeypatch: pytest.MonkeyPatch, mutation: str) -> None:
    """Every trainer learns one entry less (vocab_size - 1: the last merge or piece is not
    learned). Only the truncated mutation: an empty vocabulary cannot be saved or loaded, so
    every test would fail on it without comparing anything."""
    if mutation != "truncated":
        raise pytest.UsageError("--mutation-target=trainers takes --mutation=truncated only")
    import inspect

    import toksmith
    import toksmith.training
    for name in TRAINERS:
        original = getattr(toksmith.training, name)
        signature = inspect.signature(original)

        def one_entry_short(*args, _train=original, _signature=signature, **kwargs):
            bound = _signature.bind(*args, **kwargs)
            if bound.arguments.get("vocab_size") is not None:
                bound.arguments["vocab_size"] -= 1
            return _train(*bound.args, **bound.kwargs)
        monkeypatch.setattr(toksmith.training, name, one_entry_short)
        monkeypatch.setattr(toksmith, name, one_entry_short, raising=False)   # toksmith.__getattr__ serves it otherwise


# ---- the stages target: the compiled stages test code builds and calls directly

# The output methods of the compiled stages the parity modules call (ByteLevelBpe, LlamaSplitter,
# the tokenizer.json normalizers, pre-tokenizers and Split/Replace stages, LinearRegex).
STAGE_OUTPUTS = ("encode_piece", "encode_pieces", "split_text", "normalize_text", "find_matches")

# Stage classes (module, class names) replaced in their module by a factory: the parity modules
# import them (or look them up on the module) after the session has started.
STAGE_CLASSES = {
    "toksmith._core.byte_bpe": ("ByteLevelBpe",),
    "toksmith._core.pretok_llama": ("LlamaSplitter",),
    "toksmith._core.hf_precompiled": ("HfPrecompiledNormalizer",),
    "toksmith._core.hf_normalizers": ("HfStrip", "HfPrepend", "HfByteLevelNormalizer", "HfNmt"),
    "toksmith._core.hf_pretokenizers": ("HfDigits", "HfCharDelimiterSplit", "HfFixedLength", "HfUnicodeScripts",
                                        "HfByteLevel"),
    "toksmith._core.hf_regex_stages": ("HfReplace", "HfSplit"),
    "toksmith._core.stage_sequences": ("NormalizerSequence",),    # of stages a test built
}

# Compiled functions that take a stage (module, function names): handed the real stage.
STAGE_TAKERS = {
    "toksmith._core.hf_normalizers": ("starts_late",),
}

# Python functions that build and return a stage (module, function names).
STAGE_FUNCTIONS = {
    "toksmith.hf.split_patterns": ("oniguruma_splitter",),
    "toksmith.hf.native_pretokenizers": ("byte_level_pretokenizer",),
    "toksmith.hf.native_normalizers": ("replace_stage",),
    "toksmith.hf.native_regex": ("compiled_pattern",),
}


def _called_from_tests(depth: int = 2) -> bool:
    """Whether the caller `depth` frames up is test code: toksmith's own pipeline keeps the real
    stages (what it does with them is the api target's), and only the stages a test builds and
    compares are mutated."""
    return sys._getframe(depth).f_globals.get("__name__", "").startswith("tests.")


def _unwrapped(value: Any) -> Any:
    """The compiled stage inside a proxy (a stage built from others: HfSplit(regex),
    NormalizerSequence([stages]))."""
    if isinstance(value, list):
        return [_unwrapped(v) for v in value]
    return value._inner if isinstance(value, _MutatedStage) else value


class _MutatedStage:
    """A compiled stage whose output methods (STAGE_OUTPUTS) are mutated; every other attribute
    is the stage's own (special methods such as len() are not forwarded: no parity module uses
    them on a stage). Pickled, it is the stage itself."""

    def __init__(self, inner, mutate: Callable[[Any], Any]):
        self._inner = inner
        self._mutate = mutate

    def __getattr__(self, name):
        if name in ("_inner", "_mutate"):        # not set yet (copy, unpickling): no recursion
            raise AttributeError(name)
        value = getattr(self._inner, name)
        if name not in STAGE_OUTPUTS:
            return value
        if name == "encode_pieces":            # ids per piece: each piece's ids mutated (empty: no pieces)
            return lambda *a, **k: self._mutate_each(value(*a, **k))
        return lambda *a, **k: self._mutate(value(*a, **k))

    def _mutate_each(self, per_piece: list) -> list:
        if self._mutate is _emptied:
            return []
        return [self._mutate(ids) for ids in per_piece]

    def __reduce__(self):
        return self._inner.__reduce__()

    def __repr__(self) -> str:
        return f"<mutated {self._inner!r}>"


class _StageFactory:
    """Stands for a compiled stage class in its module: the stages test code builds are mutated
    (arguments that are mutated stages are handed over unwrapped); every class attribute is the
    class's own. ByteLevelBpe.build: the model with character starts (its default) is mutated,
    the one merging from bytes (char_starts=False, what test_char_starts_vocabs compares the
    character-start path with) is left whole."""

    def __init__(self, cls, mutate: Callable[[Any], Any]):
        self._cls = cls
        self._mutate = mutate

    def _built(self, stage, from_tests: bool):
        return _MutatedStage(stage, self._mutate) if from_tests and stage is not None else stage

    def __call__(self, *args, **kwargs):
        from_tests = _called_from_tests()
        args = [_unwrapped(a) for a in args]
        kwargs = {k: _unwrapped(v) for k, v in kwargs.items()}
        return self._built(self._cls(*args, **kwargs), from_tests)

    def __getattr__(self, name):
        if name in ("_cls", "_mutate"):
            raise AttributeError(name)
        value = getattr(self._cls, name)
        if name != "build":
            return value

        def build(*args, **kwargs):
            from_tests = _called_from_tests() and kwargs.get("char_starts", True)
            return self._built(value(*args, **kwargs), from_tests)
        return build


def _patch_stages(monkeypatch: pytest.MonkeyPatch, mutation: str) -> None:
    """Every stage that test code builds (STAGE_CLASSES, STAGE_FUNCTIONS, ByteLevelVocab.build_model)
    returns mutated outputs (STAGE_TAKERS get the real stage), and llama_cpp_token_pieces (its
    list) is mutated. Side effect for
    the session: instances of the replaced classes do not pickle by reference (pickle finds the
    factory in their module); the proxies pickle as the stage itself."""
    import importlib

    from toksmith.formats import gguf
    from toksmith.vocab import ByteLevelVocab
    mutate = _emptied if mutation == "empty" else _cut
    for module_name, names in STAGE_CLASSES.items():
        module = importlib.import_module(module_name)
        for name in names:
            monkeypatch.setattr(module, name, _StageFactory(getattr(module, name), mutate))
    for module_name, names in STAGE_FUNCTIONS.items():
        module = importlib.import_module(module_name)
        for name in names:
            monkeypatch.setattr(module, name, _stage_function(getattr(module, name), mutate))
    for module_name, names in STAGE_TAKERS.items():
        module = importlib.import_module(module_name)
        for name in names:
            monkeypatch.setattr(module, name, _taking_real_stages(getattr(module, name)))
    build_model = ByteLevelVocab.build_model

    def mutated_build_model(self):
        from_tests = _called_from_tests()
        model = build_model(self)
        return _MutatedStage(model, mutate) if from_tests else model
    monkeypatch.setattr(ByteLevelVocab, "build_model", mutated_build_model)
    token_pieces = gguf.llama_cpp_token_pieces

    def mutated_token_pieces(*args, **kwargs):
        from_tests = _called_from_tests()
        pieces = token_pieces(*args, **kwargs)
        return mutate(pieces) if from_tests else pieces
    monkeypatch.setattr(gguf, "llama_cpp_token_pieces", mutated_token_pieces)


def _taking_real_stages(function: Callable) -> Callable:
    """`function` handed the real stages inside the proxies among its arguments."""
    def unwrapping(*args, **kwargs):
        return function(*[_unwrapped(a) for a in args], **{k: _unwrapped(v) for k, v in kwargs.items()})
    return unwrapping


def _stage_function(function: Callable, mutate: Callable[[Any], Any]) -> Callable:
    """`function` whose stage (when test code calls it, and there is one) is mutated."""
    def mutated(*args, **kwargs):
        from_tests = _called_from_tests()
        stage = function(*args, **kwargs)
        return _MutatedStage(stage, mutate) if from_tests and stage is not None else stage
    return mutated


PATCHES = {"api": _patch_api, "writers": _patch_writers, "trainers": _patch_trainers, "stages": _patch_stages}


# ---------------------------------------------------------------- the run


class MutationRun:
    """Patches toksmith for the session, records each module's outcome, and keeps the run short:
    once a test of a module has failed, its remaining tests are skipped; once one
    parametrization of a test function has passed, its other parametrizations are skipped
    (they compare the same way)."""

    def __init__(self, config):
        self.mutation = config.getoption("--mutation")
        self.target = config.getoption("--mutation-target")
        self.report_path = config.getoption("--mutation-report")
        self.monkeypatch = pytest.MonkeyPatch()
        self.modules: dict[str, dict[str, Any]] = {}
        self.passed_functions: set[str] = set()

    def module(self, nodeid: str) -> dict[str, Any]:
        path = nodeid.split("::")[0]
        return self.modules.setdefault(path, {"failed": None, "failed_test": None, "passed": [],
                                              "collection_error": None, "seconds": 0.0})

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session) -> None:
        if self.mutation != "none":
            PATCHES[self.target](self.monkeypatch, self.mutation)

    def pytest_collectreport(self, report) -> None:
        if report.failed and report.nodeid.endswith(".py"):
            self.module(report.nodeid)["collection_error"] = str(report.longrepr)[-2000:]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item) -> None:
        failed = self.module(item.nodeid)["failed"]
        if failed is not None:
            pytest.skip(f"mutation check: this module already failed ({failed})")
        if _function_id(item.nodeid) in self.passed_functions:
            pytest.skip("mutation check: another parametrization of this test passed already")

    def pytest_runtest_logreport(self, report) -> None:
        outcome = self.module(report.nodeid)
        outcome["seconds"] += report.duration
        if report.failed and outcome["failed"] is None:
            outcome["failed"] = f"{report.nodeid} ({report.when}): " + _first_line(report)
            outcome["failed_test"] = report.nodeid
        elif report.when == "call" and report.passed:
            outcome["passed"].append(report.nodeid)
            self.passed_functions.add(_function_id(report.nodeid))

    def pytest_sessionfinish(self, session) -> None:
        self.monkeypatch.undo()
        if self.report_path:
            Path(self.report_path).write_text(json.dumps(
                {"mutation": self.mutation, "target": self.target, "modules": self.modules}, indent=1))


def _function_id(nodeid: str) -> str:
    return nodeid.split("[")[0]


def _first_line(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    return text.strip().splitlines()[0][:300] if text.strip() else "failed"


def pytest_configure(config) -> None:
    config.pluginmanager.register(MutationRun(config), "parity-mutation-run")
