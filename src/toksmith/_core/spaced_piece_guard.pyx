"""A pre-tokenizer stage that refuses the texts on which llama.cpp aborts the process.

Parity: llama.cpp llama_vocab::find_bpe_rank asserts (GGML_ASSERT, which aborts) that
neither side of a merge candidate holds a ' '. llm_tokenizer_bpe_session::tokenize asks
for the rank of every pair of adjacent characters of a pre-token, so a pre-token of two
or more characters holding a space aborts llama.cpp. Byte-level pieces never hold one
(' ' is mapped to 'Ġ'), nor do those of the pre types that escape spaces (gemma4,
sarvam-moe); the pre type "whitespace" (regex ``\\S+``, raw UTF-8 pieces) does, for every
whitespace run of two or more characters with a space, under any tokenizer model but
"whitespace" (whose session drops whitespace first).

`SpacedPieceGuard` wraps the splitter of such a pipeline: it splits as the inner splitter
does and returns ERR_REFERENCE_ABORTS (a ReferenceAbortsError) for such a pre-token.

>>> guard = SpacedPieceGuard(LlamaSplitter(regexes_for(PreType.WHITESPACE)))   # doctest: +SKIP
>>> guard.split_text(b"a b")        # doctest: +SKIP
[b'a', b' ', b'b']
>>> guard.split_text(b"a  b")       # doctest: +SKIP
ReferenceAbortsError: llama.cpp aborts the process on this text ...
"""
from libc.string cimport memchr

from toksmith._core.buffers cimport IdBuf
from toksmith._core.errors cimport ERR_REFERENCE_ABORTS
from toksmith._core.pretokenizer cimport PreTokenizer, PreTokenizerWork


cdef class SpacedPieceGuard(PreTokenizer):
    """`inner`'s pre-tokens; a pre-token longer than one byte that holds a ' ' is an error."""

    cdef readonly PreTokenizer inner

    def __init__(self, PreTokenizer inner not None):
        self.inner = inner

    cdef int split(self, const unsigned char* s, Py_ssize_t n, PreTokenizerWork* work,
                   IdBuf* ends) noexcept nogil:
        cdef Py_ssize_t first = ends.size, k, start = 0, end
        cdef int rc = self.inner.split(s, n, work, ends)
        if rc < 0:
            return rc
        for k in range(first, ends.size):
            end = ends.data[k]
            # A space is one byte: a longer pre-token holding one has two characters or more.
            if end - start > 1 and memchr(s + start, 32, end - start) != NULL:
                return ERR_REFERENCE_ABORTS
            start = end
        return 0
