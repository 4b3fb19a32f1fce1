"""`train_unigram`: sentencepiece's Unigram trainer (spm_train --model_type=unigram).

>>> tok = train_unigram(["corpus.txt"], 8000)          # doctest: +SKIP
>>> tok.save("m.model"); tok.save("tokenizer.json")    # doctest: +SKIP

The algorithm is sentencepiece 0.2.3's (unigram_model_trainer.cc Trainer::Train): seed
pieces from the frequent substrings of the corpus (suffix array, _core/unigram_seeds),
then rounds of EM (E-step by forward-backward over every word, M-step with the digamma
estimate) and pruning by loss with `shrinking_factor` until 1.1 x vocab_size pieces are
left (_core/unigram_trainer), unreachable pieces dropped, the required characters added
and the best pieces kept. The steps run natively on the core's thread pool; the result
does not depend on the thread count.
"""
from __future__ import annotations

import math
import os
from array import array
from collections.abc import Iterable

from toksmith.training.corpus import CorpusError, corpus_source
from toksmith.training.spm_interface import (BOUNDARY_CHAR, UNK_CHAR, SpmTrainer, f32, serialize,
                                             trained_tokenizer)
from toksmith.training.spm_normalization import NormalizationRule
from toksmith.training.spm_options import DEFAULT_UNK_SURFACE, SpmTrainerSpec

MODEL_TYPE_UNIGRAM = 1
CACHE_BUDGET_PER_BYTE = 8       # bytes of cached lattice nodes per byte of normalized corpus
MIN_SCORE_PENALTY_DELTA = f32(0.0001)    # Parity: FinalizeSentencePieces kMinScorePenaltyDelta (float)


def train_unigram(files: object = None, vocab_size: int | None = None, *,
                  texts: Iterable[str] | None = None, character_coverage: float = 0.9995,
                  input_sentence_size: int = 0, shuffle_input_sentence: bool = True,
                  seed_sentencepiece_size: int = 1000000,
                  seed_sentencepieces_file: str | os.PathLike[str] = "", shrinking_factor: float = 0.75,
                  max_sentence_length: int = 4192, num_sub_iterations: int = 2,
                  max_sentencepiece_length: int = 16, split_by_unicode_script: bool = True,
                  split_by_number: bool = True, split_by_whitespace: bool = True, split_digits: bool = False,
                  pretokenization_delimiter: str = "", treat_whitespace_as_suffix: bool = False,
                  allow_whitespace_only_pieces: bool = False, control_symbols: Iterable[str] = (),
                  user_defined_symbols: Iterable[str] = (), required_chars: str = "",
                  byte_fallback: bool = False, vocabulary_output_piece_score: bool = True,
                  hard_vocab_limit: bool = True, unk_id: int = 0, bos_id: int = 1, eos_id: int = 2,
                  pad_id: int = -1, unk_piece: str = "<unk>", bos_piece: str = "<s>", eos_piece: str = "</s>",
                  pad_piece: str = "<pad>", unk_surface: str = DEFAULT_UNK_SURFACE,
                  normalization_rule_name: NormalizationRule | str = NormalizationRule.NMT_NFKC,
                  add_dummy_prefix: bool = True, remove_extra_whitespaces: bool = True,
                  show_progress: bool | None = None, num_threads: int | None = None):
    """Train a sentencepiece Unigram model of `vocab_size` pieces.

    - the corpus: `files` (a path or a list/tuple of paths; UTF-8, one sentence per line)
      or `texts=` (an iterable of str, one sentence each, read as it goes), as
      `train_bpe` takes them; `vocab_size` is required.
    - `seed_sentencepieces_file`: lines ``piece<TAB>frequency`` to start from instead of
      the corpus's frequent substrings (training only prunes: every piece of the model is
      a character of the corpus or one of these; training/unigram_seed_file.py).
    - every other option is spm_train's, with its name and default
      (`normalization_rule_name`: a `NormalizationRule` or its name); `num_threads`
      (default: all cores) never changes the result; `show_progress`: tqdm bars on
      stderr (default: when it is a terminal).

    Returns a `toksmith.Tokenizer` of the model: ``tok.save("m.model")`` writes the
    .model sentencepiece loads, ``tok.save("tokenizer.json")`` / ``.gguf`` convert it.
    """
    source = corpus_source(files, texts)
    if vocab_size is None:
        raise TypeError("train_unigram() needs vocab_size (the number of pieces of the model)")
    spec = SpmTrainerSpec(
        vocab_size=vocab_size, character_coverage=character_coverage, input_sentence_size=input_sentence_size,
        shuffle_input_sentence=shuffle_input_sentence, seed_sentencepiece_size=seed_sentencepiece_size,
        seed_sentencepieces_file=os.fspath(seed_sentencepieces_file),
        shrinking_factor=shrinking_factor, max_sentence_length=max_sentence_length,
        num_sub_iterations=num_sub_iterations, max_sentencepiece_length=max_sentencepiece_length,
        split_by_unicode_script=split_by_unicode_script, split_by_number=split_by_number,
        split_by_whitespace=split_by_whitespace, split_digits=split_digits,
        pretokenization_delimiter=pretokenization_delimiter, treat_whitespace_as_suffix=treat_whitespace_as_suffix,
        allow_whitespace_only_pieces=allow_whitespace_only_pieces, control_symbols=control_symbols,
        user_defined_symbols=user_defined_symbols, required_chars=required_chars, byte_fallback=byte_fallback,
        vocabulary_output_piece_score=vocabulary_output_piece_score, hard_vocab_limit=hard_vocab_limit,
        unk_id=unk_id, bos_id=bos_id, eos_id=eos_id, pad_id=pad_id, unk_piece=unk_piece, bos_piece=bos_piece,
        eos_piece=eos_piece, pad_piece=pad_piece, unk_surface=unk_surface,
        normalization_rule_name=normalization_rule_name, add_dummy_prefix=add_dummy_prefix,
        remove_extra_whitespaces=remove_extra_whitespaces)
    if spec.seed_sentencepieces_file:
        with open(spec.seed_sentencepieces_file, "rb"):
            pass                # a missing or unreadable seed file fails before any work
    return trained_tokenizer(UnigramTrainer, spec, source, num_threads, show_progress,
                             "<trained unigram model>")


