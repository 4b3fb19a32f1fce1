# llama.cpp's clean_spaces passes, run as a stream of bytes.
#
# Parity: llama.cpp llama_vocab::impl::detokenize, its three clean_spaces passes.
# llama_detokenize rewrites the whole decoded text of a BPE vocabulary at the end, one
# pass after the other over its bytes:
#
#   pass 1: " ?" " !" " ." " ,"            lose the space      (decided by the next byte)
#   pass 2: " ' "                          becomes "'"         (by the byte after the "'")
#   pass 3: " 's" " 'm" " 're" " 've"      lose the space      (by up to two bytes after it)
#
# Each pass looks at most two bytes ahead, so each runs here as a small state machine that
# holds back only the bytes whose output is still open, and the three are chained: bytes
# pushed into pass 1 come out of pass 3, in order, into a ByteBuf. Fed any split of a text
# and then ended, the output is byte for byte what llama.cpp's passes make of the whole
# text; at most 6 bytes are held at a time, all of them ASCII.
#
#     cdef CleanSpaces cs
#     clean_spaces_start(&cs)
#     clean_spaces_feed(&cs, b"it 's", 5, &out)     # out gets b"it"
#     clean_spaces_end(&cs, &out)                    # out gets b"'s": b"it's"
from libc.string cimport memchr

from toksmith._core.buffers cimport ByteBuf, bytebuf_append, bytebuf_push


cdef struct CleanSpaces:
    bint space1        # pass 1 holds a space (dropped if "?!.," follows)
    int n2             # pass 2 holds " " (1) or " '" (2)
    int n3             # pass 3 holds " " (1), " '" (2) or " '" and then held3 (3)
    char held3         # "r" or "v": the byte after " '" that pass 3 holds


cdef inline void clean_spaces_start(CleanSpaces* cs) noexcept nogil:
    cs.space1 = False
    cs.n2 = 0
    cs.n3 = 0
    cs.held3 = 0


cdef inline bint clean_spaces_idle(const CleanSpaces* cs) noexcept nogil:
    """Nothing is held. When something is, the next byte of the text is ASCII: each held
    byte, and whatever replaces a removed space, is " ", "'" or one of "?!.,"."""
    return not cs.space1 and cs.n2 == 0 and cs.n3 == 0


cdef inline int _pass3(CleanSpaces* cs, char c, ByteBuf* out) noexcept nogil:
    """Parity: the third pass: " 's", " 'm", " 're", " 've" lose the space; " 't", " 'd",
    " 'll", any other byte after the apostrophe, and a contraction cut short by the end of
    the text keep it."""
    cdef char x
    if cs.n3 == 1:                          # " " held
        if c == b"'":
            cs.n3 = 2
            return 0
        cs.n3 = 0
        if bytebuf_push(out, b' ') < 0:
            return -1
    elif cs.n3 == 2:                        # " '" held: c is the byte after the apostrophe
        if c == b's' or c == b'm':
            cs.n3 = 0
            if bytebuf_push(out, b"'") < 0:
                return -1
            return bytebuf_push(out, c)
        if c == b'r' or c == b'v':
            cs.held3 = c
            cs.n3 = 3
            return 0
        cs.n3 = 0
        if bytebuf_append(out, b" '", 2) < 0:
            return -1
    elif cs.n3 == 3:                        # " 'r" or " 'v" held: c is the byte after it
        x = cs.held3
        cs.n3 = 0
        if c == b'e':
            if bytebuf_push(out, b"'") < 0 or bytebuf_push(out, x) < 0:
                return -1
            return bytebuf_push(out, c)
        if bytebuf_append(out, b" '", 2) < 0 or bytebuf_push(out, x) < 0:
            return -1
    # nothing held (c follows a byte that is not a held space)
    if c == b' ':
        cs.n3 = 1
        return 0
    return bytebuf_push(out, c)


