"""The tokenizer.json writer: the text tokenizers itself writes, numbers serde_json reads back
exactly, refusals that name what is missing, and files never half-written."""
from __future__ import annotations

import json
import math
import random
import struct

import pytest
import tokenizers
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, processors

import toksmith
from toksmith.errors import UnsupportedConversionError
from toksmith.hf.json_numbers import serde_json_f64
from toksmith.hf.reader import read_hf_json
from toksmith.writers.hf_json_numbers import serde_exact_text
from toksmith.writers.hf_serialize import hf_tokenizer_json
from toksmith.writers.tokenizer_json import write_tokenizer_json

VOCAB = {"<unk>": 0, "<s>": 1, "</s>": 2, "a": 3, "b": 4, "ab": 5, "▁": 6, "▁a": 7}


def _component_tokenizers() -> list[tokenizers.Tokenizer]:
    """One tokenizer per component type and option tokenizers serializes."""
    out = []
    parts = [
        ("normalizer", [normalizers.BertNormalizer(strip_accents=False), normalizers.ByteLevel(), normalizers.Lowercase(),
                        normalizers.NFC(), normalizers.NFD(), normalizers.NFKC(), normalizers.NFKD(), normalizers.Nmt(),
                        normalizers.StripAccents(), normalizers.Prepend("▁"), normalizers.Replace("a", "b"),
                        normalizers.Replace(Regex(r"\s+"), " "), normalizers.Strip(left=False),
                        normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])]),
        ("pre_tokenizer", [pre_tokenizers.BertPreTokenizer(), pre_tokenizers.ByteLevel(add_prefix_space=False),
                           pre_tokenizers.CharDelimiterSplit("x"), pre_tokenizers.Digits(True),
                           pre_tokenizers.FixedLength(3), pre_tokenizers.Metaspace(prepend_scheme="first", split=False),
                           pre_tokenizers.Punctuation("contiguous"), pre_tokenizers.Split(Regex(r"\d"), "removed", True),
                           pre_tokenizers.UnicodeScripts(), pre_tokenizers.Whitespace(), pre_tokenizers.WhitespaceSplit(),
                           pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Digits()])]),
        ("decoder", [decoders.BPEDecoder("_"), decoders.ByteFallback(), decoders.ByteLevel(), decoders.CTC(cleanup=False),
                     decoders.Fuse(), decoders.Metaspace(prepend_scheme="never"), decoders.Replace("▁", " "),
                     decoders.Strip(" ", 1, 2), decoders.WordPiece("##", False),
                     decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])]),
        ("post_processor", [processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                                          special_tokens=[("<s>", 1), ("</s>", 2)]),
                            processors.BertProcessing(("</s>", 2), ("<s>", 1)),
                            processors.RobertaProcessing(("</s>", 2), ("<s>", 1), trim_offsets=False),
                            processors.ByteLevel(trim_offsets=False),
                            processors.Sequence([processors.ByteLevel(), processors.BertProcessing(("</s>", 2),
                                                                                                   ("<s>", 1))])]),
    ]
    for attribute, components in parts:
        for component in components:
            tok = tokenizers.Tokenizer(models.WordLevel(VOCAB, unk_token="<unk>"))
            setattr(tok, attribute, component)
            out.append(tok)
    for model in (models.BPE(VOCAB, [("a", "b"), ("▁", "a")], unk_token="<unk>", fuse_unk=True, byte_fallback=True,
                             ignore_merges=True),
                  models.BPE(VOCAB, [("a", "b")], continuing_subword_prefix="", end_of_word_suffix="</w>"),
                  models.Unigram([("<unk>", 0.0), ("a", -1.5), ("b", -2.25), ("ab", -1e-05), ("▁", -7.22393136773668)],
                                 0, True),
                  models.WordPiece(VOCAB, unk_token="<unk>", max_input_chars_per_word=7)):
        out.append(tokenizers.Tokenizer(model))
    tok = tokenizers.Tokenizer(models.WordLevel(VOCAB, unk_token="<unk>"))
    tok.add_special_tokens([tokenizers.AddedToken("<s>", lstrip=True), "<new>"])
    tok.add_tokens([tokenizers.AddedToken(" x", single_word=True, rstrip=True, normalized=False), "y"])
    out.append(tok)
    return out


@pytest.mark.parametrize("index", range(len(_component_tokenizers())))
def test_written_text_is_what_tokenizers_writes(index):
    source = _component_tokenizers()[index]
    text = source.to_str()
    spec = read_hf_json(text.encode("utf-8"), "component.json")
    written = hf_tokenizer_json(spec)
    # the same JSON, field order included; numbers as serde_json reads them
    assert json.loads(written, parse_float=serde_json_f64) == json.loads(text, parse_float=serde_json_f64)
    assert list(json.loads(written)) == list(json.loads(text))
    assert written == text
    assert tokenizers.Tokenizer.from_str(written).to_str() == text


