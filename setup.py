"""Build script for the compiled core (Cython -> C, compiled by the package build)."""
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

CORE_MODULES = ["trie", "normalizer", "unigram", "spm_bpe", "specials", "detokenizer", "engine",
                "wire", "pieces", "text"]

if sys.platform == "win32":
    compile_args, link_args = ["/O2", "/openmp"], []
else:
    compile_args, link_args = ["-O3", "-fopenmp"], ["-fopenmp"]

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
