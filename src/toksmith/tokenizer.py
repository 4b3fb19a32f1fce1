"""`Tokenizer`: the loaded, immutable, thread-safe tokenization pipeline.

>>> import toksmith
>>> tok = toksmith.load_embedded()
>>> tok.decode(tok.encode("Hello, world"))
'Hello, world'
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

from toksmith._core.detokenizer import checked_id
from toksmith._core.engine import Engine, TokenizerCore
from toksmith.models.byte_level import build_byte_level
from toksmith.models.llama_wordpiece import build_llama_wordpiece
from toksmith.models.rwkv import build_rwkv
from toksmith.models.plamo2 import build_plamo2
from toksmith.models.spm_bpe import build_spm_bpe
from toksmith.models.unigram import build_unigram
from toksmith.special_tokens import SpecialToken, special_tokens_of
from toksmith.spec import Algorithm, FileFormat, LoadOptions, ReferenceRules, TokenizerSpec
from toksmith.vocab import SpecialIds, TokenType, Vocab

# The builder of each algorithm's compiled pipeline (models/).
ENGINE_BUILDERS: dict[Algorithm, Callable[[TokenizerSpec], Engine]] = {
    Algorithm.UNIGRAM: build_unigram,
    Algorithm.SPM_BPE: build_spm_bpe,
    Algorithm.BYTE_BPE: build_byte_level,
    Algorithm.WORDPIECE: build_llama_wordpiece,   # a GGUF bert vocabulary (tokenizer.json's: toksmith.hf)
    Algorithm.RWKV: build_rwkv,
    Algorithm.PLAMO2: build_plamo2,
}


def _engine_builder(spec: TokenizerSpec) -> Callable[[TokenizerSpec], Engine]:
    """A tokenizer.json compiles through toksmith.hf (its components pick the stages);
    every other file through its algorithm's builder."""
    if spec.hf is not None:
        from toksmith.hf.pipeline import build_hf_engine
        return build_hf_engine
    return ENGINE_BUILDERS[spec.algorithm]


