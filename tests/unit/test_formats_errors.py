"""Loading malformed, truncated or unsupported tokenizer files.

A bad file must end in `toksmith.ModelFormatError` (a ValueError) whose
message starts with the file's path and says what was wrong: never another
exception, a crash, a hang or a huge allocation. Where sentencepiece can
judge the same bytes (``SentencePieceProcessor(model_proto=...)``), it must
reject them too, so every "bad" case is bad for the reference as well.

GGUF files are built here with `struct`, following the GGUF layout
(magic, u32 version, u64 tensor count, u64 kv count, then key/type/value).
"""
from __future__ import annotations

import os
import random
import struct
import sys
import tracemalloc
from pathlib import Path

import pytest

import toksmith
from tests.conftest import fixture_file

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

SPM_TEST_MODEL = "spm/sentencepiece_test_model.model"
GGUF_UGM = "gguf/ggml-vocab-nomic-bert-moe.gguf"

# ----------------------------------------------------------------- helpers


def write(directory: Path, name: str, data: bytes) -> Path:
    path = directory / name
    path.write_bytes(data)
    return path


def expect_format_error(path, kind=toksmith.ModelFormatError, **load_kwargs) -> toksmith.ModelFormatError:
    """Load `path`, which must raise exactly `kind` (or, for ModelFormatError, not its
    UnsupportedModelError subclass) with a message "<path>: <what was wrong>"."""
    with pytest.raises(toksmith.ModelFormatError) as info:
        toksmith.load(path, **load_kwargs)
    err = info.value
    assert isinstance(err, ValueError)
    if kind is toksmith.ModelFormatError:
        assert not isinstance(err, toksmith.UnsupportedModelError), f"{err!r} claims 'unsupported'"
    else:
        assert isinstance(err, kind), f"expected {kind.__name__}, got {err!r}"
    message = str(err)
    assert message.startswith(f"{os.fspath(path)}: "), message
    assert len(message) - len(os.fspath(path)) > 10, f"message says nothing: {message!r}"
    return err


def load_outcome(path):
    """The Tokenizer, or the ModelFormatError; any other exception fails the test."""
    try:
        return toksmith.load(path)
    except toksmith.ModelFormatError as e:
        assert str(e).startswith(f"{os.fspath(path)}: "), str(e)
        return e


def sentencepiece_outcome(data: bytes):
    """(processor, None) when sentencepiece accepts the serialized model, else (None, message)."""
    try:
        return spm.SentencePieceProcessor(model_proto=data), None
    except Exception as e:   # sentencepiece raises RuntimeError/OSError, depending on the check
        return None, str(e)


class WorkBudgetExceeded(BaseException):
    """Raised inside a block that made more calls than its budget (a BaseException, so that no
    `except Exception` of the code under test turns it into a clean error)."""


class Budget:
    """The work a block does, counted instead of timed (speed belongs in benchmarks/): the
    Python-level calls it makes (functions and builtins, through sys.setprofile) and its peak
    traced Python allocation (catches 'allocate, then fail'). A block that passes `max_calls`
    is stopped there, so a loop over a declared count fails the test instead of hanging it.
    """

    def __init__(self, max_calls: int):
        self.max_calls = max_calls
        self.calls = 0
        self.exceeded = False

    def _count(self, frame, event, arg):
        if event in ("call", "c_call"):
            self.calls += 1
            if self.calls > self.max_calls and not self.exceeded:
                self.exceeded = True
                raise WorkBudgetExceeded(f"more than {self.max_calls} calls")

    def __enter__(self):
        tracemalloc.start()
        sys.setprofile(self._count)
        return self

    def __exit__(self, *exc):
        sys.setprofile(None)
        self.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return False

    def check(self, *, max_peak: int, what: object = "") -> None:
        assert not self.exceeded, f"{what}: more than {self.max_calls} calls (a loop over a declared count?)"
        assert self.peak < max_peak, f"{what}: allocated {self.peak} bytes, at most {max_peak} expected"


# Calls a load of a malformed file may make. Measured with toksmith 2026-11: at most about
# 6,300 for 150 random byte strings read as .model, 123 for every malformed GGUF below; a
# complete valid vocabulary (the 7-token T5 GGUF) takes about 1,500. A reader that loops in
# Python over a declared count (2**60 strings) passes these at once.
RANDOM_BYTES_CALLS = 50_000
MALFORMED_GGUF_CALLS = 5_000


SAMPLE_TEXTS = ["Hello, world", "ＡＢＣ ① ｶﾀｶﾅ ﬁ", "  spaces   inside  ", "日本語のテキスト", "café naïve",
                "", "\t\n", b"\xff\xfe bytes \xc3"]


# ----------------------------------------------------------------- GGUF builder

U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
PACK = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?",
        U64: "Q", I64: "q", F64: "d"}


def g_str(value) -> bytes:
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return struct.pack("<Q", len(raw)) + raw


def g_kv(key: str, vtype: int, payload: bytes) -> bytes:
    return g_str(key) + struct.pack("<I", vtype) + payload


def g_scalar(key: str, vtype: int, value) -> bytes:
    return g_kv(key, vtype, g_str(value) if vtype == STRING else struct.pack("<" + PACK[vtype], value))


def g_array(key: str, etype: int, values) -> bytes:
    if etype == STRING:
        body = b"".join(g_str(v) for v in values)
    else:
        body = b"".join(struct.pack("<" + PACK[etype], v) for v in values)
    return g_kv(key, ARRAY, struct.pack("<IQ", etype, len(values)) + body)


def gguf(kvs: list[bytes], *, version: int = 3, magic: bytes = b"GGUF", endian: str = "<",
         n_kv: int | None = None) -> bytes:
    head = struct.pack(endian + "IQQ", version, 0, len(kvs) if n_kv is None else n_kv)
    return magic + head + b"".join(kvs)


