"""Whole-vocabulary checks (and upkeep) run at load time, in C so that 250k pieces cost milliseconds.

>>> first_invalid_piece([b"a", b"\\xff"], bytes([1, 1]))
(1, 'is not valid UTF-8')
"""
from libc.stdint cimport uint8_t
from cpython.object cimport PyObject
from libc.string cimport memchr

from toksmith._core.token_types cimport TYPE_BYTE, TYPE_NORMAL, TYPE_UNUSED, TYPE_USER_DEFINED
from toksmith._core.utf8 cimport valid_char_len


def first_invalid_piece(list pieces, const uint8_t[::1] types, bint allow_empty_reserved=False,
                        bint require_utf8=True):
    """(index, reason) of the first piece that is empty, not UTF-8 or of an unknown type; else None.

    Empty CONTROL/UNKNOWN/BYTE pieces pass when `allow_empty_reserved`;
    UTF-8 (and the absence of NUL) is not checked unless `require_utf8`.
    """
    cdef Py_ssize_t i, n = len(pieces), pos, m, length
    cdef bytes piece
    cdef const unsigned char* p
    cdef uint8_t t
    for i in range(n):
        piece = pieces[i]
        t = types[i]
        length = len(piece)
        if t > TYPE_BYTE:
            return i, f"has type {t}, expected 0..6"
        if length == 0:
            if allow_empty_reserved and t != TYPE_NORMAL and t != TYPE_USER_DEFINED and t != TYPE_UNUSED:
                continue
            return i, "is empty"
        if not require_utf8:
            continue
        p = <const unsigned char*>(<char*>piece)
        if memchr(p, 0, length) != NULL:
            return i, "includes a NUL character"
        pos = 0
        while pos < length:
            m = valid_char_len(p + pos, length - pos)
            if m == 0:
                return i, "is not valid UTF-8"
            pos += m
    return None


cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void* op)


def untrack_flat_list(list items):
    """Take a list whose items are all bytes, str, int, float or None out of the cyclic
    garbage collector's sight (True), or leave it (False, an item of another type).

    Such a list can be part of no reference cycle, yet every collection that reaches it
    visits each item: a vocabulary's 200k-piece lists made the collections of one pass
    of encode calls with kept results cost ~20 % of the pass. The list stays a list.

    >>> untrack_flat_list([b"a", None, 1.5]), untrack_flat_list([b"a", []])
    (True, False)
    """
    cdef object item
    for item in items:
        if not (item is None or type(item) is bytes or type(item) is float or type(item) is int
                or type(item) is str):
            return False
    PyObject_GC_UnTrack(<void*>items)
    return True

