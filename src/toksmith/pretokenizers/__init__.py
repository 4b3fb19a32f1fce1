"""Pre-tokenizers: the tables that pick a native splitter for a llama.cpp pre type or a tiktoken encoding.

The splitters themselves are compiled (toksmith._core.pretok_llama, pretok_tiktoken);
this package holds what chooses and configures them:

- `llama_cpp`: llama.cpp's `tokenizer.ggml.pre` names, their types, regexes and flags.
- `tiktoken`: OpenAI's encodings (pattern, special tokens, how to recognise a rank file).
- `regex_program`: the small parser of llama.cpp's std::regex patterns, for the
  linear-time matcher (toksmith._core.linear_regex) that pretok_llama runs them on.
- `backtrack_program`: that matcher's compiler (shared with tokenizer.json's Oniguruma
  patterns, toksmith.hf.onig_regex).
"""