class UnigramTrainer(SpmTrainer):
    """One Unigram training run; `train(source)` -> .model bytes."""

    def train(self, source: object) -> bytes:
        """Parity: unigram_model_trainer.cc Trainer::Train."""
        spec = self.spec
        meta, sentences, required = self.load(source)
        pieces, scores = self.step("Counting substrings", self.seed_pieces, sentences)
        if not pieces:
            raise CorpusError("no seed piece could be made from the corpus")
        corpus_bytes = sentences.blob_bytes
        words = self.words(sentences)
        del sentences
        from toksmith._core.unigram_trainer import UnigramEM
        em = UnigramEM(words, pieces, scores)
        del pieces, scores
        # The words' candidate nodes, kept while they take less than the seed search did.
        em.build_cache(self.threads, CACHE_BUDGET_PER_BYTE * corpus_bytes)
        self._em(em)
        em.prune_unreachable(self.threads)
        final = finalize_pieces(em.pieces(), em.min_score, required, spec, len(meta))
        return serialize(final, meta, spec, MODEL_TYPE_UNIGRAM)

    def seed_pieces(self, sentences) -> tuple[list[bytes], list[float]]:
        """Every character (by count) then the best substrings (or the seed file's pieces),
        scored as log probabilities. Parity: Trainer::MakeSeedSentencePieces,
        MakeSeedSentencePiecesFromCorpus (LoadSeedSentencePiecesFromFile), ToLogProb."""
        spec = self.spec
        counts = sentences.char_counts()
        counts.pop(UNK_CHAR, None)
        counts.pop(BOUNDARY_CHAR, None)
        chars = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        pieces = [chr(c).encode("utf-8") for c, _ in chars]
        scores = list(array("f", [float(n) for _, n in chars]))      # counts as C floats
        if spec.seed_sentencepieces_file:
            # Parity: Trainer::LoadSeedSentencePiecesFromFile (training/unigram_seed_file.py)
            from toksmith.training.unigram_seed_file import read_seed_file
            pieces, scores = read_seed_file(spec.seed_sentencepieces_file, list(zip(pieces, scores)), spec)
        else:
            from toksmith._core.unigram_seeds import seed_substrings
            subs, sub_scores = seed_substrings(
                sentences, spec.seed_sentencepiece_size, spec.vocab_size, spec.max_sentencepiece_length,
                spec.split_by_unicode_script, spec.split_by_number, spec.split_by_whitespace, spec.split_digits,
                spec.treat_whitespace_as_suffix, spec.allow_whitespace_only_pieces, threads=self.threads)
            pieces += subs
            scores += list(sub_scores)
        total = _double_sum(scores)
        logsum = math.log(total)
        return pieces, list(array("f", [math.log(s) - logsum for s in scores]))   # rounded to float

    def _em(self, em) -> None:
        """EM rounds and pruning until 1.1 x vocab_size pieces are left.
        Parity: Trainer::TrainDiscretePruning."""
        spec = self.spec
        desired = int(spec.vocab_size * 1.1)
        bar = None
        if self.show_progress:
            from tqdm import tqdm
            start = em.size
            bar = tqdm(total=max(0, start - desired), desc="EM and pruning", unit="piece")
        try:
            while True:
                for _ in range(spec.num_sub_iterations):
                    em.m_step(em.e_step(self.threads))
                before = em.size
                em.prune(self.threads, desired, spec.shrinking_factor)
                if bar is not None:
                    bar.update(min(bar.total - bar.n, max(0, start - em.size - bar.n)))
                if em.size <= desired or em.size >= before:
                    break       # (sentencepiece would loop for ever where pruning removes nothing)
        finally:
            if bar is not None:
                bar.close()


def _double_sum(values: list[float]) -> float:
    """Left-to-right sum in double precision (as a C++ loop with a double accumulator)."""
    total = 0.0
    for v in values:
        total += v
    return total


def finalize_pieces(pieces: list[tuple[bytes, float]], min_score: float, required: dict[int, int],
                    spec: SpmTrainerSpec, n_meta: int) -> list[tuple[bytes, float]]:
    """The final pieces, best first: the required characters (absent ones scored just
    under the lowest score), then the best other pieces up to vocab_size - meta pieces.
    Parity: unigram_model_trainer.cc Trainer::FinalizeSentencePieces."""
    scores = dict(pieces)
    final: dict[bytes, float] = {}
    penalty = 0.0
    for c, _ in sorted(required.items(), key=lambda kv: (-kv[1], kv[0])):
        text = chr(c).encode("utf-8")
        if text in scores:
            final[text] = scores[text]
        else:
            final[text] = f32(min_score + penalty)
            penalty = f32(penalty + MIN_SCORE_PENALTY_DELTA)
    room = spec.vocab_size - n_meta
    if room <= 0:
        return []
    for text, score in sorted(pieces, key=lambda p: (-p[1], p[0])):
        if text in final:
            continue
        if len(final) == room:
            break
        final[text] = score
    return sorted(final.items(), key=lambda p: (-p[1], p[0]))
