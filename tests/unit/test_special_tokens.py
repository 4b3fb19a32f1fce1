"""`Tokenizer.special_tokens`, parse_special splitting, the double-BOS warning, and `inspect`.

Expected values come from the files and the references, never from toksmith:

- .model: the piece types of the ModelProto (sentencepiece's own protobuf); with
  parse_special the text splits at control/unknown texts and every other fragment encodes as
  sentencepiece encodes it alone.
- GGUF: the token types read by the pure-python tests/gguf_reference.py, and llama.cpp's
  own token attributes (llama_vocab_get_attr) and llama_tokenize through
  tests/llama_cpp_reference.py (tests needing it skip without llama-cpp-python).
"""
from __future__ import annotations

import dataclasses
import functools
import json
import random
import re
import warnings

import pytest

import toksmith
from tests.conftest import fixture_file
from tests.gguf_reference import read_metadata
from tests.unit import gguf_writer as gw
from tests.unit.test_cli import cli, out_lines
from toksmith.special_tokens import SpecialKind, SpecialToken, SplitWhen

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

EMBEDDED = "embedded"
SPM_MODELS = ["spm/llama2_tokenizer.model", "spm/llama2c_tok512.model", "spm/t5_base_japanese_spiece.model",
              "spm/sentencepiece_test_model.model", "spm/sentencepiece_test_ja_model.model",
              "spm/hf_test_sentencepiece_bpe.model", EMBEDDED]
GGUF_MODELS = ["gguf/ggml-vocab-llama-spm.gguf", "gguf/ggml-vocab-phi-3.gguf", "gguf/ggml-vocab-nomic-bert-moe.gguf"]

# llama.cpp's llama_token_type values (GGUF tokenizer.ggml.token_type)
GGUF_UNKNOWN, GGUF_CONTROL, GGUF_USER_DEFINED, GGUF_BYTE = 2, 3, 4, 6
# llama.cpp's llama_token_attr bits
ATTR_UNKNOWN, ATTR_CONTROL, ATTR_USER_DEFINED, ATTR_LSTRIP, ATTR_RSTRIP = 1, 8, 16, 128, 256


def model_path(fixtures, name: str) -> str:
    return toksmith.embedded_model_path("sentencepiece-demo") if name == EMBEDDED else str(fixture_file(fixtures, name))


@functools.lru_cache(maxsize=None)
def _load(path: str) -> toksmith.Tokenizer:
    return toksmith.load(path)


def llama_cpp(path):
    from tests import llama_cpp_reference as reference
    return reference.load_vocab(path)


def llama_cpp_attrs(vocab) -> list[int]:
    import llama_cpp as lc
    return [int(lc.llama_vocab_get_attr(vocab._vocab, i)) for i in range(vocab.n_tokens)]


def as_tuples(tokens):
    return [(t.id, t.text, t.kind, t.split, t.lstrip, t.rstrip) for t in tokens]


def random_texts(pieces: list[str], count: int, seed: int, max_parts: int = 8) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, max_parts))) for _ in range(count)]


