"""llama.cpp's per-token attributes, derived as llama_vocab::impl::load derives them.

GGUF stores one token type per token; llama.cpp turns it into attribute
bits, then overrides some by token text (end-of-generation and
fill-in-the-middle tokens become CONTROL) and by model name (Phi-3's
special tokens swallow the whitespace after them). Those attributes decide
which texts `parse_special` splits out and how `decode` renders a token.

>>> attrs = token_attributes(pieces, types, meta, special_ids)   # doctest: +SKIP
"""
from __future__ import annotations

from toksmith.special_tokens import TokenAttr, attributes_from_types
from toksmith.vocab import indices_of_type

# Texts llama.cpp marks CONTROL when no metadata key names the token
# (first match only, as llama.cpp stops at the first one it meets).
FIRST_MATCH_CONTROL = {
    "tokenizer.ggml.fim_pre_token_id": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
                                        "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>",
                                        "<|prefix|>"),
    "tokenizer.ggml.fim_suf_token_id": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
                                        "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>",
                                        "<|suffix|>"),
    "tokenizer.ggml.fim_mid_token_id": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>",
                                        "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>",
                                        "<|middle|>"),
    "tokenizer.ggml.fim_pad_token_id": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "tokenizer.ggml.fim_rep_token_id": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
                                        "<reponame>"),
    "tokenizer.ggml.fim_sep_token_id": ("<|file_sep|>",),
}
DEPRECATED_KEYS = {"tokenizer.ggml.fim_pre_token_id": "tokenizer.ggml.prefix_token_id",
                   "tokenizer.ggml.fim_suf_token_id": "tokenizer.ggml.suffix_token_id",
                   "tokenizer.ggml.fim_mid_token_id": "tokenizer.ggml.middle_token_id"}
# End-of-generation texts: always CONTROL.
END_OF_GENERATION = frozenset((
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<｜end▁of▁sentence｜>", "[e~[",
))
ALWAYS_RENDERED = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")   # gpt-oss


def token_attributes(pieces: list[bytes], types: bytes, meta: dict[str, object],
                     special: dict[str, int | None], by_piece: dict[bytes, int] | None = None) -> list[int]:
    """Attribute bits (`TokenAttr`) of every token; `by_piece` ({text: id}) when the caller has it."""
    attrs = attributes_from_types(types)
    if by_piece is None:
        by_piece = dict(zip(pieces, range(len(pieces))))
    ids = _TextIds(by_piece)
    n = len(pieces)
    control, unused = int(TokenAttr.CONTROL), int(TokenAttr.UNUSED)

    def named(key: str) -> int | None:
        value = meta.get(key, meta.get(DEPRECATED_KEYS.get(key, ""), None))
        return value if isinstance(value, int) and 0 <= value < n else None

    eog = set()
    # ids with the CONTROL bit: those of the types that give it (C-speed scans), and below
    # the first-match ones
    controlled = {i for kind in set(types) if attributes_from_types(bytes([kind]))[0] & control
                  for i in indices_of_type(types, kind)}
    for key, texts in FIRST_MATCH_CONTROL.items():
        token = named(key)
        if token is None:
            # llama.cpp walks an unordered map; the lowest id stands in for "first".
            matches = sorted(ids[t] for t in texts if t in ids)
            if matches:
                token = matches[0]
                attrs[token] |= control
                controlled.add(token)
        if token is not None and key.rsplit(".", 1)[1] in ("fim_pad_token_id", "fim_rep_token_id",
                                                           "fim_sep_token_id"):
            eog.add(token)
    for i in controlled:
        # Parity: control tokens whose text says "unused" are marked UNUSED too.
        if b"unused" in pieces[i]:
            attrs[i] |= unused
    for text in END_OF_GENERATION:
        if text in ids:
            eog.add(ids[text])
            attrs[ids[text]] |= control
    for text in ALWAYS_RENDERED:
        if text in ids:
            attrs[ids[text]] = int(TokenAttr.USER_DEFINED)
    for key in ("eos", "eot", "eom"):
        token = special.get(key)
        if token is not None:
            eog.add(token)
    eog_texts = {pieces[i].decode("utf-8", "replace"): i for i in eog}
    if "<|end|>" in eog_texts and (
            {"<|return|>", "<|call|>"} <= eog_texts.keys()
            or ({"<|call|>", "<|calls|>"} & eog_texts.keys() and "<|flush|>" in eog_texts)):
        # o200k_harmony / solar-open: "<|end|>" is not end-of-generation there.
        attrs[eog_texts["<|end|>"]] = int(TokenAttr.USER_DEFINED)
    if "</s>" in eog_texts and {"<|tool_response>", "<|plamo:eos|>"} & eog_texts.keys():
        attrs[eog_texts["</s>"]] = int(TokenAttr.NORMAL)   # gemma4 / plamo
    _name_overrides(attrs, ids, meta)
    return attrs


class _TextIds:
    """Token id by text, looked up as UTF-8 bytes (no decoding of the whole vocabulary)."""

    def __init__(self, by_piece: dict[bytes, int]):
        self._by_piece = by_piece

    def __contains__(self, text: str) -> bool:
        return text.encode() in self._by_piece

    def __getitem__(self, text: str) -> int:
        return self._by_piece[text.encode()]


def _name_overrides(attrs: list[int], ids: _TextIds, meta: dict[str, object]) -> None:
    """llama.cpp's attribute overrides by model, tokenizer and architecture name."""
    def text_of(key: str) -> str:
        value = meta.get(key, "")
        return value if isinstance(value, str) else ""

    model_name = text_of("general.name").lower()
    tokenizer_pre = text_of("tokenizer.ggml.pre")
    architecture = text_of("general.architecture")
    special = int(TokenAttr.CONTROL | TokenAttr.USER_DEFINED | TokenAttr.UNKNOWN)
    lstrip, rstrip = int(TokenAttr.LSTRIP), int(TokenAttr.RSTRIP)
    if (any(s in tokenizer_pre for s in ("jina-v2-de", "jina-v2-es", "jina-v2-code"))
            or any(s in architecture for s in ("nomic-bert-moe", "jina-bert-v3"))):
        if "<mask>" in ids:
            attrs[ids["<mask>"]] |= lstrip
    elif "phi-3" in model_name or "phi3" in model_name:
        for i, attr in enumerate(attrs):
            if attr & special:
                attrs[i] |= rstrip
        if "</s>" in ids:
            attrs[ids["</s>"]] |= rstrip
        for text in ("<unk>", "<s>", "<|endoftext|>"):
            if text in ids:
                attrs[ids[text]] &= ~rstrip
    elif "modern-bert" in model_name:
        if "[MASK]" in ids:
            attrs[ids["[MASK]"]] |= lstrip
