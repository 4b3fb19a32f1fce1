"""`train_sentencepiece_bpe`: sentencepiece's BPE trainer (spm_train --model_type=bpe).

>>> tok = train_sentencepiece_bpe(["corpus.txt"], 8000)   # doctest: +SKIP
>>> tok.save("m.model"); tok.save("tokenizer.json")       # doctest: +SKIP

The algorithm is sentencepiece 0.2.3's (bpe_model_trainer.cc Trainer::Train): the
sentences are read and normalized and the alphabet chosen as for every sentencepiece
trainer (training/spm_interface), split into words, then pairs of symbols are merged, the
most frequent first (_core/spm_bpe_trainer), until vocab_size - meta pieces - alphabet
pieces are learned; the alphabet follows (most frequent character first). A piece's
score is minus its rank, as sentencepiece writes it.
"""
from __future__ import annotations

from collections.abc import Iterable

from toksmith.training.corpus import corpus_source
from toksmith.training.spm_interface import SpmTrainer, serialize, trained_tokenizer
from toksmith.training.spm_normalization import NormalizationRule
from toksmith.training.spm_options import DEFAULT_UNK_SURFACE, SpmTrainerSpec

MODEL_TYPE_BPE = 2


def train_sentencepiece_bpe(files: object = None, vocab_size: int | None = None, *,
                            texts: Iterable[str] | None = None, character_coverage: float = 0.9995,
                            input_sentence_size: int = 0, shuffle_input_sentence: bool = True,
                            max_sentence_length: int = 4192, max_sentencepiece_length: int = 16,
                            split_by_unicode_script: bool = True, split_by_number: bool = True,
                            split_by_whitespace: bool = True, split_digits: bool = False,
                            pretokenization_delimiter: str = "", treat_whitespace_as_suffix: bool = False,
                            allow_whitespace_only_pieces: bool = False, control_symbols: Iterable[str] = (),
                            user_defined_symbols: Iterable[str] = (), required_chars: str = "",
                            byte_fallback: bool = False, vocabulary_output_piece_score: bool = True,
                            hard_vocab_limit: bool = True, unk_id: int = 0, bos_id: int = 1, eos_id: int = 2,
                            pad_id: int = -1, unk_piece: str = "<unk>", bos_piece: str = "<s>",
                            eos_piece: str = "</s>", pad_piece: str = "<pad>",
                            unk_surface: str = DEFAULT_UNK_SURFACE,
                            normalization_rule_name: NormalizationRule | str = NormalizationRule.NMT_NFKC,
                            add_dummy_prefix: bool = True, remove_extra_whitespaces: bool = True,
                            show_progress: bool | None = None, num_threads: int | None = None):
    """Train a sentencepiece BPE model of `vocab_size` pieces.

    - the corpus: `files` (a path or a list/tuple of paths; UTF-8, one sentence per line)
      or `texts=` (an iterable of str, one sentence each, read as it goes), as
      `train_bpe` takes them; `vocab_size` is required.
    - every other option is spm_train's, with its name and default (those of its BPE
      trainer: the Unigram-only ones are not taken); `num_threads` (default: all cores)
      never changes the result; `show_progress`: tqdm bars on stderr (default: when it is
      a terminal).

    Returns a `toksmith.Tokenizer` of the model: ``tok.save("m.model")`` writes the
    .model sentencepiece loads, ``tok.save("tokenizer.json")`` / ``.gguf`` convert it.
    """
    source = corpus_source(files, texts)
    if vocab_size is None:
        raise TypeError("train_sentencepiece_bpe() needs vocab_size (the number of pieces of the model)")
    spec = SpmTrainerSpec(
        vocab_size=vocab_size, character_coverage=character_coverage, input_sentence_size=input_sentence_size,
        shuffle_input_sentence=shuffle_input_sentence, max_sentence_length=max_sentence_length,
        max_sentencepiece_length=max_sentencepiece_length, split_by_unicode_script=split_by_unicode_script,
        split_by_number=split_by_number, split_by_whitespace=split_by_whitespace, split_digits=split_digits,
        pretokenization_delimiter=pretokenization_delimiter, treat_whitespace_as_suffix=treat_whitespace_as_suffix,
        allow_whitespace_only_pieces=allow_whitespace_only_pieces, control_symbols=control_symbols,
        user_defined_symbols=user_defined_symbols, required_chars=required_chars, byte_fallback=byte_fallback,
        vocabulary_output_piece_score=vocabulary_output_piece_score, hard_vocab_limit=hard_vocab_limit,
        unk_id=unk_id, bos_id=bos_id, eos_id=eos_id, pad_id=pad_id, unk_piece=unk_piece, bos_piece=bos_piece,
        eos_piece=eos_piece, pad_piece=pad_piece, unk_surface=unk_surface,
        normalization_rule_name=normalization_rule_name, add_dummy_prefix=add_dummy_prefix,
        remove_extra_whitespaces=remove_extra_whitespaces)
    return trained_tokenizer(SpmBpeTrainer, spec, source, num_threads, show_progress,
                             "<trained bpe model>")


class SpmBpeTrainer(SpmTrainer):
    """One BPE training run; `train(source)` -> .model bytes."""

    def train(self, source: object) -> bytes:
        """Parity: bpe_model_trainer.cc Trainer::Train."""
        spec = self.spec
        meta, sentences, required = self.load(source)
        words = self.words(sentences)
        del sentences
        # Parity: Train: vocab_size - meta_pieces_.size() - required_chars_.size() merges
        n_merges = spec.vocab_size - len(meta) - len(required)
        # a merge joins two symbols of the words: there are never more merges than bytes
        # (the core sizes its output by n_merges: a vocab_size of 2**31 - 1 is no 8 GB table)
        n_merges = min(n_merges, words.blob_bytes)
        merged = self._merge(words, n_merges)
        del words
        alphabet = [chr(c).encode("utf-8") for c, _ in sorted(required.items(), key=lambda kv: (-kv[1], kv[0]))]
        # Parity: Train: final_pieces_ scored -static_cast<float>(rank)
        pieces = [(text, -float(rank)) for rank, text in enumerate(merged + alphabet)]
        return serialize(pieces, meta, spec, MODEL_TYPE_BPE)

    def _merge(self, words, n_merges: int) -> list[bytes]:
        from toksmith._core.spm_bpe_trainer import bpe_merges
        spec = self.spec
        return self.step("Merging pairs", bpe_merges, words, n_merges, spec.max_sentencepiece_length,
                         spec.split_by_unicode_script, spec.split_by_number, spec.split_by_whitespace,
                         spec.split_digits, spec.treat_whitespace_as_suffix, spec.allow_whitespace_only_pieces,
                         self.threads)
