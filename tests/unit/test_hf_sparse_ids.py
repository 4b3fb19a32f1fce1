"""Sparse token ids in a tokenizer.json (issue 30 item 7): memory by the token count, not
by the largest id.

tokenizers 0.23.3 loads any u32 id (its vocab maps are HashMap<String, u32>). toksmith
numbers the file's ids 0..n-1 inside its core (in the order of the file's ids) and gives
and takes the file's own ids at the Tokenizer: encode, decode, the stream decoder,
id_to_piece/piece_to_id, special ids, post-processor templates, added tokens, and the
tokenizer.json writer. An id past u32 is a ModelFormatError naming the id and the key,
as tokenizers refuses it too. Unigram ids are positions in its piece list (never sparse),
so only WordLevel, WordPiece and BPE files are built here, with tokenizers' own API.
"""
from __future__ import annotations

import json
import pickle

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, processors

import toksmith
from tests.conftest import report
from tests.peak_rss import run_measured

U32_MAX = 2**32 - 1
SMALL_BIG = 7
BIG_IDS = (SMALL_BIG, 70_000, 2**31 - 1, 2**31, U32_MAX)
KINDS = ("WordLevel", "WordPiece", "BPE")
# "<s> b" with add_special: two BOS, as tokenizers gives them too (toksmith warns)
pytestmark = pytest.mark.filterwarnings("ignore:the text starts with a BOS token")
TEXTS = ["b a ab", "a", "b b", "x", "ab b a", "<s> b", "b</s>a", "[UNK] <s>", ""]
PAIRS = [("b a", "ab"), ("a", "b b")]


def sparse_reference(kind: str, big: int, processor: str = "Template") -> Tokenizer:
    """A tokenizers Tokenizer of `kind` whose token "b" has id `big`, with "<s>" (in the
    model's vocab, id big - 1) and "</s>" (a new added token) as special tokens and a
    post-processor (`processor`: Template, Bert or Roberta) that adds them."""
    vocab = {"a": 0, "[UNK]": 1, "ab": 2, "<s>": big - 1, "b": big}
    if kind == "WordLevel":
        model = models.WordLevel(vocab=vocab, unk_token="[UNK]")
    elif kind == "WordPiece":
        model = models.WordPiece(vocab=vocab, unk_token="[UNK]")
    else:
        model = models.BPE(vocab=vocab, merges=[("a", "b")], unk_token="[UNK]")
    tok = Tokenizer(model)
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens(["<s>", "</s>"])
    bos, eos = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    if processor == "Template":
        tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                                          special_tokens=[("<s>", bos), ("</s>", eos)])
    elif processor == "Bert":
        tok.post_processor = processors.BertProcessing(("</s>", eos), ("<s>", bos))
    else:
        tok.post_processor = processors.RobertaProcessing(("</s>", eos), ("<s>", bos))
    return tok


def sparse_file(kind: str, big: int, processor: str = "Template") -> str:
    """The tokenizer.json text of `sparse_reference(kind, big, processor)`. Written by
    tokenizers for a small id and renumbered here: tokenizers' own to_str walks every id
    up to the largest (30 s for 2**31)."""
    small = SMALL_BIG
    obj = json.loads(sparse_reference(kind, small, processor).to_str())
    new_id = {small - 1: big - 1, small: big}
    obj["model"]["vocab"] = {t: new_id.get(i, i) for t, i in obj["model"]["vocab"].items()}
    for token in obj["added_tokens"]:
        token["id"] = new_id.get(token["id"], token["id"])
    post = obj["post_processor"]
    if processor == "Template":
        for entry in post["special_tokens"].values():
            entry["ids"] = [new_id.get(i, i) for i in entry["ids"]]
    else:
        for role in ("sep", "cls"):
            post[role][1] = new_id.get(post[role][1], post[role][1])
    return json.dumps(obj, ensure_ascii=False)


