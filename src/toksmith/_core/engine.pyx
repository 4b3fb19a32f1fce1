"""The compiled tokenizer pipeline: split specials -> normalize -> segment -> post-process.

`Engine` holds the immutable model tables; every call keeps its working
memory in a per-thread scratch area, so one engine serves any number of
threads. A call re-entered on the same thread (from a warnings hook, a
finalizer, a signal handler) gets a private scratch of its own. Batches run
on the core's thread pool (`_core/threadpool`), which survives fork.
`toksmith.Tokenizer` subclasses it and configures it at load time.
"""
import operator
import os

from libc.stdint cimport int32_t, uint8_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from toksmith._core.buffers cimport (ByteBuf, IdBuf, bytebuf_append, bytebuf_free, bytebuf_push,
                                     bytebuf_reserve, idbuf_free, idbuf_push, idbuf_reserve)
from toksmith._core.detokenizer cimport Detokenizer, StreamDecoder
from toksmith._core.normalizer cimport ERR_NO_MEMORY, ERR_TOO_LONG, Normalizer, Rules
from toksmith._core.specials cimport SpecialSplitter, SplitWork, split_work_free
from toksmith._core.spm_bpe cimport BpeWork, ScoreBpe, bpe_work_free
from toksmith._core.trie cimport DoubleArrayTrie
from toksmith._core.unigram cimport (VALUE_UNUSED, VALUE_USER_DEFINED, UnigramParams,
                                     viterbi_llama_cpp, viterbi_sentencepiece)
from toksmith._core.text cimport ERR_SURROGATE, TextRef, text_ref, utf8_of
from toksmith._core.threadpool cimport parallel_for
from toksmith._core.utf8 cimport SPACE_SYMBOL

import gc
import warnings

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
    TYPE_USER_DEFINED = 4
    TYPE_UNUSED = 5

# Past this size a thread's scratch memory is released after the call.
cdef Py_ssize_t SCRATCH_KEEP_BYTES = 8 << 20
cdef Py_ssize_t MAX_NORMALIZED_BYTES = 0x7FFFFFF0
# encode() releases the GIL for texts of at least this many UTF-8 bytes.
cdef Py_ssize_t GIL_RELEASE_MIN_BYTES = 256
# encode_batch uses one more thread per this many characters of input.
cdef Py_ssize_t BATCH_BYTES_PER_THREAD = 16384
# encode_batch hands texts to its threads this many at a time.
cdef Py_ssize_t BATCH_CHUNK = 4


# How the normalized text is cut into pieces.
cpdef enum Segmenter:
    SEGMENT_UNIGRAM = 0      # Viterbi over piece scores
    SEGMENT_SCORE_BPE = 1    # SentencePiece BPE: merges by piece score


cdef struct Scratch:
    ByteBuf text
    IdBuf out
    ByteBuf norm
    ByteBuf norm_all         # every fragment's normalized text, for tokenize's spans
    IdBuf path_ids
    IdBuf path_starts
    IdBuf spans
    IdBuf segments
    void* lattice
    Py_ssize_t lattice_cap
    BpeWork bpe
    SplitWork split
    bint busy                # a call on this thread is using it
    bint private             # made for a nested call; freed when that call ends


cdef void _free_scratch(void* p) noexcept nogil:
    cdef Scratch* sc = <Scratch*>p
    if sc == NULL:
        return
    bytebuf_free(&sc.norm)
    bytebuf_free(&sc.norm_all)
    bytebuf_free(&sc.text)
    idbuf_free(&sc.out)
    idbuf_free(&sc.path_ids)
    idbuf_free(&sc.path_starts)
    idbuf_free(&sc.spans)
    idbuf_free(&sc.segments)
    bpe_work_free(&sc.bpe)
    split_work_free(&sc.split)
    free(sc.lattice)
    free(sc)


cdef pthread_key_t _scratch_key
if pthread_key_create(&_scratch_key, _free_scratch) != 0:
    raise ImportError("toksmith: cannot create thread-local storage key")


