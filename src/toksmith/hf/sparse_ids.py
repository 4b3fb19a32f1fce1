"""A tokenizer.json whose ids are not 0..n-1: the core numbers its tokens densely, the
`Tokenizer` gives and takes the file's ids.

tokenizers 0.23.3 accepts any u32 as an id (its vocab maps are HashMap<String, u32>), so a
file may number two tokens 0 and 4,294,967,295. toksmith's tables are indexed by id, so
such a file is read with its ids renumbered 0..n-1 in their order (`densify`); the
`SparseIds` kept beside the spec maps them back at the boundary: encode/encode_batch
output, decode/stream-decoder input, id_to_piece/piece_to_id, special ids, and the
tokenizer.json writer (`file_components`). Memory goes by the token count (4 bytes an
id here). A file whose ids are 0..n-1 -- every real model -- gets no `SparseIds` at all.

>>> hf, ids = densify(read_hf_json(data, "t.json"))      # doctest: +SKIP
>>> ids.outward([0, 1]), ids.inward([4294967295])       # doctest: +SKIP
([0, 4294967295], [1])
"""
from __future__ import annotations

import dataclasses
import operator
from array import array
from bisect import bisect_left
from typing import Callable, Iterable

from toksmith._core.detokenizer import StreamDecoder
from toksmith._core.hf_json_sections import TokenTable
from toksmith.errors import TokenIdError
from toksmith.vocab import SpecialIds

from . import components as c


# Gaps a file's ids may have and still be written to GGUF, .model or .tiktoken, a filler token
# each (about 60 bytes while writing): a format numbering tokens by position cannot hold more
# in a file of a sensible size.
MAX_WRITTEN_GAPS = 1 << 20


class SparseIds:
    """The file's id of each core id (ascending: core id i is the file's i-th smallest id)."""

    def __init__(self, file_ids: Iterable[int], token_count: int):
        self.file_ids = array("I", file_ids)          # u32, as tokenizers' ids
        # Parity: tokenizers get_vocab_size(): the distinct token texts of the model and the
        # added tokens; more than the ids where a new added token took a model token's id.
        self.token_count = token_count

    def __len__(self) -> int:
        return len(self.file_ids)

    def __repr__(self) -> str:
        return f"<SparseIds: {len(self)} tokens, file ids {self.file_ids[0]} to {self.file_ids[-1]}>"

    # ------------------------------------------------------------ core -> file

    def outward(self, core_ids: list[int]) -> list[int]:
        """The file's ids of a list of core ids (an encode's output)."""
        return list(map(self.file_ids.__getitem__, core_ids))

    def outward_one(self, core_id: int | None) -> int | None:
        return None if core_id is None else self.file_ids[core_id]

    def first_gap(self) -> int:
        """The smallest id without a token."""
        ids = self.file_ids
        low, high = 0, len(ids)              # ids[i] == i holds for every i < low
        while low < high:
            mid = (low + high) // 2
            if ids[mid] == mid:
                low = mid + 1
            else:
                high = mid
        return low

    def gap_description(self) -> str:
        """Why a format numbering tokens by position cannot hold these ids."""
        largest = self.file_ids[-1]
        return (f"token ids far from 0..n-1 (the file's {len(self)} tokens have ids up to {largest}, "
                f"{largest + 1 - len(self)} ids below it without a token, the first {self.first_gap()}; "
                f"at most max(the token count, {MAX_WRITTEN_GAPS}) are filled): the format numbers "
                "tokens by position; save as a tokenizer.json")

    def gaps_are_few(self) -> bool:
        """The ids without a token below the largest are at most max(the token count,
        MAX_WRITTEN_GAPS), and the largest id fits the core's int32: the file's ids can be
        written to a format that numbers tokens by position, each gap filled."""
        largest = self.file_ids[-1]
        return largest <= 2**31 - 1 and largest + 1 - len(self) <= max(len(self), MAX_WRITTEN_GAPS)

    def outward_special(self, special: SpecialIds) -> SpecialIds:
        return SpecialIds(**{role: self.outward_one(i) for role, i in vars(special).items()})

    # ------------------------------------------------------------ file -> core

    def inward_one(self, file_id: object, name: str = "token_id", position: int = -1) -> int:
        """The core id of one of the file's ids (an int or numpy integer, never a bool);
        TokenIdError naming it where the file has no such id."""
        if type(file_id) is not int:
            where = name if position < 0 else f"{name}[{position}]"
            if isinstance(file_id, bool):
                raise TypeError(f"{where}: token ids are integers, not bool ({file_id!r})")
            try:
                file_id = operator.index(file_id)
            except TypeError:
                raise TypeError(f"{where}: token ids are integers, not {type(file_id).__name__} "
                                f"({file_id!r:.40})") from None
        ids = self.file_ids
        at = bisect_left(ids, file_id) if 0 <= file_id <= 0xFFFFFFFF else len(ids)
        if at == len(ids) or ids[at] != file_id:
            where = name if position < 0 else f"{name}[{position}]"
            raise TokenIdError(f"{where}: token id {file_id} is no token of this tokenizer.json (its {len(ids)} "
                               f"tokens have ids from {ids[0]} to {ids[-1]}, not all of them)")
        return at

    def inward(self, file_ids: object, name: str = "ids") -> object:
        """Core ids of what decode or a stream decoder's feed takes: one id, or an
        iterable / 1-d integer array of ids (anything else is left to the core's checks)."""
        if isinstance(file_ids, int) or getattr(file_ids, "ndim", None) == 0:
            return self.inward_one(file_ids, name)
        if isinstance(file_ids, (str, bytes, bytearray)) or not hasattr(file_ids, "__iter__"):
            return file_ids                       # the core raises its TypeError
        if getattr(file_ids, "ndim", 1) != 1:
            return file_ids
        return [self.inward_one(i, name, k) for k, i in enumerate(file_ids)]

    def stream_decoder(self, stream: StreamDecoder) -> "FileIdStreamDecoder":
        return FileIdStreamDecoder(stream, self)


