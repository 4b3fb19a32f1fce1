# Included by pretok_llama.pyx: ports of llama.cpp's hand-written splitters (unicode.cpp
# unicode_regex_split_custom_*) and toksmith's hand-written equivalents of some of its
# std::regex patterns (JAIS2's whitespace cascade, the o200k-shaped regexes). Each cuts one
# piece (a Span) and appends codepoint end positions.


cdef int split_gpt2(Span* v) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_custom_gpt2
    cdef Py_ssize_t pos = v.ini, k, nws
    cdef uint32_t cpt
    cdef unsigned char f, f2
    while pos < v.end:
        cpt = span_cpt(v, pos)
        f = span_fl(v, pos)
        if contraction_at(v, pos, &k, False):
            if add_token(v, pos + k) < 0:
                return -1
            pos += k
            continue
        f2 = span_fl(v, pos + 1) if cpt == 0x20 else f
        if f2 & F_LETTER:
            pos += (cpt == 0x20)
            while f2 & F_LETTER:
                pos += 1
                f2 = span_fl(v, pos)
            if add_token(v, pos) < 0:
                return -1
            continue
        if f2 & F_NUMBER:
            pos += (cpt == 0x20)
            while f2 & F_NUMBER:
                pos += 1
                f2 = span_fl(v, pos)
            if add_token(v, pos) < 0:
                return -1
            continue
        if not (f2 & (F_SPACE | F_LETTER | F_NUMBER)) and f2:
            pos += (cpt == 0x20)
            while not (f2 & (F_SPACE | F_LETTER | F_NUMBER)) and f2:
                pos += 1
                f2 = span_fl(v, pos)
            if add_token(v, pos) < 0:
                return -1
            continue
        nws = 0
        while span_fl(v, pos + nws) & F_SPACE:
            nws += 1
        if nws > 1 and span_cpt(v, pos + nws) != OUT_OF_RANGE:
            pos += nws - 1
            if add_token(v, pos) < 0:
                return -1
            continue
        if nws > 0:
            pos += nws
            if add_token(v, pos) < 0:
                return -1
            continue
        pos += 1
        if add_token(v, pos) < 0:
            return -1
    return 0


cdef inline int split_whitespace_tail(Span* v, Py_ssize_t* ppos, Py_ssize_t* run_end) noexcept nogil:
    """The shared end of the llama3/qwen2/qwen35/kimi splitters: \\s*[\\r\\n]+|\\s+(?!\\S)|\\s+|<one char>.

    `run_end` (JAIS2 only, else NULL): the end of the newline-free whitespace run `pos`
    is in, kept between calls so that the cascade below scans each run once.
    """
    cdef Py_ssize_t pos = ppos[0], nws = 0, last_nl = 0, m
    cdef uint32_t c2
    if run_end != NULL and pos < run_end[0]:
        nws = run_end[0] - pos   # inside a run scanned before: all whitespace, no newline
    else:
        while span_fl(v, pos + nws) & F_SPACE:
            c2 = span_cpt(v, pos + nws)
            if c2 == 0x0D or c2 == 0x0A:
                last_nl = pos + nws + 1
            nws += 1
    if last_nl > 0:
        pos = last_nl
    elif run_end != NULL and nws > 0:
        # JAIS2: \s{512}(?!\S)|\s{256}(?!\S)|...|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}:
        # \s{m}(?!\S) matches iff the run is longer than m, or exactly m up to the piece's end.
        run_end[0] = pos + nws
        m = 512
        while m >= 1:
            if nws > m or (nws == m and pos + nws == v.end):
                break
            m = 2 if m == 4 else m >> 1
        pos += m if m >= 1 else 1
    elif nws > 1 and span_cpt(v, pos + nws) != OUT_OF_RANGE:
        pos += nws - 1
    elif nws > 0:
        pos += nws
    else:
        pos += 1
    ppos[0] = pos
    return add_token(v, pos)


