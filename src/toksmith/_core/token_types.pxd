# Token types: the one definition the core uses. Values are those of sentencepiece's
# ModelProto.SentencePiece.Type and of GGUF's tokenizer.ggml.token_type, mirrored by
# toksmith.vocab.TokenType (tests/unit/test_token_types.py checks that they agree).
cpdef enum TokenTypeCode:
    TYPE_UNDEFINED = 0
    TYPE_NORMAL = 1
    TYPE_UNKNOWN = 2
    TYPE_CONTROL = 3
    TYPE_USER_DEFINED = 4
    TYPE_UNUSED = 5
    TYPE_BYTE = 6
