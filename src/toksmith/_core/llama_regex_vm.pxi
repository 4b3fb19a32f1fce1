# Included by pretok_llama.pyx: the Pike VM that runs llama.cpp's std::regex patterns
# (compiled by toksmith.pretokenizers.regex_program) in time linear in the text, with the
# leftmost-first semantics of std::regex's ECMAScript backtracking.


cdef struct Prog:
    int32_t* insts    # op, x, y per instruction
    int n_insts
    unsigned char* bitmaps   # 32 bytes per class: membership of symbols 0..255
    int32_t* class_spans     # per class: first index into ranges, count (symbols >= 256)
    int32_t* ranges          # lo, hi pairs
    int n_classes
    bint collapsed


DEF OP_CLASS = 0
DEF OP_SPLIT = 1
DEF OP_JMP = 2
DEF OP_MATCH = 3
DEF OP_LOOK = 4
DEF OP_NLOOK = 5
DEF OP_EOL = 6


cdef inline int32_t wide_symbol(uint32_t cp, unsigned char f) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split wtext (non-ASCII whitespace -> 0x0B)
    if cp > 0x7F and (f & F_SPACE):
        return 0x0B
    return cp


cdef inline int32_t collapsed_symbol(uint32_t cp, unsigned char f) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split text_collapsed
    if cp < 128:
        return cp
    if f & F_SPACE:
        return 0x0B
    if f & F_NUMBER:
        return 0xD1
    if f & F_LETTER:
        return 0xD2
    if f & LF_PUNCT:
        return 0xD3
    if f & F_MARK:
        return 0xD4
    if f & LF_SYMBOL:
        return 0xD5
    return 0xD0


cdef inline int32_t vm_symbol(int32_t packed, bint collapsed) noexcept nogil:
    """The symbol std::regex sees for one packed codepoint (collapsed text or wide text)."""
    cdef uint32_t cp = packed_cpt(packed)
    cdef unsigned char f = packed_flags(packed)
    if cp < 128:
        return cp
    return collapsed_symbol(cp, f) if collapsed else wide_symbol(cp, f)


