"""SentencePiece-style BPE tokenizer.json files (Metaspace-free "▁" rendering + BPE with byte
fallback over characters) written as .model, against the references on every corpus line.

The jsons: toksmith's own .model -> tokenizer.json (hf_from_sentencepiece) and transformers'
LlamaConverter in its legacy form (Prepend("▁") + Replace(" ", "▁"), the form of Llama 2's
published tokenizer.json; tests/parity/converted_spm.py), of llama2_tokenizer.model,
hf_test_sentencepiece_bpe.model and llama2c_tok512.model. The .model written from each is
loaded by sentencepiece 0.2.3 from its bytes and compared with tokenizers 0.23.3 on the json
(the source's reference): every corpus line, special-token texts spliced into a seeded quarter
of them, parse_special off (tokenizers' encode_special_tokens=True: sentencepiece has no such
flag and reads control texts as text). No json here has a post-processor (asserted), so
add_special adds nothing on either side: one encode per line. Decode: sentencepiece's decode
against tokenizers' decode (skip_special_tokens=False) of tokenizers' ids. Identical texts are
encoded once (ids are a function of the text); every line counts in the totals.

Where the written .model cannot follow the json, each mismatching line must be one of these
(checked line by line; anything else fails). The special tokens of these jsons (<s>, </s>,
special, and in transformers' json written by its decoder as text) become CONTROL pieces:
with parse_special off, tokenizers reads their texts as text, as sentencepiece does.
- PRECOMPILED_GRAPHEMES: tokenizers' Precompiled normalizer and sentencepiece's normalize differ
  on the text (as in test_convert_to_tokenizer_json.py).
- DECODE_LEADING_SPACE_SYMBOL: decode of a text starting with a literal "▁" under
  remove_extra_whitespaces (llama2c_tok512): sentencepiece drops a whole leading "▁" piece and
  then the next piece's "▁", the json's Strip decoder one "▁" (the same limitation as
  test_convert_to_tokenizer_json.py's; the written .model decodes as the original does).

For toksmith's json (the round trip .model -> json -> .model) the written .model is also
compared with the original .model, field by field and in sentencepiece on the same lines.
For transformers' json, sentencepiece on the original .model against tokenizers on the json
is measured and reported (the conversion's own differences: the .model follows the json).
"""
from __future__ import annotations

import json

import pytest
import sentencepiece as spm
import tokenizers

import toksmith
from tests.conftest import first_difference, fixture_file, report
from tests.parity.test_byte_bpe_gguf import spliced
from tests.parity.test_convert_to_sentencepiece import fail_on, model_proto
from toksmith.vocab import TokenType
from toksmith.writers.sentencepiece_model import write_sentencepiece_model

SPACE_SYMBOL = "\u2581"
MODELS = ["spm/llama2_tokenizer.model", "spm/hf_test_sentencepiece_bpe.model", "spm/llama2c_tok512.model"]
HOW = ["toksmith", "transformers-legacy"]


def json_of(fixtures, tmp_path, model: str, how: str):
    """The tokenizer.json of fixture `model` written by toksmith or transformers' LlamaConverter."""
    source = fixture_file(fixtures, model)
    path = tmp_path / f"{how}.json"
    if how == "toksmith":
        toksmith.load(source).save(path)
    else:
        from tests.parity.converted_spm import convert
        convert(str(source), "LlamaConverter", legacy=True).save(str(path))
    return source, path


def explain(sp, ref, text: str) -> str | None:
    """Which documented limitation a mismatching line is (module docstring), or None."""
    if sp.normalize(text) != ref.normalizer.normalize_str(text):
        return "PRECOMPILED_GRAPHEMES"
    return None


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("model", MODELS)
def test_spm_bpe_json_to_sentencepiece(fixtures, corpus_lines, tmp_path, model, how):
    source, path = json_of(fixtures, tmp_path, model, how)
    data = write_sentencepiece_model(toksmith.load(path).spec)
    sp = spm.SentencePieceProcessor(model_proto=data)
    original = spm.SentencePieceProcessor(model_file=str(source))
    ref = tokenizers.Tokenizer.from_file(str(path))
    assert json.loads(path.read_text(encoding="utf-8"))["post_processor"] is None
    ref.encode_special_tokens = True
    specials = [t.content for t in ref.get_added_tokens_decoder().values()][:40]
    all_texts = [text for corpus, lines in corpus_lines.items() for text in spliced(lines, specials, seed=len(corpus))]
    texts = list(dict.fromkeys(all_texts))
    want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=True)]
    got = sp.encode(texts)
    mismatches, explained = [], {}
    for text, g, w in zip(texts, got, want):
        if g != w:
            why = explain(sp, ref, text)
            if why is None:
                mismatches.append(f"{text[:60]!r}: {first_difference(g, w)}")
            explained[why] = explained.get(why, 0) + 1
    remove_extra = model_proto(data).normalizer_spec.remove_extra_whitespaces
    for text, w, decoded in zip(texts, want, ref.decode_batch(want, skip_special_tokens=False)):
        if sp.decode(w) != decoded:
            if remove_extra and text.lstrip(" ").startswith(SPACE_SYMBOL):
                explained["DECODE_LEADING_SPACE_SYMBOL"] = explained.get("DECODE_LEADING_SPACE_SYMBOL", 0) + 1
            else:
                mismatches.append(f"decode {text[:60]!r}: {sp.decode(w)[:60]!r} != {decoded[:60]!r}")
    total = sum(explained.values()) + sum(1 for m in mismatches if m.startswith("decode"))
    report(f"convert {source.name} -> tokenizer.json ({how}) -> sentencepiece: {len(all_texts)} lines, {total} "
           f"mismatches against tokenizers on the json" + (f" (distinct texts; documented: "
                                                            f"{dict(sorted((str(k), v) for k, v in explained.items()))})"
                                                            if total else ""))
    from_original = original.encode(texts)
    if how == "toksmith":
        # the round trip: the written .model against the original, in sentencepiece and field by field
        assert_same_model_fields(source.read_bytes(), data)
        assert [sp.bos_id(), sp.eos_id(), sp.unk_id(), sp.pad_id()] == \
               [original.bos_id(), original.eos_id(), original.unk_id(), original.pad_id()]
        differ = [f"{t[:60]!r}: {first_difference(g, o)}" for t, g, o in zip(texts, got, from_original) if g != o]
        differ += [f"decode {t[:60]!r}" for t, o in zip(texts, from_original) if sp.decode(o) != original.decode(o)]
        report(f"convert {source.name} -> tokenizer.json -> sentencepiece: {len(all_texts)} lines, {len(differ)} "
               f"mismatches against sentencepiece on the original")
        mismatches += differ
    else:
        differ = sum(1 for w, o in zip(want, from_original) if w != o)
        report(f"tokenizers on transformers' json of {source.name} vs sentencepiece on the .model: "
               f"{len(all_texts)} lines, {differ} distinct texts differ (the converted .model follows the json)")
    fail_on(mismatches)


