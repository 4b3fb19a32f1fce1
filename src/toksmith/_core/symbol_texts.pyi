# Type stub of the internal compiled module symbol_texts.pyx: C-level helpers only, no Python names.
