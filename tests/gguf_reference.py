"""A plain struct-based GGUF metadata reader for tests, independent of toksmith's parser."""
from __future__ import annotations

import struct

SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
           10: "<Q", 11: "<q", 12: "<d"}


def read_metadata(path) -> dict[str, object]:
    data = open(path, "rb").read()
    assert data[:4] == b"GGUF"
    _version, _tensors, n_kv = struct.unpack_from("<IQQ", data, 4)
    pos = 24

    def string():
        nonlocal pos
        (length,) = struct.unpack_from("<Q", data, pos)
        pos += 8 + length
        return data[pos - length:pos]

    def value(kind):
        nonlocal pos
        if kind == 8:
            return string()
        if kind == 9:
            (element, count) = struct.unpack_from("<IQ", data, pos)
            pos += 12
            return [value(element) for _ in range(count)]
        fmt = SCALARS[kind]
        (v,) = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return v

    meta = {}
    for _ in range(n_kv):
        key = string().decode()
        (kind,) = struct.unpack_from("<I", data, pos)
        pos += 4
        meta[key] = value(kind)
    return meta