cdef inline bint in_class(const Prog* p, int k, int32_t sym) noexcept nogil:
    cdef const int32_t* r
    cdef Py_ssize_t lo, hi, mid
    if sym < 256:
        return (p.bitmaps[k * 32 + (sym >> 3)] >> (sym & 7)) & 1
    r = p.ranges + 2 * p.class_spans[2 * k]
    lo = 0
    hi = p.class_spans[2 * k + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if sym > r[2 * mid + 1]:
            lo = mid + 1
        elif sym < r[2 * mid]:
            hi = mid
        else:
            return True
    return False


cdef struct VmMem:
    int32_t* pcs[2]
    int32_t* starts[2]
    int32_t* counts      # [2]
    int32_t* mark        # per instruction: stamp of the list it is in
    int32_t* stack       # pc, start pairs
    int32_t stamp
    int32_t n_marks


cdef inline void vm_next_stamp(VmMem* m) noexcept nogil:
    """A new list generation; before the counter could wrap, renumber (the current list keeps 1)."""
    cdef int32_t k
    if m.stamp >= 0x3FFFFFFF:
        for k in range(m.n_marks):
            m.mark[k] = 1 if m.mark[k] == m.stamp else 0
        m.stamp = 1
    m.stamp += 1


cdef inline void vm_add(const Prog* p, VmMem* m, int li, int32_t pc0, int32_t start, const int32_t* sym,
                        Py_ssize_t at, Py_ssize_t end) noexcept nogil:
    """Add the thread at pc0 and its epsilon closure to list li, in priority order."""
    cdef Py_ssize_t sp = 0
    cdef int32_t pc, op
    cdef bint ok
    m.stack[0] = pc0
    sp = 1
    while sp > 0:
        sp -= 1
        pc = m.stack[sp]
        if m.mark[pc] == m.stamp:
            continue
        m.mark[pc] = m.stamp
        op = p.insts[3 * pc]
        if op == OP_JMP:
            m.stack[sp] = p.insts[3 * pc + 1]
            sp += 1
        elif op == OP_SPLIT:
            m.stack[sp] = p.insts[3 * pc + 2]
            m.stack[sp + 1] = p.insts[3 * pc + 1]
            sp += 2
        elif op == OP_LOOK or op == OP_NLOOK:
            ok = at < end and in_class(p, p.insts[3 * pc + 1], vm_symbol(sym[at], p.collapsed))
            if ok == (op == OP_LOOK):
                m.stack[sp] = pc + 1
                sp += 1
        elif op == OP_EOL:
            if at == end:
                m.stack[sp] = pc + 1
                sp += 1
        else:
            m.pcs[li][m.counts[li]] = pc
            m.starts[li][m.counts[li]] = start
            m.counts[li] += 1


cdef bint vm_search(const Prog* p, VmMem* m, const int32_t* sym, Py_ssize_t pos, Py_ssize_t end,
                    Py_ssize_t* mstart, Py_ssize_t* mend) noexcept nogil:
    """Leftmost-first match in sym[pos:end] (std::regex ECMAScript semantics)."""
    cdef int cur = 0, nxt = 1, t
    cdef int32_t pc
    cdef Py_ssize_t i = pos
    cdef bint matched = False
    m.counts[0] = 0
    m.counts[1] = 0
    vm_next_stamp(m)
    while True:
        if not matched:
            vm_add(p, m, cur, 0, <int32_t>i, sym, i, end)
        if m.counts[cur] == 0:
            if matched or i >= end:
                break
            i += 1
            vm_next_stamp(m)
            continue
        vm_next_stamp(m)
        m.counts[nxt] = 0
        for t in range(m.counts[cur]):
            pc = m.pcs[cur][t]
            if p.insts[3 * pc] == OP_MATCH:
                matched = True
                mstart[0] = m.starts[cur][t]
                mend[0] = i
                break
            if i < end and in_class(p, p.insts[3 * pc + 1], vm_symbol(sym[i], p.collapsed)):
                vm_add(p, m, nxt, pc + 1, m.starts[cur][t], sym, i + 1, end)
        m.counts[cur] = 0
        cur, nxt = nxt, cur
        if i >= end:
            if m.counts[cur] == 0:
                break
        else:
            i += 1
    return matched


cdef int split_regex(Span* v, const Prog* p, const int32_t* sym, VmMem* m) noexcept nogil:
    # Parity: llama.cpp unicode_regex_split_stl (regex_iterator over one piece; the gaps
    # between matches are pieces too)
    cdef Py_ssize_t pos = v.ini, ms = 0, me = 0
    while pos < v.end:
        if not vm_search(p, m, sym, pos, v.end, &ms, &me):
            break
        if add_token(v, ms) < 0 or add_token(v, me) < 0:
            return -1
        pos = me if me > ms else me + 1
    return add_token(v, v.end)


cdef class RegexProgram:
    """A compiled std::regex pattern in C arrays (see regex_program.compile_pattern)."""
    cdef Prog prog
    cdef readonly str pattern

    def __cinit__(self):
        self.prog.insts = NULL
        self.prog.bitmaps = NULL
        self.prog.class_spans = NULL
        self.prog.ranges = NULL

    def __init__(self, program):
        cdef int k, i, n_ranges = 0
        self.pattern = program.pattern
        self.prog.collapsed = program.collapsed
        self.prog.n_insts = len(program.insts)
        self.prog.n_classes = len(program.classes)
        high = [[(max(lo, 256), hi) for lo, hi in cls if hi >= 256] for cls in program.classes]
        n_ranges = sum(len(h) for h in high)
        self.prog.insts = <int32_t*>malloc(sizeof(int32_t) * 3 * self.prog.n_insts)
        self.prog.bitmaps = <unsigned char*>malloc(32 * self.prog.n_classes + 1)
        self.prog.class_spans = <int32_t*>malloc(sizeof(int32_t) * (2 * self.prog.n_classes + 1))
        self.prog.ranges = <int32_t*>malloc(sizeof(int32_t) * (2 * n_ranges + 1))
        if not (self.prog.insts and self.prog.bitmaps and self.prog.class_spans and self.prog.ranges):
            raise MemoryError()
        for i, (op, x, y) in enumerate(program.insts):
            self.prog.insts[3 * i] = op
            self.prog.insts[3 * i + 1] = x
            self.prog.insts[3 * i + 2] = y
        n_ranges = 0
        for k, cls in enumerate(program.classes):
            for i in range(32):
                self.prog.bitmaps[32 * k + i] = 0
            for lo, hi in cls:
                for i in range(lo, min(hi, 255) + 1):
                    self.prog.bitmaps[32 * k + (i >> 3)] |= 1 << (i & 7)
            self.prog.class_spans[2 * k] = n_ranges
            self.prog.class_spans[2 * k + 1] = len(high[k])
            for lo, hi in high[k]:
                self.prog.ranges[2 * n_ranges] = lo
                self.prog.ranges[2 * n_ranges + 1] = hi
                n_ranges += 1

    def __dealloc__(self):
        free(self.prog.insts)
        free(self.prog.bitmaps)
        free(self.prog.class_spans)
        free(self.prog.ranges)
