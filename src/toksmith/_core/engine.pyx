"""The compiled tokenizer pipeline: normalize -> segment -> post-process, and decode.

`Engine` holds the immutable model tables; every call keeps its working
memory in a per-thread scratch area, so one engine serves any number of
threads. `toksmith.Tokenizer` subclasses it and configures it at load time.
"""
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, uint8_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from toksmith._core.buffers cimport (ByteBuf, IdBuf, bytebuf_append, bytebuf_free, bytebuf_push,
                                     bytebuf_reserve, idbuf_free, idbuf_push, idbuf_reserve)
from toksmith._core.normalizer cimport ERR_NO_MEMORY, ERR_TOO_LONG, Normalizer, Rules
from toksmith._core.trie cimport DoubleArrayTrie
from toksmith._core.unigram cimport (VALUE_UNUSED, VALUE_USER_DEFINED, UnigramParams,
                                     viterbi_llama_cpp, viterbi_sentencepiece)
from toksmith._core.text cimport ERR_SURROGATE, TextRef, text_ref, utf8_of
from toksmith._core.utf8 cimport REPLACEMENT_CHAR, SPACE_SYMBOL, valid_char_len

import gc
from operator import index

from toksmith._core.normalizer import raise_for_status

cdef extern from "Python.h":
    ctypedef struct PyObject
    ctypedef struct PyTupleObject:
        PyObject* ob_item[1]
    void Py_INCREF_RAW "Py_INCREF" (PyObject* o)
    void PyList_SET_ITEM(object lst, Py_ssize_t i, PyObject* item)

cdef extern from "<pthread.h>" nogil:
    ctypedef unsigned int pthread_key_t
    int pthread_key_create(pthread_key_t* key, void (*destructor)(void*))
    void* pthread_getspecific(pthread_key_t key)
    int pthread_setspecific(pthread_key_t key, const void* value)

# Token types (values of sentencepiece's ModelProto.SentencePiece.Type and
# of GGUF's tokenizer.ggml.token_type).
cdef enum:
    TYPE_NORMAL = 1
    TYPE_UNKNOWN = 2
    TYPE_CONTROL = 3
    TYPE_USER_DEFINED = 4
    TYPE_UNUSED = 5
    TYPE_BYTE = 6

# Past this size a thread's scratch memory is released after the call.
cdef Py_ssize_t SCRATCH_KEEP_BYTES = 8 << 20
cdef Py_ssize_t MAX_NORMALIZED_BYTES = 0x7FFFFFF0
# encode() releases the GIL for texts of at least this many UTF-8 bytes.
cdef Py_ssize_t GIL_RELEASE_MIN_BYTES = 256
# encode_batch uses one more thread per this many characters of input.
cdef Py_ssize_t BATCH_BYTES_PER_THREAD = 16384


cdef struct Scratch:
    ByteBuf text
    IdBuf out
    ByteBuf norm
    IdBuf path_ids
    IdBuf path_starts
    IdBuf spans
    void* lattice
    Py_ssize_t lattice_cap


cdef void _free_scratch(void* p) noexcept nogil:
    cdef Scratch* sc = <Scratch*>p
    if sc == NULL:
        return
    bytebuf_free(&sc.norm)
    bytebuf_free(&sc.text)
    idbuf_free(&sc.out)
    idbuf_free(&sc.path_ids)
    idbuf_free(&sc.path_starts)
    idbuf_free(&sc.spans)
    free(sc.lattice)
    free(sc)


cdef pthread_key_t _scratch_key
if pthread_key_create(&_scratch_key, _free_scratch) != 0:
    raise ImportError("toksmith: cannot create thread-local storage key")


cdef Scratch* _thread_scratch() noexcept nogil:
    cdef Scratch* sc = <Scratch*>pthread_getspecific(_scratch_key)
    if sc == NULL:
        sc = <Scratch*>calloc(1, sizeof(Scratch))
        if sc != NULL:
            pthread_setspecific(_scratch_key, sc)
    return sc