cdef Scratch* _acquire_scratch() noexcept nogil:
    """This thread's scratch, or a private one when a call on this thread already uses it
    (re-entered from a hook or finalizer); NULL when out of memory. Pair with `_release_scratch`."""
    cdef Scratch* sc = <Scratch*>pthread_getspecific(_scratch_key)
    if sc == NULL:
        sc = <Scratch*>calloc(1, sizeof(Scratch))
        if sc != NULL and pthread_setspecific(_scratch_key, sc) != 0:
            sc.private = True
    elif sc.busy:
        sc = <Scratch*>calloc(1, sizeof(Scratch))
        if sc != NULL:
            sc.private = True
    if sc != NULL:
        sc.busy = True
    return sc


cdef void _release_scratch(Scratch* sc) noexcept nogil:
    if sc == NULL:
        return
    if sc.private:
        _free_scratch(sc)
    else:
        _trim_scratch(sc)
        sc.busy = False


cdef void _trim_scratch(Scratch* sc) noexcept nogil:
    if sc.lattice_cap > SCRATCH_KEEP_BYTES:
        free(sc.lattice)
        sc.lattice = NULL
        sc.lattice_cap = 0
    if sc.norm.cap > SCRATCH_KEEP_BYTES:
        bytebuf_free(&sc.norm)
    if sc.norm_all.cap > SCRATCH_KEEP_BYTES:
        bytebuf_free(&sc.norm_all)
    if sc.text.cap > SCRATCH_KEEP_BYTES:
        bytebuf_free(&sc.text)
    if sc.path_ids.cap * 4 > SCRATCH_KEEP_BYTES or sc.out.cap * 4 > SCRATCH_KEEP_BYTES:
        idbuf_free(&sc.out)
        idbuf_free(&sc.path_ids)
        idbuf_free(&sc.path_starts)
        idbuf_free(&sc.spans)
        idbuf_free(&sc.segments)
    if sc.bpe.symbols.cap * 4 > SCRATCH_KEEP_BYTES:
        bpe_work_free(&sc.bpe)
    if sc.split.claimed.cap > SCRATCH_KEEP_BYTES:
        split_work_free(&sc.split)


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


cdef _check_texts(object texts):
    """TypeError when `texts` is one text (or no iterable) where a sequence of texts is expected."""
    if isinstance(texts, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"texts must be an iterable of texts (str or bytes), not one "
                        f"{type(texts).__name__}; use encode() for a single text")
    try:
        iter(texts)
    except TypeError:
        raise TypeError(f"texts must be an iterable of texts (str or bytes), not "
                        f"{type(texts).__name__}") from None


cdef struct BatchWork:
    void* engine             # the Engine, kept alive by encode_batch
    const TextRef* refs
    IdBuf* results
    int* status
    bint add_special
    bint parse_special


