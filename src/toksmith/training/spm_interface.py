"""What sentencepiece's trainers share (its TrainerInterface): meta pieces, sentence loading
and normalization, required characters, and the .model they write.

A trainer (training/unigram.py, training/spm_bpe.py) is an `SpmTrainer`::

    meta, sentences, required = self.load(source)    # meta pieces, normalized sentences, alphabet
    words = self.words(sentences)                     # split at whitespace when the spec says so
    ... learn `pieces` ...
    return serialize(pieces, meta, spec, model_type)  # the .model bytes

and `trained_tokenizer(Trainer, spec, source, num_threads, show_progress)` runs it.

Parity: sentencepiece 0.2.3 trainer_interface.cc (InitMetaPieces, LoadSentences,
Serialize) and sentencepiece_trainer.cc (PopulateNormalizerSpec).
"""
from __future__ import annotations

import os
import struct
from collections.abc import Callable

from toksmith._core.normalizer import SentencePieceNormalizer
from toksmith._core.spm_sentences import SpmSentences
from toksmith._core.trie import DoubleArrayTrie
from toksmith._core.wire import encode_piece_messages
from toksmith.gc_pause import paused_gc
from toksmith.training.corpus import CorpusError, corpus_batches, corpus_paths, is_file_list
from toksmith.training.numbers import checked_flag
from toksmith.training.spm_options import SpmTrainerSpec
from toksmith.training.threads import thread_count
from toksmith.vocab import TokenType
from toksmith.writers.protobuf_wire import float_field, int32_field, string_field

BOUNDARY_CHAR = 0x1F        # kPretokenizationBoundaryChar
UNK_CHAR = 0x2585           # kUNKChar

MetaPieces = dict[int, tuple[str, TokenType]]


