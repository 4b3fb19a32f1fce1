# Normalizers that replace invalid UTF-8 with U+FFFD, as the byte-level references do
# before they pre-tokenize (see utf8_repair.pyx).
from toksmith._core.normalizer cimport Normalizer


cdef class LlamaCppUtf8Repair(Normalizer):
    cdef readonly bint escape_spaces


cdef class PythonUtf8Repair(Normalizer):
    pass


cdef bytes normalized_bytes(Normalizer normalizer, bytes text)
