"""The core's exceptions and its one mapper from nogil error codes (errors.pxd) to them.

`ModelDataError` is what compiled builders raise for bad vocabulary data (a
duplicate piece, a broken charsmap...): the loaders turn it, and only it, into
a `ModelFormatError` naming the file, so a bug's plain ValueError is never
reported as a bad file.

>>> raise_for_status(0)
>>> raise_for_status(ERROR_CODES["ERR_TOO_LONG"])
Traceback (most recent call last):
ValueError: text too long: more than 2**31 - 2 bytes after normalization
"""


class ModelDataError(ValueError):
    """Tables built from a model file's data are inconsistent (the file is bad, not the code)."""


class CharsMapError(ModelDataError):
    """The precompiled charsmap blob is malformed."""


def raise_for_status(int rc, object text=None):
    """Raise the exception for a negative status `rc` of nogil code (nothing for rc >= 0).

    `text` is the input of the failed call: a lone surrogate in it raises Python's own
    UnicodeEncodeError, which names the position.
    """
    if rc >= 0:
        return
    if rc == ERR_NO_MEMORY:
        raise MemoryError()
    if rc == ERR_CORRUPT_CHARSMAP:
        raise CharsMapError("precompiled charsmap points past its replacement strings")
    if rc == ERR_TOO_LONG:
        raise ValueError("text too long: more than 2**31 - 2 bytes after normalization")
    if rc == ERR_REFERENCE_ABORTS:
        from toksmith.errors import ReferenceAbortsError
        raise ReferenceAbortsError(
            "llama.cpp aborts the process on this text (GGML_ASSERT in llama_vocab::find_bpe_rank: "
            "a pre-token of two or more characters holds a space, as whitespace runs do under "
            "tokenizer.ggml.pre 'whitespace' outside tokenizer.ggml.model 'whitespace'); there is "
            "no reference result to match, so toksmith refuses the text")
    if rc == ERR_UNK_NOT_IN_VOCAB:
        # Parity: tokenizers fails on the same texts (BPE merge_word: UnkTokenOutOfVocabulary;
        # WordPiece: "Missing [UNK] token from the vocabulary"): the file loads, and only a
        # text that needs the unk token fails.
        raise ValueError("the text needs the model's unk token (unk_token), which is not in its "
                         "vocabulary (tokenizers refuses this text too; llama.cpp's WPM would emit the "
                         "id -1)")
    if rc == ERR_NO_UNK_ID:
        # Parity: tokenizers models/unigram/model.rs UnigramError::MissingUnkId.
        raise ValueError("Encountered an unknown token but `unk_id` is missing: the Unigram model "
                         "has no unk_id and the text has a character that is no piece")
    if rc == ERR_NO_TOKEN_MATCHES:
        # Parity: rwkv_tokenizer.py TRIE.find_longest fails (UnboundLocalError) on such a
        # byte; llama.cpp emits token_unk(), which this vocabulary does not have.
        raise ValueError("no token of the vocabulary matches the text at some byte (a byte that "
                         "no token starts with, or that only starts longer tokens), and the "
                         "vocabulary has no unknown token to stand for it")
    if rc == ERR_SURROGATE and isinstance(text, str):
        text.encode("utf-8")   # raises UnicodeEncodeError with the position
    raise RuntimeError(f"internal error {rc}")


# The codes by name, for Python code and tests.
ERROR_CODES = {"ERR_NO_MEMORY": ERR_NO_MEMORY, "ERR_CORRUPT_CHARSMAP": ERR_CORRUPT_CHARSMAP,
               "ERR_TOO_LONG": ERR_TOO_LONG, "ERR_SURROGATE": ERR_SURROGATE,
               "ERR_REFERENCE_ABORTS": ERR_REFERENCE_ABORTS,
               "ERR_UNK_NOT_IN_VOCAB": ERR_UNK_NOT_IN_VOCAB, "ERR_NO_UNK_ID": ERR_NO_UNK_ID,
               "ERR_NO_TOKEN_MATCHES": ERR_NO_TOKEN_MATCHES}
