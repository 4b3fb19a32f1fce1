"""The engine runs the stages it is given (engine.pyx): a pre-tokenizer stage, model works
kept per thread by kind, and errors: bad vocabulary data names the file, a bug does not."""
from __future__ import annotations

import pytest
import sentencepiece as spm

import toksmith
from tests.conftest import fixture_file
from toksmith._core.engine import Engine
from toksmith._core.pretokenizer import PreTokenizer
from toksmith.errors import ModelFormatError

TEXTS = ["Hello, world", "  two  spaces ", "", "日本語のテキスト", "a\u2581b", "x" * 300, "é\u0301"]


def _with_stages(tok: toksmith.Tokenizer, **stages) -> Engine:
    engine = tok.engine
    parts = dict(splitter=engine.splitter, normalizer=engine.normalizer, pretokenizer=engine.pretokenizer,
                 model=engine.model, postprocessor=engine.postprocessor, decoder=engine.decoder)
    parts.update(stages)
    return Engine(len(tok.vocab), tok.vocab.types, **parts)


def test_engine_with_a_pretokenizer_encodes_each_pre_token(tok, sp):
    """The base PreTokenizer keeps a fragment whole: ids and tokenize() spans must not change,
    and both must still match sentencepiece."""
    engine = _with_stages(tok, pretokenizer=PreTokenizer())
    for text in TEXTS:
        assert engine.encode(text, add_special=False) == sp.encode(text) == tok.encode(text, add_special=False)
        assert engine.tokenize(text) == tok.tokenize(text)
        assert engine.encode(text) == tok.encode(text)


def test_tokenizers_of_different_models_share_a_thread(fixtures):
    """Each model kind keeps its own work in the thread's scratch; alternating calls agree
    with fresh tokenizers and with sentencepiece."""
    paths = [fixture_file(fixtures, "spm/llama2_tokenizer.model"), toksmith.embedded_model_path("sentencepiece-demo"),
             fixture_file(fixtures, "spm/t5_base_japanese_spiece.model")]
    toks = [toksmith.load(p) for p in paths]
    sps = [spm.SentencePieceProcessor(model_file=str(p)) for p in paths]
    for _ in range(3):
        for text in TEXTS:
            for tok, sp in zip(toks, sps):
                assert tok.encode(text, add_special=False) == sp.encode(text), (tok, text)


def test_bad_vocabulary_data_names_the_file(tmp_path):
    """A duplicate user-defined piece is bad data found while compiling: ModelFormatError."""
    from sentencepiece import sentencepiece_model_pb2 as pb
    proto = pb.ModelProto()
    proto.ParseFromString(open(toksmith.embedded_model_path("sentencepiece-demo"), "rb").read())
    for text in ("<dup>", "<dup>"):
        piece = proto.pieces.add()
        piece.piece = text
        piece.type = pb.ModelProto.SentencePiece.USER_DEFINED
    path = tmp_path / "dup.model"
    path.write_bytes(proto.SerializeToString())
    with pytest.raises(ModelFormatError, match="dup.model"):
        toksmith.load(path)


def test_a_bug_raising_value_error_is_not_reported_as_a_bad_file(monkeypatch):
    """Only the core's ModelDataError becomes ModelFormatError; a plain ValueError from a
    builder is a bug and must surface as itself."""
    from toksmith.models import unigram
    from toksmith.spec import ReferenceRules

    def broken_model(*args, **kwargs):
        raise ValueError("a bug, not a bad file")

    monkeypatch.setitem(unigram.UNIGRAM_MODELS, ReferenceRules.SENTENCEPIECE, broken_model)
    with pytest.raises(ValueError, match="a bug") as info:
        toksmith.load_embedded("sentencepiece-demo")
    assert not isinstance(info.value, ModelFormatError)


def test_byte_level_tokenizers_of_different_vocabularies_share_a_thread(fixtures):
    """Two byte-level vocabularies reuse one model work on the thread (same kind): the word
    cache and the memo of long pair lookups must not carry one vocabulary's merges into the
    other. CJK and long words make pairs of 5+ bytes, the memo's range; tiktoken is the
    reference, each encoding used alone."""
    from tests.tiktoken_reference import encoding
    names = ["cl100k_base", "o200k_base"]
    toks = [toksmith.load(name) for name in names]
    refs = [encoding(name, fixtures) for name in names]
    texts = ["日本語のテキストを分割します", "这是一个测试文本，包含中文字符", "internationalization Verschlüsselungsverfahren",
             "ｶﾀｶﾅと漢字の混ざった長い文章です" * 3]
    for _ in range(2):
        for text in texts:
            for tok, ref in zip(toks, refs):
                assert tok.encode(text, add_special=False) == ref.encode_ordinary(text), (tok, text)


def _rank_file(path, extra: list[bytes]):
    """A rank file: the 256 bytes (ranks 0-255), then `extra` in order."""
    import base64
    tokens = [bytes([b]) for b in range(256)] + extra
    path.write_text("".join(f"{base64.b64encode(t).decode()} {rank}\n" for rank, t in enumerate(tokens)))
    return path


def test_pair_memo_is_not_shared_between_vocabularies(tmp_path):
    """Ids 0-258 mean the same bytes in both files; only the first has "abcde". In " abcde"
    (one pre-token, no token) the pair (abc, de) covers 5 bytes, so its lookup is remembered
    in the thread's work: a memo kept across vocabularies would give the second file the
    first one's merge."""
    from toksmith.spec import SplitPattern
    common = [b"ab", b"abc", b"de"]
    with_word = toksmith.load(_rank_file(tmp_path / "a.tiktoken", common + [b"abcde"]),
                              pattern=SplitPattern.CL100K, special_tokens={})
    without = toksmith.load(_rank_file(tmp_path / "b.tiktoken", common + [b"xyz"]),
                            pattern=SplitPattern.CL100K, special_tokens={})
    for _ in range(3):
        # by the rules: "ab" (256) first, then "abc" (257) and "de" (258); "abcde" (259) in a only
        assert with_word.encode(" abcde", add_special=False) == [32, 259]
        assert without.encode(" abcde", add_special=False) == [32, 257, 258]

