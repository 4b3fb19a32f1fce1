# GPT-2's byte<->unicode map (byte_unicode.pyx).


cdef Py_ssize_t unmap_byte_unicode(const unsigned char* p, Py_ssize_t n, unsigned char* out,
                                   bint take_overlong=*) noexcept nogil


cdef inline int cpt_of_byte(unsigned char b) noexcept nogil:
    """The code point GPT-2's map shows byte b as (the table of bytes_to_unicode, closed form:
    printable Latin-1 bytes are themselves, the 68 others take 256.. in byte order)."""
    if 33 <= b <= 126 or 161 <= b <= 172 or b >= 174:
        return b
    if b <= 32:
        return 256 + b
    if b <= 160:
        return 256 + 33 + (b - 127)
    return 256 + 33 + 34      # 173, the soft hyphen
