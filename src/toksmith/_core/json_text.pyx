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
from toksmith._core.json_escape cimport json_pair_into, json_string_into


cdef const unsigned char* _text(object text, Py_ssize_t* length) except NULL:
    """The bytes of one token text (a TypeError for anything else)."""
    if type(text) is not bytes:
        raise TypeError(f"token texts are bytes, not {type(text).__name__}")
    length[0] = PyBytes_GET_SIZE(text)
    return <const unsigned char*>PyBytes_AS_STRING(text)


def json_vocab_text(list texts):
    """'{"text":id,...}': texts[i] (UTF-8 bytes) with id i, in id order; None: no token
    has that id (tokenizers' OrderedVocabIter skips it)."""
    cdef ByteBuf out
    cdef Py_ssize_t i, n, written = 0
    cdef const unsigned char* p
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
            p = _text(texts[i], &n)
            length = snprintf(number, sizeof(number), ":%zd", i)
            if (written and bytebuf_push(&out, b',') < 0) or json_string_into(&out, p, n) < 0 \
                    or bytebuf_append(&out, number, length) < 0:
                raise MemoryError()
            written += 1
        if bytebuf_push(&out, b'}') < 0:
            raise MemoryError()
        return PyBytes_FromStringAndSize(out.data, out.size)
    finally:
        bytebuf_free(&out)


def json_merges_text(list texts, merges):
    """'[["left","right"],...]': each merge (left id, right id) as its two texts."""
    cdef ByteBuf out
    cdef Py_ssize_t k = 0, left_length, right_length
    cdef const unsigned char* left
    cdef const unsigned char* right
    out.data = NULL
    out.size = 0
    out.cap = 0
    try:
        if bytebuf_push(&out, b'[') < 0:
            raise MemoryError()
        for a, b in merges:
            left = _text(texts[a], &left_length)
            right = _text(texts[b], &right_length)
            if json_pair_into(&out, k == 0, left, left_length, right, right_length) < 0:
                raise MemoryError()
            k += 1
        if bytebuf_push(&out, b']') < 0:
            raise MemoryError()
        return PyBytes_FromStringAndSize(out.data, out.size)
    finally:
        bytebuf_free(&out)