def encode_quietly(tok, text, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the double-BOS warning is tested on its own
        return tok.encode(text, **kwargs)


# ----------------------------------------------------------------- the SpecialToken record


def test_special_tokens_is_a_tuple_of_frozen_records(fixtures):
    tok = _load(model_path(fixtures, "gguf/ggml-vocab-phi-3.gguf"))
    tokens = tok.special_tokens
    assert isinstance(tokens, tuple) and tokens
    assert all(isinstance(t, SpecialToken) for t in tokens)
    assert [t.id for t in tokens] == sorted({t.id for t in tokens})   # id order, no repeats
    assert tok.special_tokens is tokens   # computed once
    with pytest.raises(dataclasses.FrozenInstanceError):
        tokens[0].text = "x"
    assert [f.name for f in dataclasses.fields(SpecialToken)] == ["id", "text", "kind", "split", "lstrip",
                                                                  "rstrip", "alias"]


# ----------------------------------------------------------------- .model: the ModelProto's piece types


def proto_of(path) -> pb.ModelProto:
    proto = pb.ModelProto()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    return proto


PROTO_KIND = {pb.ModelProto.SentencePiece.CONTROL: SpecialKind.CONTROL,
              pb.ModelProto.SentencePiece.UNKNOWN: SpecialKind.UNKNOWN,
              pb.ModelProto.SentencePiece.USER_DEFINED: SpecialKind.USER_DEFINED}


def proto_special_tokens(proto):
    """What sentencepiece's rules make of the piece types (see special_tokens.py's docstring):
    control and unknown pieces split out with parse_special, user-defined ones never
    (the model matches them itself); no whitespace stripping."""
    return [(i, p.piece, PROTO_KIND[p.type],
             SplitWhen.NEVER if p.type == pb.ModelProto.SentencePiece.USER_DEFINED else SplitWhen.PARSE_SPECIAL,
             False, False)
            for i, p in enumerate(proto.pieces) if p.type in PROTO_KIND]


@pytest.mark.parametrize("name", SPM_MODELS)
def test_sentencepiece_special_tokens_follow_the_piece_types(fixtures, name):
    path = model_path(fixtures, name)
    want = proto_special_tokens(proto_of(path))
    assert want, "every sentencepiece model has <unk>"
    assert as_tuples(_load(path).special_tokens) == want


def with_user_defined(fixtures, tmp_path, texts=("<tool>", "[SEP]", "▁user")):
    proto = proto_of(fixture_file(fixtures, "spm/sentencepiece_test_model.model"))
    for text in texts:
        proto.pieces.add(piece=text, score=0.0, type=pb.ModelProto.SentencePiece.USER_DEFINED)
    data = proto.SerializeToString()
    path = tmp_path / "user_defined.model"
    path.write_bytes(data)
    return path, spm.SentencePieceProcessor(model_proto=data), proto


def test_sentencepiece_user_defined_pieces_are_matched_by_the_model(fixtures, tmp_path):
    path, sp, proto = with_user_defined(fixtures, tmp_path)
    tok = toksmith.load(path)
    assert as_tuples(tok.special_tokens) == proto_special_tokens(proto)
    assert {t.text for t in tok.special_tokens if t.kind is SpecialKind.USER_DEFINED} == {"<tool>", "[SEP]", "▁user"}
    for text in ["a<tool>b", "<tool><tool>", " [SEP] x", "user <tool>", "x<tool", "[SEP]<s>"]:
        want = sp.encode(text)
        assert tok.encode(text) == want, text
        if "<s>" not in text:
            assert tok.encode(text, parse_special=True) == want, text


def split_like_sentencepiece(sp, specials: dict[str, int], text: str) -> list[int]:
    """parse_special under sentencepiece's rules: control/unknown texts become their ids
    (leftmost, longest first); every other fragment is sentencepiece's encode of it alone."""
    pattern = re.compile("|".join(re.escape(s) for s in sorted(specials, key=lambda s: (-len(s), s))))
    ids, pos = [], 0
    for m in pattern.finditer(text):
        ids += sp.encode(text[pos:m.start()]) if m.start() > pos else []
        ids.append(specials[m.group()])
        pos = m.end()
    return ids + (sp.encode(text[pos:]) if pos < len(text) else [])


@pytest.mark.parametrize("name", ["spm/llama2_tokenizer.model", "spm/t5_base_japanese_spiece.model", EMBEDDED])
def test_sentencepiece_parse_special(fixtures, name):
    path = model_path(fixtures, name)
    tok, sp = _load(path), spm.SentencePieceProcessor(model_file=path)
    reserved = {sp.id_to_piece(i): i for i in range(sp.get_piece_size()) if sp.is_control(i) or sp.is_unknown(i)}
    specials = list(reserved)
    texts = ["<s>hello", "a</s>b", "hi </s> there", "<unk>x", "<s><s>", "  <s>  ", "<pad>", "</s", "<s >"]
    texts += random_texts(specials + [" ", "  ", "a", "hi", "<", ">", "/", "s", "\n", "日本", "ｶ"], 400, 1)
    for text in texts:
        assert tok.encode(text, parse_special=True) == split_like_sentencepiece(sp, reserved, text), text
        assert tok.encode(text) == sp.encode(text), text   # no parse_special: plain text


# ----------------------------------------------------------------- GGUF: token types and llama.cpp attributes


@pytest.mark.parametrize("name", GGUF_MODELS)
def test_gguf_special_tokens_include_every_typed_special(fixtures, name):
    """Every token the file types UNKNOWN/CONTROL/USER_DEFINED is special, with the file's text."""
    path = model_path(fixtures, name)
    meta = read_metadata(path)
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    got = {t.id: t for t in _load(path).special_tokens}
    for i, t in enumerate(types):
        if t in (GGUF_UNKNOWN, GGUF_CONTROL, GGUF_USER_DEFINED):
            assert i in got, (i, tokens[i], t)
    for i, token in got.items():
        assert token.text == tokens[i].decode("utf-8")
        assert types[i] not in (GGUF_BYTE,), (i, tokens[i])


def expected_from_attrs(attrs: list[int], tokens: list[str]):
    """The special tokens llama.cpp's attributes describe (llama_vocab's cache_special_tokens)."""
    want = []
    for i, a in enumerate(attrs):
        if not a & (ATTR_UNKNOWN | ATTR_CONTROL | ATTR_USER_DEFINED):
            continue
        kind = (SpecialKind.CONTROL if a & ATTR_CONTROL else
                SpecialKind.UNKNOWN if a & ATTR_UNKNOWN else SpecialKind.USER_DEFINED)
        # llama.cpp splits user-defined tokens even with parse_special=False
        split = SplitWhen.PARSE_SPECIAL if a & (ATTR_CONTROL | ATTR_UNKNOWN) else SplitWhen.ALWAYS
        want.append((i, tokens[i], kind, split, bool(a & ATTR_LSTRIP), bool(a & ATTR_RSTRIP)))
    return want


@pytest.mark.parametrize("name", GGUF_MODELS)
def test_gguf_special_tokens_match_llama_cpp_attributes(fixtures, name):
    path = model_path(fixtures, name)
    vocab = llama_cpp(path)
    tokens = [t.decode("utf-8") for t in read_metadata(path)["tokenizer.ggml.tokens"]]
    assert as_tuples(_load(path).special_tokens) == expected_from_attrs(llama_cpp_attrs(vocab), tokens)
    for t in _load(path).special_tokens:
        assert vocab.token_to_piece(t.id, lstrip=0, special=True) == t.text.encode()


def test_phi3_special_tokens_rstrip_by_model_name(fixtures):
    """llama.cpp: in a model named phi-3/phi3 every special token swallows the whitespace after it,
    except <unk>, <s> and <|endoftext|>; </s> (user-defined in the file) does too."""
    path = model_path(fixtures, "gguf/ggml-vocab-phi-3.gguf")
    assert b"phi3" in read_metadata(path)["general.name"].lower()
    tokens = {t.text: t for t in _load(path).special_tokens}
    for text in ("<|end|>", "<|user|>", "<|assistant|>", "<|system|>", "</s>", "[PAD32011]"):
        assert tokens[text].rstrip and not tokens[text].lstrip, text
    for text in ("<unk>", "<s>", "<|endoftext|>"):
        assert not tokens[text].rstrip, text
    assert not any(t.rstrip or t.lstrip for t in _load(model_path(fixtures, "gguf/ggml-vocab-llama-spm.gguf"))
                   .special_tokens)


PHI3_TEXTS = ["<|user|>\nHello<|end|>\n<|assistant|>", "<|end|>  x", "x  <|end|>  y", "<|end|>\t\n x",
              "<s> hi", "</s>  hi", " <unk> a", "<|endoftext|>  a", "[PAD32011]   b", "<|end|><|end|>",
              "<|end|> \n\t ", "   <|system|>", "<|system|> You are", "a <|end|>", "<s><s>", ""]


def test_phi3_parse_special_matches_llama_cpp(fixtures):
    path = model_path(fixtures, "gguf/ggml-vocab-phi-3.gguf")
    tok, vocab = _load(path), llama_cpp(path)
    specials = [t.text for t in tok.special_tokens]
    texts = PHI3_TEXTS + random_texts(specials + [" ", "  ", "\n", "\t", " \n ", "Hello", " world", "<|end",
                                                  "end|>", "\r\n", "日本", "😀"], 800, 2)
    for text in texts:
        for add_special in (False, True):
            for parse_special in (False, True):
                want = vocab.tokenize(text.encode(), add_special, parse_special)
                got = encode_quietly(tok, text, add_special=add_special, parse_special=parse_special)
                assert got == want, (text, add_special, parse_special)


def test_phi3_rstrip_swallows_following_whitespace(fixtures):
    """What RSTRIP does, seen in llama.cpp: spaces after <|end|> vanish; after <s> they stay."""
    path = model_path(fixtures, "gguf/ggml-vocab-phi-3.gguf")
    tok, vocab = _load(path), llama_cpp(path)
    for ws in (" ", "   ", "\n", " \t\n "):
        want = vocab.tokenize(f"<|end|>{ws}hi".encode(), False, True)
        assert want == vocab.tokenize(b"<|end|>hi", False, True)
        assert tok.encode(f"<|end|>{ws}hi", add_special=False, parse_special=True) == want
        kept = vocab.tokenize(f"<s>{ws}hi".encode(), False, True)
        assert kept != vocab.tokenize(b"<s>hi", False, True)
        assert tok.encode(f"<s>{ws}hi", add_special=False, parse_special=True) == kept


def test_lstrip_mask_matches_llama_cpp(fixtures):
    """nomic-bert-moe: llama.cpp gives <mask> LSTRIP (by architecture name)."""
    path = model_path(fixtures, "gguf/ggml-vocab-nomic-bert-moe.gguf")
    tok, vocab = _load(path), llama_cpp(path)
    mask = {t.text: t for t in tok.special_tokens}["<mask>"]
    assert mask.lstrip and not mask.rstrip
    texts = ["a <mask> b", "a   <mask>", "<mask>", " \t<mask>x", "x<mask> <mask>  <mask>", "<s> <mask></s>",
             "\n<mask>\n"]
    for text in texts + random_texts(["<mask>", "<s>", "</s>", " ", "  ", "\n", "a", "Hello"], 200, 3):
        for parse_special in (False, True):
            assert encode_quietly(tok, text, parse_special=parse_special) == \
                vocab.tokenize(text.encode(), True, parse_special), (text, parse_special)


# Synthetic llama (SPM) vocabularies: the llama-spm tokens plus added tokens of each type.
EXTRA = [("<|endoftext|>", GGUF_CONTROL), ("<|tool|>", GGUF_USER_DEFINED), ("<tag>", GGUF_USER_DEFINED),
         ("<|ctl|>", GGUF_CONTROL), ("<|end|>", 1), ("[UNK2]", GGUF_UNKNOWN)]


@pytest.fixture(scope="module", params=["tiny", "Phi-3 tiny"])
def synthetic_gguf(request, fixtures, tmp_path_factory):
    meta = read_metadata(fixture_file(fixtures, "gguf/ggml-vocab-llama-spm.gguf"))
    tokens = list(meta["tokenizer.ggml.tokens"]) + [t.encode() for t, _ in EXTRA]
    types = list(meta["tokenizer.ggml.token_type"]) + [k for _, k in EXTRA]
    scores = list(meta["tokenizer.ggml.scores"]) + [0.0] * len(EXTRA)
    path = tmp_path_factory.mktemp("gguf") / f"{request.param.replace(' ', '_')}.gguf"
    gw.write_gguf(path, gw.vocab_kvs("llama", tokens, scores, types, name=request.param,
                                     bos_token_id=1, eos_token_id=2, unknown_token_id=0))
    return request.param, path, [t.decode() for t in tokens]


def test_synthetic_gguf_special_tokens_match_llama_cpp(synthetic_gguf):
    name, path, tokens = synthetic_gguf
    tok, vocab = toksmith.load(path), llama_cpp(path)
    got = as_tuples(tok.special_tokens)
    assert got == expected_from_attrs(llama_cpp_attrs(vocab), tokens)
    by_text = {t.text: t for t in tok.special_tokens}
    assert by_text["<|tool|>"].split is SplitWhen.ALWAYS and by_text["<|tool|>"].kind is SpecialKind.USER_DEFINED
    assert by_text["<|ctl|>"].split is SplitWhen.PARSE_SPECIAL
    assert by_text["<|end|>"].kind is SpecialKind.CONTROL   # an end-of-generation text: CONTROL in llama.cpp
    assert by_text["<|tool|>"].rstrip is (name.startswith("Phi-3"))   # the name rule


def test_synthetic_gguf_encode_matches_llama_cpp(synthetic_gguf):
    _, path, _ = synthetic_gguf
    tok, vocab = toksmith.load(path), llama_cpp(path)
    pieces = [t for t, _ in EXTRA] + ["<s>", "</s>", "<unk>", " ", "  ", "\n", "a", "hi", "<", "|>", "日本", "tool"]
    for text in ["a<|tool|>b", "<|tool|> x", "x <tag>  <tag>", "<|ctl|>  y"] + random_texts(pieces, 500, 4, 7):
        for add_special in (False, True):
            for parse_special in (False, True):
                want = vocab.tokenize(text.encode(), add_special, parse_special)
                got = encode_quietly(tok, text, add_special=add_special, parse_special=parse_special)
                assert got == want, (text, add_special, parse_special)


def test_user_defined_tokens_split_without_parse_special(synthetic_gguf):
    _, path, tokens = synthetic_gguf
    tok = toksmith.load(path)
    tool, ctl = tokens.index("<|tool|>"), tokens.index("<|ctl|>")
    assert tool in tok.encode("x<|tool|>y", parse_special=False)
    assert ctl not in tok.encode("x<|ctl|>y", parse_special=False)
    assert ctl in tok.encode("x<|ctl|>y", parse_special=True)


# ----------------------------------------------------------------- the double-BOS warning


@pytest.fixture()
def fresh_llama_spm(fixtures):
    """A tokenizer of its own: the warning is issued once per tokenizer."""
    path = model_path(fixtures, "gguf/ggml-vocab-llama-spm.gguf")
    return toksmith.load(path), path


def bos_warnings(record):
    return [w for w in record if issubclass(w.category, UserWarning) and "BOS" in str(w.message)]


def test_double_bos_warns_once_per_tokenizer(fresh_llama_spm):
    tok, path = fresh_llama_spm
    vocab = llama_cpp(path)
    bos = tok.special_ids.bos
    want = vocab.tokenize(b"<s>Hello", True, True)
    assert want[:2] == [bos, bos]   # llama.cpp too: two BOS (and it logs a warning)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert tok.encode("<s>Hello", parse_special=True) == want
        assert tok.encode("<s>Hello again", parse_special=True)[:2] == [bos, bos]
        tok.encode_batch(["<s>a", "<s>b"], parse_special=True)
    found = bos_warnings(record)
    assert len(found) == 1, [str(w.message) for w in record]
    message = str(found[0].message)
    assert "BOS" in message and "add_special=False" in message
    # another tokenizer of the same file warns again, once
    other = toksmith.load(path)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        other.encode("<s>x", parse_special=True)
        other.encode("<s>y", parse_special=True)
    assert len(bos_warnings(record)) == 1


def test_double_bos_warning_from_encode_batch(fresh_llama_spm):
    tok, _ = fresh_llama_spm
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = tok.encode_batch(["plain", "<s>x", "<s>y"] * 50, parse_special=True, num_threads=4)
    assert out[1][:2] == [tok.special_ids.bos] * 2
    assert len(bos_warnings(record)) == 1


def test_no_double_bos_warning_when_not_doubled(fresh_llama_spm, fixtures):
    tok, path = fresh_llama_spm
    bos = tok.special_ids.bos
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert tok.encode("<s>Hello", add_special=False, parse_special=True)[0] == bos
        assert tok.encode("<s>Hello", parse_special=False)[1] != bos   # "<s>" is plain text here
        tok.encode("Hello <s>", parse_special=True)                   # BOS later, not first
        tok.encode("", parse_special=True)
        tok.encode_batch(["<s>a", "<s>b"], add_special=False, parse_special=True)
        # a .model adds no BOS: nothing to double
        model_file = model_path(fixtures, "spm/llama2_tokenizer.model")
        model = toksmith.load(model_file)
        sp_bos = spm.SentencePieceProcessor(model_file=model_file).bos_id()
        assert model.encode("<s>Hello", parse_special=True)[:1] == [sp_bos]
    assert bos_warnings(record) == []
    # and the warning is still to come on this tokenizer
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        tok.encode("<s>Hello", parse_special=True)
    assert len(bos_warnings(record)) == 1


def test_double_bos_warning_can_be_turned_into_an_error(fresh_llama_spm):
    tok, _ = fresh_llama_spm
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="BOS"):
            tok.encode("<s>Hello", parse_special=True)


