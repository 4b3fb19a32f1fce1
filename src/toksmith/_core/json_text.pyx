"""The two big values of a BPE tokenizer.json written natively: the vocab object and the
merges list, exactly as `json.dumps(..., ensure_ascii=False, separators=(",", ":"))` and
tokenizers' `to_str()` write them (toksmith.writers.hf_serialize puts them in place).

>>> json_vocab_text([b"a", None, b'"b'])
b'{"a":0,"\\\\"b":2}'
>>> json_merges_text([b"a", b"b", b"ab"], [(0, 1)])
b'[["a","b"]]'
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdio cimport snprintf

from toksmith._core.buffers cimport ByteBuf, bytebuf_append, bytebuf_free, bytebuf_push
from toksmith._core.json_escape cimport json_string_into


cdef bytes _taken(ByteBuf* out):
    cdef bytes text = PyBytes_FromStringAndSize(out.data, out.size)
    bytebuf_free(out)
    return text


cdef int _string(ByteBuf* out, object text) except -1:
    if type(text) is not bytes:
        raise TypeError(f"token texts are bytes, not {type(text).__name__}")
    if json_string_into(out, <const unsigned char*>PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text)) < 0:
        raise MemoryError()
    return 0


def json_vocab_text(list texts):
    """'{"text":id,...}': texts[i] (UTF-8 bytes) with id i, in id order; None: no token
    has that id (tokenizers' OrderedVocabIter skips it)."""
    cdef ByteBuf out
    cdef Py_ssize_t i, written = 0
    cdef char number[24]
    cdef int length
    out.data = NULL
    out.size = 0
    out.cap = 0
    try:
        if bytebuf_push(&out, b'{') < 0:
            raise MemoryError()
        for i in range(len(texts)):
            if texts[i] is None:
                continue
            if written and bytebuf_push(&out, b',') < 0:
                raise MemoryError()
            _string(&out, texts[i])
            length = snprintf(number, sizeof(number), ":%zd", i)
            if bytebuf_append(&out, number, length) < 0:
                raise MemoryError()
            written += 1
        if bytebuf_push(&out, b'}') < 0:
            raise MemoryError()
        return _taken(&out)
    finally:
        bytebuf_free(&out)


def json_merges_text(list texts, merges):
    """'[["left","right"],...]': each merge (left id, right id) as its two texts."""
    cdef ByteBuf out
    cdef Py_ssize_t k = 0
    out.data = NULL
    out.size = 0
    out.cap = 0
    try:
        if bytebuf_push(&out, b'[') < 0:
            raise MemoryError()
        for left, right in merges:
            if bytebuf_append(&out, b',[' if k else b'[', 2 if k else 1) < 0:
                raise MemoryError()
            _string(&out, texts[left])
            if bytebuf_push(&out, b',') < 0:
                raise MemoryError()
            _string(&out, texts[right])
            if bytebuf_push(&out, b']') < 0:
                raise MemoryError()
            k += 1
        if bytebuf_push(&out, b']') < 0:
            raise MemoryError()
        return _taken(&out)
    finally:
        bytebuf_free(&out)