cdef void _trim_scratch(Scratch* sc) noexcept nogil:
    if sc.lattice_cap > SCRATCH_KEEP_BYTES:
        free(sc.lattice)
        sc.lattice = NULL
        sc.lattice_cap = 0
    if sc.norm.cap > SCRATCH_KEEP_BYTES:
        bytebuf_free(&sc.norm)
    if sc.text.cap > SCRATCH_KEEP_BYTES:
        bytebuf_free(&sc.text)
    if sc.path_ids.cap * 4 > SCRATCH_KEEP_BYTES or sc.out.cap * 4 > SCRATCH_KEEP_BYTES:
        idbuf_free(&sc.out)
        idbuf_free(&sc.path_ids)
        idbuf_free(&sc.path_starts)
        idbuf_free(&sc.spans)


cdef list _id_list(const int32_t* ids, Py_ssize_t n, tuple id_objects):
    """Python list of `ids`, reusing the engine's int objects (all ids are in range)."""
    cdef list out = [None] * n
    cdef Py_ssize_t i
    cdef PyObject* item
    cdef PyObject** objects = <PyObject**>&(<PyTupleObject*>id_objects).ob_item[0]
    for i in range(n):
        item = objects[ids[i]]
        Py_INCREF_RAW(item)
        PyList_SET_ITEM(out, i, item)   # steals the reference (None stays immortal)
    return out


cdef object _as_text(object text):
    """`text` itself if it is str or bytes, else bytes of a bytes-like object."""
    if type(text) is str or type(text) is bytes:
        return text
    if isinstance(text, str):
        return str(text)
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise TypeError(f"text must be str or bytes, not {type(text).__name__}")


