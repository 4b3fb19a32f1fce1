# Error codes returned by nogil code of the core (negative; 0 is success).
# Every stage uses these names; `errors.raise_for_status` turns one into an exception.
cdef enum:
    ERR_NO_MEMORY = -1          # malloc/realloc failed
    ERR_CORRUPT_CHARSMAP = -2   # a charsmap points past its replacement strings
    ERR_TOO_LONG = -3           # a text grew past 2**31 - 2 bytes after normalization
    ERR_SURROGATE = -4          # a str holds a lone surrogate, which UTF-8 cannot encode
    ERR_REFERENCE_ABORTS = -5   # the reference aborts the process on this text (llama.cpp GGML_ASSERT)
    ERR_UNK_NOT_IN_VOCAB = -6   # the text needs the model's unk_token, which its vocabulary lacks
    ERR_NO_UNK_ID = -7          # an HF Unigram model without unk_id met a character that is no piece
    ERR_NO_TOKEN_MATCHES = -8   # RWKV: no token matches the text at a byte, and the vocabulary has no unk token
