"""The trained tokenizer: `like`'s tokenizer.json with the new BPE vocabulary and merges.

>>> tok = trained_tokenizer(like_json, "gpt2.json", vocab, merges, options)   # doctest: +SKIP

Parity: tokenizers 0.23.3 `TokenizerImpl::train_from_files`: the trainer replaces the
model's vocab, merges, continuing_subword_prefix and end_of_word_suffix (the model's
other fields stay), then `add_special_tokens(trainer's special tokens)`: a token already
added keeps its id (added_vocabulary.rs `add_tokens`: the added token's id wins over
the model's), a new one takes its id in the new vocabulary.

What is written is that tokenizer as `save` then `from_file` gives it back: loading
(tokenizer/serialization.rs, AddedVocabulary::add_tokens in file order) gives every
added token the model's id of its text, or the next id from the vocabulary's size up;
so `like`'s added tokens move down behind the new vocabulary (GPT-2's <|endoftext|>
50256 becomes 1000 in a 1,000-token vocabulary). tokenizers' own trained tokenizer
keeps 50256 until it is saved and loaded again; toksmith writes only self-consistent
files and follows the saved form.
"""
from __future__ import annotations

import json

from toksmith.formats import spec_from_bytes
from toksmith.spec import FileFormat


def trained_json(like_json: dict, vocab: list[bytes], merges: list[tuple[int, int]], options) -> bytes:
    """The tokenizer.json (UTF-8) of the trained model."""
    from toksmith._core.json_text import json_merges_text, json_vocab_text
    from toksmith.writers.hf_serialize import with_bpe_tables
    ids = {token: i for i, token in enumerate(vocab)}        # a text given twice: its last id
    added_like = like_json.get("added_tokens") or []
    wanted = [t["content"] for t in added_like] + list(options.special_tokens)
    by_text = {}              # the vocabulary's ids of the texts the added tokens need
    for text in wanted:
        token_id = ids.get(text.encode("utf-8", "surrogatepass"))
        if token_id is not None:
            by_text[text] = token_id
    # `like`'s sections in its order, the model last; its vocab and merges are added last
    # (with_bpe_tables), written natively. A text given twice keeps the dict's form (its last id).
    out = {key: value for key, value in like_json.items() if key != "model"}
    model = {key: value for key, value in like_json["model"].items() if key not in ("vocab", "merges")}
    model["continuing_subword_prefix"] = options.continuing_subword_prefix
    model["end_of_word_suffix"] = options.end_of_word_suffix
    added = _added_tokens(added_like, options.special_tokens, by_text)
    out["added_tokens"] = _as_loaded(added, by_text, len(ids))
    out["model"] = model
    compact = {"ensure_ascii": False, "separators": (",", ":")}
    if len(ids) == len(vocab):
        tables = json_vocab_text(vocab).decode("utf-8"), json_merges_text(vocab, merges).decode("utf-8")
    else:
        texts = [t.decode("utf-8", "surrogatepass") for t in vocab]
        tables = (json.dumps({text: i for i, text in enumerate(texts)}, **compact),
                  json.dumps([[texts[a], texts[b]] for a, b in merges], **compact))
    return with_bpe_tables(json.dumps(out, **compact), *tables).encode("utf-8")


def _as_loaded(added: list[dict], vocab: dict[str, int], vocab_size: int) -> list[dict]:
    """The added tokens with the ids loading the file gives them (see the module docstring);
    `vocab`: the vocabulary's id of each added text it holds, `vocab_size`: its distinct texts.
    Parity: added_vocabulary.rs `add_tokens` (a text seen already keeps its first id)."""
    next_id = vocab_size
    ids: dict[str, int] = {}
    out = []
    for token in added:
        content = token["content"]
        if not content:
            continue
        if content not in ids:
            if content in vocab:
                ids[content] = vocab[content]
            else:
                ids[content] = next_id
                next_id += 1
        out.append(dict(token, id=ids[content]))
    by_id = {t["id"]: t for t in out}      # Parity: added_tokens_map_r, one token per id
    return [by_id[i] for i in sorted(by_id)]


def _added_tokens(added: list[dict], specials: tuple[str, ...], vocab: dict[str, int]) -> list[dict]:
    """Parity: AddedVocabulary::add_tokens with the trainer's special tokens (as the
    Python binding makes them: AddedToken(content, special=True), not normalized)."""
    by_content = {t["content"]: t for t in added}
    for content in specials:
        if not content:
            continue
        token = {"id": None, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
                 "normalized": False, "special": True}
        old = by_content.get(content)
        if old is not None:
            token["id"] = old["id"]
            if {k: v for k, v in old.items() if k != "id"} == {k: v for k, v in token.items() if k != "id"}:
                continue
        else:
            token["id"] = vocab[content]
        by_content[content] = token
    return sorted(by_content.values(), key=lambda t: t["id"])


def trained_tokenizer(like_json: dict, source: str, vocab, merges, options):
    """The toksmith Tokenizer of the trained tokenizer.json."""
    from toksmith.tokenizer import Tokenizer
    data = trained_json(like_json, vocab, merges, options)
    return Tokenizer(spec_from_bytes(data, FileFormat.HF_JSON, f"<BPE trained like {source}>"))
