"""HF tokenizers' character normalizers, natively: BertNormalizer, Lowercase, StripAccents
(`HfCharNormalizer`) and the four Unicode normalization forms (`HfUnicodeNormalizer`).

Every per-character fact comes from tables read from tokenizers itself
(tools/gen_hf_unicode_tables.py): which characters BERT's clean_text drops or turns into
spaces, the Chinese characters, the marks, Rust's `char::to_lowercase`, and the
decompositions, combining classes and composition pairs of the crate
unicode-normalization-alignments 0.1.12 (older than Python's unicodedata).

Hot loops: ASCII bytes go through a 128-entry map; a character the normalizer leaves
alone (one flag test) is copied; TEXT_UNCHANGED when nothing changes.

    >>> HfCharNormalizer.bert(lowercase=True).normalize_text("Héllo\\tWörld")
    'hello world'
    >>> HfUnicodeNormalizer("NFC").normalize_text("e\\u0301")
    'é'
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset

from toksmith._core.buffers cimport ByteBuf, bytebuf_append, bytebuf_reserve
from toksmith._core.errors cimport ERR_NO_MEMORY
from toksmith._core.normalizer cimport TEXT_UNCHANGED, Normalizer
from toksmith._core.unicode_hf cimport (HF_BERT_SPACE, HF_CHINESE, HF_DROP, HF_LOWER, HF_MARK, HF_MN,
                                        HF_NFC_INERT, HF_NFD_INERT, HF_NFKC_INERT, HF_NFKD_INERT, utf8_decode,
                                        utf8_put)

include "unicode_hf_flags.pxi"
include "unicode_hf_norm.pxi"

cdef enum:
    S_BASE = 0xAC00
    L_BASE = 0x1100
    V_BASE = 0x1161
    T_BASE = 0x11A7
    L_COUNT = 19
    V_COUNT = 21
    T_COUNT = 28
    N_COUNT = 21 * 28
    S_COUNT = 19 * 21 * 28
    LOCAL_CPS = 32
    ASCII_DROP = 0xFF


# ---------------------------------------------------------------------- code point buffers

cdef struct CpBuf:
    uint32_t* data
    Py_ssize_t size
    Py_ssize_t cap
    uint32_t local[LOCAL_CPS]    # the first LOCAL_CPS code points live here (no malloc)


cdef inline void cpbuf_init(CpBuf* b) noexcept nogil:
    b.data = b.local
    b.size = 0
    b.cap = LOCAL_CPS


cdef inline void cpbuf_free(CpBuf* b) noexcept nogil:
    if b.data != b.local:
        free(b.data)
    b.data = b.local
    b.size = 0
    b.cap = LOCAL_CPS


cdef int cpbuf_grow(CpBuf* b) noexcept nogil:
    cdef Py_ssize_t cap = b.cap * 2
    cdef uint32_t* p
    if b.data == b.local:
        p = <uint32_t*>malloc(cap * sizeof(uint32_t))
        if p != NULL:
            memcpy(p, b.local, b.size * sizeof(uint32_t))
    else:
        p = <uint32_t*>realloc(b.data, cap * sizeof(uint32_t))
    if p == NULL:
        return ERR_NO_MEMORY
    b.data = p
    b.cap = cap
    return 0


cdef inline int cpbuf_push(CpBuf* b, uint32_t c) noexcept nogil:
    if b.size == b.cap and cpbuf_grow(b) < 0:
        return ERR_NO_MEMORY
    b.data[b.size] = c
    b.size += 1
    return 0


cdef int sort_by_class(CpBuf* b) noexcept nogil:
    """Stable sort of b by canonical combining class (Rust's sort_by_key is stable):
    insertion sort for short runs, a counting sort (linear) for long ones."""
    cdef Py_ssize_t i, j, n = b.size
    cdef uint32_t c, k
    cdef uint32_t* tmp
    cdef Py_ssize_t counts[257]
    if n < 2:
        return 0
    if n <= 48:
        for i in range(1, n):
            c = b.data[i]
            k = hf_ccc(c)
            j = i
            while j > 0 and hf_ccc(b.data[j - 1]) > k:
                b.data[j] = b.data[j - 1]
                j -= 1
            b.data[j] = c
        return 0
    tmp = <uint32_t*>malloc(n * sizeof(uint32_t))
    if tmp == NULL:
        return ERR_NO_MEMORY
    memset(counts, 0, sizeof(counts))
    for i in range(n):
        counts[hf_ccc(b.data[i]) + 1] += 1
    for i in range(1, 257):
        counts[i] += counts[i - 1]
    for i in range(n):
        k = hf_ccc(b.data[i])
        tmp[counts[k]] = b.data[i]
        counts[k] += 1
    memcpy(b.data, tmp, n * sizeof(uint32_t))
    free(tmp)
    return 0


# ---------------------------------------------------------------------- emitting

cdef inline int emit_char(ByteBuf* out, uint32_t c, bint lower) noexcept nogil:
    """Append c (lowercased as Rust's char::to_lowercase when `lower`) as UTF-8."""
    cdef int32_t delta
    cdef const uint32_t* multi
    cdef uint32_t k
    if out.cap - out.size < 16 and bytebuf_reserve(out, 16) < 0:
        return ERR_NO_MEMORY
    if lower and (hf_flags(c) & HF_LOWER):
        delta = hf_lower_delta(c)
        if delta == HF_LOWER_MULTI:
            multi = hf_lower_multi(c)
            for k in range(multi[0]):
                out.size += utf8_put(out.data + out.size, multi[1 + k])
            return 0
        c = <uint32_t>(<int32_t>c + delta)
    out.size += utf8_put(out.data + out.size, c)
    return 0


# ---------------------------------------------------------------------- decompose, reorder, compose

cdef struct UniMachine:
    # Parity: unicode-normalization(-alignments) Decompositions (decompose, then stable sort
    # of each run of non-starters by combining class) feeding Recompositions (compose).
    ByteBuf* out
    bint compat         # compatibility decompositions (NFKD, NFKC)
    bint compose        # recompose (NFC, NFKC)
    bint drop_mn        # after NFD, drop category Mn (BertNormalizer strip_accents)
    bint lower          # after that, lowercase (BertNormalizer lowercase)
    CpBuf pending       # decomposed non-starters since the last starter (to be sorted)
    CpBuf held          # composer: non-starters blocked from the composee
    int64_t composee    # composer: the starter being composed, -1 for none
    int last_ccc        # composer: class of the last held character, -1 for none


cdef inline void machine_init(UniMachine* m, ByteBuf* out, bint compat, bint compose, bint drop_mn,
                              bint lower) noexcept nogil:
    m.out = out
    m.compat = compat
    m.compose = compose
    m.drop_mn = drop_mn
    m.lower = lower
    cpbuf_init(&m.pending)
    cpbuf_init(&m.held)
    m.composee = -1
    m.last_ccc = -1


cdef inline void machine_free(UniMachine* m) noexcept nogil:
    cpbuf_free(&m.pending)
    cpbuf_free(&m.held)


cdef inline bint machine_idle(const UniMachine* m) noexcept nogil:
    return m.pending.size == 0 and m.composee < 0


cdef inline int machine_emit(UniMachine* m, uint32_t c) noexcept nogil:
    if m.drop_mn and (hf_flags(c) & HF_MN):
        return 0
    return emit_char(m.out, c, m.lower)


cdef inline uint32_t compose_pair(uint32_t a, uint32_t b) noexcept nogil:
    """The canonical composite of (a, b), 0 for none. Hangul is algorithmic."""
    if L_BASE <= a < L_BASE + L_COUNT and V_BASE <= b < V_BASE + V_COUNT:
        return S_BASE + ((a - L_BASE) * V_COUNT + b - V_BASE) * T_COUNT
    if S_BASE <= a < S_BASE + S_COUNT and (a - S_BASE) % T_COUNT == 0 and T_BASE < b < T_BASE + T_COUNT:
        return a + b - T_BASE
    return hf_compose_pair(a, b)


cdef int machine_compose(UniMachine* m, uint32_t ch) noexcept nogil:
    """One decomposed, ordered character into the composer.
    Parity: unicode-normalization recompose.rs Recompositions::next (Composing)."""
    cdef int cls = hf_ccc(ch)
    cdef uint32_t r
    cdef Py_ssize_t i
    if m.composee < 0:
        if cls != 0:
            return machine_emit(m, ch)
        m.composee = ch
        return 0
    if m.last_ccc < 0:
        r = compose_pair(<uint32_t>m.composee, ch)
        if r:
            m.composee = r
            return 0
        if cls == 0:
            if machine_emit(m, <uint32_t>m.composee) < 0:
                return ERR_NO_MEMORY
            m.composee = ch
            return 0
        m.last_ccc = cls
        return cpbuf_push(&m.held, ch)
    if m.last_ccc >= cls:
        if cls == 0:   # blocked starter: everything before it is final
            if machine_emit(m, <uint32_t>m.composee) < 0:
                return ERR_NO_MEMORY
            for i in range(m.held.size):
                if machine_emit(m, m.held.data[i]) < 0:
                    return ERR_NO_MEMORY
            m.held.size = 0
            m.composee = ch
            m.last_ccc = -1
            return 0
        m.last_ccc = cls
        return cpbuf_push(&m.held, ch)
    r = compose_pair(<uint32_t>m.composee, ch)
    if r:
        m.composee = r
        return 0
    m.last_ccc = cls
    return cpbuf_push(&m.held, ch)


cdef inline int machine_next(UniMachine* m, uint32_t c) noexcept nogil:
    if m.compose:
        return machine_compose(m, c)
    return machine_emit(m, c)


cdef int machine_release_pending(UniMachine* m) noexcept nogil:
    """Sort the pending non-starters and pass them on."""
    cdef Py_ssize_t i
    if sort_by_class(&m.pending) < 0:
        return ERR_NO_MEMORY
    for i in range(m.pending.size):
        if machine_next(m, m.pending.data[i]) < 0:
            return ERR_NO_MEMORY
    m.pending.size = 0
    return 0


cdef inline int machine_push(UniMachine* m, uint32_t d) noexcept nogil:
    """One decomposed character. Parity: decompose.rs Decompositions::push_back."""
    if hf_ccc(d) == 0:
        if m.pending.size and machine_release_pending(m) < 0:
            return ERR_NO_MEMORY
        return machine_next(m, d)
    return cpbuf_push(&m.pending, d)


cdef int machine_feed(UniMachine* m, uint32_t c) noexcept nogil:
    """One input character: decomposed (Hangul algorithmically), then pushed."""
    cdef const uint32_t* d
    cdef uint32_t k, s
    if S_BASE <= c < S_BASE + S_COUNT:
        s = c - S_BASE
        if machine_push(m, L_BASE + s // N_COUNT) < 0 or machine_push(m, V_BASE + (s % N_COUNT) // T_COUNT) < 0:
            return ERR_NO_MEMORY
        if s % T_COUNT:
            return machine_push(m, T_BASE + s % T_COUNT)
        return 0
    d = hf_decomposition(c, m.compat)
    if d == NULL:
        return machine_push(m, c)
    for k in range(d[0]):
        if machine_push(m, d[1 + k]) < 0:
            return ERR_NO_MEMORY
    return 0


cdef int machine_flush(UniMachine* m) noexcept nogil:
    """End of a stretch: everything fed so far is written out.
    Parity: Recompositions::next (Finished): the composee, then the held characters."""
    cdef Py_ssize_t i
    if m.pending.size and machine_release_pending(m) < 0:
        return ERR_NO_MEMORY
    if m.composee >= 0:
        if machine_emit(m, <uint32_t>m.composee) < 0:
            return ERR_NO_MEMORY
        for i in range(m.held.size):
            if machine_emit(m, m.held.data[i]) < 0:
                return ERR_NO_MEMORY
        m.held.size = 0
        m.composee = -1
        m.last_ccc = -1
    return 0


# ---------------------------------------------------------------------- NFC, NFD, NFKC, NFKD

cdef class HfUnicodeNormalizer(Normalizer):
    """tokenizers' NFC, NFD, NFKC and NFKD normalizers (normalizers/unicode.rs).

    Characters the form leaves alone (ASCII and most others: one flag test) are copied;
    the rest go through decomposition, canonical ordering and, for NFC/NFKC, composition.

    >>> HfUnicodeNormalizer("NFKD").normalize_text("ﬁ")
    'fi'
    """

    cdef readonly str form
    cdef bint compat
    cdef bint compose
    cdef uint16_t inert

    def __cinit__(self, str form):
        if form not in ("NFC", "NFD", "NFKC", "NFKD"):
            raise ValueError(f"unknown normalization form {form!r}: NFC, NFD, NFKC or NFKD")
        self.form = form
        self.compat = form.startswith("NFK")
        self.compose = form.endswith("C")
        self.inert = {"NFC": HF_NFC_INERT, "NFD": HF_NFD_INERT, "NFKC": HF_NFKC_INERT,
                      "NFKD": HF_NFKD_INERT}[form]

    def __reduce__(self):
        return HfUnicodeNormalizer, (self.form,)

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef Py_ssize_t i = 0, j, last_direct = -1
        cdef uint32_t cp
        cdef int l, rc = 0
        cdef UniMachine m
        while i < n:
            if s[i] < 0x80:
                i += 1
                continue
            l = utf8_decode(s + i, n - i, &cp)
            if l == 0:
                i += 1      # not UTF-8: kept as it is
                continue
            if not (hf_flags(cp) & self.inert):
                break
            i += l
        if i == n:
            return TEXT_UNCHANGED
        out.size = 0
        if bytebuf_reserve(out, n + 16) < 0:
            return ERR_NO_MEMORY
        memcpy(out.data, s, i)
        out.size = i
        if i > 0:
            # the character before i was left alone, but may compose with what follows
            j = i - 1
            while j > 0 and (s[j] & 0xC0) == 0x80:
                j -= 1
            if utf8_decode(s + j, n - j, &cp) == i - j:
                last_direct = j
        machine_init(&m, out, self.compat, self.compose, False, False)
        rc = self._run(s, n, i, last_direct, &m)
        if rc == 0:
            rc = machine_flush(&m)
        machine_free(&m)
        return rc

    cdef int _run(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t i, Py_ssize_t last_direct,
                  UniMachine* m) noexcept nogil:
        """Normalize s[i:] into m.out; `last_direct`: where the character written last
        (unchanged, not through the machine) starts in out, -1 for none."""
        cdef ByteBuf* out = m.out
        cdef Py_ssize_t j
        cdef uint32_t cp, prev
        cdef int l
        while i < n:
            if s[i] < 0x80:
                if not machine_idle(m) and machine_flush(m) < 0:
                    return ERR_NO_MEMORY
                j = i + 1
                while j < n and s[j] < 0x80:
                    j += 1
                if bytebuf_append(out, <const char*>s + i, j - i) < 0:
                    return ERR_NO_MEMORY
                last_direct = out.size - 1
                i = j
                continue
            l = utf8_decode(s + i, n - i, &cp)
            if l == 0 or (hf_flags(cp) & self.inert):
                if not machine_idle(m) and machine_flush(m) < 0:
                    return ERR_NO_MEMORY
                if l == 0:
                    l = 1
                    last_direct = -1
                else:
                    last_direct = out.size
                if bytebuf_append(out, <const char*>s + i, l) < 0:
                    return ERR_NO_MEMORY
                i += l
                continue
            if self.compose and last_direct >= 0 and machine_idle(m):
                # Parity: the composer sees every character; the one written unchanged last
                # goes back through it, as it may compose with this one.
                utf8_decode(<const unsigned char*>out.data + last_direct, out.size - last_direct, &prev)
                out.size = last_direct
                if machine_feed(m, prev) < 0:
                    return ERR_NO_MEMORY
            last_direct = -1
            if machine_feed(m, cp) < 0:
                return ERR_NO_MEMORY
            i += l
        return 0


# ---------------------------------------------------------------------- BERT, Lowercase, StripAccents

cdef class HfCharNormalizer(Normalizer):
    """A character-by-character normalizer of tokenizers: BertNormalizer (clean_text,
    handle_chinese_chars, strip_accents, lowercase: normalizers/bert.rs, in that order),
    Lowercase or StripAccents (normalizers/utils.rs, strip.rs). Build with the class
    methods `bert`, `lowercase` and `strip_accents`.

    >>> HfCharNormalizer.bert(lowercase=False, strip_accents=None).normalize_text("Straße\\x00")
    'Straße'
    """

    cdef readonly bint clean_text
    cdef readonly bint handle_chinese_chars
    cdef readonly bint strip_accents      # NFD, then drop category Mn
    cdef readonly bint strip_marks        # drop every combining mark (StripAccents)
    cdef readonly bint lowercase
    cdef unsigned char ascii_map[128]     # ASCII byte -> its output byte, or ASCII_DROP
    cdef uint16_t check_mask              # the flags that make a character change...
    cdef uint16_t check_flip              # ...after flipping these

    def __cinit__(self, *, bint clean_text=False, bint handle_chinese_chars=False, bint strip_accents=False,
                  bint strip_marks=False, bint lowercase=False):
        cdef int b
        cdef uint32_t c
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = strip_accents
        self.strip_marks = strip_marks
        self.lowercase = lowercase
        self.check_mask = ((HF_DROP | HF_BERT_SPACE if clean_text else 0) | (HF_CHINESE if handle_chinese_chars else 0)
                           | (HF_NFD_INERT | HF_MN if strip_accents else 0) | (HF_MARK if strip_marks else 0)
                           | (HF_LOWER if lowercase else 0))
        self.check_flip = HF_NFD_INERT if strip_accents else 0
        for b in range(128):
            c = b
            if clean_text and (hf_flags(c) & HF_DROP):
                self.ascii_map[b] = ASCII_DROP
                continue
            if clean_text and (hf_flags(c) & HF_BERT_SPACE):
                c = 0x20
            if strip_marks and (hf_flags(c) & HF_MARK):
                self.ascii_map[b] = ASCII_DROP
                continue
            if lowercase and (hf_flags(c) & HF_LOWER):
                c = <uint32_t>(<int32_t>c + hf_lower_delta(c))
            if c >= 0x80:
                raise AssertionError("an ASCII character maps outside ASCII")
            self.ascii_map[b] = <unsigned char>c

    def __reduce__(self):
        return _rebuild_char_normalizer, (self.clean_text, self.handle_chinese_chars, self.strip_accents,
                                          self.strip_marks, self.lowercase)

    @staticmethod
    def bert(*, bint clean_text=True, bint handle_chinese_chars=True, strip_accents=None, bint lowercase=True):
        """tokenizers' BertNormalizer; strip_accents None follows `lowercase`."""
        return HfCharNormalizer(clean_text=clean_text, handle_chinese_chars=handle_chinese_chars,
                                strip_accents=lowercase if strip_accents is None else bool(strip_accents),
                                lowercase=lowercase)

    @staticmethod
    def lowercase_only():
        """tokenizers' Lowercase."""
        return HfCharNormalizer(lowercase=True)

    @staticmethod
    def strip_accents_only():
        """tokenizers' StripAccents (drops every combining mark, no decomposition)."""
        return HfCharNormalizer(strip_marks=True)

    cdef inline bint _changes(self, uint32_t cp) noexcept nogil:
        return ((hf_flags(cp) ^ self.check_flip) & self.check_mask) != 0

    cdef int normalize(self, const unsigned char* s, Py_ssize_t n, ByteBuf* out) noexcept nogil:
        cdef Py_ssize_t i = 0
        cdef uint32_t cp
        cdef int l, rc
        cdef UniMachine m
        # Parity: each step of the reference maps characters; the first one any step
        # would change ends the copy.
        while i < n:
            if s[i] < 0x80:
                if self.ascii_map[s[i]] != s[i]:
                    break
                i += 1
                continue
            l = utf8_decode(s + i, n - i, &cp)
            if l == 0:
                i += 1
                continue
            if self._changes(cp):
                break
            i += l
        if i == n:
            return TEXT_UNCHANGED
        out.size = 0
        if bytebuf_reserve(out, n + 16) < 0:
            return ERR_NO_MEMORY
        memcpy(out.data, s, i)
        out.size = i
        machine_init(&m, out, False, False, True, self.lowercase)
        rc = self._run(s, n, i, &m)
        if rc == 0:
            rc = machine_flush(&m)
        machine_free(&m)
        return rc

    cdef int _run(self, const unsigned char* s, Py_ssize_t n, Py_ssize_t i, UniMachine* m) noexcept nogil:
        cdef ByteBuf* out = m.out
        cdef unsigned char c
        cdef char* d
        cdef uint32_t cp
        cdef uint16_t f
        cdef int l, k
        while i < n:
            if s[i] < 0x80:
                if m.pending.size:
                    # a dropped byte lets the marks around it meet (they are sorted together);
                    # the first byte kept ends them
                    while i < n and s[i] < 0x80 and self.ascii_map[s[i]] == ASCII_DROP:
                        i += 1
                    if i == n or s[i] >= 0x80:
                        continue
                    if machine_flush(m) < 0:
                        return ERR_NO_MEMORY
                if bytebuf_reserve(out, n - i) < 0:
                    return ERR_NO_MEMORY
                d = out.data + out.size
                while i < n and s[i] < 0x80:
                    c = self.ascii_map[s[i]]
                    d[0] = <char>c
                    d += c != ASCII_DROP
                    i += 1
                out.size = d - out.data
                continue
            l = utf8_decode(s + i, n - i, &cp)
            f = hf_flags(cp) if l else 0
            if l == 0 or ((f ^ self.check_flip) & self.check_mask) == 0:
                # left alone (or not UTF-8: kept as it is)
                if m.pending.size and machine_flush(m) < 0:
                    return ERR_NO_MEMORY
                if l == 0:
                    l = 1
                if out.cap - out.size < 8 and bytebuf_reserve(out, 8) < 0:
                    return ERR_NO_MEMORY
                d = out.data + out.size
                for k in range(l):
                    d[k] = <char>s[i + k]
                out.size += l
                i += l
                continue
            # Parity: BertNormalizer::do_clean_text (filter, then map whitespace to ' ')
            if self.clean_text:
                if f & HF_DROP:
                    i += l
                    continue
                if f & HF_BERT_SPACE:
                    cp = 0x20
                    f = hf_flags(cp)
            # Parity: do_handle_chinese_chars. A Chinese character has no case and is no
            # mark (the generator checks): it goes out as it came unless NFD changes it.
            if self.handle_chinese_chars and (f & HF_CHINESE):
                if self.strip_accents and not (f & HF_NFD_INERT):
                    i += l
                    if machine_feed(m, 0x20) < 0 or machine_feed(m, cp) < 0 or machine_feed(m, 0x20) < 0:
                        return ERR_NO_MEMORY
                    continue
                if m.pending.size and machine_flush(m) < 0:
                    return ERR_NO_MEMORY
                if out.cap - out.size < 8 and bytebuf_reserve(out, 8) < 0:
                    return ERR_NO_MEMORY
                d = out.data + out.size
                d[0] = 0x20
                for k in range(l):
                    d[1 + k] = <char>s[i + k]
                d[l + 1] = 0x20
                out.size += l + 2
                i += l
                continue
            i += l
            if self.strip_accents:
                # Parity: do_strip_accents (nfd, then filter !is_mark_nonspacing), then do_lowercase
                if not (f & HF_NFD_INERT):
                    if machine_feed(m, cp) < 0:
                        return ERR_NO_MEMORY
                    continue
                # a starter NFD keeps: the marks before it are final
                if m.pending.size and machine_flush(m) < 0:
                    return ERR_NO_MEMORY
                if f & HF_MN:
                    continue
            elif self.strip_marks and (f & HF_MARK):
                continue
            if emit_char(out, cp, self.lowercase) < 0:
                return ERR_NO_MEMORY
        return 0


def _rebuild_char_normalizer(clean_text, handle_chinese_chars, strip_accents, strip_marks, lowercase):
    return HfCharNormalizer(clean_text=clean_text, handle_chinese_chars=handle_chinese_chars,
                            strip_accents=strip_accents, strip_marks=strip_marks, lowercase=lowercase)