class Tokenizer(TokenizerCore):
    """A tokenizer compiled from a model file or a `TokenizerSpec`.

    ``Tokenizer(path, rules=None)`` is ``toksmith.load(path, rules=rules)``.
    It holds its compiled pipeline, ``tok.engine`` (an `Engine` whose stages the
    spec's algorithm and rules chose); the hot methods come from the compiled
    `TokenizerCore`, which calls the engine directly (flags are keyword-only):

    - ``encode(text, *, add_special=True, parse_special=False) -> list[int]``
    - ``encode_batch(texts, *, add_special=True, parse_special=False, num_threads=None)``
    - ``decode(ids, *, skip_special=False) -> str``
    - ``stream_decoder(*, skip_special=False) -> StreamDecoder``
    - ``tokenize(text, *, add_special=False, parse_special=False) -> list[str]``

    A tokenizer loaded from a file pickles (and copies) by that file's bytes
    and its load options, so it works in spawned worker processes:

    >>> import pickle, toksmith
    >>> tok = toksmith.load_embedded()
    >>> pickle.loads(pickle.dumps(tok)).encode("Hello") == tok.encode("Hello")
    True
    """

    def __init__(self, source: TokenizerSpec | str | os.PathLike[str], *,
                 rules: ReferenceRules | str | None = None, pre: str | None = None,
                 encoding: str | None = None, pattern: object = None,
                 special_tokens: dict[str, int] | None = None):
        options = LoadOptions.of(pre=pre, encoding=encoding, pattern=pattern, special_tokens=special_tokens)
        spec = _spec_of(source, rules, options)
        self.spec = spec
        # a tokenizer.json with ids that are not 0..n-1: the engine's ids are renumbered
        self._attach_engine(_engine_builder(spec)(spec), spec.sparse_ids)
        self._piece_ids: dict[str, int] | None = None
        self._special_tokens: tuple[SpecialToken, ...] | None = None
        self._pickle_data: bytes | None = None

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, rules: ReferenceRules | str | None = None,
                  pre: str | None = None, encoding: str | None = None, pattern: object = None,
                  special_tokens: dict[str, int] | None = None) -> Tokenizer:
        """The tokenizer in `path` (see `toksmith.load`)."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
        return cls(path, rules=rules, pre=pre, encoding=encoding, pattern=pattern,
                   special_tokens=special_tokens)

    @classmethod
    def _from_source_bytes(cls, data: bytes, file_format: FileFormat, rules: ReferenceRules,
                           source: str, options: LoadOptions = LoadOptions(),
                           special: SpecialIds | None = None) -> "Tokenizer":
        """The tokenizer `__reduce__` describes: `data` read as a `file_format` file
        (`special`: its special ids, where they came from more than that file)."""
        from toksmith.formats import spec_from_bytes
        spec = spec_from_bytes(data, file_format, source, options)
        if rules is not spec.rules:
            spec = dataclasses.replace(spec, rules=rules)
        if special is not None and special != spec.vocab.special:
            spec = dataclasses.replace(spec, vocab=dataclasses.replace(spec.vocab, special=special))
        return cls(spec)

    def __reduce__(self):
        """Pickle (and copy) by the source file's bytes and the load options, never by path.

        The same file always gives the same pickle, so `datasets` can hash it.
        """
        spec = self.spec
        from toksmith.embedded import embedded_name_of
        name = embedded_name_of(spec)
        if name is not None:
            return (_load_embedded, (name,))
        data = spec.source_data
        if data is None and spec.file_format is FileFormat.HF_JSON and spec.hf is not None:
            data = self._equivalent_tokenizer_json()
        if data is None:
            raise TypeError("this tokenizer was built from a TokenizerSpec, not loaded from a file, "
                            "so it has no source bytes to pickle; load it with toksmith.load()")
        args = (type(self), data, spec.file_format, spec.rules, spec.source, spec.load_options)
        if spec.file_format is FileFormat.HF_JSON:
            # A model folder's config files name special ids the tokenizer.json does not hold.
            args += (spec.vocab.special,)
        return (_unpickle_tokenizer, args)

    def _equivalent_tokenizer_json(self) -> bytes:
        """The tokenizer.json bytes of a tokenizer read from several files (a GPT-2 or
        BERT model folder), written once: it pickles by them."""
        if self._pickle_data is None:
            from toksmith.writers.tokenizer_json import write_tokenizer_json
            self._pickle_data = write_tokenizer_json(self.spec)
        return self._pickle_data

    def _encode_pair(self, text, pair, add_special: bool, parse_special: bool) -> list[int]:
        """encode(text, pair=pair): both texts encoded alone, joined by the post-processor.

        Parity: tokenizers Tokenizer::encode of a pair then PostProcessor::process, whose
        layout (hf/post_processing.py) holds without add_special too (only its special ids
        go: "$B:1 [SEP] $A:0" puts the second text first)."""
        if self.spec.hf is None:
            return super()._encode_pair(text, pair, add_special, parse_special)
        from toksmith._core.postprocessor import TemplateLayout
        from toksmith.hf.components import Sequence
        from toksmith.hf.post_processing import layout
        # A single-text layout that repeats the text repeats it without add_special too:
        # the text's own ids are the first of its equal copies.
        post = self.engine.postprocessor
        repeats = post.repeats if isinstance(post, TemplateLayout) else 1
        own: dict[Sequence, list[int]] = {}
        for part, text_of_part in ((Sequence.A, text), (Sequence.B, pair)):
            ids = self.engine.encode(text_of_part, add_special=False, parse_special=parse_special)
            own[part] = ids[:len(ids) // repeats]
        result: list[int] = []
        for item in layout(self.spec.hf, [Sequence.A, Sequence.B], add_special):
            if isinstance(item, Sequence):
                result += own[item]
            else:
                result.append(item)
        return result

    def save(self, path: str | os.PathLike[str], *, format: FileFormat | str | None = None,
             exact: bool = True) -> Path:
        """Write this tokenizer to `path`, as the format its suffix names (.json, .model,
        .gguf, .tiktoken) or `format` (a FileFormat or its value); returns the path.

        The file loads in that format's own reference and tokenizes as this tokenizer does;
        when the format cannot express the pipeline, `UnsupportedConversionError` says what
        is missing and nothing is written. An existing file is replaced whole or not at all.
        `exact=False` writes the closest file where the target would read some text otherwise
        (not where it cannot hold the tokenizer at all), with an `InexactConversionWarning`
        counting what differs on a built-in multilingual sample.

        >>> tok.save("tokenizer.json")   # doctest: +SKIP
        PosixPath('tokenizer.json')
        """
        from toksmith.writers import save
        return save(self.spec, path, format, exact=exact)

    # ---------------------------------------------------------------- vocabulary

    @property
    def vocab(self) -> Vocab:
        """The pieces by the engine's ids: a tokenizer.json whose ids are not 0..n-1 has
        them renumbered 0..n-1 here (`sparse_ids` maps them to the file's)."""
        return self.spec.vocab

    @property
    def vocab_size(self) -> int:
        """The number of tokens. Parity: tokenizers' get_vocab_size() for a tokenizer.json
        whose ids are not 0..n-1 (the largest id may then be far larger)."""
        if self.sparse_ids is not None:
            return self.sparse_ids.token_count
        return len(self.spec.vocab)

    @property
    def special_ids(self) -> SpecialIds:
        if self.sparse_ids is not None:
            return self.sparse_ids.outward_special(self.spec.vocab.special)
        return self.spec.vocab.special

    @property
    def special_tokens(self) -> tuple[SpecialToken, ...]:
        """Control, unknown and user-defined tokens, and when input text is split at them."""
        if self._special_tokens is None:
            tokens = special_tokens_of(self.spec)
            if self.sparse_ids is not None:
                tokens = tuple(dataclasses.replace(t, id=self.sparse_ids.outward_one(t.id)) for t in tokens)
            self._special_tokens = tokens
        return self._special_tokens

    def id_to_piece(self, token_id: int) -> str:
        """The piece text of `token_id` (an int or numpy integer).

        Raises TypeError for a non-integer and `TokenIdError` when out of range.

        >>> tok.id_to_piece(0)     # doctest: +SKIP
        '<unk>'
        """
        if self.sparse_ids is not None:
            return self.spec.vocab.piece(self.sparse_ids.inward_one(token_id, "token_id"))
        return self.spec.vocab.piece(checked_id(token_id, self.vocab_size, "token_id"))

    def piece_to_id(self, piece: str) -> int | None:
        """The id of `piece`, or None when the vocabulary lacks it."""
        if self.sparse_ids is not None:
            core_id = self._core_piece_id(piece)
            if core_id is None:
                # Parity: tokenizers token_to_id: a model token whose id a new added token
                # took too (numbered after the model's token count, which a sparse vocab holds)
                core_id = self.spec.hf.model.vocab.get(piece)
            return self.sparse_ids.outward_one(core_id)
        return self._core_piece_id(piece)

    def _core_piece_id(self, piece: str) -> int | None:
        """The engine's id of `piece` (see piece_to_id)."""
        if self._piece_ids is None:
            ids: dict[str, int] = {}
            vocab = self.spec.vocab
            # A NORMAL/USER_DEFINED/UNUSED piece wins over a reserved one of the
            # same text, as in sentencepiece's PieceToId.
            for i in range(len(vocab) - 1, -1, -1):
                ids.setdefault(vocab.piece(i), i)
            for i in range(len(vocab)):
                if vocab.types[i] in (TokenType.NORMAL, TokenType.USER_DEFINED, TokenType.UNUSED):
                    ids[vocab.piece(i)] = i
            if self.spec.byte_level is not None:
                # Parity: tiktoken Encoding.encode_single_token: every special text names its id,
                # also where two share one (o200k_harmony's 200018) and only one is the piece.
                for text, token_id in self.spec.byte_level.vocab.special_tokens.items():
                    ids.setdefault(text.decode("utf-8"), token_id)
            self._piece_ids = ids
        return self._piece_ids.get(piece)

    def describe(self) -> dict[str, object]:
        """What `toksmith inspect` prints."""
        spec = self.spec
        return {
            "source": spec.source,
            "format": spec.file_format.value,
            "algorithm": spec.algorithm.value,
            "rules": spec.rules.value,
            "vocab_size": self.vocab_size,
            "token_types": spec.vocab.type_counts(),
            "special_ids": self.special_ids.as_dict(),
            "special_tokens": [{"id": t.id, "text": t.text, "kind": t.kind.value,
                                "split": t.split.value, "lstrip": t.lstrip, "rstrip": t.rstrip}
                               for t in self.special_tokens],
            "normalizer": (spec.normalizer.describe() if spec.normalizer is not None
                           else _describe_wordpiece(spec) if spec.wordpiece is not None else None),
            "byte_fallback": spec.byte_fallback,
            "add_bos": spec.add_bos,
            "add_eos": spec.add_eos,
        }

    def __repr__(self) -> str:
        spec = self.spec
        return (f"<toksmith.Tokenizer {spec.algorithm.value} from {spec.file_format.value} "
                f"{os.path.basename(spec.source)!r}, {self.vocab_size} pieces>")


def _describe_wordpiece(spec: TokenizerSpec) -> str:
    """The normalizer of a GGUF bert vocabulary, as `inspect` shows it."""
    options = spec.wordpiece
    return (f"llama.cpp WPM (lowercase={options.lowercase}, strip_accents={options.strip_accents}, "
            f"add_space_prefix={options.add_space_prefix})")


def _spec_of(source: object, rules: object, options: LoadOptions) -> TokenizerSpec:
    """The spec `Tokenizer(source, rules=rules, ...)` compiles: `source` itself, or read from a path."""
    if isinstance(source, TokenizerSpec):
        if options != LoadOptions():
            raise ValueError("load options (pre=, encoding=, ...) apply to a file, not to a TokenizerSpec")
        spec = source
    elif isinstance(source, (str, os.PathLike)):
        from toksmith.formats import read_spec
        spec = read_spec(source, options)
    else:
        raise TypeError(f"Tokenizer() takes a model path (str or os.PathLike) or a TokenizerSpec, "
                        f"not {type(source).__name__}")
    if rules is not None:
        chosen = ReferenceRules.parse(rules)
        if chosen is not spec.rules:
            spec = dataclasses.replace(spec, rules=chosen)
    return spec


def _unpickle_tokenizer(cls: type[Tokenizer], data: bytes, file_format: FileFormat,
                        rules: ReferenceRules, source: str,
                        options: LoadOptions = LoadOptions(), special: SpecialIds | None = None) -> Tokenizer:
    """Rebuild a pickled tokenizer (see `Tokenizer.__reduce__`)."""
    return cls._from_source_bytes(data, file_format, rules, source, options, special)


def _load_embedded(name: str) -> Tokenizer:
    """Rebuild a pickled embedded tokenizer by its name (see `Tokenizer.__reduce__`)."""
    from toksmith.embedded import load_embedded
    return load_embedded(name)