# A complete UGM ("t5") vocabulary: llama.cpp token types 3=CONTROL, 2=UNKNOWN, 1=NORMAL.
T5_TOKENS = ["<pad>", "</s>", "<unk>", "\u2581", "a", "b", "\u2581ab"]
T5_SCORES = [0.0, 0.0, 0.0, -2.0, -3.0, -3.0, -1.0]
T5_TYPES = [3, 3, 2, 1, 1, 1, 1]


def t5_kvs(model: str = "t5", **replace: bytes) -> list[bytes]:
    kvs = {
        "general.architecture": g_scalar("general.architecture", STRING, "t5"),
        "tokenizer.ggml.model": g_scalar("tokenizer.ggml.model", STRING, model),
        "tokenizer.ggml.tokens": g_array("tokenizer.ggml.tokens", STRING, T5_TOKENS),
        "tokenizer.ggml.scores": g_array("tokenizer.ggml.scores", F32, T5_SCORES),
        "tokenizer.ggml.token_type": g_array("tokenizer.ggml.token_type", I32, T5_TYPES),
        "tokenizer.ggml.add_space_prefix": g_scalar("tokenizer.ggml.add_space_prefix", BOOL, True),
    }
    kvs.update(replace)
    return [v for v in kvs.values() if v is not None]


def t5_model_proto() -> bytes:
    """The same vocabulary and normalization as t5_kvs(), as a sentencepiece ModelProto."""
    proto = pb.ModelProto()
    for text, score, kind in zip(T5_TOKENS, T5_SCORES, T5_TYPES):
        piece = proto.pieces.add()
        piece.piece, piece.score, piece.type = text, score, kind
    proto.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = True            # tokenizer.ggml.add_space_prefix
    proto.normalizer_spec.remove_extra_whitespaces = False   # key absent: llama.cpp's default
    return proto.SerializeToString()


# ----------------------------------------------------------------- any file


@pytest.mark.parametrize("name", ["empty.model", "empty.gguf", "empty", "spiece.model"])
def test_empty_file(tmp_path, name):
    err = expect_format_error(write(tmp_path, name, b""))
    assert "empty" in err.detail


@pytest.mark.parametrize("name", ["notes.txt", "notes.model", "README"])
def test_text_file(tmp_path, name):
    text = "This is a README, not a model.\nSecond line: 1, 2, 3.\n" * 20
    expect_format_error(write(tmp_path, name, text.encode()))


def test_budget_stops_a_loop_over_a_declared_count():
    """The guard the tests below rely on: a Python loop past the budget is stopped, not waited for."""
    with pytest.raises(WorkBudgetExceeded):
        with Budget(1_000) as budget:
            for _ in range(2**60):
                len("x")
    assert budget.exceeded and budget.calls == 1_001


def assert_all_rejected_with_bounded_work(tmp_path, cases, suffix):
    """Each byte string in `cases` must fail with ModelFormatError, within RANDOM_BYTES_CALLS
    calls and 32 MB of Python allocations."""
    for i, data in enumerate(cases):
        path = write(tmp_path, f"random{i}{suffix}", data)
        with Budget(RANDOM_BYTES_CALLS) as budget:
            outcome = load_outcome(path)
        budget.check(max_peak=32 << 20, what=data[:24])
        assert isinstance(outcome, toksmith.ModelFormatError), f"random bytes {data[:24]!r}... loaded"


def test_random_bytes_as_model(tmp_path):
    rng = random.Random(20240601)
    cases = [rng.randbytes(rng.choice([1, 2, 3, 7, 64, 500, 4096])) for _ in range(150)]
    assert_all_rejected_with_bounded_work(tmp_path, cases, ".model")


def test_random_bytes_after_gguf_magic(tmp_path):
    rng = random.Random(7)
    cases = [b"GGUF" + struct.pack("<I", rng.choice([2, 3])) + rng.randbytes(rng.randrange(0, 600))
             for _ in range(150)]
    assert_all_rejected_with_bounded_work(tmp_path, cases, ".bin")


def test_missing_file_and_folders(tmp_path):
    with pytest.raises(FileNotFoundError):
        toksmith.load(tmp_path / "no-such.model")
    empty = tmp_path / "empty_folder"
    empty.mkdir()
    with pytest.raises(FileNotFoundError) as info:
        toksmith.load(empty)
    assert str(empty) in str(info.value)
    other = tmp_path / "other_files"
    other.mkdir()
    (other / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError):
        toksmith.load(other)
    # a vocab.txt makes it a BERT folder, which needs [UNK], [CLS] and [SEP]
    (other / "vocab.txt").write_text("a\nb\n")
    with pytest.raises(toksmith.ModelFormatError, match=r"vocab\.txt: \[UNK\]"):
        toksmith.load(other)