def test_numbers_read_back_exactly_through_serde_json():
    rnd = random.Random(4)
    values = [struct.unpack("f", struct.pack("f", -rnd.random() * 30))[0] for _ in range(4000)]
    values += [serde_json_f64(repr(-rnd.random() * rnd.choice([1.0, 20.0, 1e-3, 1e-7]))) for _ in range(4000)]
    missed = [v for v in values if serde_json_f64(serde_exact_text(v)) != v]
    # serde_json's double rounding reaches no decimal text of a few floats (e.g. the float32
    # -3.8024404048919678): written as tokenizers writes them, read back one unit away
    assert len(missed) < len(values) // 200, len(missed)
    for value in missed:
        assert serde_json_f64(serde_exact_text(value)) in (math.nextafter(value, 0), math.nextafter(value, -math.inf))
    assert serde_json_f64(serde_exact_text(-3.8024404048919678)) != -3.8024404048919678
    # serde_json's own text wherever it reads back (what tokenizers writes)
    assert serde_exact_text(-2.5) == "-2.5" and serde_exact_text(-1.0) == "-1.0"
    # repr (and tokenizers' own text) reads back one unit in the last place away here; ours does not
    value = float("-7.2239313677366805")
    assert serde_json_f64(repr(value)) != value
    assert serde_json_f64(serde_exact_text(value)) == value
    with pytest.raises(ValueError, match="cannot be written"):
        serde_exact_text(float("nan"))


def test_save_by_suffix_and_format(tmp_path):
    source = tokenizers.Tokenizer(models.WordLevel(VOCAB, unk_token="<unk>"))
    source.pre_tokenizer = pre_tokenizers.Whitespace()
    src = tmp_path / "src.json"
    source.save(str(src))
    tok = toksmith.load(src)
    out = tok.save(tmp_path / "out.json")
    assert tokenizers.Tokenizer.from_file(str(out)).encode("a b ab").ids == [3, 4, 5]
    other = tok.save(tmp_path / "out.bin", format="tokenizer.json")
    assert other.read_bytes() == out.read_bytes()


def test_existing_file_kept_on_refusal(tmp_path):
    from tests.unit.test_formats_errors import I32, bert_kvs, g_array, gguf, write
    types = g_array("tokenizer.ggml.token_type", I32, [3, 2, 3, 3, 1, 1, 1, 4])   # a USER_DEFINED token
    tok = toksmith.load(write(tmp_path, "bert.gguf", gguf(bert_kvs(**{"tokenizer.ggml.token_type": types}))))
    target = tmp_path / "keep.json"
    target.write_text("old content")
    with pytest.raises(UnsupportedConversionError, match="USER_DEFINED tokens in a WPM vocabulary"):
        tok.save(target)
    assert target.read_text() == "old content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bert.gguf", "keep.json"]


def test_unwritable_path(tmp_path):
    source = tokenizers.Tokenizer(models.WordLevel(VOCAB, unk_token="<unk>"))
    src = tmp_path / "src.json"
    source.save(str(src))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        toksmith.load(src).save(tmp_path / "missing" / "out.json")


def test_sentencepiece_user_defined_pieces_are_refused(fixtures, tmp_path):
    from sentencepiece import sentencepiece_model_pb2 as pb
    proto = pb.ModelProto()
    proto.ParseFromString((fixtures / "spm/sentencepiece_test_model.model").read_bytes())
    proto.pieces[10].type = pb.ModelProto.SentencePiece.USER_DEFINED
    path = tmp_path / "user_defined.model"
    path.write_bytes(proto.SerializeToString())
    with pytest.raises(UnsupportedConversionError, match="USER_DEFINED pieces") as error:
        write_tokenizer_json(toksmith.load(path).spec)
    assert "user_defined.model" in str(error.value)


def test_bpe_tables_written_natively_as_tokenizers_writes_them():
    """A BPE vocab and merges read into the scanner's tables are written natively: every
    character JSON escapes (quotes, backslash, each control character), 0x7F, non-ASCII,
    and texts that look like the JSON around them come out as tokenizers writes them."""
    from toksmith._core.hf_json_sections import MergeTable, TokenTable
    from toksmith.writers import hf_serialize
    odd = ['"', "\\", "\x7f", "é", "日本", "🙂", hf_serialize._UNIGRAM_VOCAB_SLOT, '}},"vocab":{']
    odd += [chr(c) for c in range(0x20)]
    vocab, merges = {}, []
    for text in ["a", *odd]:
        vocab.setdefault(text, len(vocab))
    for left in ["a", *odd[:12]]:
        right = odd[len(merges) % len(odd)]
        vocab.setdefault(left + right, len(vocab))
        merges.append((left, right))
    ref = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token='"merges":['))
    ref.add_special_tokens([hf_serialize._UNIGRAM_VOCAB_SLOT])
    text = ref.to_str()
    spec = read_hf_json(text.encode("utf-8"), "t.json")
    assert isinstance(spec.model.vocab, TokenTable) and isinstance(spec.model.merges, MergeTable)
    assert hf_tokenizer_json(spec) == text


def test_json_vocab_and_merges_text_are_json_dumps():
    from toksmith._core.json_text import json_merges_text, json_vocab_text
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(0x80)] + ["é", "€", "𝄞", "\u2028", "\ufeff"]
    texts = list({"".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 6))) for _ in range(3000)})
    raw = [t.encode("utf-8") for t in texts]
    gaps = [None if i % 7 == 3 else r for i, r in enumerate(raw)]
    merges = [(rng.randrange(len(raw)), rng.randrange(len(raw))) for _ in range(2000)]
    compact = {"ensure_ascii": False, "separators": (",", ":")}
    assert json_vocab_text(gaps).decode("utf-8") == json.dumps(
        {t: i for i, t in enumerate(texts) if gaps[i] is not None}, **compact)
    assert json_merges_text(raw, merges).decode("utf-8") == json.dumps([[texts[a], texts[b]] for a, b in merges],
                                                                      **compact)
    with pytest.raises(TypeError):
        json_vocab_text(["a"])