def assert_same_model_fields(before_bytes: bytes, after_bytes: bytes) -> None:
    """Pieces, types, normalizer_spec and trainer fields equal; the scores of the merged pieces
    order them as the original's do (sentencepiece compares nothing else; BPE scores come back
    from the merge ranks, spm_bpe_scores.py, not as the original numbers)."""
    before, after = model_proto(before_bytes), model_proto(after_bytes)
    assert [(p.piece, p.type) for p in after.pieces] == [(p.piece, p.type) for p in before.pieces]
    for name in ("precompiled_charsmap", "add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"):
        assert getattr(after.normalizer_spec, name) == getattr(before.normalizer_spec, name), name
    for name in ("model_type", "byte_fallback", "unk_id", "bos_id", "eos_id", "pad_id", "unk_surface"):
        assert getattr(after.trainer_spec, name) == getattr(before.trainer_spec, name), name
    merged = sorted((p.score, q.score, p.piece) for p, q in zip(after.pieces, before.pieces)
                    if p.type == TokenType.NORMAL and p.score != 0.0)
    inversions = [(a[2], b[2]) for a, b in zip(merged, merged[1:]) if a[1] > b[1]]
    assert not inversions, f"merged pieces ordered unlike the original's scores: {inversions[:5]}"


def test_merge_list_without_a_split_sentencepiece_merges_is_refused(fixtures, tmp_path):
    """Llama 2's json (toksmith's) without the merges forming "▁the": sentencepiece merges any
    two symbols forming a piece, tokenizers only listed pairs, so no .model holding the piece
    "▁the" tokenizes " the" as this json does; the refusal names the unlisted splits."""
    source, path = json_of(fixtures, tmp_path, "spm/llama2_tokenizer.model", "toksmith")
    data = json.loads(path.read_text(encoding="utf-8"))
    merges = data["model"]["merges"]
    data["model"]["merges"] = [m for m in merges if "".join(m if isinstance(m, list) else m.split(" ")) != "▁the"]
    assert len(data["model"]["merges"]) < len(merges)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    ref = tokenizers.Tokenizer.from_file(str(path))
    original = spm.SentencePieceProcessor(model_file=str(source))
    assert ref.encode("the", add_special_tokens=False).ids != original.encode("the")   # the two differ
    target = tmp_path / "out.model"
    with pytest.raises(toksmith.UnsupportedConversionError) as refused:
        toksmith.load(path).save(target)
    message = str(refused.value)
    assert "'▁the' = " in message and "[C1]" in message and "does not name" in message, message
    assert not target.exists()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_non_legacy_metaspace_json_is_refused(fixtures, corpus_lines, tmp_path):
    """transformers' non-legacy Llama json (no normalizer, Metaspace prepend_scheme "first"):
    tokenizers adds no "▁" before a text that already starts with one (a space), sentencepiece's
    add_dummy_prefix always adds it, so no .model tokenizes as the json does: refused. Measured:
    the corpus lines on which the refusal matters (tokenizers gives them no extra "▁")."""
    from tests.parity.converted_spm import convert
    path = tmp_path / "nonlegacy.json"
    convert(str(fixture_file(fixtures, "spm/llama2_tokenizer.model")), "LlamaConverter", legacy=False).save(str(path))
    target = tmp_path / "out.model"
    with pytest.raises(toksmith.UnsupportedConversionError) as refused:
        toksmith.load(path).save(target)
    assert "Metaspace prepend_scheme first" in str(refused.value), str(refused.value)
    assert not target.exists()
    ref = tokenizers.Tokenizer.from_file(str(path))
    lines = [line for corpus in corpus_lines.values() for line in corpus if line.startswith((" ", SPACE_SYMBOL))]
    assert ref.normalizer is None
    no_extra = sum(1 for line in lines
                   if ref.pre_tokenizer.pre_tokenize_str(line)[0][0] == line.replace(" ", SPACE_SYMBOL))
    assert no_extra == len(lines)
    report(f"convert transformers' non-legacy json of llama2_tokenizer.model -> sentencepiece: refused (Metaspace "
           f"prepend_scheme first; {len(lines)} corpus lines start with a space or '▁', where tokenizers adds no "
           f"'▁' and a .model's add_dummy_prefix would)")