cdef int split_llama3(Span* v, int max_digits, bint marks, bint jais2) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_custom_llama3 (max_digits 3),
    # unicode_regex_split_custom_qwen2 (max_digits 1), unicode_regex_split_custom_qwen35 (marks);
    # jais2: JAIS2's regex (llama3's, with a cascade of whitespace lengths), std::regex semantics
    cdef Py_ssize_t pos = v.ini, k, ini, run_end = -1
    cdef uint32_t cpt, c2
    cdef unsigned char f, f2
    cdef unsigned char word = F_LETTER | (F_MARK if marks else 0)
    cdef unsigned char not_punct = F_SPACE | F_LETTER | F_NUMBER | (F_MARK if marks else 0)
    while pos < v.end:
        cpt = span_cpt(v, pos)
        f = span_fl(v, pos)
        if contraction_at(v, pos, &k, True):
            if add_token(v, pos + k) < 0:
                return -1
            pos += k
            continue
        if not (cpt == 0x0D or cpt == 0x0A or (f & F_NUMBER)):
            if (f & word) or (span_fl(v, pos + 1) & word):
                pos += 1
                while span_fl(v, pos) & word:
                    pos += 1
                if add_token(v, pos) < 0:
                    return -1
                continue
        if f & F_NUMBER:
            if max_digits == 1:
                pos += 1
                if add_token(v, pos) < 0:
                    return -1
                continue
            ini = pos
            while span_fl(v, pos) & F_NUMBER:
                pos += 1
                if pos - ini >= max_digits:
                    if add_token(v, pos) < 0:
                        return -1
                    ini = pos
            if add_token(v, pos) < 0:
                return -1
            continue
        f2 = span_fl(v, pos + 1) if cpt == 0x20 else f
        if not (f2 & not_punct) and f:
            pos += (cpt == 0x20)
            while not (f2 & not_punct) and f2:
                pos += 1
                f2 = span_fl(v, pos)
            c2 = span_cpt(v, pos)
            while c2 == 0x0D or c2 == 0x0A:
                pos += 1
                c2 = span_cpt(v, pos)
            if add_token(v, pos) < 0:
                return -1
            continue
        if split_whitespace_tail(v, &pos, &run_end if jais2 else NULL) < 0:
            return -1
    return 0


# Parameters of split_cased_words (Stage.param bits).
DEF CW_CASE_SPLIT = 1     # upper = letters but a-z, lower = letters but A-Z (else both = all letters)
DEF CW_MARKS = 2          # \p{M} counts as a letter in the word classes
DEF CW_CONTRACTIONS = 4   # (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])? after a word
DEF CW_THREE_DIGITS = 8   # \p{N}{1,3} (else \p{N})


cdef inline bint cw_class(Span* v, Py_ssize_t pos, int param, bint upper) noexcept nogil:
    cdef unsigned char f = span_fl(v, pos)
    cdef uint32_t c
    if not (f & (F_LETTER | (F_MARK if param & CW_MARKS else 0))):
        return False
    if param & CW_CASE_SPLIT:
        c = span_cpt(v, pos)
        if upper:
            return not (0x61 <= c <= 0x7A)
        return not (0x41 <= c <= 0x5A)
    return True


cdef inline Py_ssize_t cw_run(Span* v, Py_ssize_t pos, int param, bint upper) noexcept nogil:
    while pos < v.end and cw_class(v, pos, param, upper):
        pos += 1
    return pos