cdef class Engine:
    """Compiled tables of one tokenizer. Use `toksmith.load` to get one."""

    cdef Segmenter segmenter
    cdef Rules rules
    cdef Normalizer normalizer          # None: spaces are only escaped (llama.cpp SPM)
    cdef bint escape_prefix_space       # with no normalizer: prepend U+2581 to each fragment
    cdef DoubleArrayTrie trie
    cdef UnigramParams unigram
    cdef ScoreBpe bpe
    cdef SpecialSplitter splitter       # None when the model has no special texts to split
    cdef Detokenizer detokenizer
    cdef int32_t unk_id
    cdef int32_t bos_id
    cdef int32_t eos_id
    cdef bint add_bos
    cdef bint add_eos
    cdef int32_t missing_id             # emitted for a BPE symbol that is no piece; -1: its bytes
    cdef bint byte_fallback             # unknown pieces become byte pieces
    cdef bint merge_unknown_runs        # consecutive unknown pieces become one
    cdef bint warned_double_bos
    cdef int32_t byte_ids[256]
    cdef Py_ssize_t n_pieces
    cdef uint8_t* piece_types
    cdef list _piece_strs
    cdef tuple _id_objects   # the Python int of every id, so lists are built without allocating
    cdef bint configured

    def __cinit__(self, *args, **kwargs):
        self.piece_types = NULL
        self.configured = False
        self.splitter = None
        self.normalizer = None

    def __dealloc__(self):
        free(self.piece_types)

    def _configure_vocab(self, Py_ssize_t n_pieces, bytes types, *, int unk_id, int bos_id,
                         int eos_id, bint add_bos, bint add_eos, list byte_ids,
                         Detokenizer detokenizer, SpecialSplitter splitter):
        """Install what every model shares; a `_configure_<model>` call must follow."""
        cdef Py_ssize_t i
        if self.configured or self.piece_types != NULL:
            raise RuntimeError("engine is already configured")
        if n_pieces == 0 or len(types) != n_pieces:
            raise ValueError("pieces and types must be non-empty and of equal length")
        if not (-1 <= unk_id < n_pieces):
            raise ValueError(f"unknown-piece id {unk_id} is outside the vocabulary")
        if len(byte_ids) != 256 or any(not (-1 <= b < n_pieces) for b in byte_ids):
            raise ValueError("byte_ids must hold 256 ids in range (or -1)")
        self.n_pieces = n_pieces
        self.piece_types = <uint8_t*>malloc(n_pieces)
        if self.piece_types == NULL:
            raise MemoryError()
        for i in range(n_pieces):
            self.piece_types[i] = types[i]
        for i in range(256):
            self.byte_ids[i] = byte_ids[i] if byte_ids[i] >= 0 else unk_id
        self.unk_id = unk_id
        self.bos_id = bos_id
        self.eos_id = eos_id
        self.add_bos = add_bos and 0 <= bos_id < n_pieces
        self.add_eos = add_eos and 0 <= eos_id < n_pieces
        self.detokenizer = detokenizer
        self.splitter = splitter
        self._piece_strs = None   # decoded on first use (tokenize)
        self._id_objects = tuple(range(n_pieces))

    def _configure_unigram(self, list pieces, list scores, *, Rules rules,
                           Normalizer normalizer, bint byte_fallback):
        """Install a Unigram model. `pieces` are UTF-8 bytes."""
        cdef Py_ssize_t n = len(pieces), i
        cdef int t
        cdef float min_score = 3.4028234663852886e38, score
        cdef list keys = [], values = [], key_scores = []
        self._check_vocab_installed(n)
        if len(scores) != n:
            raise ValueError("pieces and scores must have equal lengths")
        if self.unk_id < 0:
            raise ValueError("a Unigram model needs an unknown piece")
        for i in range(n):
            t = self.piece_types[i]
            score = scores[i]
            if t == TYPE_NORMAL and score < min_score:
                # The unknown-piece score is min over NORMAL pieces minus 10 (both references).
                min_score = score
            if t == TYPE_NORMAL or t == TYPE_USER_DEFINED or t == TYPE_UNUSED:
                keys.append(pieces[i])
                values.append(i | (VALUE_USER_DEFINED if t == TYPE_USER_DEFINED else 0)
                              | (VALUE_UNUSED if t == TYPE_UNUSED else 0))
                key_scores.append(score)
        try:
            self.trie = DoubleArrayTrie.build(keys, values, key_scores)
        except ValueError as e:
            raise ValueError(f"{e}: a piece is already defined") from None
        self.trie.build_char3_nodes()
        self.unigram.nodes = self.trie.nodes
        self.unigram.char3_nodes = self.trie.char3_nodes
        self.unigram.unk_score = min_score - <float>10.0
        self.unigram.unk_id = self.unk_id
        self.unigram.max_piece_bytes = max(map(len, keys), default=0)
        self.segmenter = SEGMENT_UNIGRAM
        self.rules = rules
        self.normalizer = normalizer
        # llama.cpp's UGM tokenizer has no byte fallback.
        self.byte_fallback = byte_fallback and rules == Rules.SENTENCEPIECE
        self.merge_unknown_runs = True
        self.missing_id = self.unk_id
        self.configured = True

    def _configure_score_bpe(self, ScoreBpe bpe, *, Rules rules, Normalizer normalizer,
                             bint escape_prefix_space, bint byte_fallback):
        """Install a SentencePiece-BPE model; `normalizer` None escapes spaces only."""
        self._check_vocab_installed(self.n_pieces)
        self.bpe = bpe
        self.segmenter = SEGMENT_SCORE_BPE
        self.rules = rules
        self.normalizer = normalizer
        self.escape_prefix_space = escape_prefix_space
        if rules == Rules.SENTENCEPIECE:
            if self.unk_id < 0:
                raise ValueError("a SentencePiece model needs an unknown piece")
            # Parity: sentencepiece maps a character that is no piece to <unk>,
            # then byte fallback (if on) and unknown-run merging apply.
            self.missing_id = self.unk_id
            self.byte_fallback = byte_fallback
            self.merge_unknown_runs = True
        else:
            # Parity: llama.cpp's SPM session emits the byte tokens of a symbol
            # that is no token, and keeps real unknown tokens as they are.
            self.missing_id = -1
            self.byte_fallback = False
            self.merge_unknown_runs = False
        self.configured = True

    cdef _check_vocab_installed(self, Py_ssize_t n):
        if self.configured:
            raise RuntimeError("engine is already configured")
        if self.piece_types == NULL or n != self.n_pieces:
            raise RuntimeError("_configure_vocab must come first, with the same vocabulary")

    # ------------------------------------------------------------------ encode

    cdef int _encode(self, const unsigned char* s, Py_ssize_t n, bint add_special,
                     bint parse_special, Scratch* sc, IdBuf* out, bint want_spans) noexcept nogil:
        """Encode s[:n] into `out` (cleared first). Returns 0 or a negative error code."""
        cdef int rc = 0
        cdef Py_ssize_t k
        cdef int32_t token
        out.size = 0
        sc.spans.size = 0
        sc.norm_all.size = 0
        if add_special and self.add_bos:
            if _push_id(out, self.bos_id, &sc.spans, want_spans, 0, 0) < 0:
                return ERR_NO_MEMORY
        if self.splitter is not None and (parse_special or self.splitter.has_always):
            if self.splitter.split(s, n, parse_special, &sc.split, &sc.segments) < 0:
                return ERR_NO_MEMORY
            for k in range(0, sc.segments.size, 3):
                token = sc.segments.data[k]
                if token >= 0:
                    if _push_id(out, token, &sc.spans, want_spans, 0, 0) < 0:
                        return ERR_NO_MEMORY
                else:
                    rc = self._encode_fragment(s + sc.segments.data[k + 1],
                                               sc.segments.data[k + 2] - sc.segments.data[k + 1],
                                               sc, out, want_spans)
                    if rc < 0:
                        return rc
        else:
            rc = self._encode_fragment(s, n, sc, out, want_spans)
            if rc < 0:
                return rc
        if add_special and self.add_eos:
            if _push_id(out, self.eos_id, &sc.spans, want_spans, 0, 0) < 0:
                return ERR_NO_MEMORY
        return 0

    cdef int _encode_fragment(self, const unsigned char* s, Py_ssize_t n, Scratch* sc,
                              IdBuf* out, bint want_spans) noexcept nogil:
        """Append the ids of one raw-text fragment: normalize, segment, post-process."""
        cdef int rc
        cdef Py_ssize_t i, j, start, end, count, base
        cdef int32_t pid
        cdef bint is_unk, prev_unk = False
        cdef const unsigned char* norm
        if n == 0:
            return 0
        if self.normalizer is not None:
            rc = self.normalizer.normalize(s, n, &sc.norm)
        else:
            rc = _escape_spaces(s, n, self.escape_prefix_space, &sc.norm)
        if rc < 0:
            return rc
        if sc.norm.size > MAX_NORMALIZED_BYTES:
            return ERR_TOO_LONG
        if sc.norm.size == 0:
            return 0
        base = sc.norm_all.size
        if want_spans and bytebuf_append(&sc.norm_all, sc.norm.data, sc.norm.size) < 0:
            return ERR_NO_MEMORY
        norm = <const unsigned char*>sc.norm.data
        if self.segmenter == SEGMENT_SCORE_BPE:
            sc.path_ids.size = 0
            sc.path_starts.size = 0
            rc = self.bpe.encode(norm, sc.norm.size, &sc.bpe, &sc.path_ids, &sc.path_starts)
        elif self.rules == Rules.SENTENCEPIECE:
            rc = viterbi_sentencepiece(&self.unigram, norm, sc.norm.size, &sc.lattice,
                                       &sc.lattice_cap, &sc.path_ids, &sc.path_starts)
        else:
            rc = viterbi_llama_cpp(&self.unigram, norm, sc.norm.size, &sc.lattice,
                                   &sc.lattice_cap, &sc.path_ids, &sc.path_starts)
        if rc < 0:
            return ERR_NO_MEMORY
        count = sc.path_ids.size
        # Byte pieces: at most one id per normalized byte.
        if idbuf_reserve(out, sc.norm.size + count + 1) < 0:
            return ERR_NO_MEMORY
        for i in range(count):
            pid = sc.path_ids.data[i]
            if pid < 0:
                pid = self.missing_id
            start = sc.path_starts.data[i]
            end = sc.path_starts.data[i + 1] if i + 1 < count else sc.norm.size
            is_unk = pid < 0 or pid == self.unk_id   # Parity: llama.cpp UGM compares ids with token_unk()
            if pid < 0 or (is_unk and self.byte_fallback):
                # Parity: an unknown piece becomes its byte pieces (sentencepiece
                # byte fallback; llama.cpp SPM resegment).
                for j in range(start, end):
                    out.data[out.size] = self.byte_ids[norm[j]]
                    out.size += 1
                    if want_spans and (idbuf_push(&sc.spans, <int32_t>(base + j)) < 0
                                       or idbuf_push(&sc.spans, <int32_t>(base + j + 1)) < 0):
                        return ERR_NO_MEMORY
            elif is_unk and prev_unk and self.merge_unknown_runs:
                # Parity: a run of unknown characters is one <unk> (sentencepiece
                # PopulateSentencePieceText, llama.cpp UGM read-back).
                if want_spans:
                    sc.spans.data[sc.spans.size - 1] = <int32_t>(base + end)
            else:
                out.data[out.size] = pid
                out.size += 1
                if want_spans and (idbuf_push(&sc.spans, <int32_t>(base + start)) < 0
                                   or idbuf_push(&sc.spans, <int32_t>(base + end)) < 0):
                    return ERR_NO_MEMORY
            prev_unk = is_unk
        return 0

    cdef _check_ready(self):
        if not self.configured:
            raise RuntimeError("tokenizer is not configured; use toksmith.load()")

    cdef _warn_double_bos(self, const IdBuf* ids):
        """Call when add_special added a BOS. Parity: llama.cpp warns when the prompt
        already started with BOS."""
        if ids.size >= 2 and ids.data[1] == self.bos_id and not self.warned_double_bos:
            self.warned_double_bos = True
            warnings.warn("the text starts with a BOS token and add_special=True added "
                          "another, so the ids start with two BOS tokens; pass "
                          "add_special=False if the text has its own",
                          stacklevel=1)   # compiled frames add no Python frame: the caller's line

    def encode(self, text, *, bint add_special=True, bint parse_special=False):
        """Token ids of `text` (str, or bytes that may hold invalid UTF-8).

        add_special adds BOS/EOS as the model says; parse_special turns
        special-token texts such as "<s>" into their ids (llama_tokenize's flags).

        >>> tok.encode("Hello world")          # doctest: +SKIP
        [8774, 296]
        """
        cdef TextRef ref
        cdef Scratch* sc
        cdef int rc
        cdef list ids
        if not self.configured:
            self._check_ready()
        if type(text) is not str:
            text = _as_text(text)
        text_ref(text, &ref)
        if ref.length * (ref.kind if ref.kind else 1) < GIL_RELEASE_MIN_BYTES:
            # Short texts: handing the GIL over would cost more than the work.
            sc = _acquire_scratch()
            rc = self._encode_text(&ref, add_special, parse_special, sc)
        else:
            with nogil:
                sc = _acquire_scratch()
                rc = self._encode_text(&ref, add_special, parse_special, sc)
        # The scratch stays ours until released: a warnings hook or a finalizer
        # that encodes from here on gets a scratch of its own.
        try:
            if rc < 0:
                _raise_encode_error(rc, text)
            if add_special and self.add_bos:
                self._warn_double_bos(&sc.out)
            ids = _id_list(sc.out.data, sc.out.size, self._id_objects)
        finally:
            _release_scratch(sc)
        return ids

    cdef int _encode_text(self, const TextRef* ref, bint add_special, bint parse_special,
                          Scratch* sc, bint want_spans=False) noexcept nogil:
        """Encode one text into sc.out (spans into sc.spans); 0 or a negative error code."""
        cdef const unsigned char* data
        cdef Py_ssize_t n
        cdef int rc
        if sc == NULL:
            return ERR_NO_MEMORY
        rc = utf8_of(ref, &sc.text, &data, &n)
        if rc < 0:
            return rc
        return self._encode(data, n, add_special, parse_special, sc, &sc.out, want_spans)

    def encode_batch(self, texts, *, bint add_special=True, bint parse_special=False,
                     num_threads=None):
        """Encode many texts on `num_threads` threads (None: all cores), GIL released.

        Returns exactly ``[self.encode(t, add_special=..., parse_special=...) for t in texts]``.
        `texts` is an iterable of texts; one str or bytes is a TypeError.

        >>> tok.encode_batch(["Hello", "world"], num_threads=2)   # doctest: +SKIP
        [[8774], [296]]
        """
        _check_texts(texts)
        cdef list items = list(texts)
        cdef Py_ssize_t n = len(items), i
        cdef TextRef* refs
        cdef IdBuf* results
        cdef int* status
        cdef int threads
        cdef Py_ssize_t total_units = 0
        cdef BatchWork work
        cdef list out
        if not self.configured:
            self._check_ready()
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
            work.engine = <void*>self
            work.refs = refs
            work.results = results
            work.status = status
            work.add_special = add_special
            work.parse_special = parse_special
            with nogil:
                parallel_for(n, BATCH_CHUNK, threads, _encode_batch_range, &work)
            for i in range(n):
                if status[i] < 0:
                    _raise_encode_error(status[i], items[i])
            if add_special and self.add_bos:
                for i in range(n):
                    self._warn_double_bos(&results[i])
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

    def tokenize(self, text, *, bint add_special=False, bint parse_special=False):
        """Pieces of `text` as strings; unknown runs show their normalized text.

        >>> tok.tokenize("Hello world")        # doctest: +SKIP
        ['▁Hello', '▁world']
        """
        cdef TextRef ref
        cdef Scratch* sc
        cdef int rc
        cdef list pieces
        cdef int32_t pid, a, b
        cdef Py_ssize_t i, k
        self._check_ready()
        if type(text) is not str:
            text = _as_text(text)
        text_ref(text, &ref)
        with nogil:
            sc = _acquire_scratch()
            rc = self._encode_text(&ref, add_special, parse_special, sc, True)
        try:
            if rc < 0:
                _raise_encode_error(rc, text)
            if self._piece_strs is None:
                self._piece_strs = [self.detokenizer.piece(k).decode("utf-8", "replace")
                                    for k in range(self.n_pieces)]
            pieces = []
            for i in range(sc.out.size):
                pid = sc.out.data[i]
                a = sc.spans.data[2 * i]
                b = sc.spans.data[2 * i + 1]
                if self.piece_types[pid] == TYPE_UNKNOWN and b > a:
                    pieces.append(sc.norm_all.data[a:b].decode("utf-8", "replace"))
                else:
                    pieces.append(self._piece_strs[pid])
            return pieces
        finally:
            _release_scratch(sc)

    # ------------------------------------------------------------------ decode

    def decode(self, ids, *, bint skip_special=False):
        """Text of `ids`, as the model's reference decodes them.

        sentencepiece rules: control pieces are always invisible.
        llama.cpp rules: skip_special=False renders special tokens
        (unparse_special); True drops them and the BOS/EOS the model adds
        (remove_special).

        >>> tok.decode(tok.encode("Hello world"))   # doctest: +SKIP
        'Hello world'
        """
        self._check_ready()
        return self.detokenizer.decode(ids, skip_special=skip_special)

    def stream_decoder(self, *, bint skip_special=False):
        """A `StreamDecoder`: feed ids one at a time, get text as soon as it is complete.

        >>> stream = tok.stream_decoder()                      # doctest: +SKIP
        >>> "".join(map(stream.feed, ids)) + stream.finish()   # doctest: +SKIP
        'Hello world'
        """
        self._check_ready()
        return StreamDecoder(self.detokenizer, skip_special=skip_special)