def f32(value: float) -> float:
    """`value` rounded to a C float (sentencepiece keeps scores and ratios as floats)."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def meta_pieces(spec: SpmTrainerSpec) -> MetaPieces:
    """{id: (piece, type)} of the pieces placed before training: unk/bos/eos/pad at their
    ids, then control and user-defined symbols and the byte pieces at the free ids.

    >>> meta_pieces(SpmTrainerSpec(vocab_size=100, control_symbols=("<sep>",)))[3]
    ('<sep>', <TokenType.CONTROL: 3>)

    Parity: trainer_interface.cc TrainerInterface::InitMetaPieces."""
    meta: MetaPieces = {}
    has_unk = False
    for role in ("unk", "bos", "eos", "pad"):
        token_id, text = getattr(spec, f"{role}_id"), getattr(spec, f"{role}_piece")
        if token_id < 0:
            continue
        if token_id >= spec.vocab_size or token_id in meta or (has_unk and text == spec.unk_piece):
            raise ValueError(f"{role}_id {token_id} ({text!r}) is out of the vocabulary of {spec.vocab_size} "
                             f"or already taken")
        if text == spec.unk_piece:
            has_unk = True
        meta[token_id] = (text, TokenType.UNKNOWN if text == spec.unk_piece else TokenType.CONTROL)
    if not spec.byte_fallback and not has_unk:
        raise ValueError(f"{spec.unk_piece} must be defined (unk_id >= 0) unless byte_fallback is on")
    seen: set[str] = set()
    next_id = 0

    def insert(text: str, kind: TokenType) -> None:
        nonlocal next_id
        if text in seen:
            raise ValueError(f"{text} is already defined. duplicated symbols are not allowed.")
        seen.add(text)
        if text == spec.unk_piece:
            raise ValueError(f"{spec.unk_piece} must not be defined with control_symbols and user_defined_symbols.")
        for role in ("bos", "eos", "pad"):
            if text == getattr(spec, f"{role}_piece") and getattr(spec, f"{role}_id") >= 0:
                token_id = getattr(spec, f"{role}_id")
                meta[token_id] = (meta[token_id][0], kind)
                return
        while next_id in meta:
            next_id += 1
        meta[next_id] = (text, kind)

    for text in spec.control_symbols:
        insert(text, TokenType.CONTROL)
    for text in spec.user_defined_symbols:
        insert(text, TokenType.USER_DEFINED)
    if spec.byte_fallback:
        for b in range(256):
            insert(f"<0x{b:02X}>", TokenType.BYTE)
    return meta


def training_normalizer(spec: SpmTrainerSpec) -> SentencePieceNormalizer:
    """The normalizer training runs: the model's rule and whitespace flags, no user-defined
    symbols kept whole. Parity: normalizer.cc Normalizer(spec, trainer_spec)."""
    norm = spec.normalizer_spec()
    return SentencePieceNormalizer(norm.precompiled_charsmap, add_dummy_prefix=norm.add_dummy_prefix,
                                   remove_extra_whitespaces=norm.remove_extra_whitespaces,
                                   escape_whitespaces=norm.escape_whitespaces,
                                   treat_whitespace_as_suffix=spec.treat_whitespace_as_suffix)


def load_sentences(source: object, spec: SpmTrainerSpec, meta: MetaPieces, threads: int,
                   on_batch: Callable[[int], None] | None = None) -> SpmSentences:
    """The normalized sentences of `source` (files: one sentence per line; texts: one per
    item); `on_batch(n_bytes)` after each batch read. Raises CorpusError when none is left.
    Parity: trainer_interface.cc LoadSentences (skips empty and too long sentences and
    those holding U+2585; meta pieces and the pretokenization delimiter become U+001F)."""
    normalizer = training_normalizer(spec)
    texts = sorted({text.encode("utf-8") for text, _ in meta.values()})
    trie = DoubleArrayTrie.build(texts, list(range(len(texts)))) if texts else None
    delimiter = spec.pretokenization_delimiter.encode("utf-8")
    sample = SentenceSample(spec.input_sentence_size, spec.shuffle_input_sentence)
    sentences = SpmSentences()
    for batch in corpus_batches(source):
        if not sample.active:
            sentences.add(batch.blocks, batch.ends, normalizer, trie, delimiter, spec.max_sentence_length, threads)
        else:
            part = SpmSentences()
            part.add(batch.blocks, batch.ends, normalizer, trie, delimiter, spec.max_sentence_length, threads,
                     keep_empty=True)
            if not sample.add(part):
                break
        if on_batch is not None:
            on_batch(batch.size)
    if sample.active:
        sentences = sample.sentences()
    if len(sentences) == 0:
        raise CorpusError("the corpus is empty: no sentence is left to learn from (empty lines, lines over "
                          f"max_sentence_length={spec.max_sentence_length} bytes and lines holding U+2585 "
                          "are skipped)")
    return sentences


def load_sentences_shown(source: object, spec: SpmTrainerSpec, meta: MetaPieces, threads: int,
                         show_progress: bool) -> SpmSentences:
    """`load_sentences`, with a tqdm bar of the bytes read when `show_progress`."""
    if not show_progress:
        return load_sentences(source, spec, meta, threads)
    from tqdm import tqdm

    from toksmith.training.corpus import corpus_paths, is_file_list
    total = sum(os.path.getsize(p) for p in corpus_paths(source)) if is_file_list(source) else None
    with tqdm(total=total, unit="B", unit_scale=True, desc="Reading sentences") as bar:
        return load_sentences(source, spec, meta, threads, on_batch=bar.update)


class SentenceSample:
    """The `size` sentences training keeps when `input_sentence_size` is set: the first ones,
    or (shuffle) a reservoir sample. Parity: trainer_interface.cc SentenceSelector and
    util.h ReservoirSampler (seeded 12345678; the generator is Python's, so the sample is
    not sentencepiece's own). Sentences are sampled before empty ones are dropped, as
    sentencepiece samples before normalizing."""

    SEED = 12345678

    def __init__(self, size: int, shuffle: bool) -> None:
        import random
        self.size = size
        self.shuffle = shuffle
        self.active = size > 0
        self.kept: list[bytes] = []
        self.total = 0
        self.rng = random.Random(self.SEED)

    def add(self, part: SpmSentences) -> bool:
        """Take the sentences of `part` in order; False once no more are wanted."""
        for i in range(len(part)):
            text = part.get(i)
            if not self.shuffle:
                self.kept.append(text)
                if len(self.kept) >= self.size:
                    return False
                continue
            self.total += 1
            if len(self.kept) < self.size:
                self.kept.append(text)
            else:
                j = self.rng.randrange(0, self.total - 1)   # absl::Uniform(gen, 0, total - 1): [0, total-1)
                if j < self.size:
                    self.kept[j] = text
        return True

    def sentences(self) -> SpmSentences:
        out = SpmSentences()
        for text in self.kept:
            if text:
                out.append(text)
        return out


def required_chars(sentences: SpmSentences, spec: SpmTrainerSpec, meta: MetaPieces) -> dict[int, int]:
    """{code point: count} of the characters every model keeps (the most frequent ones up
    to `character_coverage`, and `required_chars`); every other character of `sentences`
    is replaced by U+2585 in place. Parity: trainer_interface.cc LoadSentences."""
    counts: dict[int, list] = {}
    for c in spec.required_chars:
        if ord(c) == 0:
            continue
        counts[ord(c)] = [True, 0]
    total = 0
    for c, n in sentences.char_counts().items():
        counts.setdefault(c, [False, 0])[1] += n
        total += n
    if total <= 0:
        raise CorpusError("the corpus holds no character to learn from")
    coverage_limit = f32(spec.character_coverage)
    required: dict[int, int] = {}
    accumulated = 0
    # Parity: util.h Sorted(): required characters first, then by count, then code point
    for c, (_, n) in sorted(counts.items(), key=lambda kv: (not kv[1][0], -kv[1][1], kv[0])):
        if f32(accumulated / total) >= coverage_limit:
            break
        accumulated += n
        if c == BOUNDARY_CHAR:
            continue
        required[c] = n
    if UNK_CHAR in required:
        raise CorpusError("U+2585 is reserved by sentencepiece's trainer and cannot be a required character")
    if len(required) + len(meta) > spec.vocab_size:
        raise ValueError(f"vocab_size {spec.vocab_size} is smaller than the required characters and meta pieces "
                         f"({len(required)} characters + {len(meta)} meta pieces = {len(required) + len(meta)}): "
                         f"increase vocab_size or decrease character_coverage")
    bitmap = bytearray(0x110000 // 8)
    for c in required:
        bitmap[c >> 3] |= 1 << (c & 7)
    sentences.replace_rare(bytes(bitmap))
    return required


# TrainerSpec field numbers (sentencepiece_model.proto), written in number order.
TRAINER_FIELDS = (
    (3, "model_type"), (4, "vocab_size"), (10, "character_coverage"), (11, "input_sentence_size"),
    (14, "seed_sentencepiece_size"), (15, "shrinking_factor"), (17, "num_sub_iterations"),
    (18, "max_sentence_length"), (19, "shuffle_input_sentence"), (20, "max_sentencepiece_length"),
    (21, "split_by_unicode_script"), (22, "split_by_whitespace"), (23, "split_by_number"),
    (24, "treat_whitespace_as_suffix"), (25, "split_digits"), (26, "allow_whitespace_only_pieces"),
    (30, "control_symbols"), (31, "user_defined_symbols"), (32, "vocabulary_output_piece_score"),
    (33, "hard_vocab_limit"), (34, "use_all_vocab"), (35, "byte_fallback"), (36, "required_chars"),
    (40, "unk_id"), (41, "bos_id"), (42, "eos_id"), (43, "pad_id"), (44, "unk_surface"),
    (45, "unk_piece"), (46, "bos_piece"), (47, "eos_piece"), (48, "pad_piece"),
    (53, "pretokenization_delimiter"), (54, "seed_sentencepieces_file"),
)
# Written only when set, as sentencepiece does (a field it added after the others).
WRITTEN_WHEN_SET = ("seed_sentencepieces_file",)


def _trainer_spec(spec: SpmTrainerSpec, model_type: int, vocab_size: int) -> bytes:
    """The TrainerSpec message (num_threads left out: the file does not depend on it)."""
    out = []
    for number, name in TRAINER_FIELDS:
        value = {"model_type": model_type, "vocab_size": vocab_size, "use_all_vocab": False}.get(name)
        if value is None:
            value = getattr(spec, name)
        if name in WRITTEN_WHEN_SET and not value:
            continue
        if isinstance(value, tuple):
            out += [string_field(number, v.encode("utf-8")) for v in value]
        elif isinstance(value, str):
            out.append(string_field(number, value.encode("utf-8")))
        elif isinstance(value, float):
            out.append(float_field(number, value))
        else:
            out.append(int32_field(number, int(value)))
    return b"".join(out)


def _normalizer_spec(spec: SpmTrainerSpec) -> bytes:
    norm = spec.normalizer_spec()
    return b"".join([string_field(1, norm.name.encode()), string_field(2, norm.precompiled_charsmap),
                     int32_field(3, norm.add_dummy_prefix), int32_field(4, norm.remove_extra_whitespaces),
                     int32_field(5, norm.escape_whitespaces)])


def serialize(pieces: list[tuple[bytes, float]], meta: MetaPieces, spec: SpmTrainerSpec, model_type: int) -> bytes:
    """The .model bytes: meta pieces at their ids, the learned pieces (text, score) in
    order at the others. Parity: trainer_interface.cc TrainerInterface::Serialize."""
    texts: list[bytes] = []
    scores: list[float] = []
    types = bytearray()
    seen: set[bytes] = set()
    k = 0
    # Parity: Serialize walks every id below vocab_size; past the last meta id and the
    # last piece nothing is left to place, so the walk stops there (vocab_size may be 2**31 - 1)
    last = max(max(meta, default=-1) + 1, len(meta) + len(pieces))
    for token_id in range(min(spec.vocab_size, last)):
        if token_id in meta:
            text, kind = meta[token_id]
            piece, score, type_ = text.encode("utf-8"), 0.0, int(kind)
        elif k < len(pieces):
            piece, score = pieces[k]
            type_ = int(TokenType.NORMAL)
            k += 1
        else:
            continue
        if piece in seen:
            raise ValueError(f"{piece.decode('utf-8', 'replace')} is already defined")
        seen.add(piece)
        texts.append(piece)
        scores.append(score)
        types.append(type_)
    count = len(texts)
    body = [encode_piece_messages(texts, scores, bytes(types))]
    if spec.hard_vocab_limit and count != spec.vocab_size:
        raise ValueError(f"Vocabulary size too high ({spec.vocab_size}). Please set it to a value <= {count} "
                         f"(or hard_vocab_limit=False)")
    vocab_size = spec.vocab_size if spec.hard_vocab_limit else count
    body.append(string_field(2, _trainer_spec(spec, model_type, vocab_size)))
    body.append(string_field(3, _normalizer_spec(spec)))
    return b"".join(body)


class SpmTrainer:
    """One run of a sentencepiece trainer (spec, thread count, progress bars): the steps
    every model type takes; a subclass's `train(source)` returns the .model bytes."""

    def __init__(self, spec: SpmTrainerSpec, threads: int, show_progress: bool) -> None:
        self.spec = spec
        self.threads = threads
        self.show_progress = show_progress

    def load(self, source: object) -> tuple[MetaPieces, SpmSentences, dict[int, int]]:
        """(meta pieces, the normalized sentences, the required characters by count).
        Parity: TrainerInterface::InitMetaPieces, LoadSentences."""
        meta = meta_pieces(self.spec)
        if is_file_list(source):
            corpus_paths(source)            # every file exists, before any work
        sentences = load_sentences_shown(source, self.spec, meta, self.threads, self.show_progress)
        required = required_chars(sentences, self.spec, meta)
        if not required:
            raise CorpusError("no character of the corpus is covered: nothing to learn from")
        return meta, sentences, required

    def words(self, sentences: SpmSentences) -> SpmSentences:
        """The sentences cut at whitespace when split_by_whitespace (Parity: SplitIntoWords)."""
        if not self.spec.split_by_whitespace:
            return sentences
        return sentences.split_words(self.spec.treat_whitespace_as_suffix, self.spec.allow_whitespace_only_pieces)

    def step(self, description: str, fn: Callable, *args):
        """fn(*args), under a one-step progress bar named `description` when showing progress."""
        if not self.show_progress:
            return fn(*args)
        from tqdm import tqdm
        with tqdm(total=1, desc=description, unit="step") as bar:
            result = fn(*args)
            bar.update(1)
        return result


def trained_tokenizer(trainer: type[SpmTrainer], spec: SpmTrainerSpec, source: object,
                      num_threads: int | None, show_progress: bool | None, name: str):
    """Train with `trainer` and load the .model it makes as a toksmith Tokenizer named `name`."""
    import sys

    from toksmith.formats.sentencepiece import parse_sentencepiece
    from toksmith.tokenizer import Tokenizer
    if show_progress is None:
        show_progress = sys.stderr.isatty()
    checked_flag("show_progress", show_progress)
    with paused_gc():       # the pieces are tens of thousands of acyclic containers
        data = trainer(spec, thread_count(num_threads), show_progress).train(source)
        return Tokenizer(parse_sentencepiece(data, name))
