"""Segmentation models. The Unigram Viterbi itself is compiled in toksmith._core.unigram."""