def test_folder_with_a_gguf_loads_it(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    write(folder, "weights-and-vocab.gguf", gguf(t5_kvs()))
    tok = toksmith.load(folder)
    assert tok.vocab_size == len(T5_TOKENS)


def test_a_broken_tokenizer_json_and_a_cut_rank_file_are_named(tmp_path):
    err = expect_format_error(write(tmp_path, "tokenizer.json", b'{"version": "1.0", "model": {"type": "BPE"}}'),
                              toksmith.ModelFormatError)
    assert "$.model" in str(err)
    folder = tmp_path / "hf"
    folder.mkdir()
    write(folder, "tokenizer.json", b'{"model": {"type": "Unigram", "vocab": []}}')
    with pytest.raises(toksmith.ModelFormatError, match="tokenizer.json"):
        toksmith.load(folder)
    err = expect_format_error(write(tmp_path, "cl100k_base.tiktoken", b"IQ== 0\nIg== 1\nIw== 2\n"),
                              toksmith.ModelFormatError)
    assert "truncated or modified" in str(err)


def test_real_unsupported_files(fixtures):
    # rut5-large (Precompiled + Replace, Metaspace, Unigram) and all-MiniLM-L6-v2 (BertNormalizer,
    # BertPreTokenizer, WordPiece) load now (tests/parity/test_hf_unigram.py and
    # test_hf_wordpiece.py compare them with tokenizers)
    assert toksmith.load(fixture_file(fixtures, "hf/rut5-large/tokenizer.json")).vocab_size == 32100
    import tokenizers
    path = fixture_file(fixtures, "hf/all-MiniLM-L6-v2/tokenizer.json")
    ref = tokenizers.Tokenizer.from_file(str(path))
    ref.no_padding()   # the file pads to 128; toksmith does not apply padding
    assert toksmith.load(path).encode("Hello, world!") == ref.encode("Hello, world!").ids
    # WordPiece ("bert") GGUF vocabularies load now (tests/parity/test_wordpiece_gguf.py)
    assert toksmith.load(fixture_file(fixtures, "gguf/ggml-vocab-bert-bge.gguf")).vocab_size == 30522


def test_real_spm_gguf_files_load(fixtures):
    # GGUF "llama" (SentencePiece BPE) vocabularies are supported now
    for relative in ("gguf/ggml-vocab-llama-spm.gguf", "gguf/ggml-vocab-phi-3.gguf"):
        tok = toksmith.load(fixture_file(fixtures, relative))
        assert tok.vocab_size in (32000, 32064)
        assert tok.decode(tok.encode("Hello, world"), skip_special=True) == " Hello, world"


# ----------------------------------------------------------------- SentencePiece .model


def test_sentencepiece_bpe_model_loads(fixtures):
    # SentencePiece BPE is supported now (it used to be UnsupportedModelError)
    path = fixture_file(fixtures, "spm/llama2_tokenizer.model")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = toksmith.load(path)
    assert tok.vocab_size == sp.get_piece_size()
    for text in SAMPLE_TEXTS:
        assert tok.encode(text) == sp.encode(text), text


def test_bpe_model_type_on_a_unigram_vocabulary_loads(fixtures, tmp_path):
    """The test model's pieces read as a BPE model: sentencepiece accepts it, so must toksmith."""
    proto = pb.ModelProto()
    proto.ParseFromString(fixture_file(fixtures, SPM_TEST_MODEL).read_bytes())
    proto.trainer_spec.model_type = pb.TrainerSpec.BPE
    data = proto.SerializeToString()
    sp = spm.SentencePieceProcessor(model_proto=data)
    tok = toksmith.load(write(tmp_path, "m.model", data))
    for text in SAMPLE_TEXTS:
        ids = sp.encode(text)
        assert tok.encode(text) == ids, text
        assert tok.decode(ids) == sp.decode(ids), text


@pytest.mark.parametrize("model_type", ["WORD", "CHAR"])
def test_other_sentencepiece_model_types_are_unsupported(fixtures, tmp_path, model_type):
    proto = pb.ModelProto()
    proto.ParseFromString(fixture_file(fixtures, SPM_TEST_MODEL).read_bytes())
    proto.trainer_spec.model_type = getattr(pb.TrainerSpec, model_type)
    err = expect_format_error(write(tmp_path, "m.model", proto.SerializeToString()),
                              toksmith.UnsupportedModelError)
    assert model_type in err.detail


def _cuts(size: int) -> list[int]:
    return sorted(set(range(1, min(65, size))) | set(range(997, size, 997)))


def check_truncations(data: bytes, tmp_path: Path) -> int:
    """Every prefix raises ModelFormatError or loads; what loads agrees with sentencepiece."""
    loaded = 0
    for cut in _cuts(len(data)):
        prefix = data[:cut]
        path = write(tmp_path, "cut.model", prefix)
        outcome = load_outcome(path)
        sp, sp_error = sentencepiece_outcome(prefix)
        if sp is not None and not isinstance(outcome, toksmith.Tokenizer):
            # sentencepiece itself loads a prefix that ends on a piece boundary (pieces,
            # but no trainer_spec or normalizer_spec); sentencepiece never writes such a
            # file, so toksmith refuses it as truncated, saying where the file ends.
            assert f"ends at byte {cut} of {cut} right after piece" in str(outcome) \
                and "looks truncated" in str(outcome), f"cut at {cut}: {outcome}"
        elif sp is not None:
            # Any other prefix the reference accepts must load, and agree.
            for text in SAMPLE_TEXTS:
                assert outcome.encode(text) == sp.encode(text), (cut, text)
        if isinstance(outcome, toksmith.Tokenizer):
            loaded += 1
            if sp is None:
                # Only known divergence: a prefix holding just <unk>/<s>/</s>
                # (see test_malformed_model_proto[only_reserved_pieces]).
                assert "no pieces are loaded" in sp_error, f"cut at {cut}: sentencepiece says {sp_error}"
            for text in SAMPLE_TEXTS:
                ids = outcome.encode(text)
                assert all(0 <= i < outcome.vocab_size for i in ids)
    return loaded


def test_truncated_embedded_model(tmp_path):
    data = Path(toksmith.embedded_model_path("sentencepiece-demo")).read_bytes()
    check_truncations(data, tmp_path)


def test_truncated_sentencepiece_test_model(fixtures, tmp_path):
    data = fixture_file(fixtures, SPM_TEST_MODEL).read_bytes()
    check_truncations(data, tmp_path)


def test_mutated_embedded_model(tmp_path):
    """Random byte changes: load fails cleanly, or the model works like sentencepiece's."""
    data = Path(toksmith.embedded_model_path("sentencepiece-demo")).read_bytes()
    rng = random.Random(99)
    for round_ in range(120):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        mutated = bytes(mutated)
        path = write(tmp_path, "mutated.model", mutated)
        outcome = load_outcome(path)
        if not isinstance(outcome, toksmith.Tokenizer):
            continue
        sp, _ = sentencepiece_outcome(mutated)
        for text in SAMPLE_TEXTS:
            if sp is not None:
                assert outcome.encode(text) == sp.encode(text), (round_, text)
            else:
                # The reference refuses this file; toksmith loaded it: at least no crash,
                # and any failure is a ValueError.
                try:
                    ids = outcome.encode(text)
                except ValueError:
                    continue
                assert all(0 <= i < outcome.vocab_size for i in ids)


# Each mutation turns the test model into one that sentencepiece refuses to load.
def _set_piece(index, text=None, kind=None):
    def mutate(proto):
        if text is not None:
            proto.pieces[index].piece = text
        if kind is not None:
            proto.pieces[index].type = kind
    return mutate


def _duplicate(index_from, index_to):
    def mutate(proto):
        proto.pieces[index_to].piece = proto.pieces[index_from].piece
    return mutate


def _charsmap(transform):
    def mutate(proto):
        proto.normalizer_spec.precompiled_charsmap = transform(proto.normalizer_spec.precompiled_charsmap)
    return mutate


def _with_trie_size(size: int, keep_units: bool = False):
    """Rewrite the charsmap's 4-byte trie size; keep_units also cuts the trie to that size."""
    def transform(blob):
        (old,) = struct.unpack_from("<I", blob)
        trie = blob[4:4 + size] if keep_units else blob[4:4 + old]
        return struct.pack("<I", size) + trie + blob[4 + old:]
    return transform


def _out_of_bounds_leaves(blob):
    """Set every leaf unit of the double array to 0xFFFFFFFF (value far past the strings)."""
    (size,) = struct.unpack_from("<I", blob)
    units = bytearray(blob)
    for offset in range(4, 4 + size, 4):
        (unit,) = struct.unpack_from("<I", units, offset)
        if unit & 0x80000000:
            struct.pack_into("<I", units, offset, 0xFFFFFFFF)
    return bytes(units)


def _only_reserved(proto):
    keep = [(p.piece, p.score, p.type) for p in proto.pieces if p.type != pb.ModelProto.SentencePiece.NORMAL]
    del proto.pieces[:]
    for text, score, kind in keep:
        proto.pieces.add(piece=text, score=score, type=kind)


NORMAL, UNKNOWN, CONTROL, BYTE = (pb.ModelProto.SentencePiece.NORMAL, pb.ModelProto.SentencePiece.UNKNOWN,
                                  pb.ModelProto.SentencePiece.CONTROL, pb.ModelProto.SentencePiece.BYTE)


MALFORMED_PROTOS = [
    pytest.param(_set_piece(6, kind=UNKNOWN), id="two_unknown_pieces"),
    pytest.param(_set_piece(0, kind=NORMAL), id="no_unknown_piece"),
    pytest.param(_duplicate(5, 6), id="duplicated_normal_piece"),
    pytest.param(_duplicate(1, 2), id="duplicated_control_piece"),
    pytest.param(_set_piece(6, text=""), id="empty_normal_piece"),
    pytest.param(_set_piece(1, text=""), id="empty_control_piece"),
    pytest.param(_set_piece(6, text="<0x41>", kind=BYTE), id="byte_piece_without_byte_fallback"),
    pytest.param(lambda p: (_set_piece(6, text="abc", kind=BYTE)(p),
                            setattr(p.trainer_spec, "byte_fallback", True)), id="malformed_byte_piece"),
    pytest.param(_charsmap(lambda b: struct.pack("<I", len(b) + 100) + b[4:]), id="charsmap_trie_size_past_blob"),
    pytest.param(_charsmap(lambda b: b"\xff\xff\xff\xff" + b[4:]), id="charsmap_trie_size_0xffffffff"),
    pytest.param(_charsmap(lambda b: b[:len(b) // 2]), id="charsmap_cut_in_half"),
    pytest.param(_charsmap(lambda b: b[:3]), id="charsmap_shorter_than_its_header"),
    pytest.param(_charsmap(lambda b: struct.pack("<I", 6) + b[4:]), id="charsmap_trie_size_not_multiple_of_4"),
    pytest.param(_charsmap(_with_trie_size(1020, keep_units=True)), id="charsmap_trie_size_not_multiple_of_1024"),
    pytest.param(_charsmap(_with_trie_size(512, keep_units=True)), id="charsmap_trie_size_below_1024"),
    pytest.param(_charsmap(lambda b: b[:-1] + b"a"), id="charsmap_strings_not_nul_terminated"),
    pytest.param(_charsmap(_out_of_bounds_leaves), id="charsmap_leaf_values_out_of_bounds"),
    pytest.param(_set_piece(6, text="a\x00b"), id="piece_with_nul"),
    pytest.param(_only_reserved, id="only_reserved_pieces"),
]


@pytest.mark.parametrize("mutate", MALFORMED_PROTOS)
def test_malformed_model_proto(fixtures, tmp_path, mutate):
    proto = pb.ModelProto()
    proto.ParseFromString(fixture_file(fixtures, SPM_TEST_MODEL).read_bytes())
    mutate(proto)
    data = proto.SerializeToString()
    sp, sp_error = sentencepiece_outcome(data)
    assert sp is None, "sentencepiece accepts this model: the case is not malformed"
    expect_format_error(write(tmp_path, "bad.model", data))


def test_repeated_normalizer_spec_is_merged(fixtures, tmp_path):
    data = fixture_file(fixtures, SPM_TEST_MODEL).read_bytes()
    # field 3 (normalizer_spec), length 2: { add_dummy_prefix (field 3) = false }
    patched = data + b"\x1a\x02\x18\x00"
    merged = pb.ModelProto()
    merged.ParseFromString(patched)
    assert merged.normalizer_spec.precompiled_charsmap and not merged.normalizer_spec.add_dummy_prefix
    sp = spm.SentencePieceProcessor(model_proto=patched)
    tok = toksmith.load(write(tmp_path, "patched.model", patched))
    for text in SAMPLE_TEXTS:
        assert tok.encode(text) == sp.encode(text), text


# ----------------------------------------------------------------- GGUF


def test_minimal_t5_gguf_matches_sentencepiece(tmp_path):
    path = write(tmp_path, "tiny.gguf", gguf(t5_kvs()))
    sp = spm.SentencePieceProcessor(model_proto=t5_model_proto())
    # The reference's own view of the vocabulary, from first principles:
    assert sp.encode("ab") == [T5_TOKENS.index("\u2581ab")]
    assert sp.encode("ba") == [T5_TOKENS.index(p) for p in ("\u2581", "b", "a")]
    texts = ["ab", "a b", "ba", "abab ab", "", " ", "c", "  ab  ", "ab\tb", "\u2581ab", "aab", "abc ab"]
    for rules in (toksmith.ReferenceRules.SENTENCEPIECE, None):
        tok = toksmith.load(path, rules=rules)
        assert tok.vocab_size == len(T5_TOKENS)
        for text in texts:
            if rules is None and text.isspace():
                # llama.cpp's UGM normalizer adds the dummy prefix only before a
                # non-space character: a rules difference, not compared here.
                continue
            want = sp.encode(text)
            assert tok.encode(text, add_special=False) == want, (rules, text)
            assert tok.tokenize(text) == sp.encode(text, out_type=str), (rules, text)
            if rules is toksmith.ReferenceRules.SENTENCEPIECE:
                # Under llama.cpp's rules decode follows llama_detokenize instead (an unknown
                # token is "<unk>" or nothing, not " ⁇ "): see the next test.
                assert tok.decode(want) == sp.decode(want), (rules, text)
    tok = toksmith.load(path)
    # llama.cpp's UGM defaults (no special-id keys in the file): eos </s>=1, unk <unk>=2,
    # pad <pad>=0, EOS appended by encode with add_special.
    assert tok.special_ids.unk == 2 and tok.special_ids.eos == 1 and tok.special_ids.pad == 0
    assert tok.encode("ab") == sp.encode("ab") + [T5_TOKENS.index("</s>")]


T5_DECODE_IDS = [[6], [3, 4, 3, 5], [3, 2], [6, 2, 6], [3, 3, 6, 3, 3], [1, 0, 2, 4, 5, 6, 1], [2], [2, 2],
                 [1], [0, 6], [3], []]


def test_minimal_t5_gguf_decode_matches_llama_cpp(tmp_path):
    """llama.cpp rules: decode is llama_detokenize (skip_special = remove_special; otherwise
    unparse_special), so <unk> renders as nothing when skipping specials and as "<unk>" otherwise."""
    from tests import llama_cpp_reference as reference
    path = write(tmp_path, "tiny.gguf", gguf(t5_kvs()))
    vocab = reference.load_vocab(path)
    tok = toksmith.load(path)
    unk = T5_TOKENS.index("<unk>")
    assert vocab.detokenize([unk], remove_special=True, unparse_special=False) == b""
    assert vocab.detokenize([unk], remove_special=False, unparse_special=True) == b"<unk>"
    texts = ["ab", "a b", "ba", "abab ab", "c", "  ab  ", "ab\tb", "aab", "abc ab"]
    for ids in T5_DECODE_IDS + [vocab.tokenize(t.encode(), True, False) for t in texts]:
        for skip_special in (False, True):
            want = vocab.detokenize(ids, remove_special=skip_special, unparse_special=not skip_special)
            assert tok.decode(ids, skip_special=skip_special) == want.decode("utf-8", "replace"), \
                (ids, skip_special)
    for text in texts:
        assert tok.encode(text) == vocab.tokenize(text.encode(), True, False), text


def test_gguf_version_2_loads(tmp_path):
    tok = toksmith.load(write(tmp_path, "v2.gguf", gguf(t5_kvs(), version=2)))
    assert tok.vocab_size == len(T5_TOKENS)


def test_gguf_detected_by_magic_not_name(tmp_path):
    tok = toksmith.load(write(tmp_path, "vocab.bin", gguf(t5_kvs())))
    assert tok.vocab_size == len(T5_TOKENS)


def test_gguf_wrong_magic(tmp_path):
    err = expect_format_error(write(tmp_path, "bad.gguf", gguf(t5_kvs(), magic=b"GGUX")))
    assert "GGUF" in err.detail
    expect_format_error(write(tmp_path, "text.gguf", b"just some text, no magic\n"))
    expect_format_error(write(tmp_path, "short.gguf", b"GG"))


@pytest.mark.parametrize("version", [0, 1, 4, 0xFFFFFFFF])
def test_gguf_unsupported_version(tmp_path, version):
    err = expect_format_error(write(tmp_path, "v.gguf", gguf(t5_kvs(), version=version)))
    assert "version" in err.detail.lower()


def test_gguf_big_endian(tmp_path):
    err = expect_format_error(write(tmp_path, "be.gguf", gguf(t5_kvs(), endian=">")))
    assert "endian" in err.detail.lower() or "version" in err.detail.lower()


def test_gguf_truncated_at_every_byte(tmp_path):
    data = gguf(t5_kvs())
    for cut in range(len(data)):
        outcome = load_outcome(write(tmp_path, "cut.gguf", data[:cut]))
        assert isinstance(outcome, toksmith.ModelFormatError), f"a {cut}-byte prefix loaded"
    assert isinstance(load_outcome(write(tmp_path, "whole.gguf", data)), toksmith.Tokenizer)


def test_real_gguf_truncated(fixtures, tmp_path):
    data = fixture_file(fixtures, GGUF_UGM).read_bytes()
    cuts = sorted(set(range(0, 65)) | set(range(0, len(data), 99_991)) | {len(data) - 1})
    for cut in cuts:
        outcome = load_outcome(write(tmp_path, "cut.gguf", data[:cut]))
        assert isinstance(outcome, toksmith.ModelFormatError), f"a {cut}-byte prefix loaded"


HUGE = [
    pytest.param([g_kv("tokenizer.ggml.tokens", ARRAY, struct.pack("<IQ", STRING, 2**60))], id="string_array_2**60"),
    pytest.param([g_kv("tokenizer.ggml.scores", ARRAY, struct.pack("<IQ", F32, 2**60))], id="f32_array_2**60"),
    pytest.param([g_kv("x", ARRAY, struct.pack("<IQ", U8, 2**60))], id="u8_array_2**60"),
    pytest.param([g_kv("x", ARRAY, struct.pack("<IQ", U8, 10**9) + b"\0" * 64)], id="u8_array_1e9"),
    pytest.param([g_kv("x", ARRAY, struct.pack("<IQ", U64, 2**61))], id="u64_array_2**61"),
    pytest.param([g_kv("x", ARRAY, struct.pack("<IQ", ARRAY, 2**60))], id="array_of_arrays_2**60"),
    pytest.param([g_kv("x", ARRAY, struct.pack("<IQ", STRING, 2**64 - 1))], id="string_array_2**64-1"),
    pytest.param([struct.pack("<Q", 2**64 - 1) + b"key"], id="key_length_2**64-1"),
    pytest.param([struct.pack("<Q", 2**63) + b"key"], id="key_length_2**63"),
    pytest.param([g_str("tokenizer.ggml.model") + struct.pack("<IQ", STRING, 2**63) + b"t5"], id="string_length_2**63"),
    pytest.param([g_kv("x", ARRAY, struct.pack("<IQ", ARRAY, 1) * 64 + struct.pack("<IQ", U8, 0))],
                 id="arrays_nested_64_deep"),
]


@pytest.mark.parametrize("kvs", HUGE)
def test_gguf_huge_counts_fail_with_bounded_work(tmp_path, kvs):
    path = write(tmp_path, "huge.gguf", gguf(kvs))
    with Budget(MALFORMED_GGUF_CALLS) as budget:
        expect_format_error(path)
    budget.check(max_peak=16 << 20)


def test_gguf_huge_kv_count_fails_with_bounded_work(tmp_path):
    path = write(tmp_path, "kv.gguf", gguf(t5_kvs(), n_kv=2**60))
    with Budget(MALFORMED_GGUF_CALLS) as budget:
        expect_format_error(path)
    budget.check(max_peak=16 << 20)


def test_gguf_without_tokenizer(tmp_path):
    kvs = [g_scalar("general.architecture", STRING, "llama"), g_scalar("general.name", STRING, "weights only")]
    err = expect_format_error(write(tmp_path, "notok.gguf", gguf(kvs)))
    assert "tokenizer.ggml.model" in err.detail
    expect_format_error(write(tmp_path, "nokv.gguf", gguf([])))


@pytest.mark.parametrize("model", ["none", "no_vocab"])   # every other model llama.cpp knows loads now
def test_gguf_without_a_vocabulary_is_refused(tmp_path, model):
    err = expect_format_error(write(tmp_path, f"{model}.gguf", gguf(t5_kvs(model))), toksmith.UnsupportedModelError)
    assert f"tokenizer.ggml.model is {model!r}: this GGUF has no vocabulary" in err.detail


BERT_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "\u2581a", "\u2581b", "b", "\u2581,"]
BAD_BERT = {
    # llama.cpp aborts on add_special without CLS or SEP ids (the defaults 101 and 102 are
    # outside this vocabulary), and when it decodes a BYTE token of a WPM vocabulary.
    "no_cls": ({"tokenizer.ggml.bos_token_id": None}, "CLS (tokenizer.ggml.bos_token_id)"),
    "no_sep": ({"tokenizer.ggml.seperator_token_id": None}, "SEP (tokenizer.ggml.seperator_token_id)"),
    "byte_token": ({"tokenizer.ggml.token_type": g_array("tokenizer.ggml.token_type", I32, [3, 2, 3, 3, 1, 6, 1, 1])},
                   "token 5 b'\\xe2\\x96\\x81b' has type BYTE"),
    "lowercase_not_a_bool": ({"tokenizer.ggml.normalizer.lowercase":
                              g_scalar("tokenizer.ggml.normalizer.lowercase", U32, 1)},
                             "tokenizer.ggml.normalizer.lowercase is 1, expected a bool"),
}


def bert_kvs(**replace: bytes) -> list[bytes]:
    kvs = {
        "general.architecture": g_scalar("general.architecture", STRING, "bert"),
        "tokenizer.ggml.model": g_scalar("tokenizer.ggml.model", STRING, "bert"),
        "tokenizer.ggml.tokens": g_array("tokenizer.ggml.tokens", STRING, BERT_TOKENS),
        "tokenizer.ggml.token_type": g_array("tokenizer.ggml.token_type", I32, [3, 2, 3, 3, 1, 1, 1, 1]),
        "tokenizer.ggml.unknown_token_id": g_scalar("tokenizer.ggml.unknown_token_id", U32, 1),
        "tokenizer.ggml.bos_token_id": g_scalar("tokenizer.ggml.bos_token_id", U32, 2),
        "tokenizer.ggml.seperator_token_id": g_scalar("tokenizer.ggml.seperator_token_id", U32, 3),
    }
    kvs.update(replace)
    return [v for v in kvs.values() if v is not None]


@pytest.mark.parametrize("case", list(BAD_BERT))
def test_bad_gguf_bert_vocabularies(tmp_path, case):
    replace, expected = BAD_BERT[case]
    err = expect_format_error(write(tmp_path, f"{case}.gguf", gguf(bert_kvs(**replace))))
    assert expected in err.detail, err.detail


def test_gguf_bert_token_inside_the_phantom_space_is_refused(tmp_path):
    # A word's first lookup is U+2581 + word (the model walks U+2581's bytes first): a token
    # that ends inside those bytes (invalid UTF-8, no converter writes one) is refused.
    tokens = BERT_TOKENS[:-1] + [b"\xe2\x96"]
    err = expect_format_error(write(tmp_path, "partial.gguf", gguf(bert_kvs(**{
        "tokenizer.ggml.tokens": g_array("tokenizer.ggml.tokens", STRING, tokens)}))))
    assert "b'\\xe2\\x96' is a part of the bytes" in err.detail, err.detail


def test_gguf_bert_vocabulary_without_word_start_tokens_matches_llama_cpp(tmp_path):
    # no token starts with U+2581: every word is [UNK], as llama.cpp finds no first piece
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "ab", ","]
    path = write(tmp_path, "nostart.gguf", gguf(bert_kvs(**{
        "tokenizer.ggml.tokens": g_array("tokenizer.ggml.tokens", STRING, tokens)})))
    tok = toksmith.load(path)
    from tests import llama_cpp_reference as reference
    vocab = reference.load_vocab(path)
    for text in ["a", "ab b", "a,b", ""]:
        assert tok.encode(text, add_special=False) == vocab.tokenize(text.encode(), False, False), text
    assert tok.encode("ab b", add_special=False) == [1, 1]


def test_small_gguf_bert_vocabulary_matches_llama_cpp(tmp_path):
    """A vocabulary of 8 tokens with its CLS and SEP ids in the file: a word with no match
    anywhere is [UNK] whole, "b" continues "a" only as the piece "b"."""
    path = write(tmp_path, "bert.gguf", gguf(bert_kvs()))
    tok = toksmith.load(path)
    from tests import llama_cpp_reference as reference
    vocab = reference.load_vocab(path)
    for text in ["a", "ab", "A B,", "ba", "abb a,b", "c", "a c", "", "  ,,  "]:
        for add_special in (False, True):
            assert tok.encode(text, add_special=add_special) == vocab.tokenize(text.encode(), add_special, False), text


def test_gguf_bert_vocabulary_takes_llama_cpp_rules_only(tmp_path):
    path = write(tmp_path, "bert.gguf", gguf(bert_kvs()))
    with pytest.raises(toksmith.errors.UnsupportedFeatureError, match="llama.cpp's rules only"):
        toksmith.load(path, rules="sentencepiece")


def test_gguf_bert_vocabulary_without_unknown_id_refuses_unknown_words(tmp_path):
    # llama.cpp would put LLAMA_TOKEN_NULL (-1) among the ids: no id is right, so encode refuses
    path = write(tmp_path, "bert.gguf", gguf(bert_kvs(**{"tokenizer.ggml.unknown_token_id": None})))
    tok = toksmith.load(path)
    assert tok.encode("a b,", add_special=False) == [4, 5, 7]
    with pytest.raises(ValueError, match="unk token"):
        tok.encode("a c")


def test_gguf_llama_tokenizer_model_loads(tmp_path):
    """GGUF "llama" (SentencePiece BPE) is supported now: the T5 vocabulary read as llama's SPM."""
    path = write(tmp_path, "llama.gguf", gguf(t5_kvs("llama")))
    tok = toksmith.load(path)
    assert tok.vocab_size == len(T5_TOKENS)
    # No byte tokens: a character that is no token must not crash (llama.cpp itself aborts on
    # it, so the reference only sees texts made of the vocabulary's characters).
    assert all(0 <= i < len(T5_TOKENS) for i in tok.encode("c \u00e9"))
    from tests import llama_cpp_reference as reference
    vocab = reference.load_vocab(path)
    for text in ["ab", "a b", "ba", "  ab  ", "abab ba", ""]:
        for add_special in (False, True):
            assert tok.encode(text, add_special=add_special) == vocab.tokenize(text.encode(), add_special, False), text


@pytest.mark.parametrize("model", ["foo", "", "T5", "t5 "])
def test_gguf_unknown_tokenizer_model(tmp_path, model):
    err = expect_format_error(write(tmp_path, "foo.gguf", gguf(t5_kvs(model))))
    assert repr(model) in err.detail or model in err.detail


BAD_UGM = {
    # llama.cpp refuses both ("unknown model architecture: ''", "key ... has wrong type").
    "no_architecture": {"general.architecture": None},
    "architecture_not_a_string": {"general.architecture": g_scalar("general.architecture", U32, 5)},
    "name_not_a_string": {"general.name": g_scalar("general.name", U32, 5)},
    "model_not_a_string": dict(**{"tokenizer.ggml.model": g_scalar("tokenizer.ggml.model", U32, 5)}),
    "no_tokens": {"tokenizer.ggml.tokens": None},
    "empty_tokens": {"tokenizer.ggml.tokens": g_array("tokenizer.ggml.tokens", STRING, [])},
    "tokens_not_strings": {"tokenizer.ggml.tokens": g_array("tokenizer.ggml.tokens", U32, [1, 2, 3, 4, 5, 6, 7])},
    "tokens_a_string": {"tokenizer.ggml.tokens": g_scalar("tokenizer.ggml.tokens", STRING, "abc")},
    "scores_too_short": {"tokenizer.ggml.scores": g_array("tokenizer.ggml.scores", F32, T5_SCORES[:3])},
    "scores_strings": {"tokenizer.ggml.scores": g_array("tokenizer.ggml.scores", STRING, ["x"] * 7)},
    "token_type_floats": {"tokenizer.ggml.token_type": g_array("tokenizer.ggml.token_type", F32,
                                                               [float(t) for t in T5_TYPES])},
    "add_space_prefix_not_bool": {"tokenizer.ggml.add_space_prefix":
                                  g_scalar("tokenizer.ggml.add_space_prefix", U8, 1)},
    "duplicated_token": {"tokenizer.ggml.tokens": g_array("tokenizer.ggml.tokens", STRING,
                                                          T5_TOKENS[:5] + ["a"] + T5_TOKENS[6:])},
    "charsmap_garbage": {"cm": g_array("tokenizer.ggml.precompiled_charsmap", U8, [1, 2, 3, 4, 5, 6])},
    "charsmap_not_bytes": {"cm": g_array("tokenizer.ggml.precompiled_charsmap", F32, [1.0])},
    "unknown_value_type": {"x": g_str("x") + struct.pack("<I", 13) + b"\0" * 8},
    "unknown_array_element_type": {"x": g_kv("x", ARRAY, struct.pack("<IQ", 99, 1) + b"\0" * 8)},
}


@pytest.mark.parametrize("name", sorted(BAD_UGM))
def test_gguf_malformed_ugm_vocabulary(tmp_path, name):
    expect_format_error(write(tmp_path, f"{name}.gguf", gguf(t5_kvs(**BAD_UGM[name]))))


# Odd UGM vocabularies that llama.cpp loads (checked against llama.cpp, not assumed):
# a token type outside 0..6 becomes UNDEFINED, a token_type array longer than the
# vocabulary is read up to its size, an unknown_token_id outside the vocabulary
# leaves the default in place, an empty token text becomes "[EMPTY_<id>]"
# (llama_vocab::impl::load). toksmith must load them too and tokenize the same.
ODD_UGM_LLAMA_CPP_LOADS = {
    "token_type_7": {"tokenizer.ggml.token_type": g_array("tokenizer.ggml.token_type", I32, T5_TYPES[:-1] + [7])},
    "token_type_negative": {"tokenizer.ggml.token_type":
                            g_array("tokenizer.ggml.token_type", I32, T5_TYPES[:-1] + [-1])},
    "token_type_too_long": {"tokenizer.ggml.token_type": g_array("tokenizer.ggml.token_type", I32, T5_TYPES + [1])},
    "unknown_id_out_of_range": {"unk": g_scalar("tokenizer.ggml.unknown_token_id", U32, 99)},
    # The unknown id names a token that is not of type UNKNOWN: llama.cpp merges runs
    # by id (llm_tokenizer_ugm_session::tokenize compares with token_unk()).
    "unknown_id_is_a_normal_token": {"unk": g_scalar("tokenizer.ggml.unknown_token_id", U32, 4)},
    "unknown_id_is_a_control_token": {"unk": g_scalar("tokenizer.ggml.unknown_token_id", U32, 0)},
    "empty_normal_token": {"tokenizer.ggml.tokens": g_array("tokenizer.ggml.tokens", STRING,
                                                            T5_TOKENS[:5] + [""] + T5_TOKENS[6:])},
}
ODD_UGM_TEXTS = ["ab", "a b", "ba", "  ab  ", "abab ba", "", "c", "xyz ab", "</s>", "<pad>a", "\u2581ab",
                 "aa b aab", "cxa", "a\u00e9\u00e9a"]


@pytest.mark.parametrize("name", sorted(ODD_UGM_LLAMA_CPP_LOADS))
def test_gguf_odd_ugm_vocabulary_matches_llama_cpp(tmp_path, name):
    from tests.llama_cpp_reference import LlamaCppVocab
    path = write(tmp_path, f"{name}.gguf", gguf(t5_kvs(**ODD_UGM_LLAMA_CPP_LOADS[name])))
    reference = LlamaCppVocab(path)
    try:
        tok = toksmith.load(path)
        for text in ODD_UGM_TEXTS:
            for add_special in (False, True):
                for parse_special in (False, True):
                    assert tok.encode(text, add_special=add_special, parse_special=parse_special) == \
                        reference.tokenize(text.encode(), add_special, parse_special), (text, add_special)
    finally:
        reference.close()


def test_gguf_duplicate_key(tmp_path):
    kvs = t5_kvs() + [g_scalar("tokenizer.ggml.model", STRING, "t5")]
    expect_format_error(write(tmp_path, "dup.gguf", gguf(kvs)))


@pytest.mark.parametrize("n_tensors", [1, 235, 2**40])
def test_gguf_tensor_count_without_tensor_infos(tmp_path, n_tensors):
    """llama.cpp reads the tensor infos the header promises and refuses a file that lacks them."""
    data = gguf(t5_kvs())
    data = data[:8] + struct.pack("<Q", n_tensors) + data[16:]
    err = expect_format_error(write(tmp_path, "tensors.gguf", data))
    assert "tensor" in err.detail


def test_gguf_with_tensor_infos_loads(tmp_path):
    info = g_str("token_embd.weight") + struct.pack("<I", 2) + struct.pack("<QQ", 7, 4) + struct.pack("<IQ", 0, 0)
    data = gguf(t5_kvs())
    data = data[:8] + struct.pack("<Q", 1) + data[16:] + info
    assert toksmith.load(write(tmp_path, "tensors.gguf", data)).vocab_size == len(T5_TOKENS)