cdef inline Py_ssize_t cw_word(Span* v, Py_ssize_t p, int param, bint upper_first) noexcept nogil:
    """End of UP*LO+ (or UP+LO*, upper_first) from p plus the optional contraction, or -1.

    The backtracking worked out (see pretok_tiktoken.o200k_word, same shape): UP* takes
    the longest UP run [p, j); if the char at j is LO, LO+ runs from there; otherwise UP*
    gives back down to the last LO char t in [p, j) and LO+ is [t, t+1).
    """
    cdef Py_ssize_t j = cw_run(v, p, param, True), t, k
    if upper_first:
        if j == p:
            return -1
        t = cw_run(v, j, param, False)
    elif j < v.end and cw_class(v, j, param, False):
        t = cw_run(v, j, param, False)
    else:
        t = j - 1
        while t >= p and not cw_class(v, t, param, False):
            t -= 1
        if t < p:
            return -1
        t += 1
    if (param & CW_CONTRACTIONS) and contraction_at(v, t, &k, True):
        t += k
    return t


cdef int split_cased_words(Span* v, int param) noexcept nogil:
    # The std::regex (collapsed text) semantics of
    #   [^\r\n\p{L}\p{N}]?UP*LO+C?|[^\r\n\p{L}\p{N}]?UP+LO*C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*
    #   |\s*[\r\n]+|\s+(?!\S)|\s+
    # as llama.cpp's GPT4O/MINIMAX_M2 ((?=[\p{L}])([^a-z]) ...), GRANITE_EMB_MULTI (with \p{M}),
    # TEKKEN (no contractions, \p{N}), TINY_AYA and YOUTU ([\p{Lu}..\p{M}] collapse to letters
    # and marks, so UP = LO) write it. Checked against the VM running those regexes.
    cdef Py_ssize_t p = v.ini, r, q, last_nl, e
    cdef uint32_t c0
    cdef unsigned char f0
    cdef bint prefix
    while p < v.end:
        c0 = span_cpt(v, p)
        f0 = span_fl(v, p)
        prefix = not (c0 == 0x0D or c0 == 0x0A) and not (f0 & (F_LETTER | F_NUMBER))
        r = -1
        if prefix:
            r = cw_word(v, p + 1, param, False)
        if r < 0:
            r = cw_word(v, p, param, False)
        if r < 0 and prefix:
            r = cw_word(v, p + 1, param, True)
        if r < 0:
            r = cw_word(v, p, param, True)
        if r >= 0:
            p = r
        elif f0 & F_NUMBER:
            q = p + 1
            if param & CW_THREE_DIGITS:
                while q < v.end and q < p + 3 and (span_fl(v, q) & F_NUMBER):
                    q += 1
            p = q
        else:
            q = p + 1 if (c0 == 0x20 and p + 1 < v.end and not (span_fl(v, p + 1) & (F_SPACE | F_LETTER | F_NUMBER))) else p
            if not (span_fl(v, q) & (F_SPACE | F_LETTER | F_NUMBER)):
                p = q
                while p < v.end and not (span_fl(v, p) & (F_SPACE | F_LETTER | F_NUMBER)):
                    p += 1
                while p < v.end:
                    c0 = span_cpt(v, p)
                    if not (c0 == 0x0D or c0 == 0x0A or c0 == 0x2F):
                        break
                    p += 1
            else:
                r = p
                last_nl = -1
                while r < v.end and (span_fl(v, r) & F_SPACE):
                    c0 = span_cpt(v, r)
                    if c0 == 0x0D or c0 == 0x0A:
                        last_nl = r
                    r += 1
                if last_nl >= 0:
                    p = last_nl + 1
                elif r == v.end:
                    p = r
                elif r - p >= 2:
                    p = r - 1
                else:
                    p = r
        if add_token(v, p) < 0:
            return -1
    return 0


cdef inline bint kimi_letter(Span* v, Py_ssize_t pos) noexcept nogil:
    return (span_fl(v, pos) & F_LETTER) != 0 and not is_han(span_cpt(v, pos))


