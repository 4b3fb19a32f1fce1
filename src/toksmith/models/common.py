"""What every model family shares when a `TokenizerSpec` is compiled: the special-token
splitter, the post-processor, the engine that holds the stages, and the one place
where bad vocabulary data found by the compiled core becomes a `ModelFormatError`.

A family's builder (models/unigram.py, models/spm_bpe.py, ...) picks the classes of
its normalizer, model and decoder by the spec's rules, then calls `build_engine`:

>>> engine = build_engine(spec, normalizer=n, pretokenizer=None, model=m, decoder=d)  # doctest: +SKIP
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from toksmith._core.detokenizer import Decoder, Render
from toksmith._core.engine import Engine
from toksmith._core.errors import ModelDataError
from toksmith._core.model import Model
from toksmith._core.normalizer import Normalizer
from toksmith._core.postprocessor import BosEos, PostProcessor
from toksmith._core.pretokenizer import PreTokenizer
from toksmith._core.specials import SpecialSplitter
from toksmith.errors import ModelFormatError
from toksmith.special_tokens import TokenAttr, build_splitter, special_tokens_of
from toksmith.spec import TokenizerSpec


@contextmanager
def bad_data_names_file(source: str, what: str = "") -> Iterator[None]:
    """Turn a `ModelDataError` raised while compiling tables from `source` into a
    `ModelFormatError` naming the file (and `what` part of it); other errors pass.

    >>> with bad_data_names_file("m.model", "user-defined pieces"):    # doctest: +SKIP
    ...     DoubleArrayTrie.build([b"a", b"a"], [1, 2])
    ModelFormatError: m.model: user-defined pieces: duplicate key b'a'
    """
    try:
        yield
    except ModelDataError as e:
        raise ModelFormatError(source, f"{what}: {e}" if what else str(e)) from None


def id_or_minus_one(token_id: int | None) -> int:
    """The id the compiled core takes for an optional token: -1 for none."""
    return -1 if token_id is None else token_id


def special_or_text_renders(attrs) -> bytes:
    """One `Render` per token of llama.cpp attribute bits `attrs`: CONTROL and UNKNOWN tokens
    shown only with unparse_special, every other token its piece as it is.

    Parity: llama_vocab::impl::token_to_piece for BPE vocabularies (whose cache holds every
    piece made with special=true) and RWKV ones (every token its unescaped bytes)."""
    hidden = int(TokenAttr.CONTROL | TokenAttr.UNKNOWN)
    special_render, text_render = int(Render.RENDER_SPECIAL), int(Render.RENDER_TEXT)
    return bytes([special_render if a & hidden else text_render for a in attrs])


def build_postprocessor(spec: TokenizerSpec) -> PostProcessor:
    """BOS/EOS as the spec says (an id outside the vocabulary is never added)."""
    n = len(spec.vocab)
    special = spec.vocab.special
    bos = id_or_minus_one(special.bos) if spec.add_bos else -1
    eos = id_or_minus_one(special.eos) if spec.add_eos else -1
    return BosEos(bos if 0 <= bos < n else -1, eos if 0 <= eos < n else -1)


def default_splitter(spec: TokenizerSpec) -> SpecialSplitter | None:
    """The special-token splitter of `spec`'s special tokens under its rules (None: nothing to split)."""
    return build_splitter(spec, special_tokens_of(spec))


def build_engine(spec: TokenizerSpec, *, normalizer: Normalizer | None,
                 pretokenizer: PreTokenizer | None, model: Model, decoder: Decoder,
                 splitter: SpecialSplitter | None = None,
                 postprocessor: PostProcessor | None = None, joins_surrogates: bool = False) -> Engine:
    """The compiled pipeline: the spec's special-token splitter and post-processor around
    the normalizer, pre-tokenizer, model and decoder the family's builder chose.

    `splitter`: a family's own splitter stage (e.g. one wrapping `default_splitter(spec)`);
    None: `default_splitter(spec)`. `postprocessor`: a family's own; None: `build_postprocessor(spec)`.
    `joins_surrogates`: how a str's surrogates are read (see `Engine`)."""
    if splitter is None:
        splitter = default_splitter(spec)
    if postprocessor is None:
        postprocessor = build_postprocessor(spec)
    with bad_data_names_file(spec.source):
        return Engine(len(spec.vocab), spec.vocab.types,
                      splitter=splitter,
                      normalizer=normalizer, pretokenizer=pretokenizer, model=model,
                      postprocessor=postprocessor, decoder=decoder, joins_surrogates=joins_surrogates)