class FileIdStreamDecoder:
    """A `StreamDecoder` fed the file's ids (Tokenizer.stream_decoder of a sparse file)."""

    def __init__(self, stream: StreamDecoder, sparse: SparseIds):
        self._stream = stream
        self._sparse = sparse

    def feed(self, ids: object) -> str:
        """Text completed by one id or an iterable of ids (see StreamDecoder.feed)."""
        return self._stream.feed(self._sparse.inward(ids))

    def finish(self) -> str:
        return self._stream.finish()

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)          # finished, skip_special, ...

    def __repr__(self) -> str:
        return repr(self._stream)


# ---------------------------------------------------------------------- renumbering

def densify(hf: c.HfTokenizerSpec) -> tuple[c.HfTokenizerSpec, SparseIds | None]:
    """`hf` with ids 0..n-1 and the `SparseIds` giving the file's ids back; `hf` itself
    and None when its ids are already 0..n-1 (a Unigram model's always are)."""
    if _is_dense(hf):
        return hf, None
    ids = set(_model_ids(hf.model))
    ids.update(t.id for t in hf.added_tokens)       # the reader checked the template's ids are among these
    texts = set(hf.model.vocab.keys())
    texts.update(t.content for t in hf.added_tokens)
    sparse = SparseIds(sorted(ids), len(texts))
    core_id = {file_id: i for i, file_id in enumerate(sparse.file_ids)}.__getitem__
    return renumbered(hf, core_id), sparse


def file_components(hf: c.HfTokenizerSpec, sparse: SparseIds) -> c.HfTokenizerSpec:
    """The components with the file's ids again (what the tokenizer.json writer writes)."""
    return renumbered(hf, sparse.file_ids.__getitem__)


def _is_dense(hf: c.HfTokenizerSpec) -> bool:
    """The ids of the model and the added tokens are 0..n-1 (checked without a set of all ids:
    a new added token's id follows the model's, tokenizers' AddedVocabulary::add_tokens)."""
    model = hf.model
    count = len(model.vocab)
    if isinstance(model, c.UnigramModel):
        end = count
    elif isinstance(model.vocab, TokenTable):
        end = model.vocab.max_id + 1
    else:
        end = max(model.vocab.values(), default=-1) + 1
    if end != count:
        return False
    beyond = {t.id for t in hf.added_tokens if t.id >= count}
    return not beyond or max(beyond) + 1 - count == len(beyond)


def _model_ids(model: c.Model) -> Iterable[int]:
    if isinstance(model, c.UnigramModel):
        return range(len(model.vocab))
    if isinstance(model.vocab, TokenTable):
        return model.vocab.id_list()
    return model.vocab.values()


def renumbered(hf: c.HfTokenizerSpec, new_id: Callable[[int], int]) -> c.HfTokenizerSpec:
    """`hf` with every id (model vocab, added tokens, post-processor) replaced by new_id(id)."""
    model = hf.model
    if not isinstance(model, c.UnigramModel):
        vocab = {text: new_id(i) for text, i in model.vocab.items()}
        model = dataclasses.replace(model, vocab=vocab)
    return dataclasses.replace(hf, model=model,
                               added_tokens=tuple(dataclasses.replace(t, id=new_id(t.id)) for t in hf.added_tokens),
                               post_processor=_renumbered_processor(hf.post_processor, new_id))


def _renumbered_processor(processor: c.PostProcessor | None, new_id: Callable[[int], int]) -> c.PostProcessor | None:
    if isinstance(processor, c.TemplateProcessing):
        return dataclasses.replace(processor, special_tokens={name: tuple(map(new_id, ids)) for name, ids
                                                              in processor.special_tokens.items()})
    if isinstance(processor, (c.BertProcessing, c.RobertaProcessing)):
        return dataclasses.replace(processor, sep=(processor.sep[0], new_id(processor.sep[1])),
                                   cls=(processor.cls[0], new_id(processor.cls[1])))
    if isinstance(processor, c.PostProcessorSequence):
        return dataclasses.replace(processor, processors=tuple(_renumbered_processor(p, new_id)
                                                               for p in processor.processors))
    return processor
