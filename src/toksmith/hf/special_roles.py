"""Which ids of a tokenizer.json (or a Hugging Face model folder) are its unk, bos, eos,
pad, sep and mask tokens (`toksmith.SpecialIds`).

A tokenizer.json names few roles itself: the model's unknown token, the special tokens
its post-processor puts around a text, and the padding token. A model folder's
`tokenizer_config.json` and `special_tokens_map.json` name them all; where a folder
names a role it wins, as in transformers' `AutoTokenizer.from_pretrained(folder)`.

SpecialIds has no `cls`: a CLS token is reported as `bos`, as llama.cpp's BERT
vocabularies store it (tokenizer.ggml.bos_token_id), so a BERT tokenizer.json and its
GGUF twin report the same ids.

>>> special_ids_of(read_hf_json(data, "tokenizer.json"), pieces)        # doctest: +SKIP
SpecialIds(unk=100, bos=101, eos=None, pad=0, sep=102, mask=None)
"""
from __future__ import annotations

from pathlib import Path

from toksmith.errors import ModelFormatError, UnsupportedModelError
from toksmith.hf import components as c
from toksmith.vocab import SpecialIds

# The folder files that name special tokens, in the order transformers reads them: a
# role tokenizer_config.json names is not taken from special_tokens_map.json.
FOLDER_ROLE_FILES = ("tokenizer_config.json", "special_tokens_map.json")
# transformers' attribute -> the SpecialIds field it fills.
FOLDER_ROLE_KEYS = {"unk_token": "unk", "bos_token": "bos", "eos_token": "eos", "pad_token": "pad",
                    "sep_token": "sep", "mask_token": "mask", "cls_token": "cls"}


def folder_special_texts(folder: Path) -> dict[str, str]:
    """The special-token texts a model folder's config files name, by role
    ("unk", "bos", "eos", "pad", "sep", "mask", "cls"); {} when it has none."""
    from toksmith.hf.reader import parse_json
    texts: dict[str, str] = {}
    for name in FOLDER_ROLE_FILES:
        file = folder / name
        if not file.is_file():
            continue
        config = parse_json(file.read_bytes(), str(file))
        if not isinstance(config, dict):
            raise ModelFormatError(file, f"$: expected an object; found {type(config).__name__}")
        for key, role in FOLDER_ROLE_KEYS.items():
            value = config.get(key)
            if isinstance(value, dict):      # a serialized AddedToken: {"content": ..., ...}
                value = value.get("content")
            if value is None or role in texts:
                continue
            if not isinstance(value, str):
                raise ModelFormatError(file, f"$.{key}: expected a string or an AddedToken object; "
                                             f"found {value!r}")
            texts[role] = value
    return texts


def special_ids_of(hf: c.HfTokenizerSpec, pieces: list[bytes],
                   named: dict[str, str] | None = None) -> SpecialIds:
    """The special ids of `hf` (`pieces`: each id's text, as the spec holds them),
    `named`: texts by role from the folder's config files (`folder_special_texts`)."""
    roles = _roles_of_file(hf, pieces)
    for role, text in (named or {}).items():
        token_id = _id_of_text(hf, pieces, text)
        if token_id is not None:
            roles[role] = token_id
    cls = roles.pop("cls", None)
    if named and "bos" not in named and cls is not None:
        roles["bos"] = cls
    return SpecialIds(**roles)


def _roles_of_file(hf: c.HfTokenizerSpec, pieces: list[bytes]) -> dict[str, int | None]:
    roles: dict[str, int | None] = {"unk": _unk_id(hf, pieces)}
    roles.update(_template_roles(hf))
    if hf.pad_token is not None:
        # Parity: transformers PreTrainedTokenizerFast.__init__ takes pad_token from the
        # tokenizer's padding settings.
        roles["pad"] = _id_of_text(hf, pieces, hf.pad_token)
    return roles


def _unk_id(hf: c.HfTokenizerSpec, pieces: list[bytes]) -> int | None:
    model = hf.model
    if isinstance(model, c.UnigramModel):
        return model.unk_id
    unk = getattr(model, "unk_token", None)
    return None if unk is None else _id_of_text(hf, pieces, unk)


def _template_roles(hf: c.HfTokenizerSpec) -> dict[str, int]:
    """bos: the first special id before the text; sep: in a [CLS] text [SEP] layout, the id
    after the text that the pair layout also puts between the texts (BERT's; transformers'
    RobertaConverter makes it eos as well); otherwise eos: the last id after the text."""
    from toksmith.hf.post_processing import layout
    if hf.post_processor is None:
        return {}
    try:
        single = layout(hf, [c.Sequence.A], add_special=True)
        pair = layout(hf, [c.Sequence.A, c.Sequence.B], add_special=True)
    except (UnsupportedModelError, ValueError):
        return {}           # no pair template (or one tokenizers cannot apply): single-text roles only
    if c.Sequence.A not in single:
        return {}
    at = single.index(c.Sequence.A)
    lead = [i for i in single[:at] if isinstance(i, int)]
    trail = [i for i in single[at + 1:] if isinstance(i, int)]
    between: list[int] = []
    if c.Sequence.A in pair and c.Sequence.B in pair and pair.index(c.Sequence.A) < pair.index(c.Sequence.B):
        between = [i for i in pair[pair.index(c.Sequence.A) + 1:pair.index(c.Sequence.B)] if isinstance(i, int)]
    roles: dict[str, int] = {}
    if lead:
        roles["bos"] = lead[0]
    if lead and trail and trail[-1] in between:
        roles["sep"] = trail[-1]
        if _is_roberta(hf.post_processor):
            roles["eos"] = trail[-1]
    elif trail:
        roles["eos"] = trail[-1]
    return roles


def post_processor_ids(hf: c.HfTokenizerSpec) -> list[int]:
    """The special ids the post-processor adds to one text or a pair, in order of first use."""
    from toksmith.hf.post_processing import layout
    found: dict[int, None] = {}
    for texts in ([c.Sequence.A], [c.Sequence.A, c.Sequence.B]):
        try:
            items = layout(hf, texts, add_special=True)
        except (UnsupportedModelError, ValueError):
            continue
        found.update((item, None) for item in items if isinstance(item, int))
    return list(found)


def _is_roberta(post: c.PostProcessor) -> bool:
    if isinstance(post, c.PostProcessorSequence):
        return any(_is_roberta(member) for member in post.processors)
    return isinstance(post, c.RobertaProcessing)


def _id_of_text(hf: c.HfTokenizerSpec, pieces: list[bytes], text: str) -> int | None:
    """Parity: tokenizers Tokenizer.token_to_id: an added token first, then the model's."""
    for token in hf.added_tokens:
        if token.content == text:
            return token.id
    try:
        return pieces.index(text.encode("utf-8", "surrogatepass"))
    except ValueError:
        return None