cdef void _encode_batch_range(void* p, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """Encode texts [start, end) of a batch into their results (a `parallel_for` task)."""
    cdef BatchWork* work = <BatchWork*>p
    cdef Scratch* sc = _acquire_scratch()
    cdef Py_ssize_t i
    for i in range(start, end):
        work.status[i] = (<Engine>work.engine)._encode_text(&work.refs[i], work.add_special,
                                                            work.parse_special, sc)
        if work.status[i] == 0:
            # hand the ids over to results[i]; the scratch gets a fresh buffer
            work.results[i] = sc.out
            sc.out.data = NULL
            sc.out.size = 0
            sc.out.cap = 0
    _release_scratch(sc)


cdef inline int _push_id(IdBuf* out, int32_t token, IdBuf* spans, bint want_spans,
                         int32_t a, int32_t b) noexcept nogil:
    if idbuf_push(out, token) < 0:
        return -1
    if want_spans and (idbuf_push(spans, a) < 0 or idbuf_push(spans, b) < 0):
        return -1
    return 0


cdef int _escape_spaces(const unsigned char* s, Py_ssize_t n, bint prefix, ByteBuf* out) noexcept nogil:
    """Parity: llama.cpp SPM: optional ' ' prefix, then every ' ' becomes U+2581; bytes kept raw."""
    cdef Py_ssize_t i
    out.size = 0
    if bytebuf_reserve(out, 3 * n + 3) < 0:
        return ERR_NO_MEMORY
    if prefix:
        out.data[0] = SPACE_SYMBOL[0]
        out.data[1] = SPACE_SYMBOL[1]
        out.data[2] = SPACE_SYMBOL[2]
        out.size = 3
    for i in range(n):
        if s[i] == 32:
            out.data[out.size] = SPACE_SYMBOL[0]
            out.data[out.size + 1] = SPACE_SYMBOL[1]
            out.data[out.size + 2] = SPACE_SYMBOL[2]
            out.size += 3
        else:
            out.data[out.size] = <char>s[i]
            out.size += 1
    return 0


cdef _raise_encode_error(int rc, object text):
    if rc == ERR_SURROGATE:
        text.encode("utf-8")   # raises Python's own UnicodeEncodeError, with the position
    raise_for_status(rc)


cdef int _resolve_threads(object num_threads, Py_ssize_t n_items) except -1:
    """Threads for a batch: `num_threads` (an int >= 1, or None for all usable cores),
    at most the usable cores and the number of texts.

    >>> tok.encode_batch(texts, num_threads=True)   # doctest: +SKIP
    TypeError: num_threads must be an int >= 1 or None, not bool
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if num_threads is None:
        wanted = cores
    else:
        if isinstance(num_threads, bool) or not hasattr(type(num_threads), "__index__"):
            raise TypeError(f"num_threads must be an int >= 1 or None, not {type(num_threads).__name__}")
        wanted = operator.index(num_threads)
        if wanted < 1:
            raise ValueError(f"num_threads must be an int >= 1 or None, not {wanted}")
    return <int>max(1, min(wanted, cores, n_items))