cdef int split_kimi_k2(Span* v) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_custom_kimi_k2
    cdef Py_ssize_t pos = v.ini, k, ini
    cdef uint32_t cpt, c2
    cdef unsigned char f, f2
    cdef bint lead, has_letters, pattern
    while pos < v.end:
        cpt = span_cpt(v, pos)
        f = span_fl(v, pos)
        if is_han(cpt):
            while is_han(span_cpt(v, pos)):
                pos += 1
            if add_token(v, pos) < 0:
                return -1
            continue
        pattern = ((f & F_LETTER) and not is_han(cpt)) or (
            not (cpt == 0x0D or cpt == 0x0A or (f & (F_LETTER | F_NUMBER))) and kimi_letter(v, pos + 1))
        if pattern:
            lead = False
            if not (cpt == 0x0D or cpt == 0x0A or (f & (F_LETTER | F_NUMBER))):
                lead = True
                pos += 1
            has_letters = False
            while kimi_letter(v, pos):
                has_letters = True
                pos += 1
            if has_letters or (not lead and kimi_letter(v, pos)):
                if not has_letters:
                    pos += 1
                while kimi_letter(v, pos):
                    pos += 1
                if contraction_at(v, pos, &k, True):
                    pos += k
                if add_token(v, pos) < 0:
                    return -1
                continue
            elif lead:
                pos -= 1
        if f & F_NUMBER:
            ini = pos
            while span_fl(v, pos) & F_NUMBER:
                pos += 1
                if pos - ini >= 3:
                    if add_token(v, pos) < 0:
                        return -1
                    ini = pos
            if add_token(v, pos) < 0:
                return -1
            continue
        f2 = span_fl(v, pos + 1) if cpt == 0x20 else f
        if not (f2 & (F_SPACE | F_LETTER | F_NUMBER)) and f2:
            pos += (cpt == 0x20)
            while not (f2 & (F_SPACE | F_LETTER | F_NUMBER)) and f2:
                pos += 1
                f2 = span_fl(v, pos)
            c2 = span_cpt(v, pos)
            while c2 == 0x0D or c2 == 0x0A:
                pos += 1
                c2 = span_cpt(v, pos)
            if add_token(v, pos) < 0:
                return -1
            continue
        if split_whitespace_tail(v, &pos, NULL) < 0:
            return -1
    return 0


cdef int split_digit_groups(Span* v) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_custom_afmoe (also used for tiny_aya's digits)
    cdef Py_ssize_t pos = v.ini, start, count, rem, cur
    while pos < v.end:
        if span_fl(v, pos) & F_NUMBER:
            start = pos
            count = 0
            while (span_fl(v, pos) & F_NUMBER) and pos < v.end:
                count += 1
                pos += 1
            rem = count % 3
            cur = start
            if rem > 0:
                if add_token(v, cur + rem) < 0:
                    return -1
                cur += rem
            while cur < start + count:
                if add_token(v, cur + 3) < 0:
                    return -1
                cur += 3
            continue
        pos += 1
    if v.prev_end < v.end:
        return add_token(v, v.end)
    return 0


cdef int split_newlines(Span* v) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_custom_newlines
    cdef Py_ssize_t pos = v.ini
    cdef bint nl
    while pos < v.end:
        nl = packed_cpt(v.cpts[pos]) == 0x0A
        while pos < v.end and (packed_cpt(v.cpts[pos]) == 0x0A) == nl:
            pos += 1
        if add_token(v, pos) < 0:
            return -1
    return 0


cdef int split_digit_triples(Span* v) noexcept nogil:
    """std::regex's empty matches of (?=(\\d{3})+(?!\\d)): a cut before every position from
    which a multiple of three ASCII digits runs to a non-digit or the end of the piece."""
    cdef Py_ssize_t pos = v.ini, run_end, p
    while pos < v.end:
        if 0x30 <= packed_cpt(v.cpts[pos]) <= 0x39:
            run_end = pos
            while run_end < v.end and 0x30 <= packed_cpt(v.cpts[run_end]) <= 0x39:
                run_end += 1
            p = pos
            while p < run_end:
                if (run_end - p) % 3 == 0 and add_token(v, p) < 0:
                    return -1
                p += 1
            pos = run_end
        else:
            pos += 1
    return add_token(v, v.end)
