"""Build script for the compiled core (Cython -> C, compiled by the package build)."""
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

CORE_MODULES = ["trie", "normalizer", "unigram", "spm_bpe", "specials", "detokenizer", "engine",
                "wire", "pieces", "text", "threadpool", "model", "pretokenizer", "errors", "token_types",
                "postprocessor", "pretok_llama", "pretok_tiktoken", "symbol_texts", "byte_unicode", "char_starts",
                "byte_bpe", "rank_file", "utf8_repair", "whitespace_session", "dna_regions", "spaced_piece_guard",
                "hf_added_tokens", "stage_sequences", "hf_decoders", "hf_bpe",
                "hf_normalizers", "hf_pretokenizers", "graphemes", "hf_precompiled",
                "pretok_metaspace", "hf_unigram", "hf_replace", "unicode_normalizers", "bert_pretokenizers",
                "wordpiece", "linear_regex", "hf_regex_stages", "hf_json_sections", "llama_wpm", "rwkv", "plamo2",
                "bpe_trainer", "word_count", "spm_sentences", "suffix_array", "unigram_seeds",
                "unigram_trainer", "byte_stream_trainer", "spm_bpe_trainer", "json_text"]

# Batches run on the core's own pthread pool (_core/threadpool.pyx), not OpenMP:
# OpenMP's pool hangs a forked child.
if sys.platform == "win32":
    compile_args, link_args = ["/O2"], []
else:
    compile_args, link_args = ["-O3", "-pthread"], ["-pthread"]

extensions = [
    Extension(
        f"toksmith._core.{name}",
        [f"src/toksmith/_core/{name}.pyx"],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    )
    for name in CORE_MODULES
]

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )
)