cdef class Engine:
    """Compiled tables of one tokenizer. Use `toksmith.load` to get one."""

    cdef Normalizer normalizer
    cdef Normalizer denormalizer
    cdef DoubleArrayTrie trie
    cdef UnigramParams unigram
    cdef Rules rules
    cdef int32_t bos_id
    cdef int32_t eos_id
    cdef bint add_bos
    cdef bint add_eos
    cdef bint byte_fallback
    cdef int32_t byte_ids[256]
    cdef Py_ssize_t n_pieces
    cdef uint8_t* piece_types
    cdef int32_t* byte_values
    cdef char* piece_data
    cdef Py_ssize_t* piece_offsets
    cdef bytes unk_surface
    cdef bint strip_leading_space
    cdef bint strip_all_leading_spaces
    cdef list _piece_strs
    cdef tuple _id_objects   # the Python int of every id, so lists are built without allocating
    cdef bint configured

    def __cinit__(self, *args, **kwargs):
        self.piece_types = NULL
        self.byte_values = NULL
        self.piece_data = NULL
        self.piece_offsets = NULL
        self.configured = False

    def __dealloc__(self):
        free(self.piece_types)
        free(self.byte_values)
        free(self.piece_data)
        free(self.piece_offsets)

    def _configure_unigram(self, list pieces, list scores, bytes types, *,
                           int unk_id, int bos_id, int eos_id,
                           bint add_bos, bint add_eos, bint byte_fallback,
                           Rules rules, Normalizer normalizer, Normalizer denormalizer,
                           bytes unk_surface, bint add_dummy_prefix,
                           bint remove_extra_whitespaces):
        """Install a Unigram model. `pieces` are UTF-8 bytes, `types` one byte per piece."""
        cdef Py_ssize_t n = len(pieces), i, total = 0
        cdef bytes piece
        cdef int t
        cdef float min_score = 3.4028234663852886e38, score
        cdef list keys = [], values = [], key_scores = []
        if self.configured:
            raise RuntimeError("engine is already configured")
        if n == 0 or len(scores) != n or len(types) != n:
            raise ValueError("pieces, scores and types must be non-empty and of equal length")
        if not (0 <= unk_id < n):
            raise ValueError(f"unknown-piece id {unk_id} is outside the vocabulary")
        self.n_pieces = n
        self.piece_types = <uint8_t*>malloc(n)
        self.byte_values = <int32_t*>malloc(n * sizeof(int32_t))
        self.piece_offsets = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        if self.piece_types == NULL or self.byte_values == NULL or self.piece_offsets == NULL:
            raise MemoryError()
        for i in range(256):
            self.byte_ids[i] = unk_id
        for i in range(n):
            piece = pieces[i]
            t = types[i]
            score = scores[i]
            self.piece_types[i] = t
            self.byte_values[i] = -1
            self.piece_offsets[i] = total
            total += len(piece)
            if t == TYPE_NORMAL and score < min_score:
                # The unknown-piece score is min over NORMAL pieces minus 10 (both references).
                min_score = score
            if t == TYPE_NORMAL or t == TYPE_USER_DEFINED or t == TYPE_UNUSED:
                keys.append(piece)
                values.append(i | (VALUE_USER_DEFINED if t == TYPE_USER_DEFINED else 0)
                              | (VALUE_UNUSED if t == TYPE_UNUSED else 0))
                key_scores.append(score)
            elif t == TYPE_BYTE:
                self.byte_values[i] = _parse_byte_piece(piece)
                if self.byte_values[i] < 0:
                    raise ValueError(f"byte piece {i} is {piece!r}, expected <0xXX>")
                self.byte_ids[self.byte_values[i]] = <int32_t>i
        self.piece_offsets[n] = total
        self.piece_data = <char*>malloc(total if total else 1)
        if self.piece_data == NULL:
            raise MemoryError()
        for i in range(n):
            piece = pieces[i]
            memcpy(self.piece_data + self.piece_offsets[i], <char*>piece, len(piece))
        self._piece_strs = None   # decoded on first use (tokenize)
        self._id_objects = tuple(range(n))
        try:
            self.trie = DoubleArrayTrie.build(keys, values, key_scores)
        except ValueError as e:
            raise ValueError(f"{e}: a piece is already defined") from None
        self.trie.build_char3_nodes()
        self.unigram.nodes = self.trie.nodes
        self.unigram.char3_nodes = self.trie.char3_nodes
        self.unigram.unk_score = min_score - <float>10.0
        self.unigram.unk_id = unk_id
        self.rules = rules
        self.bos_id = bos_id
        self.eos_id = eos_id
        self.add_bos = add_bos and 0 <= bos_id < n
        self.add_eos = add_eos and 0 <= eos_id < n
        # llama.cpp's UGM tokenizer has no byte fallback.
        self.byte_fallback = byte_fallback and rules == Rules.SENTENCEPIECE
        self.normalizer = normalizer
        self.denormalizer = denormalizer
        self.unk_surface = unk_surface
        self.strip_leading_space = add_dummy_prefix or remove_extra_whitespaces
        self.strip_all_leading_spaces = remove_extra_whitespaces
        self.configured = True

    # ------------------------------------------------------------------ encode

    cdef int _encode(self, const unsigned char* s, Py_ssize_t n, bint add_special,
                     Scratch* sc, IdBuf* out, bint want_spans) noexcept nogil:
        """Encode s[:n] into `out` (cleared first). Returns 0 or a negative error code."""
        cdef int rc
        cdef Py_ssize_t i, j, start, end, count
        cdef int32_t pid
        cdef bint is_unk, prev_unk = False
        out.size = 0
        sc.spans.size = 0
        if add_special and self.add_bos:
            if idbuf_push(out, self.bos_id) < 0:
                return ERR_NO_MEMORY
            if want_spans and (idbuf_push(&sc.spans, 0) < 0 or idbuf_push(&sc.spans, 0) < 0):
                return ERR_NO_MEMORY
        rc = self.normalizer.normalize(s, n, &sc.norm)
        if rc < 0:
            return rc
        if sc.norm.size > MAX_NORMALIZED_BYTES:
            return ERR_TOO_LONG
        if sc.norm.size > 0:
            if self.rules == Rules.SENTENCEPIECE:
                rc = viterbi_sentencepiece(&self.unigram, <const unsigned char*>sc.norm.data,
                                           sc.norm.size, &sc.lattice, &sc.lattice_cap,
                                           &sc.path_ids, &sc.path_starts)
            else:
                rc = viterbi_llama_cpp(&self.unigram, <const unsigned char*>sc.norm.data,
                                       sc.norm.size, &sc.lattice, &sc.lattice_cap,
                                       &sc.path_ids, &sc.path_starts)
            if rc < 0:
                return ERR_NO_MEMORY
            count = sc.path_ids.size
            # Byte fallback emits at most one id per normalized byte.
            if idbuf_reserve(out, (sc.norm.size if self.byte_fallback else count) + 1) < 0:
                return ERR_NO_MEMORY
            for i in range(count):
                pid = sc.path_ids.data[i]
                start = sc.path_starts.data[i]
                end = sc.path_starts.data[i + 1] if i + 1 < count else sc.norm.size
                is_unk = self.piece_types[pid] == TYPE_UNKNOWN
                if is_unk and self.byte_fallback:
                    # Parity: sentencepiece decomposes an unknown piece into byte pieces.
                    for j in range(start, end):
                        out.data[out.size] = self.byte_ids[<unsigned char>sc.norm.data[j]]
                        out.size += 1
                        if want_spans and (idbuf_push(&sc.spans, <int32_t>j) < 0
                                           or idbuf_push(&sc.spans, <int32_t>(j + 1)) < 0):
                            return ERR_NO_MEMORY
                elif is_unk and prev_unk:
                    # Parity: a run of unknown characters is one <unk> (sentencepiece
                    # PopulateSentencePieceText, llama.cpp UGM read-back).
                    if want_spans:
                        sc.spans.data[sc.spans.size - 1] = <int32_t>end
                else:
                    out.data[out.size] = pid
                    out.size += 1
                    if want_spans and (idbuf_push(&sc.spans, <int32_t>start) < 0
                                       or idbuf_push(&sc.spans, <int32_t>end) < 0):
                        return ERR_NO_MEMORY
                prev_unk = is_unk
        if add_special and self.add_eos:
            if idbuf_push(out, self.eos_id) < 0:
                return ERR_NO_MEMORY
            if want_spans and (idbuf_push(&sc.spans, 0) < 0 or idbuf_push(&sc.spans, 0) < 0):
                return ERR_NO_MEMORY
        return 0

    cdef _check_ready(self, bint parse_special):
        if not self.configured:
            raise RuntimeError("tokenizer is not configured; use toksmith.load()")
        if parse_special:
            from toksmith.errors import UnsupportedFeatureError
            raise UnsupportedFeatureError(
                "parse_special=True is not supported yet for this tokenizer")

    def encode(self, text, bint add_special=True, bint parse_special=False):
        """Token ids of `text` (str, or bytes that may hold invalid UTF-8).

        >>> tok.encode("Hello world")          # doctest: +SKIP
        [8774, 296]
        """
        cdef TextRef ref
        cdef Scratch* sc
        cdef int rc
        cdef list ids
        if not self.configured or parse_special:
            self._check_ready(parse_special)
        if type(text) is not str:
            text = _as_text(text)
        text_ref(text, &ref)
        if ref.length * (ref.kind if ref.kind else 1) < GIL_RELEASE_MIN_BYTES:
            # Short texts: handing the GIL over would cost more than the work.
            sc = _thread_scratch()
            rc = self._encode_text(&ref, add_special, sc)
        else:
            with nogil:
                sc = _thread_scratch()
                rc = self._encode_text(&ref, add_special, sc)
        if rc < 0:
            _raise_encode_error(rc, text)
        ids = _id_list(sc.out.data, sc.out.size, self._id_objects)
        _trim_scratch(sc)
        return ids

    cdef int _encode_text(self, const TextRef* ref, bint add_special, Scratch* sc,
                          bint want_spans=False) noexcept nogil:
        """Encode one text into sc.out (spans into sc.spans); 0 or a negative error code."""
        cdef const unsigned char* data
        cdef Py_ssize_t n
        cdef int rc
        if sc == NULL:
            return ERR_NO_MEMORY
        rc = utf8_of(ref, &sc.text, &data, &n)
        if rc < 0:
            return rc
        return self._encode(data, n, add_special, sc, &sc.out, want_spans)

    def encode_batch(self, texts, bint add_special=True, bint parse_special=False,
                     num_threads=None):
        """Encode many texts on `num_threads` threads (None: all cores), GIL released.

        Returns exactly ``[self.encode(t, add_special) for t in texts]``.
        """
        cdef list items = list(texts)
        cdef Py_ssize_t n = len(items), i
        cdef TextRef* refs
        cdef IdBuf* results
        cdef int* status
        cdef int threads
        cdef Py_ssize_t total_units = 0
        cdef Scratch* sc
        cdef list out
        if not self.configured or parse_special:
            self._check_ready(parse_special)
        threads = _resolve_threads(num_threads, n)
        if n == 0:
            return []
        refs = <TextRef*>malloc(n * sizeof(TextRef))
        results = <IdBuf*>calloc(n, sizeof(IdBuf))
        status = <int*>calloc(n, sizeof(int))
        try:
            if refs == NULL or results == NULL or status == NULL:
                raise MemoryError()
            for i in range(n):
                item = items[i]
                if type(item) is not str and type(item) is not bytes:
                    item = _as_text(item)
                    items[i] = item   # keeps the converted object alive
                text_ref(item, &refs[i])
                total_units += refs[i].length
            # Waking a thread costs more than encoding a few kilobytes.
            if threads > 1 + total_units // BATCH_BYTES_PER_THREAD:
                threads = <int>(1 + total_units // BATCH_BYTES_PER_THREAD)
            with nogil, parallel(num_threads=threads):
                sc = _thread_scratch()
                for i in prange(n, schedule="dynamic", chunksize=4):
                    status[i] = self._encode_text(&refs[i], add_special, sc)
                    if status[i] == 0:
                        # hand the ids over to results[i]; the scratch gets a fresh buffer
                        results[i] = sc.out
                        sc.out.data = NULL
                        sc.out.size = 0
                        sc.out.cap = 0
                if sc != NULL:
                    _trim_scratch(sc)
            for i in range(n):
                if status[i] < 0:
                    _raise_encode_error(status[i], items[i])
            # Lists of ints cannot form cycles: building thousands of them should
            # not trigger full passes of the cyclic garbage collector.
            gc_was_enabled = gc.isenabled()
            gc.disable()
            try:
                out = [None] * n
                for i in range(n):
                    out[i] = _id_list(results[i].data, results[i].size, self._id_objects)
                    idbuf_free(&results[i])
            finally:
                if gc_was_enabled:
                    gc.enable()
            return out
        finally:
            if results != NULL:
                for i in range(n):
                    idbuf_free(&results[i])
            free(results)
            free(status)
            free(refs)

    def tokenize(self, text, bint add_special=False):
        """Pieces of `text` as strings; unknown runs show their normalized text.

        >>> tok.tokenize("Hello world")        # doctest: +SKIP
        ['▁Hello', '▁world']
        """
        cdef TextRef ref
        cdef Scratch* sc
        cdef int rc
        cdef list pieces
        cdef int32_t pid
        cdef Py_ssize_t i, k
        self._check_ready(False)
        if type(text) is not str:
            text = _as_text(text)
        text_ref(text, &ref)
        with nogil:
            sc = _thread_scratch()
            rc = self._encode_text(&ref, add_special, sc, True)
        if rc < 0:
            _raise_encode_error(rc, text)
        try:
            pieces = []
            for i in range(sc.out.size):
                pid = sc.out.data[i]
                if self.piece_types[pid] == TYPE_UNKNOWN:
                    pieces.append(sc.norm.data[sc.spans.data[2 * i]:sc.spans.data[2 * i + 1]]
                                  .decode("utf-8", "replace"))
                else:
                    if self._piece_strs is None:
                        self._piece_strs = [self.piece_data[self.piece_offsets[k]:self.piece_offsets[k + 1]]
                                            .decode("utf-8", "replace") for k in range(self.n_pieces)]
                    pieces.append(self._piece_strs[pid])
            return pieces
        finally:
            _trim_scratch(sc)

    # ------------------------------------------------------------------ decode

    def decode(self, ids, bint skip_special=False):
        """Text of `ids`. Control pieces render as nothing, as in sentencepiece.

        >>> tok.decode(tok.encode("Hello world"))   # doctest: +SKIP
        'Hello world'
        """
        cdef ByteBuf text
        cdef ByteBuf pending
        cdef long pid
        cdef int t
        cdef bint is_bos_ws = True, bos_ws_seen = False, has_bos_ws
        cdef const char* piece
        cdef Py_ssize_t plen, k, start_size
        self._check_ready(False)
        text.data = NULL; text.size = 0; text.cap = 0
        pending.data = NULL; pending.size = 0; pending.cap = 0
        try:
            for obj in ids:
                if not isinstance(obj, int):
                    obj = index(obj)   # TypeError for floats, as sentencepiece does
                try:
                    pid = obj
                except OverflowError:
                    pid = -1
                if pid < 0 or pid >= self.n_pieces:
                    from toksmith.errors import TokenIdError
                    raise TokenIdError(
                        f"token id {obj} is out of range for a vocabulary of {self.n_pieces}")
                t = self.piece_types[pid]
                if t == TYPE_BYTE:
                    if bytebuf_push(&pending, <char>self.byte_values[pid]) < 0:
                        raise MemoryError()
                    continue
                if _flush_bytes(&pending, &text) < 0:
                    raise MemoryError()
                # Parity: sentencepiece SentencePieceProcessor::Decode (0.2.x).
                if bos_ws_seen or text.size > 0:
                    is_bos_ws = False
                has_bos_ws = False
                if t == TYPE_CONTROL:
                    pass
                elif t == TYPE_UNKNOWN:
                    if bytebuf_append(&text, <char*>self.unk_surface, len(self.unk_surface)) < 0:
                        raise MemoryError()
                else:
                    piece = self.piece_data + self.piece_offsets[pid]
                    plen = self.piece_offsets[pid + 1] - self.piece_offsets[pid]
                    if is_bos_ws and self.strip_leading_space and plen >= 3 and \
                            piece[0] == SPACE_SYMBOL[0] and piece[1] == SPACE_SYMBOL[1] and \
                            piece[2] == SPACE_SYMBOL[2]:
                        piece += 3
                        plen -= 3
                        has_bos_ws = not self.strip_all_leading_spaces
                    if _append_unescaped(&text, piece, plen) < 0:
                        raise MemoryError()
                bos_ws_seen = has_bos_ws
            if _flush_bytes(&pending, &text) < 0:
                raise MemoryError()
            if self.denormalizer is not None:
                return self.denormalizer.normalize_text(text.data[:text.size])
            return text.data[:text.size].decode("utf-8", "replace")
        finally:
            bytebuf_free(&text)
            bytebuf_free(&pending)


cdef int _append_unescaped(ByteBuf* text, const char* piece, Py_ssize_t plen) noexcept nogil:
    """Append `piece` with every U+2581 turned back into a space."""
    cdef Py_ssize_t k = 0
    if bytebuf_reserve(text, plen) < 0:
        return -1
    while k < plen:
        if k + 2 < plen and piece[k] == SPACE_SYMBOL[0] and piece[k + 1] == SPACE_SYMBOL[1] \
                and piece[k + 2] == SPACE_SYMBOL[2]:
            text.data[text.size] = b' '
            k += 3
        else:
            text.data[text.size] = piece[k]
            k += 1
        text.size += 1
    return 0


cdef int _flush_bytes(ByteBuf* pending, ByteBuf* text) noexcept nogil:
    """Move byte-piece bytes into `text`; each malformed byte becomes U+FFFD (sentencepiece)."""
    cdef Py_ssize_t off = 0, m
    while off < pending.size:
        m = valid_char_len(<const unsigned char*>pending.data + off, pending.size - off)
        if m == 0:
            if bytebuf_append(text, REPLACEMENT_CHAR, 3) < 0:
                return -1
            off += 1
        else:
            if bytebuf_append(text, pending.data + off, m) < 0:
                return -1
            off += m
    pending.size = 0
    return 0


cdef _raise_encode_error(int rc, object text):
    if rc == ERR_SURROGATE:
        text.encode("utf-8")   # raises Python's own UnicodeEncodeError, with the position
    raise_for_status(rc)


cdef int _parse_byte_piece(bytes piece):
    """Value of a "<0xXX>" piece, or -1 (sentencepiece PieceToByte)."""
    if len(piece) != 6 or not piece.startswith(b"<0x") or not piece.endswith(b">"):
        return -1
    try:
        return int(piece[3:5], 16)
    except ValueError:
        return -1


cdef int _resolve_threads(object num_threads, Py_ssize_t n_items) except -1:
    import os
    cdef int threads
    if num_threads is None:
        threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    else:
        threads = num_threads
        if threads < 1:
            raise ValueError(f"num_threads must be >= 1 or None, not {num_threads}")
    if threads > n_items:
        threads = <int>max(n_items, 1)
    return threads