def test_double_bos_warning_points_at_the_caller(fresh_llama_spm):
    tok, _ = fresh_llama_spm
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        tok.encode("<s>Hello", parse_special=True)
    (found,) = bos_warnings(record)
    assert found.filename == __file__


# ----------------------------------------------------------------- describe() and `toksmith inspect`


def described(tok):
    return [{"id": t.id, "text": t.text, "kind": t.kind.value, "split": t.split.value,
             "lstrip": t.lstrip, "rstrip": t.rstrip} for t in tok.special_tokens]


@pytest.mark.parametrize("name", ["gguf/ggml-vocab-phi-3.gguf", "spm/llama2_tokenizer.model", EMBEDDED])
def test_describe_lists_special_tokens(fixtures, name):
    tok = _load(model_path(fixtures, name))
    info = tok.describe()
    assert info["special_tokens"] == described(tok)
    json.dumps(info)   # plain data


def test_inspect_json_lists_special_tokens(fixtures):
    path = model_path(fixtures, "gguf/ggml-vocab-phi-3.gguf")
    types = read_metadata(path)["tokenizer.ggml.token_type"]
    result = cli("inspect", "-m", path, "--json")
    out_lines(result)
    listed = json.loads(result.stdout)["special_tokens"]
    assert listed == described(_load(path))
    assert {t["id"] for t in listed} >= {i for i, t in enumerate(types)
                                         if t in (GGUF_UNKNOWN, GGUF_CONTROL, GGUF_USER_DEFINED)}
    end = next(t for t in listed if t["text"] == "<|end|>")
    assert end["kind"] == "control" and end["rstrip"] is True and end["split"] == "parse_special"


@pytest.mark.parametrize("name", ["gguf/ggml-vocab-phi-3.gguf", EMBEDDED])
def test_inspect_text_lists_special_tokens(fixtures, name):
    path = model_path(fixtures, name)
    tok = _load(path)
    lines = out_lines(cli("inspect", path))
    text = "\n".join(lines)
    assert "special_tokens" in text
    for t in tok.special_tokens:
        # one line per token, naming its id and text
        assert any(re.search(rf"(?<!\d){t.id}(?!\d)", line) and t.text in line for line in lines), t
    assert len(lines) >= len(tok.special_tokens)
