# JSON strings as serde_json writes them (tokenizers' to_str()) and Python's
# json.dumps(ensure_ascii=False): the same bytes for any valid UTF-8 text.
from toksmith._core.buffers cimport ByteBuf, bytebuf_append, bytebuf_push, bytebuf_reserve

cdef extern from *:
    """
    static const char TOKSMITH_HEX_DIGITS[] = "0123456789abcdef";
    """
    const char* TOKSMITH_HEX_DIGITS


cdef inline int json_string_into(ByteBuf* out, const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """Append p[:n] (UTF-8) as a quoted JSON string: '"' and '\\' escaped, the control
    characters below 0x20 as \\b \\t \\n \\f \\r or \\u00xx, every other byte as it is
    (serde_json's ESCAPE table; Python's json escapes the same). 0, or -1 (memory)."""
    cdef Py_ssize_t i
    cdef unsigned char c
    cdef char* d
    if bytebuf_reserve(out, 6 * n + 2) < 0:
        return -1
    d = out.data + out.size
    d[0] = b'"'
    d += 1
    for i in range(n):
        c = p[i]
        if c >= 0x20 and c != b'"' and c != b'\\':
            d[0] = <char>c
            d += 1
            continue
        d[0] = b'\\'
        if c == b'"' or c == b'\\':
            d[1] = <char>c
        elif c == 0x08:
            d[1] = b'b'
        elif c == 0x09:
            d[1] = b't'
        elif c == 0x0A:
            d[1] = b'n'
        elif c == 0x0C:
            d[1] = b'f'
        elif c == 0x0D:
            d[1] = b'r'
        else:
            d[1] = b'u'
            d[2] = b'0'
            d[3] = b'0'
            d[4] = TOKSMITH_HEX_DIGITS[c >> 4]
            d[5] = TOKSMITH_HEX_DIGITS[c & 15]
            d += 4
        d += 2
    d[0] = b'"'
    out.size = d + 1 - out.data
    return 0


cdef inline int json_pair_into(ByteBuf* out, bint first, const unsigned char* left, Py_ssize_t left_length,
                               const unsigned char* right, Py_ssize_t right_length) noexcept nogil:
    """Append one merge of a merges list, '["left","right"]', after a ',' unless `first`.
    0, or -1 (memory)."""
    if bytebuf_append(out, b'[' if first else b',[', 1 if first else 2) < 0 \
            or json_string_into(out, left, left_length) < 0 or bytebuf_push(out, b',') < 0 \
            or json_string_into(out, right, right_length) < 0 or bytebuf_push(out, b']') < 0:
        return -1
    return 0
