# Type stub of the internal compiled module char_starts.pyx: C-level helpers only, no Python names.