cdef inline int _pass2(CleanSpaces* cs, char c, ByteBuf* out) noexcept nogil:
    """Parity: the second pass: " ' " becomes "'". llama.cpp writes NUL over the space it
    skips, so the byte after a match never follows a space: " ' ' " gives "'' "."""
    if cs.n2 == 2:                          # " '" held
        cs.n2 = 0
        if c == b' ':
            return _pass3(cs, b"'", out)    # both spaces go; the state is empty again
        if _pass3(cs, b' ', out) < 0 or _pass3(cs, b"'", out) < 0:
            return -1
    elif cs.n2 == 1:                        # " " held
        if c == b"'":
            cs.n2 = 2
            return 0
        cs.n2 = 0
        if _pass3(cs, b' ', out) < 0:
            return -1
    if c == b' ':
        cs.n2 = 1
        return 0
    return _pass3(cs, c, out)


cdef inline int _pass1(CleanSpaces* cs, char c, ByteBuf* out) noexcept nogil:
    """Parity: the first pass: a space before "?", "!", "." or "," is removed."""
    if cs.space1:
        cs.space1 = False
        if not (c == b'?' or c == b'!' or c == b'.' or c == b',') and _pass2(cs, b' ', out) < 0:
            return -1
    if c == b' ':
        cs.space1 = True
        return 0
    return _pass2(cs, c, out)


cdef inline int _settle(CleanSpaces* cs, ByteBuf* out) noexcept nogil:
    """Release held bytes whose output no later byte can change any more.

    Whatever a pass further up holds (pass 1: " "; pass 2: " " or " '") reaches the next
    pass as " ", "'" or one of "?!.,", so: pass 2's held space, with a space held by pass 1
    after it, is not followed by "'" and stays; pass 3's " '", " 'r" or " 'v", with anything
    held further up, is followed by none of the letters that would remove its space."""
    if cs.space1 and cs.n2 == 1:
        cs.n2 = 0
        if _pass3(cs, b' ', out) < 0:
            return -1
    if (cs.space1 or cs.n2) and cs.n3 >= 2:
        if bytebuf_append(out, b" '", 2) < 0:
            return -1
        if cs.n3 == 3 and bytebuf_push(out, cs.held3) < 0:
            return -1
        cs.n3 = 0
    return 0


cdef inline int clean_spaces_feed(CleanSpaces* cs, const char* data, Py_ssize_t n,
                                  ByteBuf* out) noexcept nogil:
    """Push `data[:n]` through the passes; what is settled (what no later byte can change)
    is appended to `out`. -1 when memory runs out."""
    cdef Py_ssize_t i = 0, j
    cdef const char* space
    while i < n:
        if clean_spaces_idle(cs):
            # nothing held: every byte up to the next space passes all three unchanged
            space = <const char*>memchr(data + i, b' ', <size_t>(n - i))
            j = n if space == NULL else space - data
            if bytebuf_append(out, data + i, j - i) < 0:
                return -1
            i = j
            if i == n:
                break
        if _pass1(cs, data[i], out) < 0:
            return -1
        i += 1
    return _settle(cs, out)


cdef inline int clean_spaces_end(CleanSpaces* cs, ByteBuf* out) noexcept nogil:
    """The end of the text: every held byte is kept (each pass tests i + 1 < total), in order.
    -1 when memory runs out."""
    if cs.space1:
        cs.space1 = False
        if _pass2(cs, b' ', out) < 0:
            return -1
    if cs.n2:
        if _pass3(cs, b' ', out) < 0:
            return -1
        if cs.n2 == 2 and _pass3(cs, b"'", out) < 0:
            return -1
        cs.n2 = 0
    if cs.n3:
        if bytebuf_push(out, b' ') < 0:
            return -1
        if cs.n3 >= 2 and bytebuf_push(out, b"'") < 0:
            return -1
        if cs.n3 == 3 and bytebuf_push(out, cs.held3) < 0:
            return -1
        cs.n3 = 0
    return 0