def saved(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def compare_with_reference(tok: toksmith.Tokenizer, ref: Tokenizer) -> int:
    """Every entry point that gives or takes ids, against tokenizers; the comparisons made."""
    compared = 0
    for text in TEXTS:
        for add_special in (False, True):
            want = ref.encode(text, add_special_tokens=add_special).ids
            assert tok.encode(text, add_special=add_special, parse_special=True) == want, (text, add_special)
            for skip in (False, True):
                assert tok.decode(want, skip_special=skip) == ref.decode(want, skip_special_tokens=skip), (want, skip)
            stream = tok.stream_decoder()
            assert "".join(map(stream.feed, want)) + stream.finish() == ref.decode(want, skip_special_tokens=False)
            compared += 4
    batch = tok.encode_batch(TEXTS, parse_special=True, num_threads=2)
    assert batch == [e.ids for e in ref.encode_batch(TEXTS)]
    compared += len(TEXTS)
    for a, b in PAIRS:
        assert tok.encode(a, pair=b, parse_special=True) == ref.encode(a, b).ids, (a, b)
        compared += 1
    for token, token_id in ref.get_vocab(with_added_tokens=True).items():
        assert tok.id_to_piece(token_id) == ref.id_to_token(token_id), token_id
        assert tok.piece_to_id(token) == ref.token_to_id(token), token
        compared += 2
    assert tok.vocab_size == ref.get_vocab_size(with_added_tokens=True)
    compared += 1
    return compared


@pytest.mark.parametrize("kind", KINDS)
def test_sparse_files_match_tokenizers(kind, tmp_path):
    compared = 0
    for big in BIG_IDS:
        text = sparse_file(kind, big)
        ref = Tokenizer.from_str(text)
        if big < 10**6:                 # the renumbered file is the one tokenizers writes
            assert ref.to_str() == sparse_reference(kind, big).to_str()
        tok = toksmith.load(saved(tmp_path, f"{kind}-{big}.json", text))
        compared += compare_with_reference(tok, ref)
        # the special ids are the file's: "[UNK]" of the model, "<s>"/"</s>" of the template
        assert tok.special_ids.unk == ref.token_to_id("[UNK]") == 1
        assert tok.special_ids.bos == ref.token_to_id("<s>") == big - 1
        assert set(tok.special_ids.as_dict().values()) == {1, big - 1, ref.token_to_id("</s>")}
        assert {t.id for t in tok.special_tokens} >= {big - 1, ref.token_to_id("</s>")}
        assert tok.describe()["special_ids"]["bos"] == big - 1
        compared += 6
    report(f"sparse ids {kind}: {compared} comparisons with tokenizers (ids up to {U32_MAX}), 0 differ")


@pytest.mark.parametrize("kind", KINDS)
def test_the_plain_reader_renumbers_too(kind):
    # read_hf_json of a str takes the plain json.loads path (dict vocabularies), not the
    # native scanner's tables
    from toksmith.hf.pipeline import hf_tokenizer_spec
    from toksmith.hf.reader import read_hf_json
    text = sparse_file(kind, U32_MAX)
    hf = read_hf_json(text, "t.json")
    assert type(hf.model.vocab) is dict
    compared = compare_with_reference(toksmith.Tokenizer(hf_tokenizer_spec(hf)), Tokenizer.from_str(text))
    report(f"sparse ids {kind}, plain reader: {compared} comparisons with tokenizers, 0 differ")


def test_byte_level_bpe_with_spread_ids(tmp_path):
    # GPT-2's byte-level pipeline (toksmith's byte-level engine, not the generic one), every
    # id i of a dense vocabulary written as i * 16,000,000 + 7 (up to about 4.1e9)
    from tokenizers import decoders
    from toksmith._core.byte_unicode import byte_unicode_encode
    chars = [byte_unicode_encode(bytes([b])).decode() for b in range(256)]
    vocab = {c: i for i, c in enumerate(chars)}
    merges = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("Ã", "©")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    dense = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    dense.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    dense.decoder = decoders.ByteLevel()
    dense.add_special_tokens(["<|end|>"])
    obj = json.loads(dense.to_str())
    spread = {i: i * 16_000_000 + 7 for i in range(len(vocab))}
    obj["model"]["vocab"] = {t: spread[i] for t, i in obj["model"]["vocab"].items()}
    # the new added token keeps its id: tokenizers numbers it after the model's token count
    text = json.dumps(obj, ensure_ascii=False)
    ref, tok = Tokenizer.from_str(text), toksmith.load(saved(tmp_path, "t.json", text))
    assert type(tok.engine.model).__name__ == "ByteLevelBpe"
    compared = 0
    for line in ["the theory", "héllo wörld 日本 🎉<|end|>", " the\n\tthe", "<|end|><|end|>x", ""]:
        want = ref.encode(line).ids
        assert tok.encode(line, parse_special=True) == want, line
        assert tok.decode(want) == ref.decode(want, skip_special_tokens=False), line
        assert tok.tokenize(line, parse_special=True) == ref.encode(line).tokens, line
        compared += 3
    report(f"sparse ids, byte-level BPE: {compared} comparisons with tokenizers, 0 differ")


@pytest.mark.parametrize("processor", ["Bert", "Roberta"])
def test_sparse_ids_in_bert_and_roberta_processing(processor, tmp_path):
    compared = 0
    for big in (70_000, U32_MAX):
        text = sparse_file("WordPiece", big, processor)
        assert f'"<s>",{big - 1}' in text.replace(" ", "")          # the cls id the file holds
        compared += compare_with_reference(toksmith.load(saved(tmp_path, f"{big}.json", text)),
                                           Tokenizer.from_str(text))
    report(f"sparse ids {processor}Processing: {compared} comparisons with tokenizers, 0 differ")


def test_a_new_added_token_may_take_a_model_tokens_id(tmp_path):
    # tokenizers numbers a new added token after the model's token count (3 here), which
    # this sparse vocabulary gives "b": both texts then have id 3, and id 3 is "<x>"
    tok = Tokenizer(models.WordLevel(vocab={"a": 0, "[UNK]": 1, "b": 3}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens(["<x>"])
    assert tok.token_to_id("<x>") == tok.token_to_id("b") == 3
    compared = compare_with_reference(toksmith.load(saved(tmp_path, "t.json", tok.to_str())), tok)
    report(f"sparse ids, an added token on a model token's id: {compared} comparisons with tokenizers, 0 differ")


def test_sparse_ids_survive_save_and_pickle(tmp_path):
    ref = Tokenizer.from_str(sparse_file("BPE", 2**31))
    tok = toksmith.load(saved(tmp_path, "t.json", sparse_file("BPE", 2**31)))
    written = tok.save(tmp_path / "out.json")
    reread = Tokenizer.from_file(str(written))          # tokenizers reads the ids toksmith wrote
    compared = compare_with_reference(toksmith.load(written), reread)
    for text in TEXTS:
        assert reread.encode(text).ids == ref.encode(text).ids
        compared += 1
    compared += compare_with_reference(pickle.loads(pickle.dumps(tok)), ref)
    report(f"sparse ids after save/pickle: {compared} comparisons with tokenizers, 0 differ")


@pytest.mark.parametrize("suffix", [".gguf", ".model", ".tiktoken"])
def test_formats_numbering_by_position_refuse_far_sparse_ids(suffix, tmp_path):
    # A few gaps are filled as each format's converter fills them (the cl100k/o200k
    # conversions of tests/parity/test_convert_*tiktoken.py): 2**31 - 6 are too many.
    tok = toksmith.load(saved(tmp_path, "t.json", sparse_file("BPE", 2**31)))
    with pytest.raises(toksmith.UnsupportedConversionError,
                       match=r"ids up to 2147483648, 2147483643 ids below it without a token, the first 3;"):
        tok.save(tmp_path / f"out{suffix}")
    assert not (tmp_path / f"out{suffix}").exists()


def test_an_id_absent_from_the_file_is_named(tmp_path):
    tok = toksmith.load(saved(tmp_path, "t.json", sparse_file("WordLevel", 2**31)))
    for bad in (3, 2**31 + 5, -1, U32_MAX + 1):
        with pytest.raises(toksmith.TokenIdError, match=rf"ids\[1\]: token id {bad} is no token"):
            tok.decode([0, bad])
        with pytest.raises(toksmith.TokenIdError, match=rf"token id {bad} is no token"):
            tok.id_to_piece(bad)
        with pytest.raises(toksmith.TokenIdError, match=rf"token id {bad} is no token"):
            tok.stream_decoder().feed(bad)
    with pytest.raises(TypeError, match="not bool"):
        tok.decode([True])


def test_numpy_ids_of_a_sparse_file(tmp_path):
    import numpy as np
    text = sparse_file("WordLevel", 2**31)
    tok, ref = toksmith.load(saved(tmp_path, "t.json", text)), Tokenizer.from_str(text)
    ids = ref.encode("b a <s>").ids
    for array in (np.array(ids, dtype=np.uint32), np.array(ids, dtype=np.int64)):
        assert tok.decode(array) == ref.decode(ids, skip_special_tokens=False)
        assert tok.decode_bytes(array) == ref.decode(ids, skip_special_tokens=False).encode()
        assert tok.id_to_piece(array[0]) == ref.id_to_token(ids[0])
        stream = tok.stream_decoder()
        assert stream.feed(array) + stream.finish() == ref.decode(ids, skip_special_tokens=False)
    with pytest.raises(TypeError, match="not float"):
        tok.decode(np.array([0.0, 1.0]))


def sparse_json(vocab: dict, added: list[dict] = (), post: dict | None = None) -> str:
    return json.dumps({"version": "1.0", "truncation": None, "padding": None, "added_tokens": list(added),
                       "normalizer": None, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": post,
                       "decoder": None, "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "a"}})


def added(token_id: int, content: str) -> dict:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def template(token_id: int) -> dict:
    return {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                                     {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [token_id], "tokens": ["<s>"]}}}


@pytest.mark.parametrize("text, where", [
    (sparse_json({"a": 0, "b": U32_MAX + 1}), r"\$\.model\.vocab\['b'\]"),
    (sparse_json({"a": 0, "<s>": 1}, [added(U32_MAX + 1, "<s>")]), r"\$\.added_tokens\[0\]\.id"),
    (sparse_json({"a": 0, "<s>": 1}, [added(1, "<s>")], template(U32_MAX + 1)), r"\$\.post_processor"),
])
def test_ids_past_u32_are_refused_by_name(text, where, tmp_path):
    with pytest.raises(Exception):
        Tokenizer.from_str(text)                        # tokenizers refuses them too (u32)
    with pytest.raises(toksmith.ModelFormatError, match=rf"{where}.*{U32_MAX + 1}"):
        toksmith.load(saved(tmp_path, "t.json", text))


def test_the_largest_u32_id_loads_in_a_few_megabytes(tmp_path):
    # Before: a dense table by the largest id (about 60 bytes an id: a bare MemoryError
    # for 4,294,967,295, the out-of-memory killer for 2**31).
    path = saved(tmp_path, "t.json", sparse_json({"a": 0, "b": U32_MAX}))
    out = run_measured(f"""
import toksmith
toksmith.load_embedded()                 # the first load's imports are not the file's cost
before = reset_peak()
tok = toksmith.load({str(path)!r})
print(peak() - before, tok.encode("b a"), tok.vocab_size)
""")
    grown, ids, size = out.split(" ", 1)[0], out.split(" ", 1)[1].rsplit(" ", 1)[0], out.split()[-1]
    assert ids == f"[{U32_MAX}, 0]" and size == "2", out
    assert int(grown) < 16 << 20, f"loading 2 tokens grew the resident memory by {int(grown)} bytes"
    report(f"sparse ids: a 2-token file with id {U32_MAX} loads with {int(grown) / 2**20:.1f} MiB more resident")


def test_a_dense_file_has_no_remap(tmp_path):
    ref = Tokenizer(models.WordLevel(vocab={"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]"))
    tok = toksmith.load(saved(tmp_path, "t.json", ref.to_str()))
    assert tok.sparse_ids is None and tok.spec.sparse_ids is None
    sparse = toksmith.load(saved(tmp_path, "s.json", sparse_reference("WordLevel", 9).to_str()))
    assert sparse.sparse_ids is sparse.spec.sparse_ids is not None
